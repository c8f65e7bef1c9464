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


def transcript_path(claude_dir: Path, cwd: str, session_id: str) -> Path:
    """Where Claude writes a session's transcript."""
    return claude_dir / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", cwd) / f"{session_id}.jsonl"


@dataclass(slots=True)
class _Watched:
    path: Path
    reader: TranscriptReader


def _watch_dir(path: Path) -> Path:
    """The file's folder, or its nearest existing ancestor until the folder appears."""
    folder = path.parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    return folder


def _read_new(w: _Watched) -> list[Event]:
    """Read what was appended since the reader's offset (blocking)."""
    try:
        with open(w.path, "rb") as f:
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
    except OSError as exc:
        log.warning("cannot read transcript %s: %s", w.path, exc)
        return []


class TranscriptTailer:
    """Follows the transcripts of watched sessions and yields their events in batches."""

    # step_ms: watchfiles wakes every step to look for changes, even when nothing happens; at
    # 1 ms that alone was ~1.2 % of a core per watcher (benchmarks), at 10 ms ~0.15 % for ~9 ms
    # more latency.
    def __init__(self, *, debounce_ms: int = 10, step_ms: int = 10, recheck_ms: int = 2000) -> None:
        self.debounce_ms, self.step_ms, self.recheck_ms = debounce_ms, step_ms, recheck_ms
        self._watched: dict[str, _Watched] = {}
        self._changed = asyncio.Event()

    def watch(self, session_id: str, path: Path | str) -> None:
        """Follow a session's transcript from its start (a new path starts over)."""
        p = Path(os.path.abspath(path))
        current = self._watched.get(session_id)
        if current is None or current.path != p:
            self._watched[session_id] = _Watched(p, TranscriptReader(session_id))
            self._poke()

    def unwatch(self, session_id: str) -> None:
        """Stop following a session's transcript."""
        if self._watched.pop(session_id, None) is not None:
            self._poke()

    def watching(self) -> dict[str, Path]:
        """Session id -> transcript path, for what is followed now."""
        return {sid: w.path for sid, w in self._watched.items()}

    def _poke(self) -> None:
        self._changed.set()

    def _dirs(self) -> set[Path]:
        return {_watch_dir(w.path) for w in self._watched.values()}

    async def _read(self, targets: dict[str, _Watched]) -> list[Event]:
        if not targets:
            return []
        # File reads and JSON parsing of a long backlog would stall the loop: run them in a
        # thread. Readers are touched only here, and events() never runs two reads at once.
        batches = await asyncio.to_thread(
            lambda: [(sid, w, _read_new(w)) for sid, w in targets.items()]
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
            changed=self._changed,
        ):
            # None: a new watch (catch up on everything); empty: a quiet spell (re-check all).
            targets = {
                sid: w for sid, w in self._watched.items() if not changes or str(w.path) in changes
            }
            if batch := await self._read(targets):
                yield batch
                del batch  # a catch-up batch can be huge: not kept while we wait
