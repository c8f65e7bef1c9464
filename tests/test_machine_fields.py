"""The field rules: what each event kind sets on a session, whatever the state does."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from purplemux.core import events as ev
from purplemux.core.events import Event, Kind
from purplemux.core.machine import FIELD_RULES, field_changes
from purplemux.core.model import (
    BackgroundTask,
    LimitWall,
    PendingTool,
    ResumeAtReset,
    Session,
    State,
    TmuxLocation,
    Tokens,
)

SID = "s1"
SHELL = BackgroundTask("t1", "shell", None)
AGENT = BackgroundTask("a1", "agent", None)
CALL = PendingTool("Bash", "dg", "tu1")
# A session with a value in every field an event may set, each unlike what the events bring.
WORN = Session(
    id=SID,
    state=State.BUSY,
    ended=True,
    superseded=True,
    compacting=True,
    error="old error",
    error_kind="old_kind",
    retries=3,
    current_tool="Old",
    pending_tool=PendingTool("Old", "o"),
    recent_tools=(CALL,),
    background_tasks=(SHELL, AGENT),
    model="old-model",
    snippet="old words",
    pid=1,
    alive=False,
    title="Old title",
    title_at=1.0,
    waiting_for="old wait",
    limit=LimitWall("seven_day", 500.0, 600.0, 2.0),
)
WALL = LimitWall("five_hour", 900.0, None, 5.0)
"""A wall a hook's text made: the reset to the minute."""
FRESH = Session(id=SID, state=State.BUSY, current_tool="Bash", background_tasks=(SHELL, AGENT))
TURN_STARTS = dict(
    ended=False, compacting=False, error=None, error_kind=None, retries=0, limit=None
)
ENDS = dict(
    ended=True,
    alive=False,
    current_tool=None,
    compacting=False,
    retries=0,
    background_tasks=(),
    limit=None,
)
FAILED = dict(current_tool=None, error="limit", retries=0, error_kind="rate_limit")


def make(kind: Kind, **fields: Any) -> Event:
    cls = ev.EVENT_TYPES[kind]
    return cls(session_id=SID, at=10.0, id=f"{kind}-10", **fields)


