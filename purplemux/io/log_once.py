"""Warnings that repeat (a file looked at every 2 s) logged once per interval per key, and no
more than a budget of lines per interval in all, however many keys there are."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable

INTERVAL = 600.0
"""Seconds between two log lines for one key; the lines in between are counted, not written."""
KEYS = 1024
"""Keys remembered; the oldest is forgotten first (its next warning counts against the budget)."""
BUDGET = 100
"""Lines written per interval in all: past it, lines are counted and said in one line."""


class RateLimitedLog:
    """log(key, level, msg, *args): written at most once per `interval` seconds for each key, and
    at most `budget` lines per interval for all keys together (2,000 unreadable files, or one
    cause with ever-new keys, cannot flood the log: the rest is one "N more" line)."""

    def __init__(
        self,
        logger: logging.Logger,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        budget: int = BUDGET,
    ) -> None:
        self.logger, self.interval, self.clock, self.budget = logger, interval, clock, budget
        self._last: OrderedDict[Hashable, tuple[float, int]] = OrderedDict()
        self._window = clock()
        self._written = 0
        self._held: dict[int, int] = {}
        """Lines held back by the budget in this window, per level."""

    def log(
        self, key: Hashable, level: int, msg: str, *args: object, exc_info: bool = False
    ) -> bool:
        """Write the record unless this key wrote one lately, or the budget is spent; True when
        it was written."""
        now = self.clock()
        seen = self._last.get(key)
        if seen is not None and now - seen[0] < self.interval:
            self._last[key] = (seen[0], seen[1] + 1)
            return False
        self._roll(now)
        suppressed = seen[1] if seen is not None else 0
        self._last[key] = (now, 0)
        self._last.move_to_end(key)
        while len(self._last) > KEYS:
            self._last.popitem(last=False)
        if self._written >= self.budget:
            self._held[level] = self._held.get(level, 0) + 1 + suppressed
            return False
        self._written += 1
        if suppressed:
            msg += " (%d more like it since the last report)"
            args = (*args, suppressed)
        self.logger.log(level, msg, *args, exc_info=exc_info)
        return True

    def _roll(self, now: float) -> None:
        """A new window: say what the budget held back in the last one."""
        if now - self._window < self.interval:
            return
        for level, count in sorted(self._held.items()):
            self.logger.log(
                level,
                "%d more lines like the ones above were not written in the last %.0fs "
                "(more than %d in that time)",
                count,
                now - self._window,
                self.budget,
            )
        self._window, self._written, self._held = now, 0, {}

    def warning(self, key: Hashable, msg: str, *args: object, exc_info: bool = False) -> bool:
        return self.log(key, logging.WARNING, msg, *args, exc_info=exc_info)

    def forget(self, key: Hashable) -> None:
        """The condition cleared: the next warning for this key is written at once."""
        self._last.pop(key, None)
