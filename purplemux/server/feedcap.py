"""How many live feeds (WS /api/stream) one client address, and all clients, may hold.

Each feed keeps a descriptor and a subscriber (its queue, its snapshot) for as long as the page
is open: 300 idle feeds held 325 MiB. The caps leave most of the connection room
(purplemux.server.connguard) to requests, hooks first. A feed past a cap is accepted and closed
at once with TRY_AGAIN and a reason, so the page can say why (a refused handshake cannot).
"""

from __future__ import annotations

import logging
from collections import Counter

from purplemux.io.log_once import RateLimitedLog

log = logging.getLogger(__name__)

PER_CLIENT = 16
TOTAL = 128
TRY_AGAIN = 1013
"""RFC 6455 "Try Again Later": the server is at its feed cap."""


class FeedSlots:
    """The open feeds, per client address."""

    def __init__(self, per_client: int = PER_CLIENT, total: int = TOTAL) -> None:
        self.per_client, self.total = per_client, total
        self.open: Counter[str] = Counter()
        self.warn = RateLimitedLog(log, interval=60)

    def take(self, client: str) -> str | None:
        """Count a new feed from `client`; None when it may stay, else why it may not."""
        if self.open[client] >= self.per_client:
            reason = f"too many live feeds from {client} ({self.per_client}): close a tab"
        elif sum(self.open.values()) >= self.total:
            reason = f"too many live feeds ({self.total}): close a tab"
        else:
            self.open[client] += 1
            return None
        self.warn.warning(("feeds", client), "refusing a live feed: %s", reason)
        return reason

    def give_back(self, client: str) -> None:
        self.open[client] -= 1
        if self.open[client] <= 0:
            del self.open[client]


def for_connections(total: int, feeds: int | None = None) -> FeedSlots:
    """The feed caps for a daemon that holds at most `total` connections: a quarter of them at
    most, so requests (hooks first) keep the rest; `feeds` (PURPLEMUX_MAX_FEEDS): that many in
    all, all of them from one address if need be."""
    if feeds is not None:
        return FeedSlots(per_client=feeds, total=feeds)
    feeds = max(1, min(TOTAL, total // 4))
    return FeedSlots(per_client=max(1, min(PER_CLIENT, feeds // 2)), total=feeds)
