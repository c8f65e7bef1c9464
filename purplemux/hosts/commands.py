"""Actions on a session, run by the host that owns it (asked locally or over the broker)."""

from __future__ import annotations

import json
import time
import uuid
from typing import TYPE_CHECKING, Any

from fastapi import HTTPException
from fastapi.responses import JSONResponse

from purplemux import events as ev
from purplemux.events import Source
from purplemux.hosts.broker import Reply
from purplemux.present import DISMISS, allows

if TYPE_CHECKING:
    from purplemux.runtime import Runtime

REMOTE_INPUT_OFF = (
    "the owning host does not take answers from other hosts: start its daemon with "
    "PURPLEMUX_INPUT=on to allow them (read SECURITY.md first), or answer on that host"
)
KINDS = ("dismiss", "answer", "focus", "screen")
"""What another host may ask of ours: the owner applies its own checks (its input switch)."""


async def run_local(rt: Runtime, kind: str, session_id: str, args: dict[str, Any]) -> Reply:
    """Apply a command to one of this host's own sessions; the answer is what the API returns."""
    from purplemux.server import act  # the routes' own code: one behaviour, asked from anywhere

    if kind not in KINDS:
        return Reply(400, {"error": f"unknown command {kind!r}"})
    if session_id not in rt.engine.sessions:
        return Reply(404, {"error": f"no session {session_id!r}"})
    try:
        if kind == "dismiss":
            return await _dismiss(rt, session_id)
        if kind == "screen":
            out = await act.screen_local(rt, session_id)
        elif kind == "answer":
            act.parse_answer(args)
            if rt.settings.input is None:
                # Typing into a pane for whoever can write to the shared Redis is a choice the
                # owner makes in so many words: the loopback default does not cover it.
                return Reply(403, {"error": REMOTE_INPUT_OFF})
            out = await act.answer_local(rt, session_id, args)
        else:
            out = await act.focus_local(rt, session_id, args)
    except HTTPException as exc:
        return Reply(exc.status_code, {"error": str(exc.detail), "detail": exc.detail})
    if isinstance(out, JSONResponse):
        return Reply(out.status_code, json.loads(bytes(out.body)))
    return Reply(200, dict(out))


async def _dismiss(rt: Runtime, session_id: str) -> Reply:
    engine = rt.engine
    session = engine.sessions[session_id]
    if not allows(session, DISMISS):
        return Reply(409, {"error": f"session is {session.state.value}, not in review"})
    await engine.submit(
        ev.Dismiss(
            session_id=session_id,
            at=time.time(),
            id=f"dismiss:{uuid.uuid4().hex}",
            source=Source.USER,
        )
    )
    return Reply(200, engine.public(engine.sessions[session_id]))
