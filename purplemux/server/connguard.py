"""Connections that send nothing are closed, and no client, nor all clients together, can hold
every file descriptor.

uvicorn closes an idle keep-alive connection only after a response; a socket that never sends a
request, or sends half of one, stays open forever. So every HTTP connection must deliver a whole
request within `request_timeout` seconds of opening (or of its last response). One client address
may hold at most `per_client` connections, and all clients together at most `total` (derived from
`ulimit -n`, so the process never runs out of descriptors): when a new connection comes past
either cap, the oldest connection of that client (or, past the total, of all clients) that is not
being answered (idle, or still sending) is closed to make room. A hook, whose request is complete
the moment it connects, is never the one pushed out, so hooks keep working while something floods
the port from many addresses. Live feeds (WebSockets) count in both caps but are never pushed out;
their own, lower caps (purplemux.server.feedcap) keep the rest of the room for requests.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from purplemux.io.log_once import RateLimitedLog
from purplemux.server import wsframes

log = logging.getLogger(__name__)

PER_CLIENT = 64
TOTAL = 1024
"""The most connections of all clients together, whatever `ulimit -n` allows."""
RESERVED_FDS = 64
"""Descriptors left for the database, watchers, logs, tmux calls and threads."""


@dataclass(frozen=True)
class Limits:
    """How many connections one client address, and all of them, may hold."""

    per_client: int
    total: int


def default_limits(total: int | None = None, feeds: int | None = None) -> Limits:
    """TOTAL and PER_CLIENT, or fewer when the process may open few files (ulimit -n);
    `total`: the setting PURPLEMUX_MAX_CONNECTIONS, when given; `feeds`: PURPLEMUX_MAX_FEEDS,
    which one address may all hold, with PER_CLIENT / 2 requests beside them."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if total is None:
        room = TOTAL if soft == resource.RLIM_INFINITY or soft <= 0 else soft - RESERVED_FDS
        total = max(8, min(TOTAL, room))
    per_client = max(4, min(PER_CLIENT, total // 2))
    if feeds is not None:
        per_client = max(per_client, feeds + PER_CLIENT // 2)
    return Limits(per_client=per_client, total=max(1, total))


def default_per_client() -> int:
    """The per-client cap default_limits() gives."""
    return default_limits().per_client


def _key(conn: Any) -> str:
    return str(conn.client[0]) if conn.client else "?"


class Guard:
    """The open connections of each client address, and of all, oldest first."""

    def __init__(self, per_client: int, request_timeout: float, total: int | None = None) -> None:
        self.per_client, self.request_timeout = per_client, request_timeout
        self.total = total if total is not None else default_limits().total
        self.clients: dict[str, OrderedDict[Any, None]] = {}
        self.warn = RateLimitedLog(log, interval=60)
        self.all: OrderedDict[Any, None] = OrderedDict()
        self.feeds: dict[Any, Any] = {}
        """The HTTP connection each upgraded transport (a live feed) came in on."""

    def admit(self, conn: Any) -> bool:
        """Room for this connection, made by closing the oldest idle one if need be."""
        key = _key(conn)
        conns = self.clients.setdefault(key, OrderedDict())
        while len(conns) >= self.per_client:
            if not self._evict(conns, ("full", key), f"{key} holds too many connections"):
                if not conns:
                    del self.clients[key]
                return False
        while len(self.all) >= self.total:
            if not self._evict(self.all, ("full", "*"), "the daemon holds too many connections"):
                if not conns:
                    del self.clients[key]
                return False
        conns[conn] = None
        self.all[conn] = None
        return True

    def _evict(self, conns: OrderedDict[Any, None], key: tuple[str, str], why: str) -> bool:
        victim = next((c for c in conns if not c.pmx_busy and not c.pmx_feed), None)
        if victim is None:
            self.warn.warning(key, "%s, all being answered: refusing a new one", why)
            return False
        self.warn.warning(("evict", key[1]), "%s: closing the oldest idle ones", why)
        self.release(victim)
        victim.transport.close()
        return True

    def release(self, conn: Any) -> None:
        self.all.pop(conn, None)
        key = _key(conn)
        conns = self.clients.get(key)
        if conns is not None:
            conns.pop(conn, None)
            if not conns:
                del self.clients[key]


def guarded_protocol(guard: Guard) -> type[HttpToolsProtocol]:
    """uvicorn's HTTP protocol with the request timeout and the connection caps."""

    class GuardedHttpTools(HttpToolsProtocol):
        pmx_busy = False
        pmx_feed = False
        pmx_timer: asyncio.TimerHandle | None = None
        pmx_deadline: float | None = None
        """When the connection goes unless a whole request has come (None: no deadline). The
        timer is lazy: arming moves the deadline and disarming clears it, and the one timer,
        when it fires early, waits again for what is left. A keep-alive client's requests then
        set no timer and cancel none (two timer calls per request were ~3 % of an event)."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if not guard.admit(self):
                transport.close()
                return
            self._pmx_arm()

        def _pmx_arm(self) -> None:
            if self.pmx_deadline is None and not self.transport.is_closing():
                self.pmx_deadline = self.loop.time() + guard.request_timeout
                if self.pmx_timer is None:
                    self.pmx_timer = self.loop.call_at(self.pmx_deadline, self._pmx_expire)

        def _pmx_disarm(self) -> None:
            self.pmx_deadline = None

        def _pmx_stop(self) -> None:
            self.pmx_deadline = None
            if self.pmx_timer is not None:
                self.pmx_timer.cancel()
                self.pmx_timer = None

        def _pmx_expire(self) -> None:
            self.pmx_timer = None
            deadline = self.pmx_deadline
            if deadline is None or self.pmx_busy or self.transport.is_closing():
                return  # disarmed since: the next arming sets a timer again
            if self.loop.time() < deadline:  # armed again since this timer was set
                self.pmx_timer = self.loop.call_at(deadline, self._pmx_expire)
                return
            self.pmx_deadline = None
            self.transport.close()  # no whole request in time: idle, or sent too slowly

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._pmx_arm()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            if self.cycle is not None and not self.cycle.response_complete:
                self.pmx_busy = True  # being answered: no timeout, never pushed out
                self._pmx_disarm()

        def on_response_complete(self) -> None:
            self.pmx_busy = False
            super().on_response_complete()
            self._pmx_arm()

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.ws_protocol_class = _counted_feeds(self.ws_protocol_class, guard)

        def handle_websocket_upgrade(self) -> None:
            # The WebSocket protocol takes the transport over; the feed has its own lifetime,
            # but keeps its descriptor: it stays counted (never pushed out) until it closes.
            self._pmx_stop()
            self.pmx_feed = True
            guard.feeds[self.transport] = self
            super().handle_websocket_upgrade()

        def connection_lost(self, exc: Exception | None) -> None:
            self._pmx_stop()
            guard.release(self)
            super().connection_lost(exc)

    return GuardedHttpTools


_feed_classes: dict[tuple[type, int], type] = {}


def _counted_feeds(base: Any, guard: Guard) -> Any:
    """uvicorn's WebSocket protocol, giving its connection's slot back when it closes."""
    if base is None:
        return None
    key = (base, id(guard))
    if key not in _feed_classes:

        class CountedFeed(base):  # type: ignore[misc]
            def handle_connect(self, event: Any) -> None:
                super().handle_connect(event)  # websockets' sans-I/O protocol: the scope is made
                wsframes.offer(self)

            def connection_lost(self, exc: Exception | None) -> None:
                conn = guard.feeds.pop(self.transport, None)
                if conn is not None:
                    guard.release(conn)
                super().connection_lost(exc)

        _feed_classes[key] = CountedFeed
    return _feed_classes[key]
