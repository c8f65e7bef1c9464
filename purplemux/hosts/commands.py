"""Actions on a session, run by the host that owns it (asked locally or over the broker)."""

from __future__ import annotations

import time
import uuid

from purplemux import events as ev
from purplemux.engine import Engine
from purplemux.events import Source
from purplemux.hosts.broker import Reply
from purplemux.model import State

KINDS = ("dismiss",)
"""What another host may ask of ours. Answering and focusing need input to the pane, which this
daemon does not offer locally either; when it does, they are added here."""


async def run_local(engine: Engine, kind: str, session_id: str) -> Reply:
    """Apply a command to one of this host's own sessions; the answer is what the API returns."""
    if kind not in KINDS:
        return Reply(400, {"error": f"unknown command {kind!r}"})
    session = engine.sessions.get(session_id)
    if session is None:
        return Reply(404, {"error": f"no session {session_id!r}"})
    if session.state is not State.REVIEW:
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
