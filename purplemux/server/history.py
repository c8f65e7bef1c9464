"""Where the time went: GET /api/sessions/{id}/timeline, GET /api/summary and the /history page.

Everything here is read from the event log, folded through the state machine (core.history).
The folds are kept (in memory and in the store's history_folds): a request reads only the events
logged since the last one (by seq) and folds them on top, so a restart or "nothing new" folds
nothing, and a new event folds only itself (a late one: its session's log again). The page is
drawn on the server as SVG; /static/history.js makes the open spans grow and follows the feed.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from purplemux.core.history import (
    STATES,
    WAITING,
    Ledger,
    Replay,
    Summary,
    events_from_rows,
    summarize,
    waited,
)
from purplemux.core.listing import ENDED_LIMIT
from purplemux.core.model import Session, State
from purplemux.core.present import look as present_look
from purplemux.core.present import present
from purplemux.core.timefmt import duration
from purplemux.io.paths import web_dir
from purplemux.server import page
from purplemux.server.runtime import Runtime, current_runtime, is_authenticated, require_auth
from purplemux.server.runtime import runtime as runtime_of

router = APIRouter()

EVENTS_PER_READ = 20_000
"""Events read from the store per call, so a cold fold never holds the store thread long."""
EARLIEST = 946_684_800.0
"""2000-01-01: a `since` before it is a mistake (milliseconds for seconds, a typo)."""
LATEST = 32_503_680_000.0
"""3000-01-01."""
MIN_MARK = 0.004
"""Least width of a wait's mark, as a share of the chart: a 5 s prompt still shows."""
LANES_PAGE = 100
"""Ended sessions' lanes the page draws at most, the newest (live ones are always drawn); the
rest are counted and paged to (`before`), so the page has a ceiling however many ended."""


# --- how a state looks: present.py's table, its colour tokens as the dashboard's CSS variables --


CSS_COLOURS: Mapping[str, str] = {
    "yellow": "--needs",
    "magenta": "--review",
    "cyan": "--busy",
    "grey": "--idle",
    "white": "--faint",
}
"""The CSS variable (style.css, light and dark) of each colour token of core.present.LOOKS;
history.css colours a mark by its token (`.mark[data-colour=...]`)."""


@dataclass(frozen=True, slots=True)
class Look:
    """How a state is shown: its words, its colour token, and the CSS variable drawing it."""

    state: str
    label: str
    token: str
    colour: str


def look(state: State | str) -> Look:
    """The label and colour of a state, from the one state table (purplemux.core.present)."""
    lk = present_look(state)
    return Look(State(state).value, lk.label, lk.colour, CSS_COLOURS.get(lk.colour, "--idle"))


# --- replays -----------------------------------------------------------------------------------


def _add(ledger: Ledger, rows: Sequence[Mapping[str, Any]]) -> tuple[set[str], set[str]]:
    return ledger.add(events_from_rows(rows))


def _dump(ledger: Ledger, ids: set[str]) -> dict[str, str]:
    return {sid: ledger.dump(sid) for sid in ids if sid in ledger}


def _load(ledger: Ledger, kept: Mapping[str, str]) -> set[str]:
    """Take the kept folds back; the sessions whose fold could not be read."""
    return {sid for sid, data in kept.items() if not ledger.load(sid, data)}


