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

import bisect
import heapq
import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from purplemux.agents import facts as agent_facts
from purplemux.core import events as ev
from purplemux.core.events import Event, Kind, Source
from purplemux.core.machine import ScheduleTick, step
from purplemux.core.model import Session, State, Tokens
from purplemux.core.present import LOOKS
from purplemux.core.timefmt import duration

STATES: tuple[str, ...] = tuple(s.value for s in State)
WAITING: tuple[State, ...] = tuple(s for s in State if LOOKS[s].attention)
"""The states in which Claude waits on the user (needs-input, review): the table's `attention`."""


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
    index: _Index | None = field(default=None, compare=False, repr=False)
    """Running sums over the spans, made on the first totals() (a cache, not part of the value)."""


def replay(session_id: str, events: Iterable[Event], now: float) -> Replay:
    """Fold a session's logged events (any order) into its spans, up to `now`."""
    ordered = sorted((e for e in events if e.kind is not Kind.TICK), key=lambda e: (e.at, e.id))
    if not ordered:
        return Replay(Session(id=session_id), ())
    folder = _Folder(Session(id=session_id, state_since=ordered[0].at), ordered[0].at)
    folder.feed(ordered)
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
        self.last: tuple[float, str] = (first, "")
        """(source time, id) of the last event or tick applied: a new event must sort after it."""

    def feed(self, ordered: Iterable[Event]) -> None:
        """Apply events that all sort after `last`, in order, with the ticks due before each."""
        for e in ordered:
            self.ticks_before(e.at, e.id)
            self.apply(e)

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
        self.last = (e.at, e.id)
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


def _ordered(events: Iterable[Event]) -> list[Event]:
    return sorted((e for e in events if e.kind is not Kind.TICK), key=lambda e: (e.at, e.id))


