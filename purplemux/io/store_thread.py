"""The store's own thread, and the event loop's share of the store: AsyncStore runs each Store
call on one dedicated thread (StoreThread), reads which events are stored already on the loop, and
commits a lone event a hook waits on there (AsyncStore.commit)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from purplemux.io.store import Store, StoreError, select_known_ids

if TYPE_CHECKING:
    from purplemux.core.events import Event
    from purplemux.core.model import Session

T = TypeVar("T")
log = logging.getLogger(__name__)

READER_WAIT = 0.1
"""Seconds the event loop's read-only connection waits for a lock before the store thread is
asked instead."""

READER_CACHE_KIB = 256
"""SQLite's page cache of the loop's read-only connection (its default is 2 MiB): the event ids'
index path for the duplicate check."""

INLINE_EVENTS = 1
"""A batch of at most this many events is committed on the caller's thread (the event loop)
when the store thread is idle: see AsyncStore.commit."""
INLINE_SLOW = 0.02
INLINE_STRIKES = 3.0
INLINE_PAUSE = 60.0
"""Commits on the loop that took longer than INLINE_SLOW seconds (a slow or busy disk) send
every commit to the store thread for INLINE_PAUSE seconds once INLINE_STRIKES of them came close
together (each slow one counts 1, each fast one takes 1/100 off): a lone stall, as when the
machine did not run this process for a moment, does not."""


THREAD_NAME = "purplemux-store"

_Job = tuple[Callable[[], object], asyncio.AbstractEventLoop, "asyncio.Future[object]"]


class StoreThread:
    """One thread that runs the calls it is given, in order, each answered on its caller's loop.

    What `loop.run_in_executor` on a one-thread pool does, without its two futures (a
    concurrent one, with its lock and condition, wrapped in an asyncio one) and their
    callbacks per call: the loop's future is settled straight from the thread. Under a flood of
    hooks the store is handed a batch every few events (BENCHMARKS.md section 3)."""

    def __init__(self, name: str = THREAD_NAME) -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def run(self, fn: Callable[[], T]) -> asyncio.Future[T]:
        """Queue `fn`; the future has its result (or its exception) once the thread ran it. A
        cancelled future does not stop a call already queued (as an executor's)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if self._thread is None:
            # A daemon thread: a process whose loop ended without close() is not kept alive by
            # it (a transaction cut short there is rolled back by SQLite at the next open).
            self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
            self._thread.start()
        self._jobs.put((fn, loop, future))  # type: ignore[arg-type]
        return future

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, loop, future = job
            try:
                result, error = fn(), None
            except BaseException as exc:  # given to the caller, as an executor does
                result, error = None, exc
            with contextlib.suppress(RuntimeError):  # the caller's loop closed: nobody waits
                loop.call_soon_threadsafe(_settle, future, result, error)
            del job, fn, future, result, error  # nothing of a call kept while the thread waits

    def stop(self) -> None:
        """Run what is queued, then end the thread and wait for it."""
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join()
            self._thread = None


def _settle(future: asyncio.Future[object], result: object, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class AsyncStore:
    """Runs every Store call on one dedicated thread, off the event loop; and answers the
    engine's one read per batch (which events are stored already) on the loop's own thread, as
    it commits a lone event there (commit())."""

    def __init__(self, path: Path) -> None:
        self._thread = StoreThread()
        self._path = path
        self._store: Store | None = None
        self._reader: sqlite3.Connection | None = None
        self._using = threading.Lock()
        """Held by whichever thread uses the writer's connection: the store thread for each
        call, the loop for a commit of its own (never waiting for it)."""
        self._inline_after = 0.0
        self._strikes = 0.0
        self._checkpointing: asyncio.Future[None] | None = None
        self.inline_commits = 0
        """Commits made on the loop (tests, benchmarks)."""

    async def open(self) -> None:
        self._store = await self._run(lambda: Store(self._path))
        # Read-only, WAL: it sees every committed transaction and never blocks the writer. It
        # waits at most READER_WAIT for a lock (it runs on the event loop), then known_ids asks
        # the store thread instead.
        try:
            self._reader = sqlite3.connect(
                self._path.absolute().as_uri() + "?mode=ro",
                uri=True,
                timeout=READER_WAIT,
                check_same_thread=False,
            )
            self._reader.execute(f"PRAGMA cache_size=-{READER_CACHE_KIB}")
        except sqlite3.Error:
            log.warning(
                "no read-only connection to %s; every read goes to the store thread",
                self._path,
                exc_info=True,
            )

    async def known_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of these event ids are in the log. Read on the caller's thread (the engine's,
        once per batch, before applying it; it is the only writer of the log): a lookup in the
        log's id index costs far less than a round trip through the store thread, which waits
        behind everything else the event loop has to do."""
        self.sync.verify()  # a damaged file's log must not make a retried event a duplicate
        if self._reader is not None:
            try:
                return select_known_ids(self._reader, ids)
            except sqlite3.OperationalError:  # locked past READER_WAIT (a checkpoint, a vacuum)
                pass
        return await self.call(lambda s: s.known_ids(ids))

    async def commit(
        self, events: Sequence[Event], sessions: Sequence[Session], waited: bool = True
    ) -> None:
        """Store a batch (Store.commit): stored once this returns.

        A lone event that someone waits on (`waited`: a hook's call is answered once its event
        is stored; INLINE_EVENTS) is written on the caller's thread, the event loop, while the
        store thread is idle: a commit of one event costs
        about 0.1 ms here, less than its round trip through the store thread (the hand-over,
        the thread's wake-up and the loop's), which every hook waited for. SQLite's WAL with
        synchronous=NORMAL does not sync at a commit; the checkpoint, which does, stays on the
        store thread (Store.checkpoint), and slow commits (INLINE_SLOW) send the next ones
        back there for a while. A larger batch goes to the store thread, so the loop reads the
        next requests while it is written, and so does what the sources post (nobody waits on
        it: at a start, the store thread writes while the loop reads the transcripts)."""
        store = self.sync
        if (
            waited
            and len(events) <= INLINE_EVENTS
            and time.monotonic() >= self._inline_after
            and self._using.acquire(blocking=False)
        ):
            start = time.monotonic()
            try:
                store.commit(events, sessions)
            finally:
                self._using.release()
            took = time.monotonic() - start
            self.inline_commits += 1
            self._strikes = (
                self._strikes + 1 if took > INLINE_SLOW else max(0.0, self._strikes - 0.01)
            )
            if self._strikes >= INLINE_STRIKES:
                self._strikes = 0.0
                self._inline_after = time.monotonic() + INLINE_PAUSE
                log.warning(
                    "commits on the event loop were slow (the last %.0f ms; a slow disk?): "
                    "they go to the store thread for %.0f s",
                    took * 1000,
                    INLINE_PAUSE,
                )
            if self._checkpointing is None and store.checkpoint_due():
                self._checkpointing = asyncio.ensure_future(self._run(store.checkpoint))
                self._checkpointing.add_done_callback(self._checkpointed)
            return
        await self._run(lambda: store.commit(events, sessions))

    def _checkpointed(self, done: asyncio.Future[None]) -> None:
        self._checkpointing = None
        if not done.cancelled() and done.exception() is not None:
            log.warning("the store's checkpoint failed: %s", done.exception())

    @property
    def sync(self) -> Store:
        """The underlying store, for calls already on the store thread."""
        if self._store is None:
            raise StoreError("store is not open")
        return self._store

    async def _run(self, fn: Callable[[], T]) -> T:
        def using() -> T:
            with self._using:
                out = fn()
                if self._store is not None:  # the log emptied once it is due, after any call
                    self._store.checkpoint()
                return out

        return await self._thread.run(using)

    async def call(self, fn: Callable[[Store], T]) -> T:
        """Run fn(store) on the store thread."""
        store = self.sync
        return await self._run(lambda: fn(store))

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._checkpointing is not None:
            with contextlib.suppress(Exception):
                await self._checkpointing
        if self._store is not None:
            store, self._store = self._store, None  # no checkpoint after its last call
            await self._run(store.close)
        self._thread.stop()
