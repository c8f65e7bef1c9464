"""Commands from other hosts, run by the host that owns the session (its own checks apply)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from purplemux.daemon.actions import (
    VERBS,
    ActionError,
    AnswerInput,
    FocusInput,
    Outcome,
    Result,
    ResumeInput,
    outcome,
)

if TYPE_CHECKING:
    from purplemux.daemon.runtime import Runtime

REMOTE_INPUT_OFF = (
    "the owning host does not take answers from other hosts: start its daemon with "
    "PURPLEMUX_INPUT=on to allow them (read SECURITY.md first), or answer on that host"
)
KINDS = VERBS
"""What another host may ask of ours: the owner applies its own checks (its input switch)."""


async def run_local(rt: Runtime, kind: str, session_id: str, args: dict[str, Any]) -> Outcome:
    """Apply a command to one of this host's own sessions; the answer is what the API returns."""
    if kind not in KINDS:
        return Outcome(400, {"error": f"unknown command {kind!r}"})
    if session_id not in rt.engine.sessions:
        return Outcome(404, {"error": f"no session {session_id!r}"})
    acts = rt.actions
    result: Result
    try:
        if kind == "dismiss":
            result = await acts.dismiss(session_id)
        elif kind == "screen":
            result = await acts.screen(session_id)
        elif kind == "answer":
            given = AnswerInput.parse(args)
            if rt.settings.input is None:
                # Typing into a pane for whoever can write to the shared Redis is a choice the
                # owner makes in so many words: the loopback default does not cover it.
                return Outcome(403, {"error": REMOTE_INPUT_OFF})
            result = await acts.answer(session_id, given)
        elif kind == "resume":
            wanted = ResumeInput.parse(args)
            if wanted.at_reset and rt.settings.input is None:
                return Outcome(403, {"error": REMOTE_INPUT_OFF})  # it types later, as an answer
            result = await acts.resume(session_id, wanted)
        else:
            result = await acts.focus(session_id, FocusInput.parse(args))
    except ActionError as exc:
        return Outcome.refused(exc)
    return outcome(result)
