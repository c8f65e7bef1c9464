"""Warnings that repeat (a file looked at every 2 s) logged once per interval per key."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable

INTERVAL = 600.0
"""Seconds between two log lines for one key; the lines in between are counted, not written."""
KEYS = 1024
"""Keys remembered; the oldest is forgotten first (its next warning is written again)."""


class RateLimitedLog:
    """log(key, level, msg, *args): written at most once per `interval` seconds for each key."""

    def __init__(
        self,
        logger: logging.Logger,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger, self.interval, self.clock = logger, interval, clock
        self._last: OrderedDict[Hashable, tuple[float, int]] = OrderedDict()

    def log(self, key: Hashable, level: int, msg: str, *args: object) -> bool:
        """Write the record unless this key wrote one lately; True when it was written."""
        now = self.clock()
        seen = self._last.get(key)
        if seen is not None and now - seen[0] < self.interval:
            self._last[key] = (seen[0], seen[1] + 1)
            return False
        suppressed = seen[1] if seen is not None else 0
        if suppressed:
            msg += " (%d more like it since the last report)"
            args = (*args, suppressed)
        self.logger.log(level, msg, *args)
        self._last[key] = (now, 0)
        self._last.move_to_end(key)
        while len(self._last) > KEYS:
            self._last.popitem(last=False)
        return True

    def warning(self, key: Hashable, msg: str, *args: object) -> bool:
        return self.log(key, logging.WARNING, msg, *args)

    def forget(self, key: Hashable) -> None:
        """The condition cleared: the next warning for this key is written at once."""
        self._last.pop(key, None)
