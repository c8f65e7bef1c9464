"""What a person reads about a session, decided once (pure: no I/O, no clock).

`LOOKS` tables each state's words, glyph, colour, urgency and actions; `present(session)` turns a
`Session` into the `SessionView` every surface renders: the dashboard (server and script), the
CLI, tmux's status line and pane marks, and notifications. The API and the feed carry the view as
each session's `view`, so the browser script only places and updates elements.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from purplemux.model import Session, State


@dataclass(frozen=True, slots=True)
class Look:
    """How one state reads: badge words, a glyph, a colour token, how urgent, what it allows."""

    label: str
    glyph: str
    colour: str
    """A colour name each surface maps to its own codes (TERMINAL_COLOURS, TMUX_COLOURS; CSS)."""
    urgency: int
    """The tab's favicon shows the most urgent state."""
    attention: bool
    """It waits for the user: counted in the title, listed as recent, notified."""
    order: int
    """Place in summaries (counts, tmux-status): what needs you first."""
    icon: str
    """The favicon drawn for it (web/static/icon-<icon>.svg)."""
    actions: frozenset[str] = frozenset()
    """What the user may do to a session in this state ("dismiss", "answer", "jump"); the pane
    actions (PANE_ACTIONS) also need a live session in a tmux pane."""
    note: str = ""
    """The row's line when there is nothing more particular to say."""


DISMISS = "dismiss"
"""Mark a review as seen (review → idle)."""
ANSWER = "answer"
"""Answer the prompt on the session's pane (GET /screen, POST /answer)."""
JUMP = "jump"
"""Bring the session's pane to the front in tmux (POST /focus)."""
PANE_ACTIONS = frozenset({ANSWER, JUMP})
"""Actions that act on the pane: only for a live session in a tmux pane."""

LOOKS: Mapping[State, Look] = {
    State.NEEDS_INPUT: Look(
        "needs input",
        "⚠",
        "yellow",
        4,
        True,
        0,
        "needs-input",
        frozenset({ANSWER, JUMP}),
        note="your input",
    ),
    State.REVIEW: Look(
        "review",
        "●",
        "magenta",
        3,
        True,
        1,
        "review",
        frozenset({DISMISS, JUMP}),
        note="Finished; ready for review.",
    ),
    State.BUSY: Look("busy", "◐", "cyan", 2, False, 2, "busy", frozenset({JUMP}), note="Working…"),
    State.IDLE: Look("idle", "○", "grey", 1, False, 3, "idle", frozenset({JUMP})),
    # unknown was busy before a daemon restart, so for the favicon it ranks with busy.
    State.UNKNOWN: Look(
        "unknown",
        "?",
        "white",
        2,
        False,
        4,
        "busy",
        frozenset({JUMP}),
        note="Checking what it is doing after a restart…",
    ),
}

BY_ORDER: tuple[State, ...] = tuple(sorted(LOOKS, key=lambda s: LOOKS[s].order))
"""States in summary order: needs-input, review, busy, idle, unknown."""

COMPACTING = "Compacting the conversation…"
WAITING = "Waiting for"
RUNNING = "Running"
FAILED = "Failed"
KIND_ORDER = {"tmux": 0, "socket": 1, "project": 2}
KIND_NAMES = {"tmux": "tmux session", "socket": "tmux server", "project": "project"}


def look(state: State | str) -> Look:
    """The table's entry for a state (a state name from JSON is accepted)."""
    return LOOKS[State(state)]


def allows(session: Session, action: str) -> bool:
    """Whether the user may do `action` to the session now (only a review can be dismissed,
    only a prompt answered, only a session in a pane jumped to)."""
    return action in _actions(session, LOOKS[session.state])


def _actions(s: Session, lk: Look) -> tuple[str, ...]:
    """The state's actions, less the pane actions when there is no live pane to act on."""
    in_pane = bool(s.tmux and s.tmux.pane) and not s.ended
    return tuple(sorted(a for a in lk.actions if in_pane or a not in PANE_ACTIONS))


@dataclass(frozen=True, slots=True)
class Place:
    """A sidebar section or window: its key, what kind it is, its heading and hover title."""

    key: str
    kind: str
    label: str
    title: str
    host: str = ""
    """The machine, when several hosts share the view: shown before the heading."""

    @property
    def noun(self) -> str:
        """What kind of place it is, in words ("tmux session")."""
        return KIND_NAMES.get(self.kind, "")


@dataclass(frozen=True, slots=True)
class Origin:
    """Which machine owns a session and whether that machine is still heard from (a broker)."""

    host: str = ""
    stale: bool = False
    """Its host stopped beating: the row is greyed with `offline`."""
    offline_since: float | None = None
    grouped: bool = False
    """Several hosts share the view (a broker): groups go by host first."""


LOCAL = Origin()


@dataclass(frozen=True, slots=True)
class SessionView:
    """Everything a row, a summary or a notification says about one session."""

    id: str
    state: str
    label: str
    glyph: str
    colour: str
    urgency: int
    icon: str
    attention: bool
    actions: tuple[str, ...]
    ended: bool
    name: str
    """The project, or the id's start when there is no folder."""
    folder: str
    pane: str
    where: str
    """`name · pane`, or the name alone outside tmux."""
    since: float
    """When it entered its state: the base of the ticking age."""
    updated_at: float
    detail_kind: str
    """waiting / tool / note / snippet, or "" when the row has no second line."""
    detail_prefix: str
    detail: str
    error: str
    reason: str
    """Why it wants the user, in one line (the recent list, a notification's body)."""
    headline: str
    """A notification's title: the state's words and where the session is."""
    group: Place
    window: Place
    order: tuple[str, str, str]
    """Sort keys (group, window, row) that compare as plain strings in Python and JavaScript."""
    host: str = ""
    """The machine that owns it (with a broker; "" for a daemon on its own)."""
    stale: bool = False
    offline: str = ""
    """A stale row's note ("laptop: host offline since"), the time after it from offline_since."""
    offline_since: float | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for name in ("group", "window"):
            data[name]["noun"] = getattr(self, name).noun
        return data


