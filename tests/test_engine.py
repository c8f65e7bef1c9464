"""The engine on its own: dedupe, batching, notify only on live entries, ticks, listeners."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest

from purplemux.core import events as ev
from purplemux.core.machine import IDLE_GRACE, Notify
from purplemux.core.model import Session, State, TmuxLocation
from purplemux.daemon import engine as engine_module
from purplemux.daemon import feed as feed_module
from purplemux.daemon.engine import Engine
from purplemux.daemon.feed import Subscriber
from purplemux.io.store_thread import AsyncStore
from tests.support import wait_for_async


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def running(engine: Engine) -> asyncio.Task[None]:
    return asyncio.create_task(engine.run())


def prompt(at: float, n: int = 0, sid: str = "s") -> ev.Event:
    return ev.Prompt(session_id=sid, at=at, id=f"p{n}-{at}")


def stop(at: float, n: int = 0, sid: str = "s") -> ev.Event:
    return ev.Stop(session_id=sid, at=at, id=f"s{n}-{at}", last_message="done")


@pytest.mark.asyncio
async def test_live_entry_notifies_once_and_history_never(store: AsyncStore) -> None:
    clock = Clock(1000.0)
    engine = Engine(store, clock=clock)
    seen: list[tuple[str, State]] = []
    engine.subscribe(notify=lambda s, n: seen.append((s.id, n.state)))
    task = await running(engine)
    # Live: a turn ends now -> one notification.
    await engine.submit(prompt(1000.0))
    await engine.submit(stop(1001.0))
    # The same entry again (duplicate id) and a late Notification: nothing more.
    await engine.submit(stop(1001.0))
    await engine.submit(
        ev.Attention(session_id="s", at=1002.0, id="n1", notification_type="permission_prompt")
    )
    # History: a turn that ended long before the daemon started -> no notification.
    await engine.submit(prompt(10.0, sid="old"))
    await engine.submit(stop(11.0, sid="old"))
    # Not live (spool drain, recovery): no notification.
    await engine.submit(prompt(1003.0, sid="drained"), live=False)
    await engine.submit(stop(1004.0, sid="drained"), live=False)
    await engine.stop()
    await task
    assert seen == [("s", State.REVIEW)]
    assert engine.sessions["old"].state is State.REVIEW
    assert engine.sessions["drained"].state is State.REVIEW
    assert engine.stats.duplicates == 1


@pytest.mark.asyncio
async def test_file_idle_becomes_idle_by_a_timer_not_a_person(store: AsyncStore) -> None:
    engine = Engine(store)
    task = await running(engine)
    now = time.time()
    await engine.submit(prompt(now))
    await engine.submit(ev.StatusIdle(session_id="s", at=now + 0.01, id="idle"))
    assert engine.sessions["s"].state is State.BUSY
    await wait_for_async(lambda: engine.sessions["s"].state is State.IDLE, timeout=5)
    assert engine.sessions["s"].state_since == pytest.approx(now + 0.01 + IDLE_GRACE)
    await engine.stop()
    await task


@pytest.mark.asyncio
async def test_sessions_persist_and_reload_with_restart(store: AsyncStore) -> None:
    engine = Engine(store)
    task = await running(engine)
    await engine.submit(prompt(5.0, sid="a"))
    await engine.submit(prompt(5.0, 1, sid="b"))
    await engine.submit(stop(6.0, sid="b"))
    await engine.stop()
    await task
    loaded = await store.call(lambda s: s.load_sessions())
    again = Engine(store)
    restarts = again.load(loaded)
    assert [e.session_id for e in restarts] == ["a"]
    assert restarts[0].at > 5.0
    task = await running(again)
    for e in restarts:
        await again.submit(e, live=False)
    await again.stop()
    await task
    assert again.sessions["a"].state is State.UNKNOWN
    assert again.sessions["b"].state is State.REVIEW
    assert again.sessions["a"].seq > engine.sessions["a"].seq


@pytest.mark.asyncio
async def test_a_batch_of_concurrent_events_is_one_transaction(store: AsyncStore) -> None:
    engine = Engine(store)
    changes: list[Session] = []
    engine.subscribe(change=changes.append)
    task = await running(engine)
    await asyncio.gather(*(engine.submit(prompt(float(i), i, sid=f"s{i}")) for i in range(300)))
    await engine.stop()
    await task
    assert len(engine.sessions) == 300
    assert engine.stats.batches < 300
    assert await store.call(lambda s: s.count_events()) == 300
    assert len(changes) == 300


def test_notify_effect_type() -> None:
    assert Notify(State.REVIEW, 1.0).state is State.REVIEW


@pytest.mark.asyncio
@pytest.mark.parametrize("end_first", [True, False])
async def test_clear_retires_the_old_row_whichever_hook_lands_first(
    store: AsyncStore, end_first: bool
) -> None:
    # /clear: SessionEnd for the old id, SessionStart for the new id on the same pane. Hooks
    # are delivered concurrently, so either may reach the daemon first.
    pane = TmuxLocation(pane="%0", socket="/tmp/tmux-0/default")
    other_server = TmuxLocation(pane="%0", socket="/tmp/tmux-0/other")
    engine = Engine(store)
    sub, _ = engine.feed.subscribe()
    task = await running(engine)
    for sid, where in (("old", pane), ("elsewhere", other_server)):
        await engine.submit(ev.SessionStart(session_id=sid, at=1.0, id=f"start-{sid}", tmux=where))
    end = ev.SessionEnd(session_id="old", at=2.0, id="end-old", tmux=pane, reason="clear")
    start = ev.SessionStart(session_id="new", at=2.1, id="start-new", tmux=pane, origin="clear")
    for event in (end, start) if end_first else (start, end):
        await engine.submit(event)
    await engine.submit(
        ev.SessionEnd(session_id="elsewhere", at=3.0, id="end-x", tmux=other_server)
    )
    await engine.stop()
    await task
    removed = []
    while not sub.queue.empty():
        text = sub.queue.get_nowait()
        if text is not None and json.loads(text)["type"] == "sessions":
            removed += json.loads(text)["removed"]
    assert removed == ["old"]


def messages(sub: Subscriber) -> list[dict[str, Any]]:
    """What a feed client has been sent so far, decoded."""
    out = []
    while not sub.queue.empty():
        text = sub.queue.get_nowait()
        assert text is not None
        out.append(json.loads(text))
        assert list(out[-1])[:2] == ["type", "seq"]  # a client may read the seq off the head
    return out


@pytest.mark.asyncio
async def test_what_arrives_together_is_one_message_per_client(store: AsyncStore) -> None:
    """Events queued together are one batch: one transaction and ONE feed message per client,
    carrying every changed session once, in its newest state; nothing is lost."""
    engine = Engine(store)
    clients = [engine.feed.subscribe() for _ in range(3)]
    assert all(snap["protocol"] == 3 and snap["sessions"] == [] for _, snap in clients)
    assert all(
        snap["list"]["layout"] == [] and snap["list"]["title"] == "purplemux" for _, snap in clients
    )
    # Queued before the engine runs: it takes them all as one batch.
    for i in range(5):
        engine.post(prompt(10.0, i, sid=f"s{i}"))
    engine.post(stop(11.0, 0, sid="s0"))  # s0's turn ends in the same batch
    task = await running(engine)
    await engine.stop()
    await task
    assert engine.stats.batches == 1
    assert await store.call(lambda s: s.count_events()) == 6
    sent = [messages(sub) for sub, _ in clients]
    assert sent[0] == sent[1] == sent[2]  # the same message, encoded once for all
    (msg,) = sent[0]
    assert msg["type"] == "sessions" and msg["seq"] == 1 and msg["removed"] == []
    states = {s["id"]: s["state"] for s in msg["sessions"]}
    assert states == {"s0": "review", "s1": "busy", "s2": "busy", "s3": "busy", "s4": "busy"}
    assert len(msg["sessions"]) == 5  # each session once
    # The dashboard's list after the batch travels with it: s0 alone waits for the user.
    assert msg["list"]["attention"] == ["s0"] and msg["list"]["title"] == "(1) purplemux"
    assert [r["id"] for r in msg["list"]["recent"]] == ["s0"]
    counts = {c["state"]: c["n"] for c in msg["list"]["counts"]}
    assert counts == {"needs-input": 0, "review": 1, "busy": 4, "idle": 0, "unknown": 0}
    assert msg["list"]["layout"] == engine.board().layout  # the layout changed: it is sent
    snapshot = json.loads(json.dumps(engine.snapshot()))  # as a new client would decode it
    assert {s["id"]: s for s in msg["sessions"]} == {s["id"]: s for s in snapshot}


@pytest.mark.asyncio
async def test_batched_messages_keep_each_sessions_order_and_a_gap_free_seq(
    store: AsyncStore,
) -> None:
    """Many sessions' turns submitted concurrently: a client that applies the messages in seq
    order ends where a fresh snapshot starts; each session's copies only move forward."""
    engine = Engine(store)
    sub, snap = engine.feed.subscribe()
    task = await running(engine)

    async def turns(sid: str) -> None:
        for n in range(6):  # prompt, stop, prompt, stop...: each waits until it is stored
            at = 100.0 + n
            kind = ev.Prompt if n % 2 == 0 else ev.Stop
            await engine.submit(kind(session_id=sid, at=at, id=f"{sid}-{n}"))

    await asyncio.gather(*(turns(f"t{i}") for i in range(20)))
    await engine.stop()
    await task
    assert await store.call(lambda s: s.count_events()) == 120  # nothing lost
    live = {s["id"]: s for s in snap["sessions"]}
    seq = snap["seq"]
    sent = messages(sub)
    # Batched, and batches coalesced (feed.GAP, feed.HOLD): no more messages than batches.
    assert len(sent) <= engine.stats.batches < 120
    for msg in sent:
        assert msg["type"] == "sessions" and msg["seq"] == seq + 1
        seq = msg["seq"]
        ids = [s["id"] for s in msg["sessions"]]
        assert len(ids) == len(set(ids))
        for s in msg["sessions"]:
            assert s["seq"] > live.get(s["id"], {"seq": 0})["seq"]  # in order, per session
            live[s["id"]] = s
    fresh = {s["id"]: s for s in json.loads(json.dumps(engine.feed.subscribe()[1]["sessions"]))}
    assert live == fresh
    assert {s["state"] for s in live.values()} == {"review"}
    assert {s["seq"] for s in live.values()} == {6}


