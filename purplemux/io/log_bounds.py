"""Bounds on what one log record can cost: a line is at most MAX_LINE characters, and
uvicorn's per-handshake WebSocket lines (one per attempt, each holding the whole URL) are
limited to a budget per minute, the rest counted in the next line written."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

MAX_LINE = 2000
"""Characters of one log message (with its arguments); a longer one is cut and says so."""
HANDSHAKES = 30
"""WebSocket handshake lines written per WINDOW; the rest are counted."""
WINDOW = 60.0

_HANDSHAKE_MARKS = ('"WebSocket %s"', "connection open", "connection closed")


class BoundLines(logging.Filter):
    """Cuts long messages and thins out handshake lines (install after token redaction, so a
    secret is blanked before a cut could leave part of it)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.clock = clock
        self._window = clock()
        self._written = 0
        self._dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        handshake = isinstance(record.msg, str) and any(m in record.msg for m in _HANDSHAKE_MARKS)
        if handshake and not self._admit_handshake(record):
            return False
        try:
            text = record.getMessage()
        except Exception:
            return True  # a broken record: logging reports it as it always does
        if len(text) > MAX_LINE:
            record.msg = "%s… (%d characters cut)"
            record.args = (text[:MAX_LINE], len(text) - MAX_LINE)
        return True

    def _admit_handshake(self, record: logging.LogRecord) -> bool:
        now = self.clock()
        if now - self._window >= WINDOW:
            if self._dropped:
                text = record.getMessage()
                record.msg = "%s (%d more WebSocket handshake lines not written in %.0fs)"
                record.args = (text, self._dropped, now - self._window)
            self._window, self._written, self._dropped = now, 0, 0
        if self._written >= HANDSHAKES:
            self._dropped += 1
            return False
        self._written += 1
        return True
