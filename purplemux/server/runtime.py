"""The request dependencies: the Runtime of the app serving a request, and the token check."""

from __future__ import annotations

from fastapi import HTTPException, Request
from starlette.requests import HTTPConnection

from purplemux.logins import COOKIE
from purplemux.runtime import Runtime
from purplemux.server.auth import presented_token, token_ok

__all__ = [
    "Runtime",
    "current_runtime",
    "has_token",
    "is_authenticated",
    "require_auth",
    "require_token",
    "runtime",
]


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
    return runtime(conn).logins.valid(conn.cookies.get(COOKIE))


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