@pytest.mark.asyncio
async def test_a_state_is_shown_only_once_it_is_stored(
    store: AsyncStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the API shows must survive a crash: a state seen before its commit could be lost by
    a kill at that moment (the restart would then not know the session was busy). The commit is
    held on the real store (a slow disk) to look at what the engine shows meanwhile."""
    sync = store.sync
    real_commit = sync.commit
    writing, release = threading.Event(), threading.Event()

    def held_commit(events: Any, sessions: Any) -> None:
        writing.set()
        release.wait(30)
        real_commit(events, sessions)

    engine = Engine(store)
    task = await running(engine)
    try:
        await engine.submit(prompt(1000.0))
        assert engine.sessions["s"].state is State.BUSY
        monkeypatch.setattr(sync, "commit", held_commit)
        engine.post(stop(1001.0))
        engine.post(ev.Prompt(session_id="new", at=1001.5, id="n1"))
        await asyncio.to_thread(writing.wait, 30)  # the engine is writing the batch now
        assert engine.sessions["s"].state is State.BUSY  # not review: not stored yet
        assert "new" not in engine.sessions
        assert [s["id"] for s in engine.snapshot()] == ["s"]
        release.set()
        await engine.submit(stop(1001.0))  # a duplicate: returns once the batch before is done
        assert engine.sessions["s"].state is State.REVIEW
        assert engine.sessions["new"].state is State.BUSY
        stored = {s.id: s for s in await store.call(lambda s: s.load_sessions())}
        assert stored == engine.sessions
    finally:
        release.set()
        await engine.stop()
        await task


@pytest.mark.asyncio
async def test_dedupe_reads_what_the_store_thread_just_committed(store: AsyncStore) -> None:
    """The engine asks which events are stored already on its own thread (a read-only
    connection): it must see every commit the store thread has made, at once."""
    assert await store.known_ids(["a", "b"]) == set()
    await store.call(lambda s: s.commit([prompt(1.0, 1, sid="a")], []))
    assert await store.known_ids([prompt(1.0, 1, sid="a").id, "b"]) == {"p1-1.0"}
    # And a replay of it after a restart (a new engine, nothing in memory) changes nothing.
    engine = Engine(store)
    task = await running(engine)
    await engine.submit(prompt(1.0, 1, sid="a"))
    await engine.stop()
    await task
    assert engine.stats.duplicates == 1 and "a" not in engine.sessions


@pytest.mark.asyncio
async def test_a_session_changed_by_several_batches_of_one_message_is_made_once(
    store: AsyncStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches that the feed joins into one message (GAP, HOLD): each session in it is made
    into JSON once, when the message goes, in its newest state; the message still names every
    session that changed."""
    engine = Engine(store)
    sub, _ = engine.feed.subscribe()
    made: list[str] = []
    public = engine.public

    def counted(session: Session) -> dict[str, Any]:
        made.append(session.id)
        return public(session)

    monkeypatch.setattr(engine, "public", counted)
    # As under a flood: the engine has more queued, so the message waits (HOLD) for more.
    monkeypatch.setattr(feed_module, "HOLD", 60.0)
    engine.feed.busy = lambda: True
    monkeypatch.setattr(engine.feed, "idle", lambda: None)
    task = await running(engine)
    for n in range(4):  # four batches, each stored before the next is submitted
        kind = ev.Prompt if n % 2 == 0 else ev.Stop
        await engine.submit(kind(session_id="a", at=100.0 + n, id=f"a-{n}"))
        await engine.submit(kind(session_id="b", at=100.0 + n, id=f"b-{n}"))
    assert engine.stats.batches == 8 and messages(sub) == []  # all held for one message
    engine.feed.flush()
    (msg,) = messages(sub)
    assert made == ["a", "b"]  # once each, not once per batch
    assert [(s["id"], s["state"], s["seq"]) for s in msg["sessions"]] == [
        ("a", "review", 4),
        ("b", "review", 4),
    ]
    await engine.stop()
    await task


@pytest.mark.asyncio
async def test_only_an_event_that_may_be_stored_already_is_looked_up_in_the_log(
    store: AsyncStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new event after the start, whose id the engine does not hold, cannot be in the log:
    it is applied without asking the log. One from before the start (a spooled hook, a
    transcript's past) is looked up, and so is one whose id was forgotten (SEEN_IDS), which
    a replay then finds stored: it is applied once, whatever is remembered."""
    monkeypatch.setattr(engine_module, "SEEN_IDS", 3)
    asked: list[list[str]] = []
    real = store.known_ids

    async def known_ids(ids: list[str]) -> set[str]:
        asked.append(list(ids))
        return await real(ids)

    monkeypatch.setattr(store, "known_ids", known_ids)
    engine = Engine(store)
    start = engine.live_since
    task = await running(engine)
    for n in range(5):  # new events: nothing is asked
        await engine.submit(ev.Prompt(session_id="s", at=start + 1 + n, id=f"new-{n}"))
    assert asked == [] and engine.stats.applied == 5
    await engine.submit(ev.Stop(session_id="s", at=start - 60, id="spooled"))  # before the start
    assert asked == [["spooled"]] and engine.stats.applied == 6
    # new-0 and new-1 were forgotten (3 ids kept): their replays are looked up and found.
    await engine.submit(ev.Prompt(session_id="s", at=start + 4, id="new-3"))  # still held
    await engine.submit(ev.Prompt(session_id="s", at=start + 1, id="new-0"))
    await engine.submit(ev.Prompt(session_id="s", at=start + 2, id="new-1"))
    assert asked[1:] == [["new-0"], ["new-1"]]
    assert engine.stats.applied == 6 and engine.stats.duplicates == 3
    await engine.stop()
    await task
    assert await store.call(lambda s: s.count_events()) == 6


@pytest.mark.asyncio
async def test_the_boards_groups_are_remade_whenever_a_row_moves(store: AsyncStore) -> None:
    """The engine keeps the sidebar's groups between change messages and remakes them only when
    a row's place, order or end changed: after every kind of change, its board is the one made
    from every view afresh, and the layout shows where each row is now."""
    from purplemux.core.listing import board

    engine = Engine(store)
    task = await running(engine)
    n = 0

    async def submit(event_type: type[ev.Event], sid: str, **fields: Any) -> None:
        nonlocal n
        n += 1
        await engine.submit(event_type(session_id=sid, at=1000.0 + n, id=f"e{n}", **fields))
        assert engine.board() == board(engine.views())

    def rows_in(group_label: str) -> list[str]:
        return [
            i
            for g in engine.board().groups
            if g.place.label == group_label
            for w in g.windows
            for i in w.ids
        ]

    def pane(p: str, session: str, window: str = "0") -> TmuxLocation:
        return TmuxLocation(p, "/tmp/tmux-0/default", session, window)

    await submit(ev.ProcessSeen, "a", pid=11, tmux=pane("%1", "work"), cwd="/p")
    await submit(ev.ProcessSeen, "b", pid=12, tmux=pane("%2", "work"), cwd="/p")
    await submit(ev.Prompt, "a")  # a state change only: the groups stay
    kept = engine.board().groups
    await submit(ev.Stop, "a", last_message="done")
    assert engine.board().groups is kept
    assert rows_in("work") == ["a", "b"]
    await submit(ev.ProcessSeen, "a", pid=11, tmux=pane("%1", "play"))  # session renamed
    assert rows_in("work") == ["b"] and rows_in("play") == ["a"]
    before = [w.place for g in engine.board().groups for w in g.windows if "b" in w.ids]
    await submit(ev.ProcessSeen, "b", pid=12, tmux=pane("%2", "work", "3"))  # another window
    after = [w.place for g in engine.board().groups for w in g.windows if "b" in w.ids]
    assert len(before) == len(after) == 1 and before != after and rows_in("work") == ["b"]
    await submit(ev.ProcessSeen, "c", pid=13, tmux=pane("%0", "play"))  # a new row, first
    assert rows_in("play") == ["c", "a"]
    await submit(ev.SessionEnd, "a", reason="exit")  # ended: out of the live groups
    assert rows_in("play") == ["c"] and "a" in engine.board().ended
    await submit(ev.SessionEnd, "c", reason="clear")
    assert rows_in("play") == [] and engine.board().ended[:2] == ("c", "a")
    await submit(ev.Superseded, "c", by="d")  # its pane runs another session: out of every list
    assert "c" not in engine.board().ended and engine.board().ended_total == 1
    await engine.stop()
    await task
