"""The change feed: a snapshot, then one message per batch of changes with a gap-free seq.

Protocol 2 (the snapshot's `protocol`): after `{"type": "snapshot", "seq", "protocol",
"sessions"}` come `{"type": "sessions", "seq", "sessions": [Session, ...], "removed": [id, ...]}`
(what changed together: the engine's batch, each session once, in its newest state; an id is never
in both lists) and `{"type": "broker", "seq", "broker"}`. Protocol 1 sent one `session` or
`removed` message per change."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

Message = dict[str, Any]

PROTOCOL = 2
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

    def __init__(self, snapshot: Callable[[], list[dict[str, Any]]]) -> None:
        self._snapshot = snapshot
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
            "sessions": self._snapshot(),
        }
        if self.snapshot_extra is not None:
            message.update(self.snapshot_extra())
        return sub, message

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)

    def publish_changes(
        self, sessions: list[dict[str, Any]], removed: list[str] | None = None
    ) -> None:
        """One `sessions` message for what changed together (nothing when nothing did)."""
        if sessions or removed:
            self.publish({"type": "sessions", "sessions": sessions, "removed": removed or []})

    def publish(self, message: Message) -> None:
        """Stamp the next seq on the message and queue it for every subscriber."""
        self.seq += 1
        if not self.subscribers:
            return
        # Encoded once for all clients (as starlette's send_json would, per client); type and
        # seq first, so a client that only follows the seq can read it off the head.
        text = encode({"type": message["type"], "seq": self.seq, **message})
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
