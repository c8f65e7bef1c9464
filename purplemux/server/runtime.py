"""The request dependencies: the Runtime of the app serving a request, and the token check."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import HTTPException, Request
from starlette.requests import HTTPConnection

from purplemux.daemon.runtime import Runtime
from purplemux.io.logins import COOKIE
from purplemux.server.auth import PAGE_KEY_HEADER, page_key_ok, presented_token, token_ok

__all__ = [
    "Actor",
    "Runtime",
    "actor_of",
    "current_runtime",
    "has_token",
    "is_authenticated",
    "require_actor",
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


@dataclass(frozen=True, slots=True)
class Actor:
    """Who may act: the token's holder, or a page holding its login's page key."""

    login: str
    """The login id (purplemux/io/logins.py): push subscriptions are kept under it."""
    via: str
    """"token" or "page"."""


NEEDS_PAGE_KEY = (
    "this page holds only the login cookie, which lets it view but not act (read a pane, "
    "answer, focus, notifications): open the link `purplemux open` prints in this browser "
    "to sign in again, or send Authorization: Bearer <token>"
)


def actor_of(conn: HTTPConnection, key: str | None = None) -> Actor | None:
    """The Actor behind a request: the token, or a live login cookie with its page key (from
    `key`, or else the PAGE_KEY_HEADER header); None for a cookie alone."""
    rt = runtime(conn)
    if has_token(conn):
        return Actor(rt.logins.token_id(), "token")
    secret = conn.cookies.get(COOKIE)
    if not secret or not rt.logins.valid(secret):
        return None
    given = key if key is not None else conn.headers.get(PAGE_KEY_HEADER)
    if not page_key_ok(rt.logins.page_key(secret), given):
        return None
    return Actor(rt.logins.login_id(secret), "page")


async def require_actor(request: Request) -> Actor:
    """401 without any credential; 403 for a login cookie without its page key (a cookie can
    reach other servers on this host, which may replay it)."""
    if not is_authenticated(request):
        raise HTTPException(401, UNAUTHORIZED)
    actor = actor_of(request)
    if actor is None:
        raise HTTPException(403, NEEDS_PAGE_KEY)
    return actor
