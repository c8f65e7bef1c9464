"""POST /api/hooks answered in front of the daemon's app: the hook script's calls are nearly
all of a busy daemon's requests (issue 27).

Through the app, each call crossed FastAPI, Starlette's error and body-limit layers, the host
check, the security headers and the route (a Request, a JSONResponse, a wrapped `send` per
layer): about a tenth of the daemon's CPU per event with 50 viewers. Here the usual call, and
only it, is taken straight from the ASGI scope: a Host this daemon serves, no other origin, the
token, a declared length within MAX_BODY, a JSON object the hook reader turns into an event.
Its answer is the app's (202, the same body and headers). Anything else — a refusal, a body to
cut or too large, a payload the reader rejects — goes to the app with the body it sent, so every
other answer is the app's own, word for word. Only a store failure is answered here (503, as the
route words it): the event was tried, and trying it again in the app would apply it twice.
"""

from __future__ import annotations

import time
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from purplemux.core import jsontext
from purplemux.io.settings import MAX_BODY
from purplemux.server.api import HOOKS, accepted, not_stored
from purplemux.server.auth import token_ok
from purplemux.server.host_check import host_name
from purplemux.server.security import HEADERS as SECURITY_HEADERS
from purplemux.sources.hooks import PayloadError, to_event

JSON_TYPE = (b"content-type", b"application/json")


class HookPath:
    """The ASGI app in front: hook calls here, the rest to `app` (the daemon's app)."""

    def __init__(self, app: ASGIApp, allowed_hosts: frozenset[str]) -> None:
        self.app = app
        self.allowed = allowed_hosts

    @staticmethod
    def wants(scope: Scope) -> bool:
        http = scope["type"] == "http"
        return bool(http and scope["path"] == HOOKS and scope["method"] == "POST")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        rt = getattr(getattr(self.app, "state", None), "runtime", None)
        headers = _plain(scope, self.allowed, rt.token if rt is not None else None)
        if headers is None or rt is None:
            await self.app(scope, receive, send)
            return
        body = await _body(receive)
        if body is None:  # more than it declared: the app's reader says what is wrong
            await self.app(scope, _replay(b"", disconnected=True), send)
            return
        try:
            payload = orjson.loads(body)  # what it refuses (NaN, UTF-16...): the app's json
            event = to_event(payload, headers, time.time(), rt.settings.account_of)
        except (ValueError, RecursionError, PayloadError):
            await self.app(scope, _replay(body), send)
            return
        try:
            ignored = await rt.ingest(event, live=True)
        except Exception as exc:  # not stored: never acknowledged (the script spools on 5xx)
            await _answer(send, 503, {"error": not_stored(exc)})
            return
        await _answer(send, 202, accepted(event.id, ignored))


def _plain(scope: Scope, allowed: frozenset[str], token: str | None) -> dict[str, str] | None:
    """The request's headers (UTF-8, as the hook reader takes them) when it is the usual hook
    call; None for anything the app must judge."""
    if token is None:
        return None
    hosts = 0
    auth: bytes | None = None
    length: bytes | None = None
    out: dict[str, str] = {}
    for name, value in scope.get("headers") or ():
        if name == b"host":
            if host_name(value.decode("latin-1")) not in allowed:
                return None
            hosts += 1
        elif name == b"authorization":
            if auth is None:
                auth = value
        elif name == b"content-length":
            length = value
        elif name in (b"origin", b"sec-fetch-site", b"transfer-encoding", b"expect"):
            return None  # a browser's, or a body not simply sent: the app's checks
        out[name.decode("latin-1")] = value.decode("utf-8", "replace")
    if not hosts or auth is None or length is None or not length.isdigit():
        return None
    if int(length) > MAX_BODY or auth[:7].lower() != b"bearer ":
        return None
    if not token_ok(token, auth[7:].decode("latin-1").strip()):
        return None
    return out


async def _body(receive: Receive) -> bytes | None:
    """The whole body (at most MAX_BODY bytes: it declared no more); None past that."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _replay(body: bytes, disconnected: bool = False) -> Receive:
    """A receive that gives the app the body already read, then waits as uvicorn's does."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent and not disconnected:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


async def _answer(send: Send, status: int, body: dict[str, Any]) -> None:
    data = jsontext.dumpb(body)
    # As the app sends it: JSONResponse's two headers, then SecurityMiddleware's.
    headers = [(b"content-length", b"%d" % len(data)), JSON_TYPE, *SECURITY_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
