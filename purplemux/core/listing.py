"""What the dashboard shows beyond a row, decided once (pure: no I/O, no clock).

`board(views)` turns every session's `SessionView` (purplemux.core.present) into the `Board`: the
sidebar's groups and windows and the ids in each, in order; the counts by state; the attention set
("needs you") and what it drives (the tab's title, its favicon, the "Needs you — recent" list);
the first page of ended rows and how many there are. The page is rendered from it on the server,
the feed carries it (daemon.feed), and the browser script applies it as it is: nothing about the
list is worked out twice. `broker_badge` is the broker's badge the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from purplemux.core.model import State
from purplemux.core.present import BY_ORDER, LOOKS, Place, SessionView

RECENT_LIMIT = 20
"""Entries in the "Needs you — recent" list."""
ENDED_PAGE = 50
"""Ended rows the page and the feed's snapshot carry; more come from GET /api/sessions?ended=1."""


def needs_you(v: SessionView) -> bool:
    """The one attention set: a live session whose state waits for the user (the state table's
    `attention`). Counted in the title, drawn in the favicon, listed as recent."""
    return v.attention and not v.ended


@dataclass(frozen=True, slots=True)
class WindowBox:
    """One window of a group (or a group's single list) and its rows' ids, in order."""

    place: Place
    ids: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"place": self.place.to_json(), "ids": list(self.ids)}


@dataclass(frozen=True, slots=True)
class GroupBox:
    """A sidebar section (a tmux session, a tmux server, a project) and its windows, in order."""

    place: Place
    windows: tuple[WindowBox, ...]

    def to_json(self) -> dict[str, Any]:
        return {"place": self.place.to_json(), "windows": [w.to_json() for w in self.windows]}


@dataclass(frozen=True, slots=True)
class Count:
    """One state's count in the top bar, with its words and colour token."""

    state: str
    label: str
    colour: str
    n: int

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "label": self.label, "colour": self.colour, "n": self.n}


@dataclass(frozen=True, slots=True)
class Recent:
    """An entry of "Needs you — recent": a session in the attention set, since when and why."""

    id: str
    state: str
    label: str
    colour: str
    where: str
    reason: str
    since: float

    @property
    def key(self) -> str:
        return f"{self.id}:{self.state}:{_jsnum(self.since)}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "key": self.key,
            "state": self.state,
            "label": self.label,
            "colour": self.colour,
            "where": self.where,
            "reason": self.reason,
            "since": self.since,
        }


@dataclass(frozen=True, slots=True)
class Board:
    """The dashboard's list: layout, counts, attention, title, favicon, recent, ended page."""

    groups: tuple[GroupBox, ...]
    counts: tuple[Count, ...]
    attention: tuple[str, ...]
    """The attention set's ids, newest first."""
    title: str
    favicon: str
    """The icon (web/static/icon-<favicon>.svg): the most urgent live state's."""
    recent: tuple[Recent, ...]
    ended: tuple[str, ...]
    """The first page of ended rows' ids, newest first."""
    ended_total: int
    active: int

    @property
    def layout(self) -> list[dict[str, Any]]:
        """The groups as JSON (the feed sends it only when it changed: it names every row)."""
        return [g.to_json() for g in self.groups]

    def summary_json(self) -> dict[str, Any]:
        """Everything but the layout: small, sent with every change."""
        return {
            "counts": [c.to_json() for c in self.counts],
            "attention": list(self.attention),
            "title": self.title,
            "favicon": self.favicon,
            "recent": [r.to_json() for r in self.recent],
            "ended": list(self.ended),
            "ended_total": self.ended_total,
            "active": self.active,
        }

    def to_json(self) -> dict[str, Any]:
        return {**self.summary_json(), "layout": self.layout}


