"""Codex's real hook payloads (samples/codex-0.171.0/*/hooks.jsonl) through the hook route's
translation and the state machine: the states each scenario passes through, hook by hook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from purplemux.core import machine
from purplemux.core.events import Event
from purplemux.core.model import Session
from purplemux.sources.hooks import PayloadError, to_event

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "codex-0.171.0"


def hook_events(scenario: str) -> list[tuple[str, Event]]:
    """(hook name, event) for each recorded call, as the script would have posted it."""
    out = []
    for n, line in enumerate((SAMPLES / scenario / "hooks.jsonl").read_text().splitlines()):
        rec = json.loads(line)
        headers = {
            "x-purplemux-event-id": f"{scenario}-{n}",
            "x-purplemux-ts": str(int(rec["ts"] * 1e9)),
            # What a Codex hook's environment says: the daemon's pane, not the session's.
            "x-purplemux-pane": rec["tmux_pane"],
            "x-purplemux-agent": "codex",
        }
        out.append((rec["payload"]["hook_event_name"], to_event(rec["payload"], headers, 0.0)))
    return out


def states(scenario: str, session: str | None = None) -> list[tuple[str, str]]:
    """(hook, state after it) for one session of the scenario (the first one by default)."""
    events = hook_events(scenario)
    sid = session or events[0][1].session_id
    s = Session(id=sid)
    out = []
    for name, event in events:
        if event.session_id != sid:
            continue
        s, _ = machine.step(s, event)
        out.append((name, s.state.value))
    return out


def test_every_codex_event_is_the_codex_agents_and_names_no_pane() -> None:
    for _, event in hook_events("l_two_panes"):
        assert event.agent == "codex"
        assert event.tmux is None


def test_a_plain_turn_is_busy_then_review() -> None:
    seen = states("b_plain")
    assert seen[:2] == [("SessionStart", "idle"), ("UserPromptSubmit", "busy")]
    assert ("Stop", "review") in seen


def test_an_approval_waits_for_input_and_ends_in_review_when_approved() -> None:
    seen = states("c_approve")
    at = seen.index(("PermissionRequest", "needs-input"))
    # Approved: no hook at the answer; PostToolUse when the command ends moves it on.
    assert seen[at + 1] == ("PostToolUse", "busy")
    assert ("Stop", "review") in seen[at:]


def test_a_denied_approval_is_idle_at_the_interrupt() -> None:
    seen = states("d_deny")
    at = seen.index(("PermissionRequest", "needs-input"))
    assert seen[at + 1] == ("Interrupt", "idle")


def test_a_question_waits_for_input_and_its_answer_moves_on() -> None:
    seen = states("i_question")
    at = seen.index(("PreToolUse", "needs-input"))
    assert seen[at + 1] == ("PostToolUse", "busy")


def test_an_unknown_agent_is_refused() -> None:
    payload = {"session_id": "s", "hook_event_name": "Stop"}
    with pytest.raises(PayloadError, match="unknown agent"):
        to_event(payload, {"x-purplemux-agent": "gemini"}, 0.0)
