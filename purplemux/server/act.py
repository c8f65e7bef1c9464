"""Acting on a session from anywhere: read its screen, answer its prompt, focus its pane.

GET /api/sessions/{id}/screen, POST /api/sessions/{id}/answer, POST /api/sessions/{id}/focus.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse

from purplemux import events as ev
from purplemux import tmux
from purplemux.answer import AnswerError, Choice, Screen, pane_of
from purplemux.events import Source
from purplemux.model import Session, State
from purplemux.server import hosts
from purplemux.server.api import read_json
from purplemux.server.runtime import Runtime, current_runtime, require_auth

router = APIRouter(dependencies=[Depends(require_auth)])

BY = frozenset({"page", "push", "cli", "api"})
"""Who answers: the dashboard, a notification's action, the command line, anything else."""
MAX_ANSWER_BODY = 16 * 1024
MAX_TEXT = 2000
SETTLE = 1.5
"""Seconds /screen waits for a dialog it sees to be known as needs-input (see `settled_read`)."""
SETTLE_STEP = 0.05


def _session(rt: Runtime, session_id: str) -> Session:
    session = rt.engine.sessions.get(session_id)
    if session is None:
        raise HTTPException(404, f"no session {session_id!r}")
    return session


def _refused(exc: AnswerError) -> JSONResponse:
    return JSONResponse(exc.to_json(), status_code=exc.status)


async def _relayed(rt: Runtime, kind: str, session_id: str, args: Any) -> JSONResponse | None:
    """Another host's session: its owner acts (under its own input switch) and answers."""
    if session_id in rt.engine.sessions:
        return None
    reply = await hosts.remote_command(rt, kind, session_id, args if isinstance(args, dict) else {})
    return None if reply is None else JSONResponse(reply.body, status_code=reply.status)


@router.get("/api/sessions/{session_id}/screen", response_model=None)
async def screen(session_id: str, rt: Runtime = Depends(current_runtime)) -> Any:
    if (relayed := await _relayed(rt, "screen", session_id, {})) is not None:
        return relayed
    return await screen_local(rt, session_id)


async def screen_local(rt: Runtime, session_id: str) -> Any:
    """GET /screen on this host's own session."""
    try:
        session, shown = await settled_read(rt, session_id)
    except AnswerError as exc:
        return _refused(exc)
    return {
        "text": shown.text,
        "prompt": shown.prompt.to_json() if shown.prompt else None,
        "at": shown.at,
        "state": session.state.value,
        "input": rt.settings.input_allowed,
    }


async def settled_read(rt: Runtime, session_id: str) -> tuple[Session, Screen]:
    """The session and its screen, with the prompt id an answer will be checked against.

    A prompt's id includes when its session entered its state. Claude draws a dialog a moment
    before its PermissionRequest hook lands, so a read in that moment would hand out an id made
    from the busy state, which stops matching as soon as needs-input arrives (an answer with it
    is refused, nothing typed). So while a dialog shows and the session is not yet needs-input,
    read again until it is, for at most SETTLE seconds (a dialog no hook announces keeps the id
    of the state it was drawn in)."""
    deadline = time.monotonic() + SETTLE
    while True:
        session = _session(rt, session_id)
        shown = await rt.desk.read(session)
        if (
            shown.prompt is None
            or session.state is State.NEEDS_INPUT
            or time.monotonic() >= deadline
        ):
            return session, shown
        await asyncio.sleep(SETTLE_STEP)


def parse_answer(data: Any) -> tuple[str, Choice, str]:
    """(prompt_id, choice, by) from the request body; 422 with the reason otherwise."""
    if not isinstance(data, dict):
        raise HTTPException(422, "send a JSON object: {prompt_id, option | text | cancel}")
    prompt_id = data.get("prompt_id")
    if not isinstance(prompt_id, str) or not prompt_id or len(prompt_id) > 64:
        raise HTTPException(422, "prompt_id (the id GET /screen gave) is required")
    option, text, cancel = data.get("option"), data.get("text"), data.get("cancel")
    given = [k for k in ("option", "text", "cancel") if data.get(k) not in (None, False)]
    if len(given) != 1:
        raise HTTPException(422, "give exactly one of option, text or cancel: true")
    if option is not None and (not isinstance(option, str) or not option or len(option) > 500):
        raise HTTPException(422, "option must be the label of an option, as shown")
    if text is not None and (
        not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT or "\n" in text
    ):
        raise HTTPException(422, f"text must be one line of 1 to {MAX_TEXT} characters")
    if cancel is not None and cancel is not True:
        raise HTTPException(422, "cancel must be true")
    by = data.get("by", "api")
    if by not in BY:
        raise HTTPException(422, f"by must be one of {', '.join(sorted(BY))}")
    try:  # Choice refuses control characters (answer.py): below the route, for every caller
        choice = Choice(option=option, text=text, cancel=cancel is True)
    except AnswerError as exc:
        raise HTTPException(exc.status, exc.reason) from None
    return prompt_id, choice, str(by)