async def sync(rt: Runtime) -> None:
    """Bring the ledger up to the event log: fold only the events after the last one folded
    (read by seq: nothing else is read when nothing is new), keep the moved folds in the store.
    Called with rt.history_lock held."""
    ledger = rt.history
    store = rt.store
    reset = False
    bad: set[str] = set()
    if not ledger.loaded:
        synced, low, kept = await store.call(lambda s: s.load_folds())
        ledger.synced, ledger.low = synced, low
        bad = await asyncio.to_thread(_load, ledger, kept)
        ledger.loaded = True
    lo, hi = await store.call(lambda s: s.event_bounds())
    if hi < ledger.synced or (ledger.low and lo > ledger.low):
        # The log was pruned (retention) or is another one: fold it all again.
        ledger.reset()
        ledger.loaded = reset = True
    if hi == ledger.synced and not bad:
        return
    moved: set[str] = set()
    late: set[str] = set(bad)
    at = ledger.synced
    while at < hi:
        upto = min(hi, at + EVENTS_PER_READ)
        rows = await store.call(lambda s, a=at, u=upto: s.events_after(a, u))  # type: ignore[misc]
        changed, stale = await asyncio.to_thread(_add, ledger, rows)
        moved |= changed
        late |= stale
        at = upto
    for sid in late:
        log = await store.call(lambda s, i=sid: s.session_log(i, hi))  # type: ignore[misc]
        await asyncio.to_thread(ledger.refold, sid, events_from_rows(log))
    ledger.synced, ledger.low = hi, lo
    folds = await asyncio.to_thread(_dump, ledger, moved | late)
    await store.call(lambda s: s.save_folds(hi, lo, folds, reset))


async def replays(rt: Runtime, now: float, session_id: str | None = None) -> dict[str, Replay]:
    """Every session's replay (or one session's), folding only what is new."""
    async with rt.history_lock:
        await sync(rt)
        return rt.history.replays(now, session_id)


def records(rt: Runtime, rs: Mapping[str, Replay]) -> dict[str, Session]:
    """Each session as it is now: the live record when there is one, else the replay's end."""
    return {sid: rt.engine.sessions.get(sid) or r.session for sid, r in rs.items()}


KEYS = ("project", "cwd", "tmux", "state", "ended", "agent", "account")


def describe(sessions: Mapping[str, Session]) -> dict[str, dict[str, Any]]:
    """Each session's own fields for a summary row."""
    out: dict[str, dict[str, Any]] = {}
    for sid, session in sessions.items():
        s = session.to_json()
        out[sid] = {k: s.get(k) for k in KEYS}
    return out


# --- query parameters --------------------------------------------------------------------------


def local_midnight(now: float) -> float:
    """The start of the local day that holds `now`."""
    return datetime.combine(datetime.fromtimestamp(now).date(), datetime.min.time()).timestamp()


def _unix(name: str, raw: str | None, default: float) -> float:
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        reason = f"{name} must be a unix time in seconds, not {raw[:40]!r}"
        raise HTTPException(400, reason) from None
    if not math.isfinite(value) or not EARLIEST <= value <= LATEST:
        raise HTTPException(400, f"{name} must be a unix time in seconds between 2000 and 3000")
    return value


def period(request: Request, now: float) -> tuple[float, float]:
    """(since, until) from the query: since defaults to local midnight, until to now."""
    q = request.query_params
    since = _unix("since", q.get("since"), local_midnight(now))
    until = _unix("until", q.get("until"), now)
    if until <= since:
        raise HTTPException(400, "until must be later than since")
    return since, until


# --- JSON --------------------------------------------------------------------------------------


@router.get("/api/sessions/{session_id}/timeline", dependencies=[Depends(require_auth)])
async def timeline(session_id: str, rt: Runtime = Depends(current_runtime)) -> dict[str, Any]:
    now = time.time()
    r = (await replays(rt, now, session_id)).get(session_id)
    if r is None:
        if session_id not in rt.engine.sessions:
            raise HTTPException(404, f"no session {session_id!r}")
        return {"spans": []}  # known, but its events are past the retention
    return {"spans": [s.to_json() for s in r.spans]}


@router.get("/api/summary", dependencies=[Depends(require_auth)])
async def summary(request: Request, rt: Runtime = Depends(current_runtime)) -> dict[str, Any]:
    now = time.time()
    since, until = period(request, now)
    rs = await replays(rt, now)
    result = summarize(rs, since, until, now)
    return {**result.to_json(describe(records(rt, rs))), "now": now}


# --- the page ----------------------------------------------------------------------------------


@dataclass
class Mark:
    """One span in a lane, in seconds from the chart's start."""

    state: str
    x: float
    width: float
    start: float
    end: float | None
    title: str

    @property
    def look(self) -> Look:
        return look(self.state)


