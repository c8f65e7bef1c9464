"""Where the time went: a session's state spans and a period's totals, from its event log (pure).

A session's spans are re-derived by folding its stored events through the state machine in
source-time order, exactly as the engine's Timeline does: the same `step`, the same order
((at, id)), and the idle-grace TICKs (never stored) re-created where `step` asked for them. So a
timeline equals what the badge did, is the same after a restart, and covers only what the event
log still holds (the retention). While a session has ended it has no span: a lane stops there.

Two rare cases where a replay can differ from what the live badge showed, both about events the
live engine could not put in their place: an event older than everything a restarted daemon
loaded (the engine applies it on top, or drops it when it is stale; here it is put in its place),
and a late event older than the engine's last 256 entries for the session (applied on top).

Totals over a period [since, until) clip every span to it: seconds per state, the time Claude
waited on the user (needs-input plus review, which lasts until the review is looked at or the
next prompt), how many times it asked (entries into needs-input), the median answer time (entry
into needs-input until it was left), and tokens / cost spent in the period when they are known
(the cumulative figures the transcript events carry, read at `until` minus at `since`).
"""

from __future__ import annotations

import heapq
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from purplemux import events as ev
from purplemux.events import Event, Kind, Source
from purplemux.machine import ScheduleTick, step
from purplemux.model import Session, State, Tokens

STATES: tuple[str, ...] = tuple(s.value for s in State)
WAITING = (State.NEEDS_INPUT, State.REVIEW)
"""The states in which Claude waits on the user."""


@dataclass(frozen=True, slots=True)
class Span:
    """A stretch of one state: from `start` to `end` (None: the session is still in it)."""

    state: State
    start: float
    end: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state.value, "from": self.start, "to": self.end}

    def until(self, now: float) -> float:
        """Its end, or `now` while it is open."""
        return self.end if self.end is not None else max(now, self.start)

    def clipped(self, since: float, until: float, now: float) -> float:
        """Seconds of it inside [since, until)."""
        return max(0.0, min(self.until(now), until) - max(self.start, since))


@dataclass(frozen=True, slots=True)
class Replay:
    """A session's event log folded again: its final state, spans, and cumulative usage."""

    session: Session
    spans: tuple[Span, ...]
    tokens: tuple[tuple[float, Tokens], ...] = ()
    """(source time, cumulative tokens) each time the transcript's total changed."""
    cost: tuple[tuple[float, float], ...] = ()
    """(source time, cumulative cost in USD) each time it changed, when sessions carry one."""
    next_tick: float | None = None
    """When an idle-grace TICK after `now` would still move it: the replay is good until then."""


def replay(session_id: str, events: Iterable[Event], now: float) -> Replay:
    """Fold a session's logged events (any order) into its spans, up to `now`."""
    ordered = sorted((e for e in events if e.kind is not Kind.TICK), key=lambda e: (e.at, e.id))
    if not ordered:
        return Replay(Session(id=session_id), ())
    folder = _Folder(Session(id=session_id, state_since=ordered[0].at), ordered[0].at)
    for e in ordered:
        folder.ticks_before(e.at, e.id)
        folder.apply(e)
    folder.ticks_until(now)
    return folder.result()


