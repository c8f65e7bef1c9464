"""One rule for every notification: a live entry into needs-input or review notifies once."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Hashable

from purplemux.core.model import ATTENTION_STATES, State

LIVE_SLACK = 2.0
"""Seconds an entry may predate the start of whoever decides (this daemon, or its view of
another host) and still count as live: clock skew between processes and machines."""
REMEMBER = 10_000
"""Entries remembered, so that each notifies once (the oldest are forgotten first)."""


class LiveEntries:
    """Whether an entry notifies — for push, desktop notifications and other hosts' entries alike:
    it is into needs-input or review, it is live (not a replay, and not older than `live_since`
    less LIVE_SLACK), and it was not told before."""

    def __init__(self, live_since: float = -math.inf, remember: int = REMEMBER) -> None:
        if remember < 1:
            raise ValueError("remember must be >= 1")
        self.live_since = live_since
        self.remember = remember
        self._told: OrderedDict[Hashable, None] = OrderedDict()

    def is_live(self, since: float) -> bool:
        """The entry happened since the decider started (an older one is history)."""
        return since >= self.live_since - LIVE_SLACK

    def first(self, key: Hashable, state: State, since: float, *, live: bool = True) -> bool:
        """Whether the entry `key` (into `state` at `since`) notifies now; it is remembered if so.
        `live=False`: the caller knows it is a replay."""
        if state not in ATTENTION_STATES or not live or not self.is_live(since):
            return False
        if key in self._told:
            return False
        self._told[key] = None
        while len(self._told) > self.remember:
            self._told.popitem(last=False)
        return True