CASES: list[tuple[str, Session, Event, dict[str, Any]]] = [
    (
        "session_start@a 1M model, the old turn cleared, resumed",
        WORN,
        make(Kind.SESSION_START, model="claude-opus-4-8[1m]"),
        {**TURN_STARTS, "model": "claude-opus-4-8[1m]", "long_context": True, "superseded": False},
    ),
    (
        "prompt@a new turn, the finished task gone",
        WORN,
        make(Kind.PROMPT, prompt="go", task_done="t1"),
        {
            **TURN_STARTS,
            "current_tool": None,
            "pending_tool": None,
            "background_tasks": (AGENT,),
            "superseded": False,
        },
    ),
    (
        "tool_start@remembered and current",
        WORN,
        make(Kind.TOOL_START, tool_name="Bash", digest="d2", tool_use_id="tu2", summary="ls"),
        {"recent_tools": (CALL, PendingTool("Bash", "d2", "tu2")), "current_tool": "ls"},
    ),
    (
        "question@remembered, pending, asked",
        WORN,
        make(Kind.QUESTION, digest="q", tool_use_id="tu3", question="Which?"),
        {
            "recent_tools": (CALL, PendingTool("AskUserQuestion", "q", "tu3")),
            "pending_tool": PendingTool("AskUserQuestion", "q", "tu3"),
            "waiting_for": "Which?",
        },
    ),
    (
        "permission@paired with the announced call",
        WORN,
        make(Kind.PERMISSION, tool_name="Bash", digest="dg"),
        {"pending_tool": CALL, "waiting_for": "Bash"},
    ),
    (
        "attention@its message when nothing else says",
        FRESH,
        make(Kind.ATTENTION, notification_type="permission_prompt", message="Needs you"),
        {"waiting_for": "Needs you"},
    ),
    (
        "tool_end@done, sent to the background",
        WORN,
        make(
            Kind.TOOL_END,
            tool_use_id="tu1",
            background_task_id="bg2",
            background_description="server",
        ),
        {
            "recent_tools": (),
            "background_tasks": (SHELL, AGENT, BackgroundTask("bg2", "shell", "server")),
        },
    ),
    ("superseded@an ended row retired", WORN, make(Kind.SUPERSEDED, by="s2"), {"superseded": True}),
    (
        "stop@last words, the shells it lists",
        WORN,
        make(
            Kind.STOP,
            last_message="Done.",
            background_tasks=(BackgroundTask("s9"), BackgroundTask("s8", status="completed")),
        ),
        {
            "current_tool": None,
            "retries": 0,
            "snippet": "Done.",
            "background_tasks": (BackgroundTask("s9"), AGENT),
        },
    ),
    (
        "stop_failure@the error and its words",
        WORN,
        make(Kind.STOP_FAILURE, error="boom", error_kind="server_error", last_message="boom!"),
        {
            "current_tool": None,
            "error": "boom",
            "retries": 0,
            "error_kind": "server_error",
            "snippet": "boom!",
        },
    ),
    (
        "stop_failure@a limit: a new wall, its window and the reset the text says",
        FRESH,
        make(
            Kind.STOP_FAILURE,
            error="limit",
            error_kind="rate_limit",
            limit_hit=True,
            limit_window="five_hour",
            limit_resets_at=900.0,
        ),
        {**FAILED, "limit": LimitWall("five_hour", 900.0, None, 10.0)},
    ),
    (
        "stop_failure@a limit: the transcript's exact reset wins over the text's minute",
        replace(FRESH, limit=WALL),
        make(
            Kind.STOP_FAILURE,
            error="limit",
            error_kind="rate_limit",
            limit_hit=True,
            limit_resets_at=948.0,
            limit_exact=True,
        ),
        {**FAILED, "limit": replace(WALL, resets_at=948.0)},
    ),
    (
        "stop_failure@a limit: a hook's minute never overwrites the exact reset",
        replace(FRESH, limit=replace(WALL, resets_at=948.0)),
        make(
            Kind.STOP_FAILURE,
            error="limit",
            error_kind="rate_limit",
            limit_hit=True,
            limit_window="seven_day",
            limit_resets_at=900.0,
        ),
        {**FAILED, "limit": LimitWall("seven_day", 948.0, None, 5.0)},
    ),
    (
        "stop_failure@a rate_limit kind alone is a wall (a background job's blocked)",
        FRESH,
        make(Kind.STOP_FAILURE, error="limit", error_kind="rate_limit"),
        {**FAILED, "limit": LimitWall(at=10.0)},
    ),
    (
        "stop_failure@another error leaves the wall alone",
        replace(FRESH, limit=WALL),
        make(Kind.STOP_FAILURE, error="boom", error_kind="server_error", limit_resets_at=1.0),
        {"current_tool": None, "error": "boom", "retries": 0, "error_kind": "server_error"},
    ),
    (
        "limit@a job's blocked makes a wall of its own",
        FRESH,
        make(Kind.LIMIT),
        {"limit": LimitWall(at=10.0)},
    ),
    (
        "limit@Claude will continue by itself at the reset; window and reset as said",
        replace(FRESH, limit=WALL),
        make(Kind.LIMIT, window="seven_day", resets_at=950.0, auto_resume_at=960.0),
        {"limit": LimitWall("seven_day", 950.0, 960.0, 5.0)},
    ),
    (
        "limit@Esc cancelled the automatic continue",
        WORN,
        make(Kind.LIMIT, auto_resume_cancelled=True),
        {"limit": LimitWall("seven_day", 500.0, None, 2.0)},
    ),
    ("compact_start@compacting", FRESH, make(Kind.COMPACT_START), {"compacting": True}),
    ("compact_end@not compacting", WORN, make(Kind.COMPACT_END), {"compacting": False}),
    (
        "status_waiting@the tool for auto mode's approval, the file's pid and title",
        FRESH,
        make(
            Kind.STATUS_WAITING, waiting_for="permission prompt", pid=42, title="Fix", title_at=5.0
        ),
        {"waiting_for": "Bash", "pid": 42, "title": "Fix", "title_at": 5.0},
    ),
    (
        "status_idle@no shell runs any more",
        FRESH,
        make(Kind.STATUS_IDLE, pid=42),
        {"background_tasks": (AGENT,), "pid": 42},
    ),
    (
        "status_busy@a title without its own time takes the event's",
        WORN,
        make(Kind.STATUS_BUSY, title="New title"),
        {"title": "New title", "title_at": 10.0},
    ),
    (
        "subagent@started",
        FRESH,
        make(Kind.SUBAGENT, agent_id="a2", agent_type="Explore"),
        {"background_tasks": (SHELL, AGENT, BackgroundTask("a2", "agent", "Explore"))},
    ),
    (
        "subagent@stopped",
        FRESH,
        make(Kind.SUBAGENT, agent_id="a1", started=False),
        {"background_tasks": (SHELL,)},
    ),
    ("session_end@nothing runs", WORN, make(Kind.SESSION_END), ENDS),
    ("process_gone@nothing runs", WORN, make(Kind.PROCESS_GONE), ENDS),
    (
        "process_seen@alive, its pid and pane",
        WORN,
        make(Kind.PROCESS_SEEN, pid=77, tmux=TmuxLocation("%3", "/tmp/sock")),
        {"alive": True, "pid": 77, "tmux": TmuxLocation("%3", "/tmp/sock")},
    ),
    (
        "process_seen@the poller's pane wins over what the session knew of it",
        replace(WORN, tmux=TmuxLocation("%3", "/tmp/sock", "main", "1")),
        make(Kind.PROCESS_SEEN, tmux=TmuxLocation("%3", "/tmp/other")),
        {"alive": True, "tmux": TmuxLocation("%3", "/tmp/other")},
    ),
    (
        "transcript@every fact, the retries of a running turn",
        WORN,
        make(
            Kind.TRANSCRIPT,
            snippet="Reading.",
            tokens=Tokens(5, 6),
            model="claude-sonnet-4-5",
            current_tool="",
            context_tokens=900,
            cost_usd=0.25,
            cost_source="computed",
            retries=2,
            title="From the transcript",
        ),
        {
            "snippet": "Reading.",
            "tokens": Tokens(5, 6),
            "model": "claude-sonnet-4-5",
            "cost_usd": 0.25,
            "cost_source": "computed",
            "context_tokens": 900,
            "retries": 2,
            "title": "From the transcript",
            "title_at": 10.0,
            "current_tool": None,
        },
    ),
    (
        "transcript@a compaction forgets the context size; retries of no turn are none",
        replace(WORN, state=State.IDLE, context_tokens=5),
        make(Kind.TRANSCRIPT, compacted=True, retries=2),
        {"context_tokens": None, "retries": 0},
    ),
    (
        "other@what any event carries",
        WORN,
        make(
            Kind.OTHER,
            cwd="/work/app",
            transcript_path="/work/s1.jsonl",
            tmux=TmuxLocation("%5"),
            permission_mode="plan",
            account="work",
        ),
        {
            "cwd": "/work/app",
            "transcript_path": "/work/s1.jsonl",
            "tmux": TmuxLocation("%5"),
            "permission_mode": "plan",
            "account": "work",
        },
    ),
    (
        "resume@the user arms resume at the reset of the wall it sits at",
        WORN,
        make(Kind.RESUME, wall_at=2.0, state="armed", by="cli"),
        {"resume": ResumeAtReset(2.0, "armed", "cli", 10.0, None)},
    ),
    (
        "resume@the daemon skipped it, with the reason",
        replace(WORN, resume=ResumeAtReset(2.0, "armed", "page", 3.0)),
        make(Kind.RESUME, wall_at=2.0, state="skipped", by="resume-at-reset", reason="typed"),
        {"resume": ResumeAtReset(2.0, "skipped", "resume-at-reset", 10.0, "typed")},
    ),
    (
        "other@a hook's bare pane keeps what the poller learnt of it",
        replace(WORN, tmux=TmuxLocation("%5", "/tmp/sock", "main", "1")),
        make(Kind.OTHER, tmux=TmuxLocation("%5")),
        {},
    ),
]