class _Folder:
    """The fold's running state; ticks are applied where the live engine would have."""

    def __init__(self, session: Session, first: float) -> None:
        self.s = session
        self.closed: list[Span] = []
        self.open: tuple[State, float] | None = (session.state, first)
        self.ticks: list[tuple[float, str]] = []
        self.tokens: list[tuple[float, Tokens]] = []
        self.cost: list[tuple[float, float]] = []

    def ticks_before(self, at: float, event_id: str) -> None:
        while self.ticks and self.ticks[0] < (at, event_id):
            self._tick(heapq.heappop(self.ticks))

    def ticks_until(self, now: float) -> None:
        while self.ticks and self.ticks[0][0] <= now:
            self._tick(heapq.heappop(self.ticks))

    def _tick(self, key: tuple[float, str]) -> None:
        at, tick_id = key
        self.apply(ev.Tick(session_id=self.s.id, at=at, id=tick_id, source=Source.DAEMON))

    def apply(self, e: Event) -> None:
        old = self.s
        new, effects = step(old, e)
        for eff in effects:
            if isinstance(eff, ScheduleTick):
                key = (eff.at, f"tick:{old.id}:{eff.at}")  # the engine's tick id
                if key not in self.ticks:
                    heapq.heappush(self.ticks, key)
        if new is old:
            return
        if new.ended != old.ended:
            if new.ended:
                self._close(e.at)
            else:
                self._open(new.state, e.at)
        elif new.state is not old.state and not new.ended:
            self._close(e.at)
            self._open(new.state, e.at)
        if new.tokens != old.tokens:
            self.tokens.append((e.at, new.tokens))
        cost = getattr(new, "cost_usd", None)
        if isinstance(cost, int | float) and cost != getattr(old, "cost_usd", None):
            self.cost.append((e.at, float(cost)))
        self.s = new

    def _close(self, at: float) -> None:
        if self.open is None:
            return
        state, start = self.open
        self.open = None
        if at > start:
            self.closed.append(Span(state, start, at))

    def _open(self, state: State, at: float) -> None:
        last = self.closed[-1] if self.closed else None
        if last is not None and last.state is state and last.end == at:
            self.closed.pop()  # a zero-length span between two of the same state: one span
            self.open = (state, last.start)
        else:
            self.open = (state, at)

    def result(self) -> Replay:
        spans = list(self.closed)
        if self.open is not None:
            spans.append(Span(self.open[0], self.open[1]))
        next_tick = self.ticks[0][0] if self.ticks else None
        return Replay(self.s, tuple(spans), tuple(self.tokens), tuple(self.cost), next_tick)


# --- kept between calls ------------------------------------------------------------------------

LogKey = tuple[int, int]
"""What a session's stored log is now: (events, highest log sequence number)."""


class ReplayCache:
    """Replays kept between calls: a session is folded again only when its log changed (a new
    event, a late one, or one the retention removed) or a pending idle-grace TICK came due."""

    def __init__(self) -> None:
        self._items: dict[str, tuple[LogKey, Replay]] = {}

    def stale(self, keys: Mapping[str, LogKey], now: float) -> list[str]:
        """The sessions whose replay must be made again."""
        out = []
        for sid, key in keys.items():
            kept = self._items.get(sid)
            due = kept is not None and kept[1].next_tick is not None and kept[1].next_tick <= now
            if kept is None or kept[0] != key or due:
                out.append(sid)
        return out

    def update(self, keys: Mapping[str, LogKey], fresh: Mapping[str, Replay]) -> dict[str, Replay]:
        """Keep the fresh replays; return the replays of every session in `keys`."""
        for sid, r in fresh.items():
            if sid in keys:
                self._items[sid] = (keys[sid], r)
        return {sid: self._items[sid][1] for sid in keys if sid in self._items}

    def prune(self, keys: Mapping[str, LogKey]) -> None:
        """Forget the sessions that are no longer in the log (`keys`: all of it)."""
        for sid in [s for s in self._items if s not in keys]:
            del self._items[sid]


# --- totals over a period ----------------------------------------------------------------------


