"""Acting on a session from anywhere: read its screen, answer its prompt, focus its pane.

GET /api/sessions/{id}/screen, POST /api/sessions/{id}/answer, POST /api/sessions/{id}/focus,
POST /api/sessions/{id}/resume ({at_reset: true | false}) and DELETE (cancel).
The verbs themselves are purplemux.daemon.actions; these routes read the body and relay or call them
(an ActionError is answered by the app's handler).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from purplemux.daemon.actions import AnswerInput, FocusInput, Outcome, ResumeInput, outcome
from purplemux.server.api import read_json
from purplemux.server.runtime import Runtime, current_runtime, require_actor, require_auth

router = APIRouter(dependencies=[Depends(require_auth)])

MAX_ANSWER_BODY = 16 * 1024

_F = TypeVar("_F", bound=Callable[..., Any])


def acting(method: Callable[..., Callable[[_F], _F]], verb: str) -> Callable[[_F], _F]:
    """The route of one verb on a session: only an actor may (the cookie alone only views)."""
    return method(
        f"/api/sessions/{{session_id}}/{verb}",
        response_model=None,
        dependencies=[Depends(require_actor)],
    )


def reply(out: Outcome) -> JSONResponse:
    """An action's outcome as the HTTP answer."""
    return JSONResponse(out.body, status_code=out.status)


@acting(router.get, "screen")
async def screen(session_id: str, rt: Runtime = Depends(current_runtime)) -> JSONResponse:
    acts = rt.actions
    if (relayed := await acts.relayed("screen", session_id, {})) is not None:
        return reply(relayed)
    return reply(outcome(await acts.screen(session_id)))


@acting(router.post, "answer")
async def answer(
    session_id: str, request: Request, rt: Runtime = Depends(current_runtime)
) -> JSONResponse:
    acts = rt.actions
    if acts.owner_of(session_id):
        # Bad input is refused here, before it travels; the owner's input switch applies there.
        given = AnswerInput.parse(await read_json(request, MAX_ANSWER_BODY))
        if (relayed := await acts.relayed("answer", session_id, given.to_json())) is not None:
            return reply(relayed)
    acts.require_input()  # before the body is even read
    data = await read_json(request, MAX_ANSWER_BODY)
    acts.session(session_id)  # 404 before the body's checks
    return reply(outcome(await acts.answer(session_id, AnswerInput.parse(data))))


@acting(router.post, "focus")
async def focus(
    session_id: str, request: Request, rt: Runtime = Depends(current_runtime)
) -> JSONResponse:
    acts = rt.actions
    raw = await request.body()
    given = FocusInput.parse(await read_json(request, 4096) if raw.strip() else {})
    if (relayed := await acts.relayed("focus", session_id, given.to_json())) is not None:
        return reply(relayed)
    return reply(outcome(await acts.focus(session_id, given)))


@acting(router.post, "resume")
async def resume(
    session_id: str, request: Request, rt: Runtime = Depends(current_runtime)
) -> JSONResponse:
    acts = rt.actions
    given = ResumeInput.parse(await read_json(request, 4096))
    if (relayed := await acts.relayed("resume", session_id, given.to_json())) is not None:
        return reply(relayed)
    return reply(outcome(await acts.resume(session_id, given)))


@acting(router.delete, "resume")
async def cancel_resume(session_id: str, rt: Runtime = Depends(current_runtime)) -> JSONResponse:
    acts = rt.actions
    given = ResumeInput(at_reset=False)
    if (relayed := await acts.relayed("resume", session_id, given.to_json())) is not None:
        return reply(relayed)
    return reply(outcome(await acts.resume(session_id, given)))
