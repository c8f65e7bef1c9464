"""The one "live entry, notify once" rule, and that every notifier decides by it."""

from __future__ import annotations

import pytest

from purplemux.core.model import State
from purplemux.daemon.engine import Engine
from purplemux.hosts.remote import RemoteView, Sink
from purplemux.notify.once import LIVE_SLACK, LiveEntries


def test_an_entry_into_attention_notifies_once() -> None:
    entries = LiveEntries(live_since=100.0)
    assert entries.first(("s", "needs-input", 101.0), State.NEEDS_INPUT, 101.0)
    assert not entries.first(("s", "needs-input", 101.0), State.NEEDS_INPUT, 101.0)
    assert entries.first(("s", "review", 102.0), State.REVIEW, 102.0)  # another entry
    assert entries.first(("s", "needs-input", 103.0), State.NEEDS_INPUT, 103.0)  # a new entry


@pytest.mark.parametrize("state", [State.IDLE, State.BUSY, State.UNKNOWN])
def test_other_states_never_notify(state: State) -> None:
    assert not LiveEntries(live_since=100.0).first(("s", state.value, 101.0), state, 101.0)


def test_history_and_replays_do_not_notify_and_are_not_remembered() -> None:
    entries = LiveEntries(live_since=100.0)
    old = 100.0 - LIVE_SLACK - 0.5
    assert not entries.first(("s", "review", old), State.REVIEW, old)
    skewed = 100.0 - LIVE_SLACK + 0.5  # a clock a little behind ours: still live
    assert not entries.first(("s", "review", skewed), State.REVIEW, skewed, live=False)
    assert entries.first(("s", "review", skewed), State.REVIEW, skewed)


def test_the_memory_is_bounded_oldest_first() -> None:
    entries = LiveEntries(remember=2)
    for at in (1.0, 2.0, 3.0):
        assert entries.first(("s", at), State.REVIEW, at)
    assert entries.first(("s", 1.0), State.REVIEW, 1.0)  # forgotten: it would notify again
    assert not entries.first(("s", 3.0), State.REVIEW, 3.0)
    with pytest.raises(ValueError):
        LiveEntries(remember=0)


def test_the_engine_and_the_view_of_other_hosts_decide_by_it() -> None:
    engine = Engine(store=None, clock=lambda: 500.0)  # type: ignore[arg-type]
    assert isinstance(engine.entries, LiveEntries) and engine.entries.live_since == 500.0
    sink = Sink(session=lambda row: None, removed=lambda sid: None, notify=lambda row: None)
    view = RemoteView("me", sink, live_since=500.0)
    assert isinstance(view.entries, LiveEntries) and view.entries.live_since == 500.0
