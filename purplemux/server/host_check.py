"""The Host header must name this daemon: DNS rebinding gets a 4xx, WebSocket upgrades included.

A web page on a name the attacker controls can make that name resolve to 127.0.0.1 and then talk
to the daemon as same-origin. Browsers always send the name they used in `Host`, so a request
is served only when Host is the bound address, `localhost`, `127.0.0.1`, `[::1]`, or a name in
`PURPLEMUX_ALLOWED_HOSTS` (a reverse proxy's public name, say).
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

from purplemux.io.settings import Settings

LOCAL = frozenset({"localhost", "127.0.0.1", "::1"})


def host_name(value: str) -> str:
    """The name in a Host header, without its port, lower case ("[::1]:8022" -> "::1")."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    if value.count(":") == 1:
        value = value.partition(":")[0]
    return value.rstrip(".")


def allowed_names(settings: Settings) -> frozenset[str]:
    names = set(LOCAL)
    names.add(host_name(settings.host))
    names.update(host_name(h) for h in settings.allowed_hosts if h.strip())
    names.discard("")
    return frozenset(names)


class HostCheck:
    """Refuses (400, JSON) any HTTP request or WebSocket upgrade whose Host is not ours."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.allowed = allowed_names(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        hosts = [v for n, v in scope.get("headers") or [] if n == b"host"]
        if hosts and all(host_name(h.decode("latin-1")) in self.allowed for h in hosts):
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {
                "error": "this Host is not served here (DNS rebinding?); add the name to "
                "PURPLEMUX_ALLOWED_HOSTS if you use it on purpose"
            }
        ).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 400, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        elif "websocket.http.response" in (scope.get("extensions") or {}):
            await send({"type": "websocket.http.response.start", "status": 400, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": body})
        else:  # the handshake is refused (403) before any accept
            await send({"type": "websocket.close", "code": 4400})
