"""Where a batch is written: a lone event on the event loop while the store thread is idle, a
larger batch and everything else on the store thread; the write-ahead log emptied by the store
thread, never by a commit on the loop; slow commits on the loop sent back to the thread. The
real SQLite file is the seam: what a test asks of it is what the daemon would read back."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from purplemux.core import events as ev
from purplemux.core.model import Session
from purplemux.io import store as store_module
from purplemux.io import store_thread
from purplemux.io.store import Store
from purplemux.io.store_thread import AsyncStore


def prompt(n: int, sid: str = "s") -> ev.Event:
    return ev.Prompt(session_id=sid, at=1000.0 + n, id=f"p{n}", prompt="x" * 200)


def logged(path: Path) -> int:
    """Events in the log, read by another connection (as a restarted daemon would)."""
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT count(*) FROM events").fetchone()[0])


class Threads:
    """Records the thread each Store.commit (or checkpoint) ran on."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, sync: Store, name: str) -> None:
        self.names: list[str] = []
        real = getattr(sync, name)

        def recorded(*args: Any) -> Any:
            self.names.append(threading.current_thread().name)
            return real(*args)

        monkeypatch.setattr(sync, name, recorded)


LOOP = threading.current_thread().name  # pytest-asyncio runs the loop on the test's thread


