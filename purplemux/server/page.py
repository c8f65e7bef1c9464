"""GET /: the login link sets the cookie; the dashboard page, rendered on the server."""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from purplemux import __version__
from purplemux.core import facts as session_facts
from purplemux.core.listing import board, broker_badge, group_boxes
from purplemux.core.model import Session
from purplemux.core.present import Place, SessionView, present
from purplemux.core.timefmt import duration
from purplemux.io import logins
from purplemux.io.paths import web_dir
from purplemux.server.auth import token_ok
from purplemux.server.hosts import broker_health
from purplemux.server.runtime import is_authenticated, runtime

if TYPE_CHECKING:
    from jinja2 import Environment

router = APIRouter()

# The page has no inline script or style, so this CSP costs nothing and disarms injected markup.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


@router.get("/", response_model=None)
async def index(request: Request, token: str | None = None) -> Response:
    """The dashboard; `?token=` signs in (the cookie, and a page that keeps the login's page
    key and then replaces itself with the dashboard, dropping the token from the history)."""
    rt = runtime(request)
    if token is not None:
        if not token_ok(rt.token, token):
            return _login("That login link is not valid any more.", 401)
        secret = rt.logins.create()
        # The page key is in this response only (never in a URL, never in the dashboard): a
        # server that replays the cookie, which reaches every port, cannot fetch it.
        html = (
            _env(web_dir() / "templates")
            .get_template("signin.html")
            .render(key=rt.logins.page_key(secret))
        )
        response = HTMLResponse(html, headers=HEADERS)
        # A login secret of its own, never the token: cookies ignore ports, so this one also
        # reaches other servers on this host; alone it only views, and can be revoked.
        response.set_cookie(
            logins.COOKIE,
            secret,
            httponly=True,
            samesite="strict",
            path="/",
            max_age=logins.MAX_AGE,
        )
        response.delete_cookie(logins.LEGACY_COOKIE, path="/", httponly=True, samesite="strict")
        return response
    if not is_authenticated(request):
        return _login(None, 401)
    now = time.time()
    usage = await rt.store.call(lambda st: st.usage(7, now))
    html = render_dashboard(rt.engine.views(), now, usage, broker=broker_health(rt))
    # Session text comes from anywhere: a lone surrogate must cost one character, not the page.
    return HTMLResponse(html.encode("utf-8", "replace"), headers=HEADERS)


def _login(problem: str | None, status: int) -> HTMLResponse:
    html = _env(web_dir() / "templates").get_template("login.html").render(problem=problem)
    return HTMLResponse(html, status, headers=HEADERS)


@functools.cache
def _env(templates: Path) -> Environment:
    """One Jinja2 environment per template folder; autoescape keeps session text as text.

    Jinja2 is imported on the first page, not at the daemon's start (~35 ms of it)."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(
        loader=FileSystemLoader(templates),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        duration=duration,
        iso=iso,
        clock=clock,
        jsnum=jsnum,
    )
    return env


def render_dashboard(
    sessions: Sequence[Session | SessionView],
    now: float,
    usage: dict[str, Any] | None = None,
    broker: Mapping[str, Any] | None = None,
    shell: bool = False,
) -> str:
    """The whole dashboard as HTML for these sessions (or their views: other hosts' rows come
    presented) at time `now`; `usage`: the 7-day spend; `broker`: the shared broker's state;
    `shell`: the offline app shell (no sessions; the page draws the ones it saved). What the list
    shows is purplemux.core.listing's Board, the one the feed sends the script."""
    views = [x if isinstance(x, SessionView) else present(x) for x in sessions]
    shown = board(views)
    return (
        _env(web_dir() / "templates")
        .get_template("dashboard.html")
        .render(
            board=shown,
            rows={v.id: v for v in views},
            title=shown.title,
            favicon=shown.favicon,
            now=now,
            blank=present(Session(id="")),
            version=__version__,
            badge=broker_badge(broker),
            usage=usage_bars(usage),
            shell=shell,
        )
    )


def usage_bars(usage: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The last days' spend as bars: day, dollars, height in percent of the biggest day."""
    days = (usage or {}).get("days") or []
    top = max((float(d["cost_usd"]) for d in days), default=0.0)
    return [
        {
            "day": d["day"],
            "cost": session_facts.money(float(d["cost_usd"])) or "$0",
            "height": round(100 * float(d["cost_usd"]) / top) if top else 0,
        }
        for d in days
    ]


@dataclass
class Window:
    """One tmux window (or the single list of a non-window group) and its sessions in order."""

    place: Place
    sessions: list[SessionView] = field(default_factory=list)


@dataclass
class Group:
    """A sidebar section: a tmux session, a tmux server known only by socket, or a project."""

    place: Place
    windows: list[Window] = field(default_factory=list)


def group_sessions(views: Iterable[SessionView]) -> list[Group]:
    """Sidebar sections in display order, with their views (the /history page's lanes); the
    order is purplemux.core.listing's, the dashboard's."""
    by_id = {v.id: v for v in views}
    return [
        Group(g.place, [Window(w.place, [by_id[i] for i in w.ids]) for w in g.windows])
        for g in group_boxes(by_id.values())
    ]


def jsnum(x: float) -> str:
    """A number as JavaScript's String(x) writes it, so keys made here and in view.js match."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def iso(ts: float) -> str:
    """UTC ISO 8601 for a <time datetime> attribute."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds") if ts else ""


def clock(ts: float) -> str:
    """Local wall-clock time; the page re-renders it in the browser's own time zone."""
    return datetime.fromtimestamp(ts).strftime("%H:%M:%S") if ts else ""