@router.post("/api/sessions/{session_id}/answer", response_model=None)
async def answer(session_id: str, request: Request, rt: Runtime = Depends(current_runtime)) -> Any:
    if session_id not in rt.engine.sessions and hosts.owner_of(rt, session_id):
        data = await read_json(request, MAX_ANSWER_BODY)
        parse_answer(data)  # bad input is refused here, before it travels
        if (relayed := await _relayed(rt, "answer", session_id, data)) is not None:
            return relayed
    if not rt.settings.input_allowed:
        raise HTTPException(403, rt.settings.input_refusal)
    data = await read_json(request, MAX_ANSWER_BODY)
    return await answer_local(rt, session_id, data)


async def answer_local(rt: Runtime, session_id: str, data: Any) -> Any:
    """POST /answer on this host's own session (the owner's input switch applies)."""
    if not rt.settings.input_allowed:
        raise HTTPException(403, rt.settings.input_refusal)
    session = _session(rt, session_id)
    prompt_id, choice, by = parse_answer(data)
    try:
        done = await rt.desk.answer(session, prompt_id, choice)
    except AnswerError as exc:
        return _refused(exc)
    what = "cancel" if choice.cancel else (choice.option or "text")
    now = time.time()
    await rt.engine.submit(
        ev.Answer(
            session_id=session_id,
            at=now,
            id=f"answer:{uuid.uuid4().hex}",
            source=Source.USER,
            name=f"Answer: {what} ({by})",
            by=by,
            prompt_id=prompt_id,
            prompt_kind=done.prompt.kind,
            option=choice.option,
            text=choice.text,
            cancel=choice.cancel,
            confirmed=done.confirmed,
        )
    )
    body = {
        "ok": done.confirmed,
        "prompt_id": prompt_id,
        "kind": done.prompt.kind,
        "answered": what,
        "keys": list(done.keys),
        "session": rt.engine.public(rt.engine.sessions[session_id]),
    }
    if not done.confirmed:
        body["error"] = "the keys were sent but the dialog is still on screen; look at the pane"
        return JSONResponse(body, status_code=504)
    return body


@router.post("/api/sessions/{session_id}/focus", response_model=None)
async def focus(session_id: str, request: Request, rt: Runtime = Depends(current_runtime)) -> Any:
    raw = await request.body()
    data = await read_json(request, 4096) if raw.strip() else {}
    client = data.get("client") if isinstance(data, dict) else None
    if client is not None and (not isinstance(client, str) or len(client) > 200):
        raise HTTPException(422, "client must be a tmux client name (e.g. /dev/pts/3)")
    if (relayed := await _relayed(rt, "focus", session_id, data)) is not None:
        return relayed
    return await focus_local(rt, session_id, data)


async def focus_local(rt: Runtime, session_id: str, data: Any) -> Any:
    """POST /focus on this host's own session."""
    client = data.get("client") if isinstance(data, dict) else None
    if client is not None and not isinstance(client, str):
        raise HTTPException(422, "client must be a tmux client name (e.g. /dev/pts/3)")
    session = _session(rt, session_id)
    try:
        loc = pane_of(session)
        done = await tmux.focus(loc, client)
    except AnswerError as exc:
        return _refused(exc)
    except tmux.TmuxError as exc:
        return JSONResponse({"error": f"cannot focus pane: {exc}"}, status_code=409)
    return {
        "ok": True,
        "pane": done.pane,
        "window": done.window,
        "tmux_session": done.session,
        "client": done.client,
    }
