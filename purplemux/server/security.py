"""Security headers on every response, and same-origin checks for browser writes."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; worker-src 'self'; manifest-src 'self'; frame-ancestors 'none'; "
        b"base-uri 'none'; form-action 'self'; object-src 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
]
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class SecurityMiddleware:
    """Adds the headers; refuses state-changing requests a browser sent from another origin."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if scope["method"] not in SAFE_METHODS and not _same_origin(headers):
            await _forbidden(send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                own = list(message.get("headers") or [])
                present = {name.lower() for name, _ in own}
                # A route that sets its own value (the page's CSP) keeps it: one header, not two.
                message["headers"] = own + [h for h in HEADERS if h[0] not in present]
                if scope["path"] == "/static/sw.js":
                    # The worker lives under /static but must control the whole dashboard.
                    message["headers"].append((b"service-worker-allowed", b"/"))
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _same_origin(headers: dict[bytes, bytes]) -> bool:
    """No Origin (curl, the hook script, the CLI) or an Origin naming this very host."""
    origin = headers.get(b"origin")
    if origin is None:
        site = headers.get(b"sec-fetch-site")
        return site in (None, b"same-origin", b"none")
    return urlsplit(origin.decode("latin-1")).netloc == headers.get(b"host", b"").decode("latin-1")


async def _forbidden(send: Send) -> None:
    body = json.dumps({"error": "cross-origin request refused"}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [(b"content-type", b"application/json"), *HEADERS],
        }
    )
    await send({"type": "http.response.body", "body": body})
