"""Connections that send nothing are closed, and no client can hold every file descriptor.

uvicorn closes an idle keep-alive connection only after a response; a socket that never sends a
request, or sends half of one, stays open forever. So every HTTP connection must deliver a whole
request within `request_timeout` seconds of opening (or of its last response). And one client
address may hold at most `per_client` connections: when a new one comes past that, the oldest
connection of that client that is not being answered (idle, or still sending) is closed to make
room. A hook, whose request is complete the moment it connects, is never the one pushed out, so
hooks keep working while something floods the port with idle sockets.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from collections import OrderedDict
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from purplemux.ratelimit_log import RateLimitedLog

log = logging.getLogger(__name__)

PER_CLIENT = 64
RESERVED_FDS = 64
"""Descriptors left for the database, watchers, logs and threads when the limit is derived."""


def default_per_client() -> int:
    """PER_CLIENT, or fewer when the process may open few files (ulimit -n)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return PER_CLIENT
    return max(4, min(PER_CLIENT, (soft - RESERVED_FDS) // 2))


class Guard:
    """The open HTTP connections of each client address, oldest first."""

    def __init__(self, per_client: int, request_timeout: float) -> None:
        self.per_client, self.request_timeout = per_client, request_timeout
        self.clients: dict[str, OrderedDict[Any, None]] = {}
        self.warn = RateLimitedLog(log, interval=60)

    def admit(self, conn: Any) -> bool:
        """Room for this connection, made by closing the oldest idle one if need be."""
        key = conn.client[0] if conn.client else "?"
        conns = self.clients.setdefault(key, OrderedDict())
        while len(conns) >= self.per_client:
            victim = next((c for c in conns if not c.pmx_busy), None)
            if victim is None:
                self.warn.warning(("full", key), "refusing a connection from %s: all busy", key)
                return False
            self.warn.warning(
                ("evict", key), "%s holds too many connections: closing idle ones", key
            )
            self.release(victim)
            victim.transport.close()
        conns[conn] = None
        return True

    def release(self, conn: Any) -> None:
        key = conn.client[0] if conn.client else "?"
        conns = self.clients.get(key)
        if conns is not None:
            conns.pop(conn, None)
            if not conns:
                del self.clients[key]


def guarded_protocol(guard: Guard) -> type[HttpToolsProtocol]:
    """uvicorn's HTTP protocol with the request timeout and the per-client limit."""

    class GuardedHttpTools(HttpToolsProtocol):
        pmx_busy = False
        pmx_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if not guard.admit(self):
                transport.close()
                return
            self._pmx_arm()

        def _pmx_arm(self) -> None:
            if self.pmx_timer is None and not self.transport.is_closing():
                self.pmx_timer = self.loop.call_later(guard.request_timeout, self._pmx_expire)

        def _pmx_disarm(self) -> None:
            if self.pmx_timer is not None:
                self.pmx_timer.cancel()
                self.pmx_timer = None

        def _pmx_expire(self) -> None:
            self.pmx_timer = None
            if not self.pmx_busy and not self.transport.is_closing():
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

        def handle_websocket_upgrade(self) -> None:
            # The WebSocket protocol takes the transport over; the feed has its own lifetime.
            self._pmx_disarm()
            guard.release(self)
            super().handle_websocket_upgrade()

        def connection_lost(self, exc: Exception | None) -> None:
            self._pmx_disarm()
            guard.release(self)
            super().connection_lost(exc)

    return GuardedHttpTools