@dataclass
class Lane:
    id: str
    label: str
    pane: str
    cwd: str
    ended: bool
    marks: list[Mark] = field(default_factory=list)
    waited: float = 0.0
    prompts: int = 0


@dataclass
class Tick:
    percent: float
    text: str


@dataclass
class Chart:
    day: date
    today: bool
    start: float
    end: float
    now: float
    headline: str
    lanes: dict[str, Lane]
    groups: list[page.Group]
    ticks: list[Tick]
    legend: list[tuple[Look, float]]
    older: int = 0
    """Ended sessions of the day left out: older than the lanes drawn."""
    older_before: float | None = None
    """The `before` of the page that shows them."""
    paged: bool = False
    """A page of older sessions (`before` given): only ended lanes."""

    @property
    def width(self) -> float:
        return self.end - self.start


def parse_day(raw: str | None, now: float) -> date:
    if raw is None or raw == "":
        return datetime.fromtimestamp(now).date()
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise HTTPException(400, f"day must be YYYY-MM-DD, not {raw[:40]!r}") from None


def day_bounds(day: date) -> tuple[float, float]:
    start = datetime.combine(day, datetime.min.time())
    return start.timestamp(), (start + timedelta(days=1)).timestamp()


def _hour_floor(t: float, lo: float) -> float:
    """The last whole local hour at or before t (hours counted from the day's start `lo`)."""
    return lo + max(0, math.floor((t - lo) / 3600)) * 3600


def _hour_ceil(t: float, lo: float, hi: float) -> float:
    """The first whole local hour at or after t, at most the day's end `hi`."""
    return min(hi, lo + math.ceil((t - lo) / 3600) * 3600)


def headline(s: Summary, when: str) -> str:
    """ "Claude waited on you 1h 12m today — 14 prompts, median answer 38s" (history.waited)."""
    agents = {a: t.waited_on_you_s for a, t in s.agents.items()}
    return waited(s.total.waited_on_you_s, s.total.prompts, s.total.answer_median_s, agents, when)


def _when(day: date, today: date) -> str:
    if day == today:
        return "today"
    if day == today - timedelta(days=1):
        return "yesterday"
    return f"on {day.strftime('%a')} {day.isoformat()}"


def build_chart(
    rs: Mapping[str, Replay],
    about: Mapping[str, Session],
    day: date,
    now: float,
    before: float | None = None,
    limit: int = LANES_PAGE,
) -> Chart:
    """Lanes for the sessions that lived on `day`, grouped like the dashboard: every live one
    and the newest `limit` ended ones (with `before`: only ended ones last changed before it)."""
    lo, hi = day_bounds(day)
    today = datetime.fromtimestamp(now).date()
    result = summarize(rs, lo, min(hi, now) if now > lo else hi, now)
    every: dict[str, Lane] = {}
    for sid in result.sessions:
        r = rs[sid]
        view = present(about.get(sid) or r.session)
        lane = Lane(
            id=sid,
            label=view.name,
            pane=view.pane,
            cwd=view.folder,
            ended=view.ended,
            waited=result.sessions[sid].waited_on_you_s,
            prompts=result.sessions[sid].prompts,
        )
        for span in r.spans:
            a, b = max(span.start, lo), min(span.until(now), hi)
            if b <= a and not (span.end is None and lo <= span.start <= hi):
                continue
            lane.marks.append(Mark(span.state.value, a, b - a, span.start, span.end, ""))
        if lane.marks:
            every[sid] = lane

    def changed(sid: str) -> float:
        return (about.get(sid) or rs[sid].session).updated_at

    ended = sorted(
        (sid for sid, lane in every.items() if lane.ended),
        key=lambda sid: -changed(sid),
    )
    if before is not None:
        ended = [sid for sid in ended if changed(sid) < before]
    shown = ended[:limit]
    live = [] if before is not None else [sid for sid, lane in every.items() if not lane.ended]
    keep = {*live, *shown}
    lanes = {sid: lane for sid, lane in every.items() if sid in keep}
    older = len(ended) - len(shown)
    first = min((m.x for lane in lanes.values() for m in lane.marks), default=hi)
    last = max((m.x + m.width for lane in lanes.values() for m in lane.marks), default=lo)
    start = _hour_floor(first, lo) if lanes else lo
    # Today's chart leaves a few minutes for the open spans to grow into (history.js).
    end = _hour_ceil(max(last, now + 300) if day == today else last, lo, hi) if lanes else hi
    if end - start < 3600:
        end = min(hi, start + 3600)
    least = (end - start) * MIN_MARK
    for lane in lanes.values():
        for m in lane.marks:
            m.x -= start
            if State(m.state) in WAITING:
                m.width = max(m.width, least)
            m.title = _mark_title(m, now)
        # The waits on top, so a short one shows even beside long busy stretches.
        lane.marks.sort(key=lambda m: State(m.state) in WAITING)
    views = [present(about.get(sid) or rs[sid].session) for sid in lanes]
    return Chart(
        day=day,
        today=day == today,
        start=start,
        end=end,
        now=now,
        headline=headline(result, _when(day, today)),
        lanes=lanes,
        groups=page.group_sessions(views),
        ticks=_ticks(start, end),
        legend=[(look(s), result.total.seconds.get(s, 0.0)) for s in STATES],
        older=older,
        older_before=changed(shown[-1]) if older and shown else None,
        paged=before is not None,
    )


