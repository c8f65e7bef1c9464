"""The line feeding both agents' transcript readers share: Claude's transcript and Codex's rollout
are JSONL files that grow by appends, read in chunks as they grow.

A reader keeps the byte offset it has read to, the partial last line (which waits for more),
where the last complete line ended (where a snapshot resumes), and the file's identity (device,
inode), so a truncated or replaced file starts it over. A line longer than ``max_line`` is
skipped unread, never buffered whole. What a line means is the reader's own (``_line``); so are
the facts it says after a chunk (``_flush_facts``).

Pure: no I/O. Here, not in sources/, since agents/codex/rollout.py sits below sources/.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from enum import StrEnum

from purplemux.core.events import Event

MAX_LINE = 1 << 20
"""Longer lines are skipped unread: a pasted 10 MB blob must not be buffered (Codex's largest
usual line, session_meta with its base_instructions, is ~20 KB)."""
READ_BLOCK = 1 << 20


def timestamp(value: object) -> float | None:
    """An entry's ISO 8601 ``timestamp`` as epoch seconds (UTC when it names no zone)."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


class Turn(StrEnum):
    """What the newest turn of a transcript (Claude's) or a rollout (Codex's) looks like."""

    NONE = "none"
    IN_PROGRESS = "in_progress"
    FINISHED = "finished"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


class JsonlReader:
    """Feeds the complete lines of a growing JSONL file to ``_line``, chunk by chunk."""

    def __init__(self, session_id: str, *, max_line: int = MAX_LINE) -> None:
        self.session_id = session_id
        self.max_line = max_line
        self.identity: tuple[int, int] | None = None
        self.reset()

    def reset(self) -> None:
        """Forget everything read: the file was truncated or replaced (a reader extends it)."""
        self.offset = 0
        self.size = 0
        self._line_start = 0
        self._buf = bytearray()
        self._skipping = False
        self._out: list[Event] = []

    def start_at(self, offset: int) -> None:
        """Read from `offset` on (the start of a line: a tail, or where a history ends)."""
        self.offset = self._line_start = offset

    def sync(self, st: os.stat_result) -> bool:
        """Note the file's identity and size; reset (and say so) on truncation or replacement."""
        ident = (st.st_dev, st.st_ino)
        replaced = self.identity is not None and ident != self.identity
        self.identity = ident
        self.size = st.st_size
        if replaced or st.st_size < self.offset:
            self.reset()
            self.size = st.st_size
            return True
        return False

    def feed(self, chunk: bytes, flush: bool = True) -> list[Event]:
        """Parse the complete lines in chunk (the partial last line waits for more)."""
        pos, end, base = 0, len(chunk), self.offset
        while pos < end:
            nl = chunk.find(b"\n", pos)
            if nl < 0:
                if not self._skipping:
                    if len(self._buf) + end - pos > self.max_line:
                        self._skipping = True
                        self._buf.clear()
                    else:
                        self._buf += chunk[pos:]
                break
            start, self._line_start = self._line_start, base + nl + 1
            if self._skipping:
                self._skipping = False
            elif len(self._buf) + nl - pos <= self.max_line:
                line = bytes(self._buf) + chunk[pos:nl] if self._buf else chunk[pos:nl]
                self._line(line, start)
            self._buf.clear()
            pos = nl + 1
        self.offset += end
        if flush:
            self._flush_facts()
        out, self._out = self._out, []
        return out

    def _line(self, line: bytes, start: int) -> None:
        """Take one complete line (no newline) that began at byte ``start``."""
        raise NotImplementedError

    def _flush_facts(self) -> None:
        """Say, in ``_out``, what the lines fed since the last flush changed."""
        raise NotImplementedError