@dataclass
class Totals:
    """What a period held, for one session or summed over all of them."""

    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STATES, 0.0))
    prompts: int = 0
    """Entries into needs-input in the period: the times Claude asked."""
    reviews: int = 0
    """Entries into review in the period: finished turns waiting to be looked at."""
    answers: list[float] = field(default_factory=list)
    """Seconds from each of those entries into needs-input until it was left (answered)."""
    tokens: Tokens | None = None
    cost_usd: float | None = None

    @property
    def waited_on_you_s(self) -> float:
        return sum(self.seconds[s.value] for s in WAITING)

    @property
    def needed_you(self) -> int:
        return self.prompts + self.reviews

    @property
    def answer_median_s(self) -> float | None:
        return statistics.median(self.answers) if self.answers else None

    @property
    def active(self) -> bool:
        """The session lived in the period (it has a span there)."""
        return any(v > 0 for v in self.seconds.values()) or self.needed_you > 0

    def add(self, other: Totals) -> None:
        for state, secs in other.seconds.items():
            self.seconds[state] = self.seconds.get(state, 0.0) + secs
        self.prompts += other.prompts
        self.reviews += other.reviews
        self.answers.extend(other.answers)
        if other.tokens is not None:
            self.tokens = _add_tokens(self.tokens or Tokens(), other.tokens)
        if other.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + other.cost_usd

    def to_json(self) -> dict[str, Any]:
        median = self.answer_median_s
        return {
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
            "waited_on_you_s": round(self.waited_on_you_s, 3),
            "needed_you": self.needed_you,
            "prompts": self.prompts,
            "reviews": self.reviews,
            "answer_median_s": round(median, 3) if median is not None else None,
            "tokens": _tokens_json(self.tokens),
            "cost_usd": round(self.cost_usd, 6) if self.cost_usd is not None else None,
        }


def totals(r: Replay, since: float, until: float, now: float) -> Totals:
    """One session's totals over [since, until), its open span counted up to `now`."""
    out = Totals()
    for span in r.spans:
        if span.start >= until:
            break
        secs = span.clipped(since, until, now)
        if secs > 0:
            out.seconds[span.state.value] += secs
        if since <= span.start < until:
            if span.state is State.NEEDS_INPUT:
                out.prompts += 1
                if span.end is not None:
                    out.answers.append(span.end - span.start)
            elif span.state is State.REVIEW:
                out.reviews += 1
    if r.tokens:
        out.tokens = _sub_tokens(_at(r.tokens, until, Tokens()), _at(r.tokens, since, Tokens()))
    if r.cost:
        out.cost_usd = max(0.0, _at(r.cost, until, 0.0) - _at(r.cost, since, 0.0))
    return out


@dataclass
class Summary:
    """Totals over all sessions and per session (only those that lived in the period)."""

    since: float
    until: float
    total: Totals
    sessions: dict[str, Totals]

    def to_json(self, describe: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
        """The JSON shape; `describe` adds each session's own fields (project, tmux...)."""
        describe = describe or {}
        rows = [
            {"id": sid, **dict(describe.get(sid, {})), **t.to_json()}
            for sid, t in sorted(
                self.sessions.items(), key=lambda kv: (-kv[1].waited_on_you_s, kv[0])
            )
        ]
        return {
            "since": self.since,
            "until": self.until,
            "totals": {"sessions": len(rows), **self.total.to_json()},
            "sessions": rows,
        }


def summarize(replays: Mapping[str, Replay], since: float, until: float, now: float) -> Summary:
    """Totals over [since, until) for every session, and their sum."""
    total = Totals()
    per: dict[str, Totals] = {}
    for sid, r in replays.items():
        t = totals(r, since, until, now)
        if t.active:
            per[sid] = t
            total.add(t)
    return Summary(since, until, total, per)


def _at(series: Sequence[tuple[float, Any]], at: float, default: Any) -> Any:
    """The last value in a time series at or before `at`."""
    value = default
    for when, v in series:
        if when > at:
            break
        value = v
    return value


def _add_tokens(a: Tokens, b: Tokens) -> Tokens:
    return Tokens(*(getattr(a, f.name) + getattr(b, f.name) for f in fields(Tokens)))


def _sub_tokens(a: Tokens, b: Tokens) -> Tokens:
    return Tokens(*(max(0, getattr(a, f.name) - getattr(b, f.name)) for f in fields(Tokens)))


def _tokens_json(t: Tokens | None) -> dict[str, int] | None:
    if t is None:
        return None
    out = {f.name: int(getattr(t, f.name)) for f in fields(Tokens)}
    out["total"] = sum(out.values())
    return out


def events_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[Event]:
    """Logged events (Event.to_json) back into events; a row this version cannot read is skipped."""
    out: list[Event] = []
    for row in rows:
        try:
            out.append(ev.event_from_json(dict(row)))
        except (KeyError, ValueError, TypeError):
            continue
    return out