@pytest.mark.parametrize(
    ("before", "event", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_event_sets_exactly_its_fields(
    before: Session, event: Event, expected: dict[str, Any]
) -> None:
    assert field_changes(before, event) == expected


def test_every_field_rule_has_a_case() -> None:
    assert {c[2].kind for c in CASES} >= set(FIELD_RULES)


def test_an_event_naming_its_agent_sets_the_sessions_agent_and_one_naming_none_keeps_it() -> None:
    from purplemux.core.machine import step

    codex, _ = step(Session(id="s"), ev.Prompt(session_id="s", at=1.0, id="p", agent="codex"))
    assert codex.agent == "codex"
    kept, _ = step(codex, ev.Stop(session_id="s", at=2.0, id="t"))  # (a source that cannot tell)
    assert kept.agent == "codex"


def test_the_window_an_agent_reports_sets_the_sessions_context_window() -> None:
    from purplemux.core.machine import step

    facts = ev.TranscriptFacts(
        session_id="s", at=1.0, id="f", context_tokens=200_000, context_window=258_400
    )
    s, _ = step(Session(id="s"), facts)
    assert (s.context_window, s.to_json()["context"]["window"]) == (258_400, 258_400)


def test_an_event_naming_a_job_makes_the_session_a_background_one_and_others_keep_it() -> None:
    from purplemux.core.machine import step

    bg, _ = step(Session(id="s"), ev.StatusBusy(session_id="s", at=1.0, id="b", job_id="4c5f61e3"))
    assert (bg.background, bg.job_id, bg.to_json()["background"]) == (True, "4c5f61e3", True)
    kept, _ = step(bg, ev.Stop(session_id="s", at=2.0, id="t"))  # a hook: it cannot tell
    assert (kept.background, kept.job_id) == (True, "4c5f61e3")
    plain, _ = step(Session(id="p"), ev.Stop(session_id="p", at=2.0, id="t2"))
    assert (plain.background, plain.job_id) == (False, None)
