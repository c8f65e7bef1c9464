"""What a person reads about a session, decided once (pure: no I/O, no clock).

`LOOKS` tables each state's words, glyph, colour, urgency and actions; `present(session)` turns a
`Session` into the `SessionView` every surface renders: the dashboard (server and script), the
CLI, tmux's status line and pane marks, and notifications. The API and the feed carry the view as
each session's `view`, so the browser script only places and updates elements.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from datetime import tzinfo
from typing import Any

from purplemux.agents import facts as agent_facts
from purplemux.core import facts as session_facts
from purplemux.core import resume, timefmt
from purplemux.core.model import LimitWall, Session, State


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
RESUME = "resume"
"""Arm the session to resume at its limit's reset (POST /resume {at_reset: true})."""
CANCEL_RESUME = "cancel-resume"
"""Cancel that (DELETE /resume)."""
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
    # A background session has no pane: its prompts are answered, and Jump opens, through
    # `claude attach <job>` (purplemux/agents/claude/attach.py).
    in_pane = (bool(s.tmux and s.tmux.pane) or (s.background and bool(s.job_id))) and not s.ended
    return _ACTIONS[(lk.actions, in_pane)]


_ACTIONS: Mapping[tuple[frozenset[str], bool], tuple[str, ...]] = {
    (lk.actions, in_pane): tuple(sorted(a for a in lk.actions if in_pane or a not in PANE_ACTIONS))
    for lk in LOOKS.values()
    for in_pane in (False, True)
}
"""Each look's actions with and without a live pane, sorted (made once: every view asks)."""


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

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "kind": self.kind,
            "label": self.label,
            "title": self.title,
            "host": self.host,
            "noun": self.noun,
        }


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
    agent: str
    """"claude" or "codex"."""
    agent_label: str
    """The agent as every surface marks it: "Claude", "Codex" (rows, CLI, tmux, notifications)."""
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
    """Claude's own name for the session (session file, custom / AI title), else the project,
    else the id's start."""
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
    """A notification's title, `agent · name · what is needed: detail` ("Claude · api-server ·
    needs your approval: Bash rm -rf build", "Codex · web · finished · 1 task still running")."""
    notice: str
    """A notification's body: the answer's first words (review), else where the session is."""
    mode: str
    """The permission mode's short tag ("auto", "manual", "BYPASS"), or ""."""
    permission_mode: str
    bypass: bool
    """Bypass mode: every tool runs unasked; the row marks it."""
    context_percent: float | None
    """How full the context is (the bar), or None before any reply."""
    context_band: str
    """healthy / warning / critical / compacting, or ""."""
    context_text: str
    """"ctx 75%"."""
    context_title: str
    """The bar's hover text: tokens of window."""
    cost: str
    """"$0.60", or "" before any cost is known."""
    retrying: str
    """"retrying (3)" while Claude retries a failing API call (busy only)."""
    wall: str
    """A session stopped by a usage limit: "limit hit · resets" (the time is `wall_at`),
    "continues at" (Claude resumes by itself at `wall_at`), "limit hit" (no time known), or ""."""
    wall_at: float | None
    """The time after `wall` (unix s): each surface writes it in its reader's local time."""
    wall_window: str
    """Which limit: "5-hour limit", "weekly limit", or "" (a plain 429: not said)."""
    tasks: str
    """"1 task still running", or on a review "finished · 1 task still running"."""
    facts: str
    """The facts in one line: "auto · ctx 75% · $0.60 · 1 task still running"."""
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
    account: str = ""
    """The account's label on the row ("claude-work"), when the daemon watches several of this
    agent's accounts; "" with one (every row would say the same)."""
    background: bool = False
    """A Claude background session (claude --bg, the agent view): no pane; the row's chip."""
    job_id: str = ""
    """Its job (`claude attach <job>`), or ""."""
    resume: str = ""
    """Resume at the reset: "resumes after 22:32" while armed, "not resumed at the reset: why"
    when it was due and the pane (or the rate limit) did not allow it, "auto-resume stopped:
    why" when the setting stopped for the session, else ""."""
    resume_at: float | None = None
    """The reset an armed session resumes after (unix s): each surface shows it in its own
    clock."""

    def to_json(self) -> dict[str, Any]:
        # Field by field (dataclasses.asdict deep-copies recursively: several times slower, and
        # this runs for every change a client is sent).
        data = {name: getattr(self, name) for name in _VIEW_FIELDS}
        data["group"] = self.group.to_json()
        data["window"] = self.window.to_json()
        return data


_VIEW_FIELDS = tuple(f.name for f in fields(SessionView))


def who(agent_label: str, account: str) -> str:
    """The agent as a headline names it, with its account when its rows name one:
    "Claude (work)"."""
    return f"{agent_label} ({account})" if account else agent_label


