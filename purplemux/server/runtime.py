"""The request dependencies: the Runtime of the app serving a request, and the token check."""

from __future__ import annotations

from fastapi import HTTPException, Request
from starlette.requests import HTTPConnection

from purplemux.runtime import Runtime
from purplemux.server.auth import presented_token, token_ok

__all__ = ["Runtime", "current_runtime", "is_authenticated", "require_auth", "runtime"]


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
