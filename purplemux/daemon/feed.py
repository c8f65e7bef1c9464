"""The change feed: a snapshot, then one message per batch of changes with a gap-free seq.

Protocol 3 (the snapshot's `protocol`): every message has `type`, `seq` and `at` (the server's
clock when it was sent: a client far behind it resyncs). First `{"type": "snapshot", "seq",
"protocol", "at", "sessions", "list"}`: the live sessions and the first page of ended ones
(purplemux.core.listing.ENDED_PAGE; GET /api/sessions?ended=1 pages on), and the dashboard's list
(`Board.to_json()`: layout, counts, attention, title, favicon, recent, ended ids and total). Then
`{"type": "sessions", "seq", "at", "sessions": [Session, ...], "removed": [id, ...], "list"}`
(what changed together: the engine's batch, each session once, in its newest state; an id is never
in both lists; `list` is the board after it, with `layout` only when the layout changed) and
`{"type": "broker", "seq", "at", "broker", "badge"}` (`badge`: listing.BrokerBadge). With a broker
the snapshot also has `broker` and `badge`. `{"type": "limits", "seq", "at", "limits": [...]}`:
every account's usage-limit reading (purplemux.daemon.limit_keeper) after one changed; the snapshot
carries the same list as `limits`. Protocol 2 had no `at` and no `list`; protocol 1 sent
one `session` or `removed` message per change.

What a message costs with many clients (issue 27): the engine names the sessions that changed
and each one's JSON is made when the message goes (once, however many batches changed it since
the last message); the message is encoded once (orjson) and, for a client
served by uvicorn's WebSocket protocol (purplemux.server.wsframes), framed once: the same bytes
are written to every such client's socket, with no per-client encoding, task or queue. Changes
published in one turn of the event loop go out as one message (a session once, in its newest
state), a message at least GAP seconds after the one before, and while the engine has more
events queued, those of up to HOLD seconds; a client
whose socket has too much unsent is dropped, and resyncs, as one whose queue overflows (a client
served by another ASGI server keeps a bounded queue and a sender).

Wiring: what the feed asks of its owner comes with its construction (`snapshot`, `board`,
`clock`, `busy`, `resolve`: the engine's). What others add to the snapshot message (the usage
limits, the broker's state) is a snapshot part, registered with `add_to_snapshot`, which
returns the callable that removes it: each part's keys are added, in the order the parts were
registered."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from purplemux.core import jsontext

if TYPE_CHECKING:
    from purplemux.core.listing import Board, GroupBox

log = logging.getLogger(__name__)

Message = dict[str, Any]
SnapshotPart = Callable[[], dict[str, Any]]
"""More keys for the snapshot message (add_to_snapshot)."""

PROTOCOL = 3
"""The feed's message shapes (see above); the snapshot says it, so a client can tell."""
QUEUE = 2000
"""Messages a queued client may have waiting before it is dropped (it resyncs)."""
GAP = 0.01
"""Seconds at least between two change messages: changes that come sooner join the next one,
so each client gets at most 100 a second, however fast hooks arrive (each message is a write to
every client's socket, the dashboard's list and each changed session's JSON: with 50 clients,
most of an event's cost when each event was a message of its own). Only a change that follows
another within GAP waits, and at most GAP: 5 ms cost ~8 % more CPU per event under §3's load of
BENCHMARKS.md than 10 ms, and a hook's change alone (a person's pace) is sent at once either way."""
HOLD = 0.01
"""Seconds a message may wait for more changes while its source says more are coming (the
engine has events queued): under a flood, at most a message per HOLD to every client."""


class FrameWriter(Protocol):
    """Writes a prepared WebSocket frame to one client's socket, now (purplemux.server.wsframes).

    False: the client is gone, or has more unsent than it may (it is dropped, and resyncs)."""

    def write(self, frame: bytes) -> bool: ...


