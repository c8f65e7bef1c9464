"""Where the time went (purplemux.core.history): spans re-folded from the log, totals, the cache."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from purplemux.core import events as ev
from purplemux.core.events import Event, Kind, Source
from purplemux.core.history import Ledger, Span, events_from_rows, replay, summarize, totals
from purplemux.core.machine import IDLE_GRACE, fold
from purplemux.core.model import Session, State, Tokens
from purplemux.core.timeline import Timeline
from tests.support.samples import hook_events

IDLE, BUSY, NEEDS, REVIEW = State.IDLE, State.BUSY, State.NEEDS_INPUT, State.REVIEW
SID = "h1"
TOOL = {"tool_name": "Bash", "digest": "d1"}


def e(cls: type[Event], at: float, n: int | None = None, **kw: Any) -> Event:
    return cls(session_id=SID, at=at, id=f"e{n if n is not None else at}", **kw)


def working_day() -> list[Event]:
    """idle 100 → busy 110 → needs-input 130 → busy 160 → review 170 → idle (dismissed) 200."""
    return [
        e(ev.SessionStart, 100.0),
        e(ev.Prompt, 110.0, prompt="go"),
        e(ev.ToolStart, 120.0, tool_use_id="t1", **TOOL),
        e(ev.Permission, 130.0, **TOOL),
        e(ev.ToolEnd, 160.0, tool_use_id="t1", **TOOL),
        e(ev.Stop, 170.0, last_message="done"),
        e(ev.Dismiss, 200.0, source=Source.USER),
    ]


def test_spans_follow_the_badge_through_a_working_day() -> None:
    r = replay(SID, working_day(), now=260.0)
    assert r.spans == (
        Span(IDLE, 100.0, 110.0),
        Span(BUSY, 110.0, 130.0),
        Span(NEEDS, 130.0, 160.0),
        Span(BUSY, 160.0, 170.0),
        Span(REVIEW, 170.0, 200.0),
        Span(IDLE, 200.0, None),
    )
    assert [s.to_json() for s in r.spans][-1] == {"state": "idle", "from": 200.0, "to": None}
    assert r.session.state is IDLE
    t = totals(r, 0.0, 1000.0, now=260.0)
    assert t.seconds == {
        "idle": 70.0,
        "busy": 30.0,
        "needs-input": 30.0,
        "review": 30.0,
        "unknown": 0,
    }
    assert t.waited_on_you_s == 60.0
    assert (t.prompts, t.reviews, t.needed_you) == (1, 1, 2)
    assert t.answers == [30.0] and t.answer_median_s == 30.0


def test_the_log_order_does_not_matter() -> None:
    events = working_day()
    expected = replay(SID, events, now=300.0)
    rng = random.Random(4)
    for _ in range(20):
        shuffled = events[:]
        rng.shuffle(shuffled)
        assert replay(SID, shuffled, now=300.0) == expected


def test_the_replay_ends_where_the_live_timeline_did_for_the_captured_sessions() -> None:
    events = hook_events()
    for sid in {x.session_id for x in events}:
        mine = [x for x in events if x.session_id == sid]
        live = Timeline(Session(id=sid, state_since=mine[0].at))
        for x in mine:
            live.apply(x)
        r = replay(sid, list(reversed(mine)), now=mine[-1].at + 10)
        assert r.session.state is live.current.state
        assert r.session.ended == live.current.ended
        assert r.session == fold(Session(id=sid, state_since=mine[0].at), mine)


def test_an_ended_session_has_no_open_span_until_it_resumes() -> None:
    events = [
        e(ev.SessionStart, 10.0),
        e(ev.Prompt, 20.0),
        e(ev.Stop, 30.0),
        e(ev.SessionEnd, 40.0, reason="exit"),
        e(ev.SessionStart, 100.0, n=2, origin="resume"),
    ]
    assert replay(SID, events[:4], now=500.0).spans == (
        Span(IDLE, 10.0, 20.0),
        Span(BUSY, 20.0, 30.0),
        Span(REVIEW, 30.0, 40.0),
    )
    assert replay(SID, events, now=500.0).spans[-1] == Span(IDLE, 100.0, None)
    assert totals(replay(SID, events[:4], 500.0), 0, 500, 500).seconds["idle"] == 10.0


def test_the_idle_grace_tick_is_made_again_where_the_engine_made_it() -> None:
    events = [e(ev.Prompt, 10.0), e(ev.StatusIdle, 20.0)]
    early = replay(SID, events, now=20.1)
    assert early.spans[-1] == Span(BUSY, 10.0, None)
    assert early.next_tick == pytest.approx(20.0 + IDLE_GRACE)
    late = replay(SID, events, now=30.0)
    assert late.spans[-1] == Span(IDLE, 20.0 + IDLE_GRACE, None)
    assert late.next_tick is None
    # A Stop inside the grace wins: busy -> review, no idle.
    stopped = replay(SID, [*events, e(ev.Stop, 20.1)], now=30.0)
    assert [s.state for s in stopped.spans] == [BUSY, REVIEW]


def test_a_repeated_state_is_one_span_and_an_instant_is_no_span() -> None:
    events = [e(ev.Prompt, 10.0), e(ev.Prompt, 20.0, n=2), e(ev.StatusBusy, 25.0)]
    # First seen by its prompt: the idle of no length before it is not a span.
    assert replay(SID, events, now=30.0).spans == (Span(BUSY, 10.0, None),)
    # A turn that ends and restarts at the same instant stays one busy span.
    events = [e(ev.Prompt, 10.0, n=1), e(ev.Stop, 20.0, n=2), e(ev.Prompt, 20.0, n=3)]
    assert replay(SID, events, now=30.0).spans == (Span(BUSY, 10.0, None),)


def test_totals_clip_to_the_period_and_count_entries_inside_it() -> None:
    r = replay(SID, working_day(), now=260.0)
    t = totals(r, 140.0, 180.0, now=260.0)
    assert t.seconds["needs-input"] == 20.0  # 140..160
    assert t.seconds["busy"] == 10.0
    assert t.seconds["review"] == 10.0  # 170..180
    assert t.prompts == 0  # it asked at 130, before the period
    assert t.reviews == 1
    assert t.answer_median_s is None
    # An open span counts up to now, and not past `until`.
    assert totals(r, 0.0, 230.0, now=260.0).seconds["idle"] == 10.0 + 30.0
    assert totals(r, 0.0, 1e9, now=260.0).seconds["idle"] == 10.0 + 60.0


def test_median_answer_over_several_prompts() -> None:
    events: list[Event] = [e(ev.SessionStart, 0.0)]
    t = 10.0
    for n, wait in enumerate([5.0, 40.0, 12.0]):
        events += [
            e(ev.Prompt, t, n=n * 10 + 1),
            e(ev.Permission, t + 1, n=n * 10 + 2, **TOOL),
            e(ev.ToolEnd, t + 1 + wait, n=n * 10 + 3, tool_use_id=None, **TOOL),
            e(ev.Stop, t + 2 + wait, n=n * 10 + 4),
        ]
        t += 100
    r = replay(SID, events, now=t)
    result = totals(r, 0.0, t, now=t)
    assert result.prompts == 3
    assert sorted(result.answers) == [5.0, 12.0, 40.0]
    assert result.answer_median_s == 12.0


def test_tokens_spent_in_the_period_from_the_transcript_totals() -> None:
    events = [
        e(ev.SessionStart, 0.0),
        e(ev.TranscriptFacts, 10.0, tokens=Tokens(10, 100, 1000, 5), source=Source.TRANSCRIPT),
        e(ev.TranscriptFacts, 50.0, n=2, tokens=Tokens(30, 400, 3000, 5)),
        e(ev.TranscriptFacts, 90.0, n=3, tokens=Tokens(31, 500, 3500, 9)),
    ]
    r = replay(SID, events, now=100.0)
    assert totals(r, 20.0, 60.0, 100.0).tokens == Tokens(20, 300, 2000, 0)
    assert totals(r, 0.0, 100.0, 100.0).tokens == Tokens(31, 500, 3500, 9)
    assert totals(r, 0.0, 100.0, 100.0).to_json()["tokens"]["total"] == 31 + 500 + 3500 + 9
    assert totals(replay(SID, working_day(), 300.0), 0, 300, 300).tokens is None
    assert totals(r, 0.0, 100.0, 100.0).cost_usd is None


def test_summary_sums_the_sessions_that_lived_in_the_period() -> None:
    other = [
        ev.SessionStart(session_id="h2", at=100.0, id="x1"),
        ev.Prompt(session_id="h2", at=150.0, id="x2"),
        ev.Permission(session_id="h2", at=155.0, id="x3", **TOOL),
    ]
    old = [
        ev.SessionStart(session_id="h3", at=1.0, id="y1"),
        ev.SessionEnd(session_id="h3", at=2.0, id="y2"),
    ]
    rs = {
        SID: replay(SID, working_day(), 260.0),
        "h2": replay("h2", other, 260.0),
        "h3": replay("h3", old, 260.0),
    }
    s = summarize(rs, 50.0, 260.0, now=260.0)
    assert set(s.sessions) == {SID, "h2"}  # h3 ended before the period
    assert s.total.prompts == 2
    assert s.total.waited_on_you_s == 60.0 + (260.0 - 155.0)
    assert s.total.answers == [30.0]  # h2 has not been answered yet
    data = s.to_json({SID: {"project": "p"}})
    assert data["totals"]["sessions"] == 2
    assert data["sessions"][0]["id"] == "h2"  # waited longest first
    assert data["sessions"][1]["project"] == "p"
    assert data["totals"]["waited_on_you_s"] == 165.0


def test_rows_from_the_log_round_trip_and_bad_rows_are_skipped() -> None:
    rows = [x.to_json() for x in working_day()]
    rows.append({"kind": "no-such-kind", "session_id": SID, "at": 1.0, "id": "bad"})
    rows.append({"kind": "prompt"})
    events = events_from_rows(rows)
    assert len(events) == len(working_day())
    assert replay(SID, events, 260.0) == replay(SID, working_day(), 260.0)
    assert replay(SID, [], 1.0).spans == ()


def test_the_ledger_continues_a_fold_and_equals_a_whole_replay() -> None:
    events = sorted(hook_events() + hook_events("hooks-question.jsonl"), key=lambda e: (e.at, e.id))
    events += [replace(e, session_id=SID) for e in working_day()]
    now = max(e.at for e in events) + 10
    whole = {
        sid: replay(sid, [e for e in events if e.session_id == sid], now)
        for sid in {e.session_id for e in events}
    }
    rng = random.Random(5)
    ledger = Ledger()
    i = 0
    while i < len(events):
        n = rng.randint(1, 9)
        changed, late = ledger.add(events[i : i + n])
        assert not late and changed == {e.session_id for e in events[i : i + n]}
        i += n
        if rng.random() < 0.3:  # a restart: the folds come back from the store
            kept = Ledger()
            for sid in whole:
                if sid in ledger:
                    assert kept.load(sid, ledger.dump(sid))
            ledger = kept
    assert ledger.replays(now) == whole
    assert ledger.replays(now, SID) == {SID: whole[SID]}


def test_a_late_event_folds_that_session_again() -> None:
    day = working_day()
    now = max(e.at for e in day) + 10
    ledger = Ledger()
    ledger.add(day[:3] + day[4:])
    assert ledger.add([day[3]]) == (set(), {SID})
    ledger.refold(SID, day)
    assert ledger.replays(now) == {SID: replay(SID, day, now)}
    assert not Ledger().load(SID, "{not json")
    assert not Ledger().load(SID, '{"v": 0}')


def test_every_kind_can_be_replayed_without_error() -> None:
    events = [
        ev.EVENT_TYPES[k](session_id=SID, at=float(n), id=f"k{n}") for n, k in enumerate(Kind)
    ]
    r = replay(SID, events, now=100.0)
    assert r.spans and all(s.start <= (s.end or 100.0) for s in r.spans)
