"""Following transcript files: the watchfiles-driven tailer (the parser is transcript_reader)."""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from pathlib import Path

from purplemux.events import Event
from purplemux.ratelimit_log import RateLimitedLog
from purplemux.sources.transcript_files import UnsafePath, check, open_transcript
from purplemux.sources.transcript_reader import (
    MAX_LINE,
    READ_BLOCK,
    TranscriptReader,
    Turn,
    read_tail_state,
)
from purplemux.sources.watch import watch_dirs

__all__ = [
    "MAX_LINE",
    "TranscriptReader",
    "TranscriptTailer",
    "Turn",
    "read_tail_state",
    "transcript_path",
]

log = logging.getLogger(__name__)
warn = RateLimitedLog(log)


def transcript_path(claude_dir: Path, cwd: str, session_id: str) -> Path:
    """Where Claude writes a session's transcript."""
    return claude_dir / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", cwd) / f"{session_id}.jsonl"


@dataclass(slots=True)
class _Watched:
    path: Path
    reader: TranscriptReader
    refused: bool = False
    """Not a file we read (a FIFO, a device): left alone until the session names another."""


def _watch_dir(path: Path) -> Path:
    """The file's folder, or its nearest existing ancestor until the folder appears."""
    folder = path.parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    return folder


def _read_new(w: _Watched, root: Path | None = None) -> list[Event]:
    """Read what was appended since the reader's offset (blocking, but never on a FIFO)."""
    if w.refused:
        return []
    try:
        with open(open_transcript(w.path, root), "rb") as f:
            w.reader.sync(os.fstat(f.fileno()))
            if w.reader.size == w.reader.offset:
                return []
            f.seek(w.reader.offset)
            out: list[Event] = []
            while block := f.read(READ_BLOCK):
                out += w.reader.feed(block, flush=False)
            return out + w.reader.feed(b"")
    except FileNotFoundError:
        # Deleted or not there yet: a later change picks it up. Start over then, since a new
        # file may get the old inode number back and would not look replaced.
        w.reader.reset()
        w.reader.identity = None
        return []
    except UnsafePath as exc:
        w.refused = True
        log.warning(
            "ignoring the transcript of session %s: %s (%s)", w.reader.session_id, exc, w.path
        )
        return []
    except OSError as exc:
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
    ) -> None:
        self.debounce_ms, self.step_ms, self.recheck_ms = debounce_ms, step_ms, recheck_ms
        self.root = root
        """Only transcripts under this folder are read (`$CLAUDE_CONFIG_DIR/projects`)."""
        self._watched: dict[str, _Watched] = {}
        self._refused: set[str] = set()
        self._changed = asyncio.Event()

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
            self._watched[session_id] = _Watched(p, TranscriptReader(session_id))
            self._poke()

    def unwatch(self, session_id: str) -> None:
        """Stop following a session's transcript."""
        if self._watched.pop(session_id, None) is not None:
            self._poke()
        if len(self._refused) > 10_000:
            self._refused.clear()

    def watching(self) -> dict[str, Path]:
        """Session id -> transcript path, for what is followed now."""
        return {sid: w.path for sid, w in self._watched.items()}

    def _poke(self) -> None:
        """The watched set changed: look again (a new watch only if its folders changed)."""
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
                warn.warning(("dir", w.path), "cannot watch the folder of %s: %s", w.path, exc)
        return dirs

    def _read_one(self, w: _Watched) -> list[Event]:
        """One session's new events; its failure is logged and costs only that session."""
        try:
            return _read_new(w, self.root)
        except Exception as exc:
            warn.warning(
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
            lambda: [(sid, w, self._read_one(w)) for sid, w in targets.items()]
        )
        return [e for sid, w, got in batches if self._watched.get(sid) is w for e in got]

    async def events(self) -> AsyncGenerator[list[Event], None]:
        """Yield batches of events, forever; the watch follows the watched set's folders."""
        async for changes in watch_dirs(
            self._dirs,
            name="transcript",
            debounce_ms=self.debounce_ms,
            step_ms=self.step_ms,
            recheck_ms=self.recheck_ms,
            wake=self._changed,  # a new watch only when the folders change (watch_dirs sees it)
            recursive=lambda dirs: self.root is not None and dirs == {self.root},
        ):
            # None: a new watch (catch up on everything); empty: a quiet spell or a session newly
            # watched (re-check all: an unchanged file costs a stat).
            # A file's new folder counts as its change: under a recursive watch, what the file
            # got before its folder was watched too is read then.
            targets = {
                sid: w
                for sid, w in self._watched.items()
                if not changes or str(w.path) in changes or str(w.path.parent) in changes
            }
            if batch := await self._read(targets):
                yield batch
                del batch  # a catch-up batch can be huge: not kept while we wait
