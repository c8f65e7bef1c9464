"""PushPolicy: which Notify effects become pushes."""

from __future__ import annotations

import pytest

from purplemux.core.machine import Notify
from purplemux.core.model import Session, State
from purplemux.notify.policy import PushPolicy, Verdict

S = Session(id="a", state=State.NEEDS_INPUT, cwd="/w/shop")


@pytest.mark.parametrize("state", [State.IDLE, State.BUSY, State.UNKNOWN])
def test_no_push_for_states_that_need_nobody(state: State) -> None:
    policy = PushPolicy()
    assert policy.decide(S, Notify(state, 10.0), now=10.0) is Verdict.NOT_ATTENTION


@pytest.mark.parametrize("state", [State.NEEDS_INPUT, State.REVIEW])
def test_push_for_entries_that_need_the_user(state: State) -> None:
    assert PushPolicy().should_push(S, Notify(state, 10.0), now=10.0)


def test_each_entry_is_pushed_once() -> None:
    policy = PushPolicy()
    entry = Notify(State.NEEDS_INPUT, 10.0)
    assert policy.decide(S, entry, now=10.0) is Verdict.PUSH
    assert policy.decide(S, entry, now=11.0) is Verdict.DUPLICATE
    # A new entry (another `since`) and the same entry for another session are new.
    assert policy.should_push(S, Notify(State.NEEDS_INPUT, 20.0), now=20.0)
    assert policy.should_push(Session(id="b"), entry, now=20.0)
    assert policy.should_push(S, Notify(State.REVIEW, 20.0), now=20.0)


def test_remembered_entries_are_bounded() -> None:
    policy = PushPolicy(remember=3)
    for i in range(5):
        assert policy.should_push(S, Notify(State.REVIEW, float(i)), now=float(i))
    assert policy.decide(S, Notify(State.REVIEW, 4.0), now=9.0) is Verdict.DUPLICATE
    # Three are kept: the oldest was forgotten, and would be decided again.
    assert policy.decide(S, Notify(State.REVIEW, 2.0), now=9.0) is Verdict.DUPLICATE
    assert policy.decide(S, Notify(State.REVIEW, 0.0), now=9.0) is Verdict.PUSH


def test_no_push_while_a_dashboard_page_is_focused() -> None:
    policy = PushPolicy()
    assert policy.decide(S, Notify(State.REVIEW, 1.0), now=1.0, focused_pages=1) is Verdict.FOCUSED
    assert (
        policy.decide(S, Notify(State.REVIEW, 2.0), now=2.0, focused_pages={"page-1"})
        is Verdict.FOCUSED
    )
    assert policy.should_push(S, Notify(State.REVIEW, 3.0), now=3.0, focused_pages=set())
    assert policy.should_push(S, Notify(State.REVIEW, 4.0), now=4.0, focused_pages=0)


def test_an_entry_seen_on_a_focused_page_is_not_pushed_later() -> None:
    policy = PushPolicy()
    entry = Notify(State.NEEDS_INPUT, 5.0)
    assert policy.decide(S, entry, now=5.0, focused_pages=2) is Verdict.FOCUSED
    assert policy.decide(S, entry, now=6.0, focused_pages=0) is Verdict.DUPLICATE


def test_cooldown_is_per_session() -> None:
    policy = PushPolicy(cooldown=30.0)
    other = Session(id="b")
    assert policy.should_push(S, Notify(State.NEEDS_INPUT, 100.0), now=100.0)
    assert policy.decide(S, Notify(State.REVIEW, 110.0), now=110.0) is Verdict.COOLDOWN
    assert policy.should_push(other, Notify(State.REVIEW, 110.0), now=110.0)
    # Measured from the last push, not from the skipped entry.
    assert policy.should_push(S, Notify(State.NEEDS_INPUT, 130.0), now=130.0)


def test_no_cooldown_by_default() -> None:
    policy = PushPolicy()
    assert policy.should_push(S, Notify(State.NEEDS_INPUT, 1.0), now=1.0)
    assert policy.should_push(S, Notify(State.REVIEW, 1.1), now=1.1)


def test_forget_clears_the_cooldown() -> None:
    policy = PushPolicy(cooldown=60.0)
    assert policy.should_push(S, Notify(State.REVIEW, 1.0), now=1.0)
    policy.forget(S.id)
    assert policy.should_push(S, Notify(State.REVIEW, 2.0), now=2.0)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        PushPolicy(cooldown=-1)
    with pytest.raises(ValueError):
        PushPolicy(remember=0)


def test_context_alerts_once_per_entry_into_critical() -> None:
    from purplemux.notify.policy import ContextAlerts

    alerts = ContextAlerts()
    alerts.seed("old", "critical")  # already critical when the daemon started: no alert
    assert not alerts.entered_critical("old", "critical")
    seen = [
        alerts.entered_critical("s", band)
        for band in ("", "healthy", "warning", "critical", "critical", "compacting", "critical")
    ]
    # Once on entry; a compaction running and falling back to critical is not a new entry.
    assert seen == [False, False, False, True, False, False, False]
    assert not alerts.entered_critical("s", "healthy")
    assert alerts.entered_critical("s", "critical")  # after dropping below: a new entry
    alerts.forget("s")
    assert alerts.entered_critical("s", "critical")  # forgotten: counted from below again