def present(
    s: Session,
    origin: Origin = LOCAL,
    context_window: int | None = None,
    named_accounts: frozenset[str] = frozenset(),
) -> SessionView:
    """The one view of a session (owned by `origin`'s host; `context_window`: the setting
    PURPLEMUX_CONTEXT_WINDOW, None for the model table; `named_accounts`: the agents whose
    rows name their account, as several of theirs are watched)."""
    lk = LOOKS[s.state]
    name = session_facts.display_name(s.title, s.project, s.id)
    facts = session_facts.row_facts(_facts_input(s, name, context_window))
    ctx = facts["context"]
    percent = ctx["percent"] if ctx else None
    pane = s.tmux.pane if s.tmux and s.tmux.pane else ""
    kind, prefix, text = _detail(s, lk)
    wall, wall_at = _wall(s.limit)
    if wall:  # the wall is what the row says; its time here in this machine's local time
        kind, prefix, text = "limit", "", wall_text(wall, wall_at, s.limit.at if s.limit else 0)
    error = s.error or ""
    group, window = _place(s)
    host_order = ""
    if origin.grouped and origin.host:  # the same tmux session name on two machines: two groups
        group = replace(group, key=f"host:{origin.host}|{group.key}", host=origin.host)
        window = replace(window, key=f"host:{origin.host}|{window.key}", host=origin.host)
        host_order = f"{origin.host}\x00"
    actions = _actions(s, lk) + _resume_actions(s)
    if origin.stale:  # its owner is not listening: nothing can be asked of it
        actions = ()
    offline = ""
    if origin.stale:
        offline = f"{origin.host or '?'}: host offline" + (" since" if origin.offline_since else "")
    agent_label = agent_facts.label(s.agent)
    account = (s.account or "") if s.agent in named_accounts else ""
    return SessionView(
        id=s.id,
        agent=s.agent,
        agent_label=agent_label,
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
        where=f"{name} · {pane}" if pane else (f"{name} · bg {s.job_id}" if s.job_id else name),
        since=s.state_since,
        updated_at=s.updated_at,
        detail_kind=kind,
        detail_prefix=prefix,
        detail=text,
        error=error,
        reason=_reason(s, error, prefix, text, lk),
        headline=f"{who(agent_label, account)} · {_headline(s, name, lk)}"
        + (f" on {origin.host}" if origin.grouped and origin.host else ""),
        notice=_notice(s, pane, group),
        mode=facts["mode"] or "",
        permission_mode=s.permission_mode or "",
        bypass=facts["bypass"],
        context_percent=percent,
        context_band=ctx["band"] if ctx else "",
        context_text=facts["context_text"],
        context_title=(
            f"{ctx['tokens']} of {ctx['window']} tokens in context ({ctx['band']})"
            if ctx and percent is not None
            else ""
        ),
        cost=facts["cost"],
        retrying=facts["retrying"],
        wall=wall,
        wall_at=wall_at,
        wall_window=WALL_WINDOWS.get(s.limit.window or "", "") if s.limit else "",
        tasks=facts["review"] if facts["review"] and facts["tasks"] else facts["tasks"],
        facts=session_facts.line_of(facts),
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
        account=account,
        background=s.background,
        job_id=s.job_id or "",
        resume=_resume_text(s),
        resume_at=s.limit.resets_at if s.limit and resume.armed(s) else None,
    )


def clock_time(at: float, ref: float) -> str:
    """A reset as this machine reads it: "22:32" on `ref`'s day, else "Dec 4 20:36"."""
    return timefmt.wall_clock(at, ref)


def _resume_actions(s: Session) -> tuple[str, ...]:
    """Arm (a session at a wall that may be) or cancel (an armed one) resume at the reset."""
    if resume.armed(s) is not None:
        return (CANCEL_RESUME,)
    if resume.refusal(s) is None:
        return (RESUME,)
    return ()


def _resume_text(s: Session) -> str:
    """The row's word on resume at the reset (see SessionView.resume)."""
    r = s.resume
    if r is None or s.limit is None or not resume.for_wall(r, s.limit):
        return ""
    if r.state == "armed" and s.limit.resets_at is not None:
        return f"resumes after {clock_time(s.limit.resets_at, s.limit.at)}"
    if r.state == "skipped":
        return f"not resumed at the reset: {r.reason or 'see the event log'}"
    if r.state == "stopped":
        return r.reason or "auto-resume stopped"
    return ""


def session_json(
    s: Session,
    origin: Origin = LOCAL,
    window: int | None = None,
    view: SessionView | None = None,
) -> dict[str, Any]:
    """A session as the API and the feed send it: its fields, its owner and its `view` (made
    here, with the context `window` setting, unless the caller has it)."""
    return {
        **s.to_json(window),
        "host": origin.host,
        "stale": origin.stale,
        "offline_since": origin.offline_since if origin.stale else None,
        "view": (view or present(s, origin, window)).to_json(),
    }


