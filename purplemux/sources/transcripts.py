"""Following transcript files: the tailer over the folder watch (io/watch.py); each agent's
reader (agents/<agent>) parses them."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import stat
import threading
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from purplemux.agents.jsonl import MAX_LINE, READ_BLOCK
from purplemux.core.events import Event
from purplemux.io import memtrim
from purplemux.io.log_once import RateLimitedLog
from purplemux.io.transcript_files import UnsafePath, check, open_transcript
from purplemux.io.watch import watch_dirs

__all__ = ["Reader", "TranscriptStats", "TranscriptTailer"]

Reader = Any
"""An agent's transcript reader (agents/<agent>: a JsonlReader): session_id, offset, size,
identity, sync(), feed(), reset(), snapshot(), restore(), announce(), turn_mark; read tail first
also partial, hold_totals, quiet, start_at(), holds_newest_turn() and adopt() (Claude's)."""
NewReader = Callable[[str], Reader]
"""Makes a session's reader from its id."""

log = logging.getLogger(__name__)

StopFlag = threading.Event
"""Set when reading must end (the daemon stops); looked at between blocks."""


TAIL_FIRST = 32 << 10
"""A first read with more to read than this reads the file's tail first, its history after."""
TAIL_START = 16 << 10
TAIL_MAX = 4 * MAX_LINE
"""The tail grows (x4) from TAIL_START until it holds the newest prompt and answer, up to this."""
HISTORY_CHUNK = 1 << 20
"""Bytes of history summed per step in the background, between which live reads go first."""
HISTORY_AFTER = 0.5
"""Seconds with no first read (tail, resume) before histories are summed: tails come first.
A first read counts from when its events were handed on (the engine stored them)."""


@dataclass
class TranscriptStats:
    """Counters for health, tests and benchmarks."""

    bytes_read: int = 0
    """Bytes read from transcripts: tail_bytes + history_bytes."""
    tail_bytes: int = 0
    """Bytes read by the readers that follow the files (tails, appends, resumed reads)."""
    history_bytes: int = 0
    """Bytes summed in the background (the history before a tail)."""
    backfill_pending: int = 0
    """Transcripts whose history is still being summed (their totals are not shown yet)."""
    resumed: int = 0
    """First reads that continued from a stored offset."""
    started_over: int = 0
    """Stored offsets found unusable (the file was truncated or replaced): read from the start."""


@dataclass(slots=True)
class _History:
    """The part of a file before its tail, summed in the background by a quiet reader."""

    reader: Reader
    end: int
    done: bool = False
    stalled: bool = False
    """Its file could not be read as expected: left until the tail's next read looks."""


@dataclass(slots=True)
class _Watched:
    path: Path
    reader: Reader
    new_reader: NewReader
    """Makes this file's reader: its agent's (agents/claude/transcript.py read tail first,
    agents/codex/rollout.py read straight through)."""
    tail_first: bool = True
    """A big file is read tail first, its history summed behind (Claude's transcripts); an
    agent whose every entry repeats the totals (Codex's rollout) is read straight through."""
    refused: bool = False
    """Not a file we read (a FIFO, a device): left alone until the session names another."""
    fresh: bool = True
    """Nothing read yet: the first read may resume from `resume` or go tail first."""
    resume: dict[str, Any] | None = None
    """A stored snapshot of this file's reader, to continue from."""
    history: _History | None = None
    snap: dict[str, Any] | None = None
    """The reader's snapshot after its newest read (kept once its events are handed on)."""
    safe: dict[str, Any] | None = None
    """The newest snapshot whose events have been handed on: what may be stored."""
    saved: dict[str, Any] | None = None
    """The snapshot last handed to the store."""


def _drop_history(w: _Watched) -> None:
    w.history = None


def _sum_history(w: _Watched, budget: int, root: Path | None, stats: TranscriptStats) -> int:
    """Sum up to `budget` bytes of a file's history (blocking); the bytes read."""
    h = w.history
    if h is None or h.done:
        return 0
    r = h.reader
    try:
        with open(open_transcript(w.path, root), "rb") as f:
            st = os.fstat(f.fileno())
            if (st.st_dev, st.st_ino) != r.identity or st.st_size < h.end:
                h.stalled = True  # replaced or truncated: the tail's next read starts over
                return 0
            f.seek(r.offset)
            data = f.read(min(budget, h.end - r.offset))
    except (OSError, ValueError):
        h.stalled = True
        return 0
    stats.history_bytes += len(data)  # only the summing thread counts these
    r.feed(data, flush=False)
    if not data and r.offset < h.end:
        h.stalled = True
        return 0
    w.safe = {"dev": st.st_dev, "ino": st.st_ino, "state": r.snapshot()}
    if r.offset >= h.end:
        h.done = True
    return len(data)


def _watch_dir(path: Path) -> Path:
    """The file's folder, or its nearest existing ancestor until the folder appears."""
    folder = path.parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    return folder


def _feed_rest(
    f: BinaryIO, reader: Reader, stats: TranscriptStats, stop: StopFlag | None = None
) -> list[Event]:
    """Feed the reader from its offset to the end of the file, then flush its facts; a block
    at a time, so a stop (the daemon ending) is heeded within one block."""
    f.seek(reader.offset)
    out: list[Event] = []
    while not (stop is not None and stop.is_set()) and (block := f.read(READ_BLOCK)):
        stats.tail_bytes += len(block)  # only the reading thread counts these
        out += reader.feed(block, flush=False)
    facts: list[Event] = reader.feed(b"")
    return out + facts


def _line_at(f: BinaryIO, pos: int) -> int:
    """The start of the first line at or after pos."""
    if pos <= 0:
        return 0
    f.seek(pos - 1)
    if f.read(1) == b"\n":
        return pos
    while (part := f.readline(READ_BLOCK)) and not part.endswith(b"\n"):
        pos += len(part)
    return pos + len(part)


def _tail(
    f: BinaryIO,
    st: os.stat_result,
    session_id: str,
    new_reader: NewReader,
    floor: int,
    stats: TranscriptStats,
    stop: StopFlag | None = None,
) -> tuple[Reader, list[Event], int] | None:
    """A reader of the file's tail, grown until it holds the newest prompt and answer; None if
    the tail would reach `floor` (read from there instead)."""
    tail = TAIL_START
    while True:
        start = _line_at(f, max(floor, st.st_size - tail))
        if start <= floor:
            return None
        reader = new_reader(session_id)
        reader.sync(st)
        reader.start_at(start)
        reader.partial = reader.hold_totals = True  # its totals wait for the history's
        events = _feed_rest(f, reader, stats, stop)
        # The newest prompt too: a tail that starts inside the newest turn cannot name (nor so
        # emit) its Stop.
        found = reader.holds_newest_turn()
        if found or tail >= TAIL_MAX:
            # Only the newest turn's events (and the facts, which come last): the older turns
            # in the tail are history, like the ones before it.
            return reader, events[reader.turn_mark :], start
        tail *= 4


def _first_read(
    w: _Watched,
    f: BinaryIO,
    st: os.stat_result,
    stats: TranscriptStats,
    stop: StopFlag | None = None,
) -> list[Event]:
    """The first read of a file: resume from its stored snapshot, or read its tail first."""
    w.fresh = False
    sid, ident = w.reader.session_id, (st.st_dev, st.st_ino)
    snap, w.resume = w.resume, None
    base: Reader | None = None
    if snap is not None:
        base = w.new_reader(sid)
        same = [snap.get("dev"), snap.get("ino")] == list(ident)
        state = snap.get("state")
        usable = same and isinstance(state, dict) and base.restore(state, ident)
        if not usable or base.offset > st.st_size:
            base = None
            stats.started_over += 1
        else:
            stats.resumed += 1
    floor = base.offset if base is not None else 0
    quiet_base = base is not None and base.quiet
    if w.tail_first and (st.st_size - floor > TAIL_FIRST or quiet_base):
        got = _tail(f, st, sid, w.new_reader, floor, stats, stop)
        if got is None and quiet_base:
            # A history summed up to here, and too little after it for a tail: a tail from here.
            tail = w.new_reader(sid)
            tail.sync(st)
            tail.start_at(floor)
            tail.partial = tail.hold_totals = True
            got = tail, _feed_rest(f, tail, stats, stop), floor
        if got is not None:
            reader, events, start = got
            w.reader = reader
            history = base or w.new_reader(sid)
            history.identity, history.quiet = ident, True
            w.history = _History(history, start)
            w.snap = None
            return events
    reader = base or w.new_reader(sid)
    reader.sync(st)
    w.reader = reader
    if base is not None:
        reader.announce(f":r{time.time_ns()}")
    return _feed_rest(f, reader, stats, stop)


def _unchanged(w: _Watched) -> bool:
    """The file is the one read to its end, at the size it had: nothing new, known by one lstat
    (the re-check of every followed transcript after a quiet spell is mostly this). Opening it
    is left to a file that differs: its path is checked then (open_transcript), and nothing is
    read here either way."""
    reader = w.reader
    if w.fresh or w.history is not None or reader.identity is None:
        return False
    if reader.offset != reader.size:
        return False
    try:
        st = os.lstat(w.path)
    except (OSError, ValueError):
        return False  # gone, or an odd path: the full read says what it is
    return (
        stat.S_ISREG(st.st_mode)
        and (st.st_dev, st.st_ino) == reader.identity
        and st.st_size == reader.size
    )


def _read_new(
    w: _Watched,
    root: Path | None = None,
    stats: TranscriptStats | None = None,
    warn: RateLimitedLog | None = None,
    stop: StopFlag | None = None,
) -> list[Event]:
    """Read what was appended since the reader's offset (blocking, but never on a FIFO)."""
    if w.refused or _unchanged(w):
        return []
    stats = stats if stats is not None else TranscriptStats()
    try:
        with open(open_transcript(w.path, root), "rb") as f:
            st = os.fstat(f.fileno())
            if not w.fresh and w.reader.sync(st):
                _drop_history(w)
                w.fresh = True  # truncated or replaced: a new first read (tail first if big)
            moved = w.fresh
            if w.fresh:
                out = _first_read(w, f, st, stats, stop)
            else:
                if w.history is not None:
                    w.history.stalled = False
                    if w.history.done:
                        w.reader.adopt(w.history.reader, f":h{time.time_ns()}")
                        w.history = None
                        moved = True
                if w.reader.size == w.reader.offset and not moved:
                    return []
                moved = True
                out = _feed_rest(f, w.reader, stats, stop)
            if w.history is None and moved:
                w.snap = {"dev": st.st_dev, "ino": st.st_ino, "state": w.reader.snapshot()}
            return out
    except FileNotFoundError:
        # Deleted or not there yet: a later change picks it up. Start over then, since a new
        # file may get the old inode number back and would not look replaced.
        _drop_history(w)
        w.reader.reset()
        w.reader.identity = None
        w.fresh, w.resume = True, None
        return []
    except UnsafePath as exc:
        w.refused = True
        log.warning(
            "ignoring the transcript of session %s: %s (%s)", w.reader.session_id, exc, w.path
        )
        return []
    except OSError as exc:
        if warn is None:  # a lone read (benchmarks): nothing to rate-limit against
            log.warning("cannot read transcript %s: %s", w.path, exc)
        else:
            warn.warning(("read", w.path), "cannot read transcript %s: %s", w.path, exc)
        return []


class TranscriptTailer:
    """Follows the transcripts of watched sessions and yields their events in batches."""

    # step_ms: watchfiles wakes every step to look for changes, even when nothing happens; at
    # 1 ms that alone was ~1.2 % of a core per watcher (benchmarks), at 10 ms ~0.15 % for ~9 ms
    # more latency.
    def __init__(
        self,
        *,
        root: Path | None = None,
        debounce_ms: int = 10,
        step_ms: int = 10,
        recheck_ms: int = 2000,
        stats: TranscriptStats | None = None,
        reader: NewReader,
        tail_first: bool,
    ) -> None:
        self.debounce_ms, self.step_ms, self.recheck_ms = debounce_ms, step_ms, recheck_ms
        self.root = root
        """Only transcripts under this folder are read (an account's, e.g. Claude's projects/)."""
        self._new_reader = reader
        self._tail_first = tail_first
        self.stats = stats if stats is not None else TranscriptStats()
        self._watched: dict[str, _Watched] = {}
        self._refused: set[str] = set()
        self._changed = asyncio.Event()
        self._all = True  # the next empty wake re-checks every file, not only _due
        self._due: set[str] = set()  # histories summed, to be adopted by their tail readers
        self._work = asyncio.Event()  # a history to sum may have appeared
        self.read_further = asyncio.Event()
        """Set when a file was read further (checkpoint has rows): the store of the offsets
        waits for it rather than waking on a timer while nothing is read."""
        self._stored: dict[str, dict[str, Any]] = {}
        self._first_read_at = 0.0  # monotonic time of the newest first read
        self._warn = RateLimitedLog(log)
        """Repeated warnings (a file that cannot be read, looked at every recheck) once a while."""
        self._stop = threading.Event()
        """Set when the reader stops (stop()): a read or sum in its thread ends at the next
        block, so the daemon's exit never waits for a big file to be read through."""

    def stop(self) -> None:
        """Stop reading: what a thread is reading or summing now ends within a block. What was
        read past the last stored snapshot is read again by the next start (never lost)."""
        self._stop.set()

    def remember(self, rows: dict[str, dict[str, Any]]) -> None:
        """Stored offsets (session id -> {path, dev, ino, state}): a first read resumes there."""
        self._stored.update(rows)

    def checkpoint(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(session id, path, {dev, ino, state}) for each file read further since the last call,
        as far as its events have been handed on: what the store should keep."""
        rows = []
        for sid, w in self._watched.items():
            safe = w.safe
            if safe is not None and safe is not w.saved:
                w.saved = safe
                rows.append((sid, str(w.path), safe))
        return rows

    def watch(self, session_id: str, path: Path | str) -> None:
        """Follow a session's transcript from its start (a new path starts over).

        A path outside the root (or with a NUL byte) is ignored, with one log line per session.
        """
        try:
            if self.root is not None:
                check(path, self.root)
            elif "\x00" in os.fspath(path):
                raise UnsafePath("the path holds a NUL byte")
        except UnsafePath as exc:
            if session_id not in self._refused:
                self._refused.add(session_id)
                log.warning("ignoring the transcript of session %s: %s", session_id, exc)
            self.unwatch(session_id)
            return
        p = Path(os.path.abspath(path))
        current = self._watched.get(session_id)
        if current is None or current.path != p:
            w = self._watched[session_id] = _Watched(
                p, self._new_reader(session_id), self._new_reader, self._tail_first
            )
            row = self._stored.pop(session_id, None)
            if row is not None and row.get("path") == str(p):
                w.resume = row
            self._poke()

    def unwatch(self, session_id: str) -> None:
        """Stop following a session's transcript."""
        if self._watched.pop(session_id, None) is not None:
            self._recount()
            self._poke()
        if len(self._refused) > 10_000:
            self._refused.clear()

    def watching(self) -> dict[str, Path]:
        """Session id -> transcript path, for what is followed now."""
        return {sid: w.path for sid, w in self._watched.items()}

    def _recount(self) -> None:
        """Refresh the shared counters (on the loop: each thread counts into its own)."""
        s = self.stats
        s.bytes_read = s.tail_bytes + s.history_bytes
        s.backfill_pending = sum(1 for w in self._watched.values() if w.history is not None)

    def _poke(self) -> None:
        """The watched set changed: look again (a new watch only if its folders changed)."""
        self._all = True
        self._changed.set()

    def _recursive(self) -> bool:
        """Watch the whole projects folder at once: a new project's folder changes nothing."""
        return self.root is not None and self.root.is_dir()

    def _dirs(self) -> set[Path]:
        if self._watched and self._recursive():
            assert self.root is not None
            return {self.root}  # watch() let in only paths under it
        dirs = set()
        for w in self._watched.values():
            try:
                dirs.add(_watch_dir(w.path))
            except (OSError, ValueError) as exc:  # one odd path must not stop every session
                self._warn.warning(
                    ("dir", w.path), "cannot watch the folder of %s: %s", w.path, exc
                )
        return dirs

    def _read_one(self, w: _Watched) -> list[Event]:
        """One session's new events; its failure is logged and costs only that session."""
        try:
            return _read_new(w, self.root, self.stats, self._warn, self._stop)
        except Exception as exc:
            self._warn.warning(
                ("failed", w.path),
                "reading the transcript of session %s failed: %r",
                w.reader.session_id,
                exc,
            )
            return []

    async def _read(self, targets: dict[str, _Watched]) -> list[Event]:
        if not targets:
            return []
        # File reads and JSON parsing of a long backlog would stall the loop: run them in a
        # thread. Readers are touched only here, and events() never runs two reads at once.
        batches = await asyncio.to_thread(
            lambda: [
                (sid, w, self._read_one(w) if not self._stop.is_set() else [])
                for sid, w in targets.items()
            ]
        )
        self._recount()
        if any(w.history is not None for _, w, _ in batches):
            self._work.set()
        return [e for sid, w, got in batches if self._watched.get(sid) is w for e in got]

    def _sum(self, todo: list[_Watched]) -> list[_Watched]:
        """One step of background summing over these files, HISTORY_CHUNK bytes in all (blocking);
        the ones whose history is now complete."""
        budget, done = HISTORY_CHUNK, []
        for w in todo:
            if budget <= 0 or self._stop.is_set():
                break
            try:
                budget -= _sum_history(w, budget, self.root, self.stats)
            except Exception as exc:  # one odd file must not stop the others' totals
                if w.history is not None:
                    w.history.stalled = True
                self._warn.warning(
                    ("history", w.path), "summing transcript %s failed: %r", w.path, exc
                )
            if w.history is not None and w.history.done:
                done.append(w)
        return done

    async def backfill(self) -> None:
        """Sum the histories behind the tails read first, smallest first, a step at a time; each
        complete one is handed to its tail reader through the next read."""
        summed = False
        while True:
            todo = [
                w
                for w in self._watched.values()
                if w.history is not None and not w.history.done and not w.history.stalled
            ]
            if not todo:
                if summed:  # the histories are summed: what parsing them took is free again
                    summed = False
                    await asyncio.to_thread(memtrim.give_back)
                    continue  # work may have come meanwhile: look again before waiting
                self._work.clear()
                await self._work.wait()
                continue
            wait = self._first_read_at + HISTORY_AFTER - time.monotonic()
            if wait > 0:
                await asyncio.sleep(min(wait, HISTORY_AFTER))
                continue
            todo.sort(key=lambda w: w.history.end - w.history.reader.offset if w.history else 0)
            done = await asyncio.to_thread(self._sum, todo)
            self.read_further.set()  # (each step moves a history's safe offset)
            summed = True
            self._recount()
            for w in done:
                if self._watched.get(w.reader.session_id) is w:
                    self._due.add(w.reader.session_id)
            if done:
                self._changed.set()
            await asyncio.sleep(0)

    async def events(self, backfill: bool = True) -> AsyncGenerator[list[Event], None]:
        """Yield batches of events, forever; the watch follows the watched set's folders.

        `backfill`: also sum the histories (False: the caller runs backfill() itself, in its
        TaskGroup, so a crash there is seen).

        A big file is read tail first (its state and last answer at once); its history is summed
        in the background and its totals come with a later batch. A file's snapshot becomes
        storable (checkpoint) once the batch holding its events was taken and the next asked
        for: the consumer stores a batch before it asks for the next."""
        if not backfill:
            async for batch in self._events():
                yield batch
            return
        summing = asyncio.create_task(self.backfill(), name="transcript-history")
        try:
            async for batch in self._events():
                yield batch
        finally:
            summing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await summing

    async def _events(self) -> AsyncGenerator[list[Event], None]:
        async for changes in watch_dirs(
            self._dirs,
            name="transcript",
            debounce_ms=self.debounce_ms,
            step_ms=self.step_ms,
            recheck_ms=self.recheck_ms,
            wake=self._changed,  # a new watch only when the folders change (watch_dirs sees it)
            recursive=lambda dirs: self.root is not None and dirs == {self.root},
            wake_names_dirs=True,  # no session followed, no folder: nothing to look at
        ):
            # None: a new watch (catch up on everything); empty: a quiet spell or a session newly
            # watched (re-check all: an unchanged file costs a stat).
            # A file's new folder counts as its change: under a recursive watch, what the file
            # got before its folder was watched too is read then.
            # An empty set from a finished history (not a quiet spell, not a new watch) reads
            # only the files whose history is ready.
            everything = changes is None or (not changes and (self._all or not self._due))
            due, self._due = self._due, set()
            if everything:
                self._all = False
            targets = {
                sid: w
                for sid, w in self._watched.items()
                if everything
                or sid in due
                or (changes and (str(w.path) in changes or str(w.path.parent) in changes))
            }
            fresh = [w for w in targets.values() if w.fresh]
            if fresh:
                # A first read's events count as read once handed on (stored, sent): from the
                # read itself until then no history is summed (the read makes the histories),
                # so summing does not slow the engine taking the tails (hundreds of them at a
                # start); the quiet spell counts from then.
                self._first_read_at = math.inf
            if batch := await self._read(targets):
                yield batch
                del batch  # a catch-up batch can be huge: not kept while we wait
            if fresh:
                self._first_read_at = time.monotonic()
            for w in targets.values():
                if w.snap is not None:
                    w.safe, w.snap = w.snap, None
                    self.read_further.set()