@pytest.mark.asyncio
async def test_a_lone_event_is_written_on_the_loop_and_a_batch_on_the_store_thread(
    store: AsyncStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads = Threads(monkeypatch, store.sync, "commit")
    await store.commit([prompt(1)], [Session(id="s", updated_at=1001.0)])
    await store.commit([prompt(2), prompt(3, "t")], [Session(id="s"), Session(id="t")])
    assert threads.names[0] == LOOP
    assert threads.names[1].startswith("purplemux-store")
    assert store.inline_commits == 1
    # Stored once it returns, wherever it was written: another connection reads all three.
    assert logged(tmp_path / "state.db") == 3
    assert {s.id for s in await store.call(lambda s: s.load_sessions())} == {"s", "t"}


@pytest.mark.asyncio
async def test_a_lone_event_waits_its_turn_while_the_store_thread_is_busy(
    store: AsyncStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer's connection is never used by two threads at once: a commit that finds the
    store thread at work goes behind that work, on that thread."""
    working, release = threading.Event(), threading.Event()

    def long_call(s: Store) -> None:
        working.set()
        release.wait(30)

    busy = asyncio.ensure_future(store.call(long_call))
    await asyncio.to_thread(working.wait, 30)
    threads = Threads(monkeypatch, store.sync, "commit")
    commit = asyncio.ensure_future(store.commit([prompt(1)], []))
    await asyncio.sleep(0.05)
    assert not commit.done() and threads.names == []  # not written beside the other call
    release.set()
    await busy
    await commit
    assert threads.names == ["purplemux-store"] and store.inline_commits == 0
    assert logged(tmp_path / "state.db") == 1


@pytest.mark.asyncio
async def test_slow_commits_on_the_loop_send_the_next_ones_to_the_store_thread(
    store: AsyncStore, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A disk that makes commits slow must not hold the loop again and again; one stall alone
    (the machine not running us for a moment) changes nothing."""
    real = store.sync.commit
    slow = [True]

    def maybe_slow(events: Iterable[ev.Event], sessions: Iterable[Session]) -> None:
        if slow[0]:
            time.sleep(store_thread.INLINE_SLOW * 1.5)
        real(events, sessions)

    monkeypatch.setattr(store.sync, "commit", maybe_slow)
    await store.commit([prompt(1)], [])  # one slow commit
    slow[0] = False
    for n in range(2, 120):
        await store.commit([prompt(n)], [])
    assert store.inline_commits == 119  # still on the loop
    slow[0] = True
    for n in range(120, 123):  # three slow ones in a row
        await store.commit([prompt(n)], [])
    assert store.inline_commits == 122
    assert "they go to the store thread" in caplog.text
    threads = Threads(monkeypatch, store.sync, "commit")
    slow[0] = False
    await store.commit([prompt(123)], [])
    assert threads.names == ["purplemux-store"] and store.inline_commits == 122
    assert await store.known_ids(["p1", "p122", "p123"]) == {"p1", "p122", "p123"}


@pytest.mark.asyncio
async def test_the_log_is_emptied_by_the_store_thread_when_commits_are_on_the_loop(
    store: AsyncStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite's own checkpoint (which syncs the files) is off: the store thread copies the
    write-ahead log into the database and empties it once it is past the bound."""
    assert store.sync.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    monkeypatch.setattr(store_module, "WAL_CHECKPOINT_BYTES", 64 << 10)
    wal = tmp_path / "state.db-wal"
    emptied: list[str] = []
    sync = store.sync
    real = sync.checkpoint

    def noted() -> None:
        if sync.checkpoint_due():
            emptied.append(threading.current_thread().name)
        real()

    monkeypatch.setattr(sync, "checkpoint", noted)
    for n in range(400):
        await store.commit([prompt(n)], [Session(id="s", updated_at=1000.0 + n)])
        await asyncio.sleep(0)  # the checkpoint's turn on the store thread
    assert store.inline_commits > 0  # those that found the store thread emptying it waited
    assert len(emptied) >= 3 and set(emptied) == {"purplemux-store"}  # never on the loop
    await store.call(lambda s: None)  # and whatever is due is done after any call
    assert os.stat(wal).st_size < store_module.WAL_CHECKPOINT_BYTES
    assert logged(tmp_path / "state.db") == 400


@pytest.mark.asyncio
async def test_what_a_source_posts_is_written_on_the_store_thread_and_a_hook_on_the_loop(
    store: AsyncStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a lone event that someone waits on (a hook's call, answered once it is stored)
    is written on the loop; what the sources post goes to the store thread, which writes it
    beside the loop (at a start, the loop is reading the transcripts)."""
    from purplemux.daemon.engine import Engine

    threads = Threads(monkeypatch, store.sync, "commit")
    engine = Engine(store)
    task = asyncio.create_task(engine.run())
    engine.post(prompt(1, "posted"))
    while "posted" not in engine.sessions:
        await asyncio.sleep(0.01)
    await engine.submit(prompt(2, "hook"))
    await engine.stop()
    await task
    assert threads.names[0].startswith("purplemux-store") and threads.names[1] == LOOP
    assert store.inline_commits == 1


@pytest.mark.asyncio
async def test_the_store_thread_runs_calls_in_order_and_answers_each_on_the_loop() -> None:
    """Each call's result or exception reaches its caller; a caller that stopped waiting
    (cancelled) does not stop the calls queued behind it; stop() runs what is queued, then
    ends the thread."""
    worker = store_thread.StoreThread("pmx-test-store")
    ran: list[tuple[int, str]] = []

    def call(n: int) -> int:
        ran.append((n, threading.current_thread().name))
        return n * 10

    def fails() -> int:
        raise sqlite3.OperationalError("database is locked")

    first, broken, dropped, last = (
        worker.run(lambda: call(1)),
        worker.run(fails),
        worker.run(lambda: call(2)),
        worker.run(lambda: call(3)),
    )
    dropped.cancel()
    assert await first == 10
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        await broken
    assert await last == 30
    assert ran == [(1, "pmx-test-store"), (2, "pmx-test-store"), (3, "pmx-test-store")]
    queued = worker.run(lambda: call(4))
    worker.stop()
    assert ran[-1] == (4, "pmx-test-store")
    assert not [t for t in threading.enumerate() if t.name == "pmx-test-store"]
    await asyncio.sleep(0)  # the answer was handed to the loop before the thread ended
    assert queued.done() and queued.result() == 40
