"""The transition table and the reducer: every pair, reachability, ordering, the real scenario."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from purplemux.core import events as ev
from purplemux.core.events import Event, Kind, Source
from purplemux.core.machine import (
    GUARDS,
    IDLE_GRACE,
    TABLE,
    TITLE_LAG,
    Notify,
    ScheduleTick,
    describe,
    fold,
    render_mermaid,
    step,
)
from purplemux.core.model import Session, State, TmuxLocation
from purplemux.core.timeline import Timeline
from tests.support.samples import EXPECTED, hook_events

SID = "s1"


def make(kind: Kind, at: float = 10.0, **fields: Any) -> Event:
    cls = ev.EVENT_TYPES[kind]
    return cls(session_id=SID, at=at, id=f"{kind}-{at}", **fields)


def test_every_pair_is_listed() -> None:
    assert set(TABLE) == set(Kind)
    for kind, row in TABLE.items():
        assert set(row) == set(State), kind
        for state, rule in row.items():
            assert rule.guard is None or rule.guard in GUARDS
            # An unchanged pair says why, unless it is a self-transition.
            if rule.to is None:
                assert rule.why, (kind, state)


# Each pair's expected state is pinned in tests/expected_transitions.md (written from DESIGN.md,
# not from TABLE) and checked in tests/test_expected_transitions.py, guards both ways.


def test_every_state_reachable_from_idle_and_none_is_a_trap() -> None:
    edges: dict[State, set[State]] = {s: set() for s in State}
    for row in TABLE.values():
        for state, rule in row.items():
            if rule.to is not None:
                edges[state].add(rule.to)
    seen, todo = {State.IDLE}, [State.IDLE]
    while todo:
        for nxt in edges[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    assert seen == set(State)
    for state in State:
        assert edges[state] - {state}, f"{state} is a trap"
    # unknown never waits for a person: it leaves by non-user events alone.
    user_kinds = {Kind.DISMISS, Kind.PROMPT}
    assert any(
        TABLE[k][State.UNKNOWN].to not in (None, State.UNKNOWN) for k in Kind if k not in user_kinds
    )


def test_states_prints_markdown_and_mermaid() -> None:
    text = describe()
    assert "| event \\ from | idle | busy | needs-input | review | unknown |" in text
    assert "stateDiagram-v2" in text
    assert "busy --> review: stop, stop_failure" in render_mermaid()
    for kind in Kind:
        assert f"| {kind.value} |" in text


# --- the captured real scenario -------------------------------------------------------------


def test_real_scenario_state_after_every_hook() -> None:
    sessions: dict[str, Session] = {}
    events = hook_events()
    assert [e.label for e in events] == [name for name, _, _ in EXPECTED]
    for e, (name, prefix, expected) in zip(events, EXPECTED, strict=True):
        s = sessions.get(e.session_id) or Session(id=e.session_id)
        s, _ = step(s, e)
        sessions[e.session_id] = s
        assert e.session_id.startswith(prefix)
        assert s.state is expected, (name, s.state)
        if name == "PermissionRequest":
            assert s.waiting_for == "Bash: touch made-by-claude.txt"
        if name == "PreCompact":
            assert s.compacting
        if name == "PostCompact":
            assert not s.compacting
    first, second = sessions.values()
    assert first.ended and first.alive is False
    assert second.ended
    assert second.tmux == TmuxLocation(pane="%0")
    assert first.snippet == "Done."


def test_question_scenario() -> None:
    states = []
    s = Session(id="q")
    for e in hook_events("hooks-question.jsonl"):
        s, _ = step(replace(s, id=e.session_id), e)
        states.append((e.label, s.state, s.waiting_for))
    assert [st for _, st, _ in states] == [
        State.IDLE,
        State.BUSY,
        State.NEEDS_INPUT,
        State.NEEDS_INPUT,
        State.NEEDS_INPUT,
        State.BUSY,
        State.REVIEW,
        State.IDLE,
    ]
    assert states[2][2] == "Which colour should the button be?"


def test_stop_failure_sets_error() -> None:
    s = Session(id="x", state=State.BUSY)
    (e,) = hook_events("hooks-stopfailure.jsonl")
    s, _ = step(replace(s, id=e.session_id), e)
    assert s.state is State.REVIEW
    assert s.error == "API Error: 400 scripted failure"


# --- ordering, idempotence, guards ----------------------------------------------------------


def test_arrival_order_never_changes_the_result() -> None:
    """(The one exception, a spell's start found to be earlier than it was shown: below.)"""
    events = [e for e in hook_events() if e.session_id.startswith("054c")]
    expected = fold(Session(id=events[0].session_id), sorted(events, key=lambda e: (e.at, e.id)))
    rng = random.Random(7)
    for _ in range(200):
        shuffled = events[:]
        rng.shuffle(shuffled)
        timeline = Timeline(Session(id=events[0].session_id))
        for e in shuffled:
            timeline.apply(e)
        assert timeline.current == expected


def test_a_spell_found_to_begin_earlier_keeps_the_start_it_was_shown_with() -> None:
    """A late hook folded in its place can show that the state on the badge began earlier than
    it was first seen (the session file said "waiting" before the PermissionRequest's POST came).
    The state and its fields are what the sorted fold gives; its start stays the one it was shown
    with, so the prompt id a push or a page holds (made from it) stays good, and no second push
    goes out for the same dialog."""
    t = Timeline(Session(id=SID))
    t.apply(make(Kind.PROMPT, at=1.0, prompt="RUN:touch x"))
    _, shown = t.apply(make(Kind.STATUS_WAITING, at=2.4, waiting_for="approve Bash: touch x"))
    assert (t.current.state, t.current.state_since) == (State.NEEDS_INPUT, 2.4)
    assert Notify(State.NEEDS_INPUT, 2.4) in shown
    _, late = t.apply(make(Kind.PERMISSION, at=2.0, tool_name="Bash", waiting_for="Bash: touch x"))
    events = [e.event for e in t.entries]
    sorted_fold = fold(Session(id=SID), sorted(events, key=lambda e: (e.at, e.id)))
    assert sorted_fold.state_since == 2.0  # in source-time order the spell began at the hook
    assert t.current == replace(sorted_fold, state_since=2.4)
    assert not [e for e in late if isinstance(e, Notify)]
    # A spell that ends and begins again is a new one, with its own start.
    t.apply(make(Kind.TOOL_END, at=3.0, tool_name="Bash"))
    t.apply(make(Kind.PERMISSION, at=4.0, tool_name="Bash"))
    assert (t.current.state, t.current.state_since) == (State.NEEDS_INPUT, 4.0)


def test_late_stop_before_file_idle_gives_review_without_idle() -> None:
    s = Session(id=SID, state=State.BUSY)
    t = Timeline(s)
    # The file turns idle (t=10.06) before the Stop hook's POST (source time 10.0) lands.
    _, eff = t.apply(make(Kind.STATUS_IDLE, at=10.06))
    assert t.current.state is State.BUSY
    assert ScheduleTick(10.06 + IDLE_GRACE) in eff
    t.apply(make(Kind.STOP, at=10.0))
    assert t.current.state is State.REVIEW
    t.apply(make(Kind.TICK, at=10.06 + IDLE_GRACE))
    assert t.current.state is State.REVIEW


def test_file_idle_alone_becomes_idle_after_the_grace() -> None:
    s = Session(id=SID, state=State.BUSY)
    s, _ = step(s, make(Kind.STATUS_IDLE, at=10.0))
    assert s.state is State.BUSY
    s2, _ = step(s, make(Kind.TICK, at=10.0 + IDLE_GRACE / 2))
    assert s2.state is State.BUSY
    s3, _ = step(s, make(Kind.TICK, at=10.0 + IDLE_GRACE))
    assert s3.state is State.IDLE


def test_a_titles_spinner_just_after_the_stop_does_not_reopen_the_turn() -> None:
    """Codex's pane title lags its turn: read busy 40 ms after the Stop and idle 10 ms later
    (seen under load, tests/e2e/test_codex_accounts_e2e.py), it must not turn review into
    busy and then, by the idle grace, into idle: the turn stays finished, not yet looked at."""
    t = Timeline(Session(id=SID, state=State.BUSY))
    t.apply(make(Kind.STOP, at=18.777))
    assert (t.current.state, t.current.state_since) == (State.REVIEW, 18.777)
    title = Source.PANE_TITLE
    t.apply(make(Kind.STATUS_BUSY, at=18.820, source=title))
    assert t.current.state is State.REVIEW
    _, effects = t.apply(make(Kind.STATUS_IDLE, at=18.830, source=title))
    assert t.current.state is State.REVIEW
    assert not [e for e in effects if isinstance(e, ScheduleTick)]  # no idle grace armed
    t.apply(make(Kind.TICK, at=18.830 + IDLE_GRACE))
    assert t.current.state is State.REVIEW


def test_a_title_busy_after_the_lag_or_any_other_busy_is_a_new_turn() -> None:
    review = Session(id=SID, state=State.REVIEW, state_since=10.0)
    late, _ = step(review, make(Kind.STATUS_BUSY, at=10.0 + TITLE_LAG, source=Source.PANE_TITLE))
    assert late.state is State.BUSY  # the spinner after the lag: a turn the hooks did not tell
    early, _ = step(review, make(Kind.STATUS_BUSY, at=10.1, source=Source.PANE_TITLE))
    assert early.state is State.REVIEW
    for source in (Source.SESSION_FILE, Source.TRANSCRIPT, Source.HOOK):
        moved, _ = step(review, make(Kind.STATUS_BUSY, at=10.1, source=source))
        assert moved.state is State.BUSY, source  # only a title lags its turn
    ended = replace(review, ended=True, pid=7)
    same, _ = step(ended, make(Kind.STATUS_BUSY, at=20.0, source=Source.PANE_TITLE, pid=7))
    assert same.state is State.REVIEW  # and an ended session stays settled, as before
    other, _ = step(ended, make(Kind.STATUS_BUSY, at=20.0, source=Source.PANE_TITLE, pid=8))
    assert other.state is State.BUSY


def test_parallel_tool_end_does_not_clear_the_dialog() -> None:
    s = Session(id=SID, state=State.BUSY)
    a = make(Kind.TOOL_START, at=1, tool_name="Bash", tool_use_id="A", digest="da")
    b = make(Kind.TOOL_START, at=2, tool_name="Read", tool_use_id="B", digest="db")
    ask = make(Kind.PERMISSION, at=3, tool_name="Bash", digest="da", waiting_for="Bash: rm x")
    s = fold(s, [a, b, ask])
    assert s.state is State.NEEDS_INPUT
    assert s.pending_tool is not None and s.pending_tool.tool_use_id == "A"
    s = fold(s, [make(Kind.TOOL_END, at=4, tool_name="Read", tool_use_id="B", digest="db")])
    assert s.state is State.NEEDS_INPUT
    s = fold(s, [make(Kind.TOOL_END, at=5, tool_name="Bash", tool_use_id="A", digest="da")])
    assert s.state is State.BUSY
    assert s.waiting_for is None


def test_late_notification_does_not_reopen_a_finished_turn() -> None:
    s = Session(id=SID, state=State.REVIEW)
    s2, effects = step(s, make(Kind.ATTENTION, notification_type="permission_prompt"))
    assert s2.state is State.REVIEW
    assert not any(isinstance(e, Notify) for e in effects)


def test_notify_only_on_entry() -> None:
    s = Session(id=SID, state=State.BUSY)
    s, e1 = step(s, make(Kind.PERMISSION, at=1, tool_name="Bash"))
    s, e2 = step(s, make(Kind.ATTENTION, at=2, notification_type="permission_prompt"))
    assert Notify(State.NEEDS_INPUT, 1) in e1
    assert not any(isinstance(e, Notify) for e in e2)


def test_restart_turns_busy_into_unknown_and_file_resolves_it() -> None:
    s = Session(id=SID, state=State.BUSY)
    s, _ = step(s, make(Kind.RESTART, at=1))
    assert s.state is State.UNKNOWN
    busy, _ = step(s, make(Kind.STATUS_BUSY, at=2))
    assert busy.state is State.BUSY
    done, _ = step(s, make(Kind.STOP, at=2))
    assert done.state is State.REVIEW
    gone, _ = step(s, make(Kind.PROCESS_GONE, at=2))
    assert gone.state is State.IDLE and gone.ended


def test_the_status_of_the_process_that_ended_a_session_does_not_move_it() -> None:
    # /clear on 2.1.197: SessionEnd, then the file turns busy while it still names the old id.
    s = Session(id=SID, state=State.REVIEW, pid=42)
    s = fold(
        s,
        [
            make(Kind.SESSION_END, at=1, reason="clear"),
            make(Kind.STATUS_BUSY, at=2, pid=42),
            make(Kind.STATUS_WAITING, at=3, pid=42),
        ],
    )
    assert s.state is State.IDLE and s.ended
    # Another process (a resume) speaks for the session again.
    resumed, _ = step(s, make(Kind.STATUS_BUSY, at=4, pid=43))
    assert resumed.state is State.BUSY


def test_event_json_round_trip() -> None:
    for e in hook_events():
        assert ev.event_from_json(e.to_json()) == e
    assert ev.Tick(session_id="a", at=1, id="t", source=Source.DAEMON).to_json()["name"] == "tick"


def test_a_background_jobs_dialog_stays_needs_input_when_its_late_hooks_arrive() -> None:
    # The 2.1.332 capture (hooks-apikey-home.jsonl, jobs-files-over-time.jsonl): PreToolUse at
    # .694, state.json "blocked" at .919, PermissionRequest at 207.537. Under load the
    # PreToolUse can reach the daemon after state.json's event: it must not flip the row to
    # busy and back (the badge would blink, and the prompt's id would change under a reader).
    s = Session(id=SID)
    s, _ = step(s, make(Kind.PROMPT, at=205.866, prompt="RUN:touch x.txt"))
    s, _ = step(s, make(Kind.STATUS_WAITING, at=206.919, waiting_for="approve Bash: touch x.txt"))
    assert s.state is State.NEEDS_INPUT
    since = s.state_since
    s, _ = step(s, make(Kind.TOOL_START, at=206.694, tool_name="Bash", tool_use_id="t1"))
    assert (s.state, s.state_since) == (State.NEEDS_INPUT, since)
    s, effects = step(s, make(Kind.PERMISSION, at=207.537, tool_name="Bash"))
    assert (s.state, s.state_since) == (State.NEEDS_INPUT, since)
    assert not [e for e in effects if isinstance(e, Notify)]
    # The call's PostToolUse after the answer is the answer: busy again.
    s, _ = step(s, make(Kind.TOOL_END, at=313.142, tool_name="Bash", tool_use_id="t1"))
    assert s.state is State.BUSY
