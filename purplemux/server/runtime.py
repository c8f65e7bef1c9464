"""What a running daemon holds (settings, token, store, engine), and the request dependencies."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fastapi import HTTPException, Request
from starlette.requests import HTTPConnection

from purplemux.engine import Engine
from purplemux.events import Event
from purplemux.server.auth import presented_token, token_ok
from purplemux.settings import Settings
from purplemux.store import AsyncStore


@dataclass(eq=False)
class Runtime:
    """The live parts of one daemon, built by the app's lifespan."""

    settings: Settings
    token: str
    store: AsyncStore
    engine: Engine
    extras: dict[str, Any] = field(default_factory=dict)

    async def ingest(self, event: Event, live: bool = True) -> None:
        """Apply an event and wait until it is stored: only then may its sender forget it."""
        await self.engine.submit(event, live=live)


def runtime(request: HTTPConnection) -> Runtime:
    """The Runtime of the app serving this request."""
    rt: Runtime | None = getattr(request.app.state, "runtime", None)
    if rt is None:
        raise HTTPException(503, "the daemon is starting")
    return rt


async def current_runtime(request: HTTPConnection) -> Runtime:
    """runtime() as a request dependency (async: no worker thread per request)."""
    return runtime(request)


def is_authenticated(conn: HTTPConnection) -> bool:
    return token_ok(runtime(conn).token, presented_token(conn))


async def require_auth(request: Request) -> None:
    """401 unless the request carries the token (header or cookie)."""
    # async def: FastAPI runs a plain def dependency in a worker thread, a hop per request.
    if not is_authenticated(request):
        raise HTTPException(
            401,
            "missing or wrong token: open the link `purplemux open` prints, or send "
            "Authorization: Bearer <token from $PURPLEMUX_HOME/token>",
        )
