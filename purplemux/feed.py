"""The change feed: a snapshot, then one message per batch of changes with a gap-free seq.

Protocol 3 (the snapshot's `protocol`): every message has `type`, `seq` and `at` (the server's
clock when it was sent: a client far behind it resyncs). First `{"type": "snapshot", "seq",
"protocol", "at", "sessions", "list"}`: the live sessions and the first page of ended ones
(purplemux.listing.ENDED_PAGE; GET /api/sessions?ended=1 pages on), and the dashboard's list
(`Board.to_json()`: layout, counts, attention, title, favicon, recent, ended ids and total). Then
`{"type": "sessions", "seq", "at", "sessions": [Session, ...], "removed": [id, ...], "list"}`
(what changed together: the engine's batch, each session once, in its newest state; an id is never
in both lists; `list` is the board after it, with `layout` only when the layout changed) and
`{"type": "broker", "seq", "at", "broker", "badge"}` (`badge`: listing.BrokerBadge). With a broker
the snapshot also has `broker` and `badge`. Protocol 2 had no `at` and no `list`; protocol 1 sent
one `session` or `removed` message per change."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from purplemux.listing import Board, GroupBox

log = logging.getLogger(__name__)

Message = dict[str, Any]

PROTOCOL = 3
"""The feed's message shapes (see above); the snapshot says it, so a client can tell."""


@dataclass(eq=False)
class Subscriber:
    """One client's bounded queue of messages, as JSON text; `overflowed`: it must resync."""

    queue: asyncio.Queue[str | None] = field(default_factory=lambda: asyncio.Queue(2000))
    overflowed: bool = False
    visible: bool = False
    login: str | None = None
    """The login id of the page, once it proved it (its page key, or the token): only such a
    page's focus holds pushes back, and only its own login's."""


def encode(message: Message) -> str:
    """A message as the JSON text sent on the WebSocket."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


class Feed:
    """Fan-out of session changes; seq grows by one per message for every subscriber."""

    def __init__(
        self,
        snapshot: Callable[[], list[dict[str, Any]]],
        board: Callable[[], Board] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._snapshot = snapshot
        self._board = board
        """The dashboard's list now (purplemux.listing), sent with the snapshot and each change."""
        self._clock = clock
        self._layout: tuple[GroupBox, ...] | None = None
        """The layout last sent; a change message carries it again only when it differs."""
        self.seq = 0
        self.subscribers: set[Subscriber] = set()
        self.snapshot_extra: Callable[[], dict[str, Any]] | None = None
        """More for the snapshot message (the broker's state, with several hosts)."""

    def subscribe(self) -> tuple[Subscriber, Message]:
        """Register a client; its first message is the snapshot at the current seq."""
        sub = Subscriber()
        self.subscribers.add(sub)
        message: Message = {
            "type": "snapshot",
            "seq": self.seq,
            "protocol": PROTOCOL,
            "at": self._clock(),
            "sessions": self._snapshot(),
        }
        if self._board is not None:
            message["list"] = self._board().to_json()
        if self.snapshot_extra is not None:
            message.update(self.snapshot_extra())
        return sub, message

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)

    def publish_changes(
        self, sessions: list[dict[str, Any]], removed: list[str] | None = None
    ) -> None:
        """One `sessions` message for what changed together (nothing when nothing did)."""
        if not (sessions or removed):
            return
        message: Message = {"type": "sessions", "sessions": sessions, "removed": removed or []}
        if self._board is not None and self.subscribers:
            now = self._board()
            message["list"] = now.summary_json()
            if now.groups != self._layout:
                message["list"]["layout"] = now.layout
                self._layout = now.groups
        elif not self.subscribers:
            self._layout = None  # nobody holds a layout: the next snapshot sends it whole
        self.publish(message)

    def publish(self, message: Message) -> None:
        """Stamp the next seq on the message and queue it for every subscriber."""
        self.seq += 1
        if not self.subscribers:
            return
        # Encoded once for all clients (as starlette's send_json would, per client); type and
        # seq first, so a client that only follows the seq can read it off the head.
        text = encode({"type": message["type"], "seq": self.seq, "at": self._clock(), **message})
        for sub in list(self.subscribers):
            if sub.overflowed:
                continue
            try:
                sub.queue.put_nowait(text)
            except asyncio.QueueFull:
                # A client this far behind resyncs from a fresh snapshot rather than stall us.
                sub.overflowed = True
                log.warning("a feed client fell behind; closing it so it resyncs")
                sub.queue.get_nowait()
                sub.queue.put_nowait(None)

    def close(self) -> None:
        """Tell every subscriber the feed ends."""
        for sub in list(self.subscribers):
            try:
                sub.queue.put_nowait(None)
            except asyncio.QueueFull:
                sub.overflowed = True

    def focused_pages(self) -> int:
        """How many connected, signed-in dashboards report being visible and focused."""
        return len([s for s in self.subscribers if s.visible and s.login is not None])

    def focused_logins(self) -> set[str]:
        """The logins with a connected page that proved its key and is visible and focused:
        that page shows what a push to its own login's devices would say."""
        return {s.login for s in self.subscribers if s.visible and s.login is not None}
