"""The merged view of other hosts' sessions: ordering by the owner's seq, stale, prune, notify."""

from __future__ import annotations

from typing import Any

from purplemux.hosts.remote import RemoteView, Sink
from purplemux.model import Session, State


class Recorder:
    def __init__(self) -> None:
        self.sessions: list[dict[str, Any]] = []
        self.removed: list[str] = []
        self.notified: list[dict[str, Any]] = []

    def sink(self) -> Sink:
        return Sink(self.sessions.append, self.removed.append, self.notified.append)


def owner_row(
    sid: str, seq: int, state: State = State.IDLE, since: float = 100.0
) -> dict[str, Any]:
    data = Session(id=sid, state=state, state_since=since, seq=seq, updated_at=since).to_json()
    data.update(host="liar", stale=False, offline_since=None)
    return data


def view(rec: Recorder) -> RemoteView:
    return RemoteView("me", rec.sink(), live_since=50.0)


def test_rows_carry_their_owner_and_older_changes_lose() -> None:
    rec = Recorder()
    v = view(rec)
    assert v.apply("bravo", owner_row("s1", 2, State.BUSY))
    assert not v.apply("bravo", owner_row("s1", 1, State.IDLE))  # late: the owner moved on
    assert not v.apply("bravo", owner_row("s1", 2, State.BUSY))  # a repeat publishes nothing
    assert not v.apply("me", owner_row("mine", 1))  # our own come from our engine, not here
    (row,) = v.snapshot(include_ended=True)
    assert row["host"] == "bravo" and row["state"] == "busy" and row["stale"] is False
    assert v.get("s1") == row and v.get("mine") is None
    assert len(rec.sessions) == 1


def test_a_host_that_stops_beating_goes_stale_then_returns_and_is_pruned_at_last() -> None:
    rec = Recorder()
    v = view(rec)
    v.apply("bravo", owner_row("s1", 1))
    v.presence("bravo", 200.0, now=201.0)
    v.presence("bravo", None, now=215.0)
    row = v.get("s1")
    assert row is not None and row["stale"] is True and row["offline_since"] == 200.0
    assert rec.sessions[-1] == row  # the feed hears of it
    v.presence("bravo", None, now=216.0)
    assert len(rec.sessions) == 2  # once
    v.presence("bravo", 230.0, now=230.5)
    assert v.get("s1")["stale"] is False  # type: ignore[index]
    v.presence("bravo", None, now=240.0)
    assert v.prune(now=250.0, after=100.0) == []
    assert v.prune(now=400.0, after=100.0) == ["bravo"]
    assert v.snapshot(include_ended=True) == [] and rec.removed == ["s1"]


def test_a_republished_host_replaces_its_rows_without_notifying() -> None:
    rec = Recorder()
    v = view(rec)
    v.apply("bravo", owner_row("gone", 1))
    v.replace_host("bravo", {"s2": owner_row("s2", 5, State.REVIEW, since=60.0)})
    assert [r["id"] for r in v.snapshot(include_ended=True)] == ["s2"]
    assert rec.removed == ["gone"] and rec.notified == []


def test_a_live_remote_entry_notifies_once_and_history_never() -> None:
    rec = Recorder()
    v = view(rec)
    v.apply("bravo", owner_row("s1", 1, State.REVIEW, since=60.0), notify=True)
    v.apply("bravo", owner_row("s1", 2, State.REVIEW, since=60.0), notify=True)  # same entry
    v.apply("bravo", owner_row("old", 1, State.REVIEW, since=10.0), notify=True)  # before us
    v.apply("bravo", owner_row("s2", 1, State.BUSY, since=70.0), notify=True)  # not attention
    assert [(r["id"], r["host"]) for r in rec.notified] == [("s1", "bravo")]
    v.apply("bravo", owner_row("s1", 3, State.NEEDS_INPUT, since=80.0), notify=True)
    assert [r["state"] for r in rec.notified] == ["review", "needs-input"]