def board(
    views: Iterable[SessionView],
    layout: Callable[[list[SessionView]], tuple[GroupBox, ...]] | None = None,
) -> Board:
    """The list the dashboard shows for these views (live and ended, every host's). `layout`:
    the sidebar's groups of the live views, when the caller knows them already (the engine,
    which remakes them only when a row's place or order changed); group_boxes otherwise."""
    active: list[SessionView] = []
    ended: list[SessionView] = []
    for v in views:
        (ended if v.ended else active).append(v)
    ended.sort(key=lambda v: -v.updated_at)
    waiting = sorted((v for v in active if needs_you(v)), key=lambda v: -v.since)
    counts = {s.value: 0 for s in BY_ORDER}
    for v in active:
        counts[v.state] = counts.get(v.state, 0) + 1
    n = len(waiting)
    return Board(
        groups=(layout or group_boxes)(active),
        counts=tuple(
            Count(s.value, LOOKS[s].label, LOOKS[s].colour, counts[s.value]) for s in BY_ORDER
        ),
        attention=tuple(v.id for v in waiting),
        title=f"({n}) purplemux" if n else "purplemux",
        favicon=favicon(active),
        recent=tuple(
            Recent(v.id, v.state, v.label, v.colour, v.where, v.reason, v.since)
            for v in waiting[:RECENT_LIMIT]
        ),
        ended=tuple(v.id for v in ended[:ENDED_PAGE]),
        ended_total=len(ended),
        active=len(active),
    )


def favicon(views: Iterable[SessionView]) -> str:
    """The icon the tab shows: the most urgent state's (idle when there is nothing)."""
    top = max(views, key=lambda v: v.urgency, default=None)
    return top.icon if top else LOOKS[State.IDLE].icon


def group_boxes(views: Iterable[SessionView]) -> tuple[GroupBox, ...]:
    """Sidebar sections in display order (present.py decides the places and their order)."""
    ordered = sorted(views, key=lambda v: v.order)
    groups: dict[str, tuple[Place, dict[str, tuple[Place, list[str]]]]] = {}
    for v in ordered:
        group = groups.setdefault(v.group.key, (v.group, {}))
        group[1].setdefault(v.window.key, (v.window, []))[1].append(v.id)
    return tuple(
        GroupBox(place, tuple(WindowBox(w, tuple(ids)) for w, ids in windows.values()))
        for place, windows in groups.values()
    )


ENDED_LIMIT = 500
"""Most ended rows one GET /api/sessions?ended=1 (or all=1) returns, and /history draws."""


@dataclass(frozen=True, slots=True)
class EndedPage:
    """One page of ended sessions (as the API sends them), newest first."""

    rows: list[Mapping[str, Any]]
    total: int
    """Every ended session, this page's or not."""
    left_out: int
    """Those older than this page (the page's "Show more"; the next page starts after it)."""

    def to_json(self) -> dict[str, Any]:
        """What an answer says of its page: how many more, and the `before` that pages on."""
        last = self.rows[-1].get("updated_at") if self.rows and self.left_out else None
        return {
            "more": self.left_out > 0,
            "before": last,
            "ended_total": self.total,
            "left_out": self.left_out,
        }


def ended_page(rows: Iterable[Mapping[str, Any]], before: float | None, limit: int) -> EndedPage:
    """Ended sessions newest first, last changed before `before` (all when None), at most
    `limit`."""
    ended = [r for r in rows if r.get("ended")]
    older = sorted(
        (r for r in ended if before is None or _updated(r) < before), key=lambda r: -_updated(r)
    )
    return EndedPage(older[:limit], len(ended), max(0, len(older) - limit))


def _updated(row: Mapping[str, Any]) -> float:
    at = row.get("updated_at")
    return float(at) if isinstance(at, int | float) else 0.0


@dataclass(frozen=True, slots=True)
class BrokerBadge:
    """The broker's badge in the top bar: hidden when off; "since" is drawn as a local clock."""

    state: str
    text: str
    since: float | None

    @property
    def hidden(self) -> bool:
        return self.state == "off"

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "text": self.text, "since": self.since, "hidden": self.hidden}


def broker_badge(health: Mapping[str, Any] | None) -> BrokerBadge:
    """The badge for the broker's health (`{"state": "off"}` without a broker)."""
    state = str((health or {}).get("state") or "off")
    raw = (health or {}).get("since")
    since = (
        float(raw) if isinstance(raw, int | float) and state not in ("off", "connected") else None
    )
    if state == "off":
        return BrokerBadge(state, "", None)
    if state == "connected":
        return BrokerBadge(state, "broker connected", None)
    return BrokerBadge(state, f"broker {state}" + (" since" if since else ""), since)


def _jsnum(x: float) -> str:
    """A number as JavaScript's String(x) writes it, so keys made here and in the page match."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text
