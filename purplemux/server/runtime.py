"""What a running daemon holds (settings, token, store, engine), and the request dependencies."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fastapi import HTTPException, Request
from starlette.requests import HTTPConnection

from purplemux.engine import Engine
from purplemux.events import Event
from purplemux.server.auth import presented_token, token_ok
from purplemux.server.logins import COOKIE, Logins
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
    logins: Logins | None = None
    """The dashboard's login cookies (made at start from the home and the token)."""

    def __post_init__(self) -> None:
        if self.logins is None:
            self.logins = Logins(self.settings.home / "logins", self.token)

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


def has_token(conn: HTTPConnection) -> bool:
    """The API token in `Authorization: Bearer` (hooks, the CLI)."""
    return token_ok(runtime(conn).token, presented_token(conn))


def is_authenticated(conn: HTTPConnection) -> bool:
    """The token, or a browser's login cookie."""
    if has_token(conn):
        return True
    logins = runtime(conn).logins
    return logins is not None and logins.valid(conn.cookies.get(COOKIE))


UNAUTHORIZED = (
    "missing or wrong token: open the link `purplemux open` prints, or send "
    "Authorization: Bearer <token from $PURPLEMUX_HOME/token>"
)


async def require_auth(request: Request) -> None:
    """401 unless the request carries the token or a live login cookie."""
    # async def: FastAPI runs a plain def dependency in a worker thread, a hop per request.
    if not is_authenticated(request):
        raise HTTPException(401, UNAUTHORIZED)


async def require_token(request: Request) -> None:
    """401 unless the request carries the token itself (hook events: a login cookie is not
    enough, so a cookie that reached another local server cannot fake a session's state)."""
    if not has_token(request):
        raise HTTPException(
            401, "missing or wrong token: send Authorization: Bearer <$PURPLEMUX_HOME/token>"
        )