def _mark_title(m: Mark, now: float) -> str:
    end = m.end if m.end is not None else now
    since = datetime.fromtimestamp(m.start).strftime("%H:%M:%S")
    until = datetime.fromtimestamp(m.end).strftime("%H:%M:%S") if m.end is not None else "now"
    return f"{look(m.state).label} · {duration(end - m.start)} ({since}–{until})"  # noqa: RUF001


def _ticks(start: float, end: float) -> list[Tick]:
    span = end - start
    step = next((s for s in (900, 1800, 3600, 7200, 10800, 21600) if span / s <= 8), 21600)
    out = []
    t = start
    while t <= end + 1e-6:
        label = datetime.fromtimestamp(t).strftime("%H:%M")
        out.append(Tick(round((t - start) / span * 100, 3), label))
        t += step
    return out


def parse_page(before: str | None, limit: str | None) -> tuple[float | None, int]:
    """The page's `before` (a unix time) and `limit` (1..listing.ENDED_LIMIT lanes), or 400."""
    cut = _unix("before", before, 0.0) if before else None
    if not limit:
        return cut, LANES_PAGE
    if not (limit.isascii() and limit.isdigit()) or not 1 <= int(limit) <= ENDED_LIMIT:
        raise HTTPException(400, f"limit must be a whole number from 1 to {ENDED_LIMIT}")
    return cut, int(limit)


@router.get("/history", response_model=None)
async def history_page(
    request: Request, day: str | None = None, before: str | None = None, limit: str | None = None
) -> Response:
    """The day at a glance: one lane per session, a mark per state span; at most `limit`
    ended sessions' lanes (the newest, or those last changed before `before`), the rest counted
    with a link to them."""
    rt = runtime_of(request)
    if not is_authenticated(request):
        return page._login(None, 401)
    now = time.time()
    chosen = parse_day(day, now)
    cut, count = parse_page(before, limit)
    rs = await replays(rt, now)
    chart = build_chart(rs, records(rt, rs), chosen, now, cut, count)
    html = (
        page._env(web_dir() / "templates")
        .get_template("history.html")
        .render(
            chart=chart,
            prev_day=(chosen - timedelta(days=1)).isoformat(),
            next_day=(chosen + timedelta(days=1)).isoformat(),
            look=look,
            waiting=[s.value for s in WAITING],
            min_mark=MIN_MARK,
            states=[State(s) for s in STATES],
        )
    )
    return HTMLResponse(html.encode("utf-8", "replace"), headers=page.HEADERS)