class Ledger:
    """Every session's fold, kept and continued: a new event is folded on top of the session's
    kept fold (its ending Session, spans and pending ticks), not from the start; only an event
    that sorts before what was already applied (a late one) folds that session again from its
    whole log. `synced` is the event log's highest sequence number folded so far; `low` its
    lowest, so a pruned log (retention) is noticed and everything is folded again.

    Pure: the caller reads the store (events after `synced`, or one session's whole log) and
    keeps the folds there too (`dump` / `load`), so a restart folds nothing that was folded."""

    def __init__(self) -> None:
        self.synced = 0
        self.low = 0
        self.loaded = False
        """Whether the folds kept in the store were taken back (once per daemon)."""
        self._folds: dict[str, _Folder] = {}
        self._replays: dict[str, Replay] = {}

    def __contains__(self, session_id: str) -> bool:
        return session_id in self._folds

    def reset(self) -> None:
        self.synced = self.low = 0
        self._folds.clear()
        self._replays.clear()

    def add(self, events: Iterable[Event]) -> tuple[set[str], set[str]]:
        """Fold new events on top; return (sessions folded on, sessions that need a whole
        re-fold: an event sorts before one already applied)."""
        by_session: dict[str, list[Event]] = {}
        for e in events:
            if e.kind is not Kind.TICK:
                by_session.setdefault(e.session_id, []).append(e)
        changed: set[str] = set()
        late: set[str] = set()
        for sid, evs in by_session.items():
            ordered = _ordered(evs)
            folder = self._folds.get(sid)
            if folder is None:
                folder = self._folds[sid] = _Folder(
                    Session(id=sid, state_since=ordered[0].at), ordered[0].at
                )
            elif (ordered[0].at, ordered[0].id) <= folder.last:
                late.add(sid)
                continue
            folder.feed(ordered)
            changed.add(sid)
            self._replays.pop(sid, None)
        return changed, late

    def refold(self, session_id: str, events: Iterable[Event]) -> None:
        """Fold one session again from its whole log."""
        ordered = _ordered(events)
        self._replays.pop(session_id, None)
        if not ordered:
            self._folds.pop(session_id, None)
            return
        folder = _Folder(Session(id=session_id, state_since=ordered[0].at), ordered[0].at)
        folder.feed(ordered)
        self._folds[session_id] = folder

    def replays(self, now: float, session_id: str | None = None) -> dict[str, Replay]:
        """Every session's replay up to `now` (or one session's); kept until its fold moves."""
        ids = list(self._folds) if session_id is None else [session_id]
        out: dict[str, Replay] = {}
        for sid in ids:
            folder = self._folds.get(sid)
            if folder is None:
                continue
            kept = self._replays.get(sid)
            if kept is not None and (kept.next_tick is None or kept.next_tick > now):
                out[sid] = kept
                continue
            folder.ticks_until(now)
            out[sid] = self._replays[sid] = folder.result()
        return out

    # --- kept in the store -----------------------------------------------------------------

    def dump(self, session_id: str) -> str:
        """One session's fold as JSON (for the store)."""
        f = self._folds[session_id]
        return json.dumps(
            {
                "v": FOLD_VERSION,
                "session": f.s.to_record(),
                "closed": [[sp.state.value, sp.start, sp.end] for sp in f.closed],
                "open": [f.open[0].value, f.open[1]] if f.open else None,
                "ticks": [list(t) for t in f.ticks],
                "tokens": [
                    [at, [getattr(t, n.name) for n in fields(Tokens)]] for at, t in f.tokens
                ],
                "cost": [list(c) for c in f.cost],
                "last": list(f.last),
            }
        )

    def load(self, session_id: str, data: str) -> bool:
        """Take a kept fold back; False when it is of another version or unreadable."""
        try:
            d = json.loads(data)
            if d.get("v") != FOLD_VERSION:
                return False
            f = _Folder(Session.from_record(d["session"]), 0.0)
            f.closed = [Span(State(a), float(b), float(c)) for a, b, c in d["closed"]]
            f.open = (State(d["open"][0]), float(d["open"][1])) if d["open"] else None
            f.ticks = [(float(a), str(b)) for a, b in d["ticks"]]
            heapq.heapify(f.ticks)
            f.tokens = [(float(at), Tokens(*t)) for at, t in d["tokens"]]
            f.cost = [(float(at), float(c)) for at, c in d["cost"]]
            f.last = (float(d["last"][0]), str(d["last"][1]))
        except (ValueError, KeyError, TypeError, IndexError):
            return False
        self._folds[session_id] = f
        self._replays.pop(session_id, None)
        return True


FOLD_VERSION = 1
"""The shape of a kept fold (Ledger.dump); another one is folded again from the log."""


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


class _Index:
    """A replay's spans as running sums, so a period's totals take a few binary searches, not a
    walk over every span (a summary of a thousand long sessions on each request)."""

    __slots__ = ("answers", "cum", "entries", "starts", "times")

    def __init__(self, r: Replay) -> None:
        self.starts = [sp.start for sp in r.spans]
        self.cum: dict[State, list[float]] = {st: [0.0] for st in State}
        self.entries: dict[State, list[float]] = {st: [] for st in WAITING}
        self.answers: list[float | None] = []
        """The length of each needs-input span (None while it is open)."""
        for sp in r.spans:
            for st, c in self.cum.items():
                c.append(
                    c[-1] + (sp.end - sp.start if st is sp.state and sp.end is not None else 0)
                )
            if sp.state in self.entries:
                self.entries[sp.state].append(sp.start)
            if sp.state is State.NEEDS_INPUT:
                self.answers.append(sp.end - sp.start if sp.end is not None else None)
        self.times = ([t for t, _ in r.tokens], [t for t, _ in r.cost])

    def before(self, r: Replay, state: State, t: float, now: float) -> float:
        """Seconds spent in `state` before `t`."""
        k = bisect.bisect_right(self.starts, t) - 1
        if k < 0:
            return 0.0
        sp = r.spans[k]
        part = max(0.0, min(t, sp.until(now)) - sp.start) if sp.state is state else 0.0
        return self.cum[state][k] + part


def _index(r: Replay) -> _Index:
    idx = r.index
    if idx is None:
        idx = _Index(r)
        object.__setattr__(r, "index", idx)  # a cache of what the frozen replay already says
    return idx


