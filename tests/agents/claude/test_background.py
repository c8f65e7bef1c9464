"""Hooks that make no row (agents/claude/background.py), on the real 2.1.332 captures: the agent
view's spare worker and its notices about other sessions; every other hook of a background
session makes (or moves) its row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from purplemux.agents.claude.background import not_a_row
from purplemux.core.events import Event
from purplemux.sources.hooks import to_event

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "claude-code-2.1.332" / "bg"
AGENT_VIEW = "833ee10c-7609-43b7-b2a4-7512bbc88255"
SPARES = {"b7fe7c69-bab4-4500-a1a9-549b988ca1ec", "9eb8185a-ed64-46e3-8136-6471986de77f"}


def calls() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (SAMPLES / "hooks-apikey.jsonl").read_text().splitlines()]


def event_of(call: dict[str, Any], n: int) -> Event:
    # As the hook script sends it: no pane when $CLAUDE_JOB_DIR is set (a background worker).
    pane = "" if call["job_dir"] else call["pane"] or ""
    headers = {"x-purplemux-event-id": f"e{n}", "x-purplemux-pane": pane}
    return to_event(call["payload"], headers, call["ts"])


def test_the_agent_views_notices_and_end_make_no_row() -> None:
    view = [
        event_of(c, n) for n, c in enumerate(calls()) if c["payload"]["session_id"] == AGENT_VIEW
    ]
    assert {e.name for e in view} == {"Notification", "SessionEnd"}
    assert all(e.tmux is not None and e.tmux.pane == "%1" for e in view)
    assert all(not_a_row(e) for e in view)


def test_a_spare_workers_start_and_end_make_no_row_and_a_claimed_spares_prompt_does() -> None:
    spare = [
        (e.name, not_a_row(e) is not None)
        for n, c in enumerate(calls())
        if c["payload"]["session_id"] in SPARES
        for e in [event_of(c, n)]
    ]
    assert ("SessionStart", True) in spare and ("SessionEnd", True) in spare
    # b7fe7c69 was claimed by a task typed into the view: its turn is a session's.
    assert ("UserPromptSubmit", False) in spare and ("Stop", False) in spare


def test_every_hook_of_a_job_started_with_claude_bg_may_make_its_row() -> None:
    others = [
        event_of(c, n)
        for n, c in enumerate(calls())
        if c["payload"]["session_id"] not in SPARES | {AGENT_VIEW}
    ]
    assert len(others) > 80
    made = [e for e in others if e.name != "SessionEnd" and not_a_row(e) is not None]
    assert made == []
    # The interactive session's own hooks (pane %4) too.
    assert any(e.tmux is not None and e.tmux.pane == "%4" for e in others)


def test_auto_modes_agent_needs_input_about_a_session_itself_is_not_set_aside_once_listed() -> None:
    # The rule applies only to a session with no row (runtime.ingest): a listed interactive
    # session's own agent_needs_input (2.1.332 auto mode) is applied as any Notification.
    auto = SAMPLES.parent / "hooks-auto.jsonl"
    rows = [json.loads(line) for line in auto.read_text().splitlines()]
    own = next(r for r in rows if r["payload"].get("notification_type") == "agent_needs_input")
    event = to_event(own["payload"], {"x-purplemux-pane": own["tmux_pane"]}, own["ts"])
    assert not_a_row(event) is not None  # would be set aside only while it has no row
    first = next(r for r in rows if r["payload"]["session_id"] == own["payload"]["session_id"])
    assert first["payload"]["hook_event_name"] == "SessionStart"  # ... and it always has one