@dataclass(eq=False)
class Subscriber:
    """One client: its frame writer (the same frame for every client), or else its bounded
    queue of messages as JSON; `overflowed`: it fell behind and must resync."""

    writer: FrameWriter | None = None
    queue: asyncio.Queue[bytes | None] = field(default_factory=lambda: asyncio.Queue(QUEUE))
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the feed is done with a client that has a writer (it ends, or dropped it)."""
    overflowed: bool = False
    visible: bool = False
    login: str | None = None
    """The login id of the page, once it proved it (its page key, or the token): only such a
    page's focus holds pushes back, and only its own login's."""

    def end(self) -> None:
        """No more messages for this client: its connection closes."""
        if self.writer is not None:
            self.ended.set()
            return
        try:
            self.queue.put_nowait(None)
        except asyncio.QueueFull:
            self.queue.get_nowait()
            self.queue.put_nowait(None)


def encode(message: Message) -> bytes:
    """A message as the JSON (UTF-8) sent on the WebSocket: orjson, ~5x json.dumps here; the
    standard library for what orjson refuses (an integer past 64 bits)."""
    return jsontext.dumpb(message)


def text_frame(payload: bytes) -> bytes:
    """One unfragmented, unmasked WebSocket text frame (RFC 6455 5.2: what a server sends)."""
    n = len(payload)
    if n < 126:
        head = bytes((0x81, n))
    elif n < 1 << 16:
        head = bytes((0x81, 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x81, 127)) + n.to_bytes(8, "big")
    return head + payload


class Feed:
    """Fan-out of session changes; seq grows by one per message for every subscriber."""

    def __init__(
        self,
        snapshot: Callable[[], list[dict[str, Any]]],
        board: Callable[[], Board] | None = None,
        clock: Callable[[], float] = time.time,
        busy: Callable[[], bool] = lambda: False,
        resolve: Callable[[str], dict[str, Any] | None] = lambda _sid: None,
    ) -> None:
        self._snapshot = snapshot
        self._board = board
        """The dashboard's list now (core.listing), sent with the snapshot and each change."""
        self._clock = clock
        self._layout: tuple[GroupBox, ...] | None = None
        """The layout last sent; a change message carries it again only when it differs."""
        self.seq = 0
        self.subscribers: set[Subscriber] = set()
        self._snapshot_parts: list[SnapshotPart] = []
        """More for the snapshot message, in the order added (add_to_snapshot): the usage
        limits (limit_keeper), the broker's state (with several hosts)."""
        self._changed: dict[str, dict[str, Any] | None] = {}
        self._removed: dict[str, None] = {}
        """What was published since the last message: sent together at the end of the loop's
        turn (each session once, in its newest state; None: made by `resolve` when it goes)."""
        self.resolve = resolve
        """A changed session's JSON as it is now (the engine's), for the ids published by
        publish_ids(): made once per message, however often the session changed since the
        last one."""
        self._flush: asyncio.Handle | None = None
        self._sent_at = -math.inf
        """The loop's time of the last change message (GAP)."""
        self._focused: dict[Subscriber, None] = {}
        """The subscribers that are visible, focused and signed in (see report_visibility):
        asked at every notification, so not a walk over every client."""
        self.busy = busy
        """More changes are on their way (the engine's queue is not empty): the message waits
        for them, up to HOLD, unless flush() is called first (the engine, once idle)."""

    def subscribe(self, writer: FrameWriter | None = None) -> tuple[Subscriber, Message]:
        """Register a client; its first message is the snapshot at the current seq. With a
        `writer`, the caller writes the snapshot through it before anything else can run."""
        self.flush()  # what is pending goes to the others first: the snapshot already has it
        sub = Subscriber(writer)
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
        for part in list(self._snapshot_parts):
            message.update(part())
        return sub, message

    def add_to_snapshot(self, part: SnapshotPart) -> Callable[[], None]:
        """Add what `part` returns to every snapshot message from now on; returns the way to
        stop (calling it again does nothing)."""
        self._snapshot_parts.append(part)

        def remove() -> None:
            if part in self._snapshot_parts:
                self._snapshot_parts.remove(part)

        return remove

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)
        self._focused.pop(sub, None)

    def report_visibility(self, sub: Subscriber, login: str | None, visible: bool) -> None:
        """What a client says of its page: its proven login (or None) and whether it is seen."""
        sub.login, sub.visible = login, visible
        if visible and login is not None and sub in self.subscribers:
            self._focused[sub] = None
        else:
            self._focused.pop(sub, None)

    def publish_changes(
        self, sessions: list[dict[str, Any]], removed: list[str] | None = None
    ) -> None:
        """What changed together: one `sessions` message at the end of this turn of the loop,
        with whatever else is published in it (nothing when nothing changed)."""
        self._publish({s["id"]: s for s in sessions}, removed)

    def publish_ids(self, ids: list[str], removed: list[str] | None = None) -> None:
        """As publish_changes, with the changed sessions named: their JSON is made by
        `resolve` when the message goes (a session changed by several batches is made once)."""
        self._publish(dict.fromkeys(ids), removed)

    def _publish(
        self, changed: dict[str, dict[str, Any] | None], removed: list[str] | None
    ) -> None:
        if not (changed or removed):
            return
        if not self.subscribers:
            self._layout = None  # nobody holds a layout: the next snapshot sends it whole
            self.seq += 1
            return
        for sid, data in changed.items():
            self._removed.pop(sid, None)
            self._changed.pop(sid, None)  # re-inserted: the order is that of the changes
            self._changed[sid] = data
        for sid in removed or ():
            self._changed.pop(sid, None)
            self._removed[sid] = None
        if self._flush is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a direct call): nothing to wait for
                self.flush()
                return
            wait = self._sent_at + GAP - loop.time()
            if self.busy():
                wait = max(wait, HOLD)
            self._flush = (
                loop.call_later(wait, self.flush) if wait > 0 else loop.call_soon(self.flush)
            )

    def idle(self) -> None:
        """Nothing more is coming for now (the engine's queue is empty): what is held goes out
        as soon as GAP allows."""
        if self._flush is None:
            return
        loop = asyncio.get_running_loop()
        wait = self._sent_at + GAP - loop.time()
        if wait <= 0:
            self.flush()
            return
        self._flush.cancel()
        self._flush = loop.call_later(wait, self.flush)

    def flush(self) -> None:
        """Send what was published since the last message, now."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        if not (self._changed or self._removed):
            return
        sessions = []
        for sid, data in self._changed.items():
            made = data if data is not None else self.resolve(sid)
            if made is not None:
                sessions.append(made)
        message: Message = {
            "type": "sessions",
            "sessions": sessions,
            "removed": list(self._removed),
        }
        self._changed, self._removed = {}, {}
        with contextlib.suppress(RuntimeError):  # no loop (a direct call): no gap to keep
            self._sent_at = asyncio.get_running_loop().time()
        if self._board is not None and self.subscribers:
            now = self._board()
            message["list"] = now.summary_json()
            if now.groups != self._layout:
                message["list"]["layout"] = now.layout
                self._layout = now.groups
        elif not self.subscribers:
            self._layout = None
        self._send(message)

    def publish(self, message: Message) -> None:
        """Stamp the next seq on the message and send it to every subscriber (after what is
        pending, so the order is the order of publishing)."""
        self.flush()
        self._send(message)

    def _send(self, message: Message) -> None:
        self.seq += 1
        if not self.subscribers:
            return
        # Type and seq first, so a client that only follows the seq can read it off the head.
        payload = encode({"type": message["type"], "seq": self.seq, "at": self._clock(), **message})
        frame: bytes | None = None
        for sub in list(self.subscribers):
            if sub.overflowed:
                continue
            if sub.writer is not None:
                if frame is None:
                    frame = text_frame(payload)
                if not sub.writer.write(frame):
                    self._drop(sub)
                continue
            try:
                sub.queue.put_nowait(payload)
            except asyncio.QueueFull:
                self._drop(sub)

    def _drop(self, sub: Subscriber) -> None:
        # A client this far behind resyncs from a fresh snapshot rather than stall us.
        sub.overflowed = True
        log.warning("a feed client fell behind; closing it so it resyncs")
        sub.end()

    def close(self) -> None:
        """Tell every subscriber the feed ends."""
        self.flush()
        for sub in list(self.subscribers):
            sub.end()

    def focused_pages(self) -> int:
        """How many connected, signed-in dashboards report being visible and focused."""
        return len(self._focused)

    def focused_logins(self) -> set[str]:
        """The logins with a connected page that proved its key and is visible and focused:
        that page shows what a push to its own login's devices would say."""
        return {s.login for s in self._focused if s.login is not None}