def present(s: Session, origin: Origin = LOCAL) -> SessionView:
    """The one view of a session (owned by `origin`'s host)."""
    lk = LOOKS[s.state]
    name = s.project or s.id[:8]
    pane = s.tmux.pane if s.tmux and s.tmux.pane else ""
    kind, prefix, text = _detail(s, lk)
    error = s.error or ""
    group, window = _place(s)
    host_order = ""
    if origin.grouped and origin.host:  # the same tmux session name on two machines: two groups
        group = replace(group, key=f"host:{origin.host}|{group.key}", host=origin.host)
        window = replace(window, key=f"host:{origin.host}|{window.key}", host=origin.host)
        host_order = f"{origin.host}\x00"
    actions = _actions(s, lk)
    if origin.stale:  # its owner is not listening: nothing can be asked of it
        actions = ()
    offline = ""
    if origin.stale:
        offline = f"{origin.host or '?'}: host offline" + (" since" if origin.offline_since else "")
    return SessionView(
        id=s.id,
        state=s.state.value,
        label=lk.label,
        glyph=lk.glyph,
        colour=lk.colour,
        urgency=lk.urgency,
        icon=lk.icon,
        attention=lk.attention,
        actions=actions,
        ended=s.ended,
        name=name,
        folder=s.cwd or "",
        pane=pane,
        where=f"{name} · {pane}" if pane else name,
        since=s.state_since,
        updated_at=s.updated_at,
        detail_kind=kind,
        detail_prefix=prefix,
        detail=text,
        error=error,
        reason=_reason(error, prefix, text, lk),
        headline=(f"{lk.label}: {name} · {pane}" if pane else f"{lk.label}: {name}")
        + (f" on {origin.host}" if origin.grouped and origin.host else ""),
        group=group,
        window=window,
        order=(
            f"{host_order}{KIND_ORDER[group.kind]}\x00{group.label}\x00{group.key}",
            _natural(window.label),
            _row_order(pane, s.id),
        ),
        host=origin.host,
        stale=origin.stale,
        offline=offline,
        offline_since=origin.offline_since if origin.stale else None,
    )


def session_json(s: Session, origin: Origin = LOCAL) -> dict[str, Any]:
    """A session as the API and the feed send it: its fields, its owner and its `view`."""
    return {
        **s.to_json(),
        "host": origin.host,
        "stale": origin.stale,
        "offline_since": origin.offline_since if origin.stale else None,
        "view": present(s, origin).to_json(),
    }


def _reason(error: str, prefix: str, text: str, lk: Look) -> str:
    """The row's line as one sentence, or the failure."""
    if error:
        return f"{FAILED}: {error}"
    if prefix:
        return f"{prefix} {text}" if text == lk.note else f"{prefix}: {text}"
    return text


def _detail(s: Session, lk: Look) -> tuple[str, str, str]:
    """(kind, prefix, text) of the row's second line: what it waits for, runs, or said."""
    if s.state is State.NEEDS_INPUT:
        return "waiting", WAITING, s.waiting_for or lk.note
    if s.state is State.BUSY:
        if s.compacting:
            return "note", "", COMPACTING
        return ("tool", RUNNING, s.current_tool) if s.current_tool else ("note", "", lk.note)
    if s.state is State.UNKNOWN:
        return "note", "", lk.note
    if s.snippet and s.snippet != s.error:  # a failed turn's snippet is the error itself
        return "snippet", "", s.snippet
    if lk.note and not s.error:
        return "snippet", "", lk.note
    return "", "", ""


def _place(s: Session) -> tuple[Place, Place]:
    """The sidebar section (tmux session, tmux server, or project) and window of a session."""
    tmux = s.tmux
    if tmux and tmux.pane:
        socket = tmux.socket or ""
        if tmux.session is not None:
            key = f"tmux:{socket}:{tmux.session}"
            known = tmux.window is not None
            window = Place(
                f"{key}:{tmux.window if known else ''}",
                "window",
                f"window {tmux.window}" if known else "",
                "",
            )
            return Place(key, "tmux", tmux.session, socket), window
        key = f"socket:{socket}"
        name = socket.rstrip("/").rsplit("/", 1)[-1] or "tmux"
        return Place(key, "socket", name, socket), Place(f"{key}:", "window", "", "")
    project = s.project or ""
    key = f"project:{project}"
    return (
        Place(key, "project", project or "no folder", s.cwd or ""),
        Place(f"{key}:", "window", "", ""),
    )


def _natural(text: str) -> str:
    """Numbers sort as numbers ("window 10" after "window 9"); text after numbers."""
    match = re.search(r"\d+", text)
    return f"0{int(match.group()):020d}\x00{text}" if match else f"1{text}"


def _row_order(pane: str, sid: str) -> str:
    """Panes in tmux's creation order (%2 before %10), then anything else by name."""
    match = re.fullmatch(r"%(\d+)", pane)
    return f"0{int(match.group(1)):020d}\x00{sid}" if match else f"1{pane}\x00{sid}"
