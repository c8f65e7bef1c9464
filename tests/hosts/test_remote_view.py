"""The merged view of other hosts' sessions: ordering by the owner's seq, stale, prune, notify."""

from __future__ import annotations

from typing import Any

import pytest

from purplemux.core.model import Session, State
from purplemux.hosts import remote, rows
from purplemux.hosts.remote import RemoteView, Sink


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


# --- rows from outside: checked, capped, never shadowing -------------------------------------

BAD_FIELDS: list[dict[str, Any]] = [
    {"cwd": 123},
    {"state": "sleeping"},
    {"seq": "7"},
    {"updated_at": float("nan")},
    {"pid": True},
    {"alive": "yes"},
    {"id": ""},
    {"id": "x" * (rows.MAX_ID + 1)},
    {"title": "t" * (rows.MAX_TEXT + 1)},
    {"tokens": {"input": 1}},
    {"tokens": None},
    {"tmux": {"pane": 5}},
    {"tmux": {"pane": "%1", "evil": "x"}},
    {"last_event": {"name": "Stop", "at": "now"}},
    {"context": {"tokens": 1, "window": 2, "percent": 3.0, "band": None}},
    {"background_tasks": {"id": "t"}},
    {"background_tasks": [{"id": "t", "type": "shell", "status": "running"}] * 65},
    {"cost_usd": -1},
]


@pytest.mark.parametrize("bad", BAD_FIELDS, ids=lambda b: next(iter(b)))
def test_a_malformed_row_is_refused_alone_and_logged_once(
    bad: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    rec = Recorder()
    v = view(rec)
    good = owner_row("good", 1)
    row = {**owner_row("bad", 1), **bad}
    for _ in range(3):  # read again and again: from the stream, then whole hashes
        assert not v.apply("bravo", row)
        v.replace_host("bravo", {"good": good, str(row["id"]): row})
    assert [r["id"] for r in v.snapshot(include_ended=True)] == ["good"]
    assert [r["id"] for r in rec.sessions] == ["good"]
    lines = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(lines) == 1 and "bravo" in lines[0], lines


def test_rows_from_outside_are_plain_fields_only() -> None:
    v = view(Recorder())
    data = {**owner_row("s1", 1), "host": "alpha", "view": {"name": "lie"}, "extra": "x" * 100}
    assert v.apply("bravo", data)
    (row,) = v.snapshot(include_ended=True)
    assert row["host"] == "bravo" and row["view"]["host"] == "bravo"  # ours, not the row's
    assert "extra" not in row and set(row) == {
        *rows.FIELDS,
        "host",
        "stale",
        "offline_since",
        "view",
    }


def test_hosts_and_rows_are_capped_with_one_log_line_each(caplog: pytest.LogCaptureFixture) -> None:
    v = view(Recorder())
    for h in range(3):  # 3 x 2,000 rows: the total cap holds them to 5,000
        batch = {f"h{h}-{n}": owner_row(f"h{h}-{n}", 1) for n in range(remote.MAX_HOST_ROWS)}
        v.replace_host(f"host{h}", batch)
    assert len(v.snapshot(include_ended=True)) == remote.MAX_ROWS
    over = {f"o-{n}": owner_row(f"o-{n}", 1, since=float(n)) for n in range(2_010)}
    v.replace_host("host0", over)  # too many for one host: its newest 2,000
    held = {r["id"] for r in v.snapshot(include_ended=True) if r["host"] == "host0"}
    assert len(held) == remote.MAX_HOST_ROWS and "o-2009" in held and "o-0" not in held
    for h in range(3, remote.MAX_HOSTS + 3):
        v.apply(f"host{h}", owner_row(f"x{h}", 1))
    assert len(v.host_names()) == remote.MAX_HOSTS
    assert not v.apply("not a host!", owner_row("y", 1))
    said = [r.getMessage() for r in caplog.records]
    assert sum("other hosts hold more than" in s for s in said) == 1
    assert sum("sessions: the rest are not shown" in s for s in said) == 1
    assert sum(f"more than {remote.MAX_HOSTS} other hosts" in s for s in said) == 1
    assert sum("not a host name" in s for s in said) == 1


def test_a_local_session_always_wins_its_id_and_an_id_keeps_its_first_host() -> None:
    rec = Recorder()
    local = {"mine"}
    v = RemoteView("me", rec.sink(), live_since=50.0, is_local=local.__contains__)
    assert not v.apply("bravo", owner_row("mine", 1, State.NEEDS_INPUT))
    assert v.apply("bravo", owner_row("theirs", 1))
    assert not v.apply("charlie", owner_row("theirs", 2, State.NEEDS_INPUT))
    v.replace_host("charlie", {"theirs": owner_row("theirs", 3), "own": owner_row("own", 1)})
    assert v.get("mine") is None and v.get("theirs")["host"] == "bravo"  # type: ignore[index]
    assert v.get("own")["host"] == "charlie"  # type: ignore[index]
    assert v.apply("bravo", owner_row("later", 1))
    local.add("later")  # a local session starts with that id: from now on it is the local one
    assert v.get("later") is None
    assert "later" not in {r["id"] for r in v.snapshot(include_ended=True)}
    assert "later" not in {s.id for s in v.views(include_ended=True)}
    v.remove("bravo", "later")
    assert "later" not in rec.removed  # the page's row of that id is the local one: it stays
    assert [r["id"] for r in rec.sessions] == ["theirs", "own", "later"]