def totals(r: Replay, since: float, until: float, now: float) -> Totals:
    """One session's totals over [since, until), its open span counted up to `now`."""
    out = Totals()
    idx = _index(r)
    for state in State:
        secs = idx.before(r, state, until, now) - idx.before(r, state, since, now)
        if secs > 0:
            out.seconds[state.value] += secs
    needs = idx.entries[State.NEEDS_INPUT]
    a, b = bisect.bisect_left(needs, since), bisect.bisect_left(needs, until)
    out.prompts = b - a
    out.answers = [x for x in idx.answers[a:b] if x is not None]
    review = idx.entries[State.REVIEW]
    out.reviews = bisect.bisect_left(review, until) - bisect.bisect_left(review, since)
    if r.tokens:
        tt = idx.times[0]
        out.tokens = _sub_tokens(
            _at(r.tokens, tt, until, Tokens()), _at(r.tokens, tt, since, Tokens())
        )
    if r.cost:
        ct = idx.times[1]
        out.cost_usd = max(0.0, _at(r.cost, ct, until, 0.0) - _at(r.cost, ct, since, 0.0))
    return out


@dataclass
class Summary:
    """Totals over all sessions and per session (only those that lived in the period)."""

    since: float
    until: float
    total: Totals
    sessions: dict[str, Totals]
    agents: dict[str, Totals] = field(default_factory=dict)
    """The same totals per agent ("claude", "codex") of the sessions in the period."""

    def to_json(self, describe: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
        """The JSON shape; `describe` adds each session's own fields (project, tmux...)."""
        describe = describe or {}
        rows = [
            {"id": sid, **dict(describe.get(sid, {})), **t.to_json()}
            for sid, t in sorted(
                self.sessions.items(), key=lambda kv: (-kv[1].waited_on_you_s, kv[0])
            )
        ]
        per_agent = {
            agent: {"sessions": sum(1 for r in rows if r.get("agent") == agent), **t.to_json()}
            for agent, t in sorted(self.agents.items())
        }
        return {
            "since": self.since,
            "until": self.until,
            "totals": {"sessions": len(rows), **self.total.to_json()},
            "agents": per_agent,
            "sessions": rows,
        }


def summarize(replays: Mapping[str, Replay], since: float, until: float, now: float) -> Summary:
    """Totals over [since, until) for every session, and their sum."""
    total = Totals()
    per: dict[str, Totals] = {}
    agents: dict[str, Totals] = {}
    for sid, r in replays.items():
        t = totals(r, since, until, now)
        if t.active:
            per[sid] = t
            total.add(t)
            agents.setdefault(r.session.agent, Totals()).add(t)
    return Summary(since, until, total, per, agents)


def _at(series: Sequence[tuple[float, Any]], times: list[float], at: float, default: Any) -> Any:
    """The last value in a time series at or before `at` (`times`: the series' times)."""
    k = bisect.bisect_right(times, at)
    return series[k - 1][1] if k else default


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


def waited(
    waited_s: float,
    prompts: int,
    median_s: float | None,
    agents: Mapping[str, float] | None = None,
    when: str = "",
) -> str:
    """ "Claude waited on you 1h 12m today — 14 prompts, median answer 38s"; with several
    agents: "Your agents waited on you 1h 12m today (Claude 40m, Codex 32m) — …".
    `agents`: each agent's own wait (its name as sessions carry it)."""
    agents = agents or {}
    when = f" {when}" if when else ""
    if len(agents) > 1:
        each = ", ".join(
            f"{agent_facts.label(a)} {duration(w)}"
            for a, w in sorted(agents.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        text = f"Your agents waited on you {duration(waited_s)}{when} ({each})"
    else:
        who = agent_facts.label(next(iter(agents), None))
        text = f"{who} waited on you {duration(waited_s)}{when}"
    if not prompts:
        return text + " — no prompts"
    text += f" — {prompts} prompt{'s' if prompts != 1 else ''}"
    return text + (f", median answer {duration(median_s)}" if median_s is not None else "")
