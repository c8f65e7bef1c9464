"""The live feed's frames written straight to a WebSocket's socket: the same bytes to every client.

Through ASGI, each message to each client is a `send` through Starlette and uvicorn, where the
websockets library frames it again; with fifty clients that was most of the daemon's CPU per
event (BENCHMARKS.md, section 3). uvicorn's WebSocket protocol (websockets' sans-I/O flavour, the
one `uvicorn[standard]` picks) offers its feeds a writer in the connection's ASGI scope
(`scope["extensions"][EXTENSION]`), set up by purplemux.server.connguard: purplemux.daemon.feed then
writes each message's frame, made once, to every client's transport. Everything else on the
connection (the handshake, pings, the close) stays the protocol's own; the writer only adds data
frames, whole, between them (asyncio runs one callback at a time, so frames never interleave).
"""

from __future__ import annotations

from typing import Any

EXTENSION = "purplemux.frames"
MAX_UNSENT = 16 << 20
"""Bytes a client may leave unread in its socket's buffer: past it, it has fallen behind (the
queue of 2,000 messages that other clients keep holds about as much) and its connection is cut,
at once (a close frame would wait behind what it has not read); its page reconnects and
resyncs."""


class TransportFrames:
    """purplemux.daemon.feed.FrameWriter over one uvicorn WebSocket protocol's transport."""

    __slots__ = ("_protocol",)

    def __init__(self, protocol: Any) -> None:
        self._protocol = protocol

    def write(self, frame: bytes) -> bool:
        p = self._protocol
        transport = p.transport
        if p.close_sent or transport.is_closing():
            return False
        if transport.get_write_buffer_size() > MAX_UNSENT:
            transport.abort()
            return False
        transport.write(frame)
        return True


def offer(protocol: Any) -> None:
    """Give an accepted connection's ASGI scope the writer (once the handshake is read)."""
    scope = getattr(protocol, "scope", None)
    if isinstance(scope, dict) and hasattr(protocol, "close_sent"):
        scope.setdefault("extensions", {})[EXTENSION] = TransportFrames(protocol)


def writer_of(scope: Any) -> TransportFrames | None:
    """The connection's frame writer, when its server offers one."""
    extensions = scope.get("extensions") or {}
    found = extensions.get(EXTENSION)
    return found if isinstance(found, TransportFrames) else None
