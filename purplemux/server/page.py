"""GET /: the login link sets the cookie; the dashboard page, rendered on the server."""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from purplemux import __version__, session_facts
from purplemux.model import Session
from purplemux.paths import web_dir
from purplemux.server.auth import COOKIE, token_ok
from purplemux.server.runtime import is_authenticated, runtime
from purplemux.timefmt import duration

router = APIRouter()

SessionJson = Mapping[str, Any]

LABELS = {
    "idle": "idle",
    "busy": "busy",
    "needs-input": "needs input",
    "review": "review",
    "unknown": "unknown",
}
ATTENTION = ("needs-input", "review")
# The favicon shows the most urgent state; unknown was busy before a restart, so it ranks with busy.
URGENCY = {"needs-input": 4, "review": 3, "busy": 2, "unknown": 2, "idle": 1}
FAVICON_FOR = {4: "needs-input", 3: "review", 2: "busy", 1: "idle", 0: "idle"}
RECENT_LIMIT = 20

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
    """The dashboard; `?token=` signs in (cookie, then a redirect that drops the token)."""
    rt = runtime(request)
    if token is not None:
        if not token_ok(rt.token, token):
            return _login("That login link is not valid any more.", 401)
        response = RedirectResponse(
            "/", status_code=303, headers={"Referrer-Policy": "no-referrer"}
        )
        response.set_cookie(
            COOKIE, rt.token, httponly=True, samesite="strict", max_age=60 * 60 * 24 * 365
        )
        return response
    if not is_authenticated(request):
        return _login(None, 401)
    now = time.time()
    usage = await rt.store.call(lambda st: st.usage(7, now))
    html = render_dashboard(rt.engine.snapshot(), now, usage)
    # Session text comes from anywhere: a lone surrogate must cost one character, not the page.
    return HTMLResponse(html.encode("utf-8", "replace"), headers=HEADERS)


def _login(problem: str | None, status: int) -> HTMLResponse:
    html = _env(web_dir() / "templates").get_template("login.html").render(problem=problem)
    return HTMLResponse(html, status, headers=HEADERS)


@functools.cache
def _env(templates: Path) -> Environment:
    """One Jinja2 environment per template folder; autoescape keeps session text as text."""
    env = Environment(
        loader=FileSystemLoader(templates),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        label=label,
        duration=duration,
        detail=detail,
        facts=session_facts.row_facts,
        reason=reason,
        pane_of=pane_of,
        iso=iso,
        clock=clock,
        jsnum=jsnum,
    )
    return env