def _facts_input(s: Session, name: str, window: int | None) -> dict[str, Any]:
    """The session's facts in the shape session_facts.row_facts reads (its JSON's keys)."""
    return {
        "id": s.id,
        "state": s.state.value,
        "name": name,
        "permission_mode": s.permission_mode,
        "context": session_facts.context(
            s.context_tokens,
            s.model,
            s.long_context,
            s.compacting,
            window if window is not None else s.context_window,
        ),
        "cost_usd": s.cost_usd,
        "retries": s.retries,
        "background_tasks": s.background_tasks,
        "error_kind": s.error_kind,
    }


WALL_WINDOWS = {
    "five_hour": "5-hour limit",
    "seven_day": "weekly limit",
    "seven_day_opus": "weekly Opus limit",
    "seven_day_sonnet": "weekly Sonnet limit",
}
LIMIT_HIT = "limit hit"
RESETS = "limit hit · resets"
CONTINUES = "continues at"


def _wall(limit: LimitWall | None) -> tuple[str, float | None]:
    """The wall's words and their time: Claude's own resume first (nothing to do but wait),
    else the reset, else the bare wall."""
    if limit is None:
        return "", None
    if limit.auto_resume_at is not None:
        return CONTINUES, limit.auto_resume_at
    if limit.resets_at is not None:
        return RESETS, limit.resets_at
    return LIMIT_HIT, None


def wall_text(wall: str, at: float | None, now: float, zone: tzinfo | None = None) -> str:
    """ "limit hit · resets 22:32" ("Dec 4 20:36" when not on `now`'s day), in `zone` (None:
    this machine's local time); the page's script writes the same in the viewer's time."""
    if not wall or at is None:
        return wall
    return f"{wall} {timefmt.wall_clock(at, now, zone)}"


def _reason(s: Session, error: str, prefix: str, text: str, lk: Look) -> str:
    """The row's line as one sentence, or the failure (and why, from StopFailure's kind)."""
    if s.limit is not None:
        return text
    if error:
        why = session_facts.failure_reason(s.error_kind)
        return f"{FAILED} ({why}): {error}" if why else f"{FAILED}: {error}"
    if prefix:
        return f"{prefix} {text}" if text == lk.note else f"{prefix}: {text}"
    if s.state is State.REVIEW and session_facts.running_tasks(s.background_tasks):
        # "finished · 1 task still running": the turn is over, its work is not.
        head = session_facts.review_text(s.background_tasks)
        return f"{head} — {text}" if text and text != lk.note else head
    return text


QUESTION_TOOL = "AskUserQuestion"
NEEDS: Mapping[str, str] = {
    "approval": "needs your approval",
    "answer": "needs your answer",
    "choice": "needs your choice",
    "input": "needs your input",
}
GENERIC_WAITS: Mapping[str, str] = {
    # What the session file alone says (2.1.332): the need, with nothing more particular.
    "permission prompt": "approval",
    session_facts.WAITING_FOR["input needed"]: "answer",
    session_facts.WAITING_FOR["dialog open"]: "choice",
}


def _need(s: Session) -> tuple[str, str]:
    """What a waiting session needs ("approval", "answer", "choice", "input") and of what."""
    waiting = " ".join((s.waiting_for or "").split())
    if waiting in GENERIC_WAITS:
        need = GENERIC_WAITS[waiting]
        return need, "auto mode can't check this action" if need == "choice" else ""
    tool = s.pending_tool.name if s.pending_tool else None
    if tool == QUESTION_TOOL:
        return "answer", waiting
    if tool or (s.current_tool and waiting == s.current_tool):
        # "Bash: rm -rf build" reads "Bash rm -rf build" after "needs your approval:".
        head, sep, rest = waiting.partition(": ")
        return "approval", f"{head} {rest}" if sep and " " not in head else waiting
    return "input", waiting


def _headline(s: Session, name: str, lk: Look) -> str:
    """`name · what is needed: detail`: what a notification says first."""
    if s.state is State.NEEDS_INPUT:
        need, detail = _need(s)
        return f"{name} · {NEEDS[need]}: {detail}" if detail else f"{name} · {NEEDS[need]}"
    if s.state is State.REVIEW:
        if s.limit is not None:  # "api-server · limit hit · resets 22:32"
            wall, at = _wall(s.limit)
            return f"{name} · {wall_text(wall, at, s.limit.at)}"
        if s.error:
            why = session_facts.failure_reason(s.error_kind)
            return f"{name} · failed ({why}): {s.error}" if why else f"{name} · failed: {s.error}"
        # The state's own word from the table, then what the turn left (tasks still running).
        return f"{name} · {lk.label}: {session_facts.review_text(s.background_tasks)}"
    return f"{name} · {lk.label}"


def _notice(s: Session, pane: str, group: Place) -> str:
    """A notification's body: the answer's first words on a review, else the session's place."""
    if s.state is State.REVIEW and s.snippet and s.snippet != s.error:
        return s.snippet
    where = [f"{group.noun} {group.label}" if group.kind == "tmux" else ""]
    where += [f"pane {pane}" if pane else "", s.cwd or ""]
    return " · ".join(w for w in where if w)


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