def render_dashboard(
    sessions: Sequence[SessionJson], now: float, usage: dict[str, Any] | None = None
) -> str:
    """The whole dashboard as HTML for these sessions (the engine's snapshot) at time `now`."""
    active = [s for s in sessions if not s.get("ended")]
    ended = sorted(
        (s for s in sessions if s.get("ended")), key=lambda s: -float(s.get("updated_at") or 0)
    )
    counts = {state: sum(1 for s in active if s["state"] == state) for state in LABELS}
    attention = counts["needs-input"] + counts["review"]
    recent = sorted(
        (s for s in active if s["state"] in ATTENTION),
        key=lambda s: -float(s.get("state_since") or 0),
    )[:RECENT_LIMIT]
    return (
        _env(web_dir() / "templates")
        .get_template("dashboard.html")
        .render(
            groups=group_sessions(active),
            ended=ended,
            counts=counts,
            title=title(attention),
            favicon=favicon(active),
            recent=recent,
            now=now,
            blank=blank_session(),
            version=__version__,
            usage=usage_bars(usage),
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


def title(attention: int) -> str:
    """The tab title: how many sessions wait for the user."""
    return f"({attention}) purplemux" if attention else "purplemux"


def favicon(sessions: Iterable[SessionJson]) -> str:
    """The state whose icon the tab shows: the most urgent one."""
    return FAVICON_FOR[max((URGENCY.get(s["state"], 0) for s in sessions), default=0)]


# --- grouping: web/static/view.js mirrors these rules (tests/browser checks they agree) -----


@dataclass
class Window:
    """One tmux window (or the single list of a non-window group) and its sessions in order."""

    key: str
    label: str
    sessions: list[SessionJson] = field(default_factory=list)


@dataclass
class Group:
    """A sidebar section: a tmux session, a tmux server known only by socket, or a project."""

    key: str
    kind: str
    label: str
    title: str
    windows: list[Window] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """The shape view.js's groupSessions returns, for the parity test."""
        return {
            "key": self.key,
            "kind": self.kind,
            "label": self.label,
            "title": self.title,
            "windows": [
                {"key": w.key, "label": w.label, "ids": [s["id"] for s in w.sessions]}
                for w in self.windows
            ],
        }


KIND_ORDER = {"tmux": 0, "socket": 1, "project": 2}


def place(session: SessionJson) -> tuple[str, str, str, str, str, str]:
    """(group key, kind, label, title, window key, window label) for one session."""
    tmux = session.get("tmux") or None
    if tmux and tmux.get("pane"):
        socket = tmux.get("socket") or ""
        name = socket.rstrip("/").rsplit("/", 1)[-1] or "tmux"
        if tmux.get("session") is not None:
            key = f"tmux:{socket}:{tmux['session']}"
            window = tmux.get("window")
            wlabel = f"window {window}" if window is not None else ""
            wkey = f"{key}:{window if window is not None else ''}"
            return key, "tmux", str(tmux["session"]), socket, wkey, wlabel
        key = f"socket:{socket}"
        return key, "socket", name, socket, f"{key}:", ""
    project = session.get("project") or ""
    key = f"project:{project}"
    return key, "project", project or "no folder", session.get("cwd") or "", f"{key}:", ""


def _natural(text: str) -> tuple[int, int, str]:
    """Numbers sort as numbers ("window 10" after "window 9"); text after numbers."""
    match = re.search(r"\d+", text)
    return (0, int(match.group()), text) if match else (1, 0, text)


def _row_order(session: SessionJson) -> tuple[int, int, str, str]:
    """Panes in tmux's creation order (%2 before %10), then anything else by name."""
    pane = pane_of(session)
    match = re.fullmatch(r"%(\d+)", pane)
    return (0, int(match.group(1)), "", session["id"]) if match else (1, 0, pane, session["id"])


def group_sessions(sessions: Iterable[SessionJson]) -> list[Group]:
    """Sidebar sections in display order: tmux sessions, bare tmux sockets, then projects."""
    groups: dict[str, Group] = {}
    windows: dict[str, Window] = {}
    for s in sessions:
        key, kind, glabel, gtitle, wkey, wlabel = place(s)
        group = groups.get(key)
        if group is None:
            group = groups[key] = Group(key, kind, glabel, gtitle)
        window = windows.get(wkey)
        if window is None:
            window = windows[wkey] = Window(wkey, wlabel)
            group.windows.append(window)
        window.sessions.append(s)
    for group in groups.values():
        group.windows.sort(key=lambda w: _natural(w.label))
        for window in group.windows:
            window.sessions.sort(key=_row_order)
    return sorted(groups.values(), key=lambda g: (KIND_ORDER[g.kind], g.label, g.key))


# --- what a row says ------------------------------------------------------------------------


def label(state: str) -> str:
    """The badge's words for a state."""
    return LABELS.get(state, state)


def pane_of(session: SessionJson) -> str:
    """The tmux pane id, or "" outside tmux."""
    tmux = session.get("tmux") or None
    return str(tmux.get("pane") or "") if tmux else ""


def detail(session: SessionJson) -> tuple[str, str, str]:
    """(kind, prefix, text) of the row's second line: what it waits for, runs, or said."""
    state = session["state"]
    if state == "needs-input":
        return "waiting", "Waiting for", session.get("waiting_for") or "your input"
    if state == "busy":
        if session.get("compacting"):
            return "note", "", "Compacting the conversation…"
        tool = session.get("current_tool")
        return ("tool", "Running", tool) if tool else ("note", "", "Working…")
    if state == "unknown":
        return "note", "", "Checking what it is doing after a restart…"
    snippet = session.get("snippet")
    if snippet and snippet != session.get("error"):  # a failed turn's snippet is the error itself
        return "snippet", "", snippet
    if state == "review" and not session.get("error"):
        return "snippet", "", "Finished; ready for review."
    return "", "", ""


def reason(session: SessionJson) -> str:
    """Why a session wants the user, in one line (the recent panel)."""
    error = session.get("error")
    return f"Failed: {error}" if error else detail(session)[2]


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


def blank_session() -> dict[str, Any]:
    """Every field empty: rendered into the page's <template> that the script clones rows from."""
    return Session(id="").to_json()
