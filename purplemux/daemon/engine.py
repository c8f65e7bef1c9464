"""The engine: the only writer. Queue of events -> step() per session -> store, feed, listeners.

Wiring: others join the engine through methods that return the callable that ends what they
began (calling it again does nothing), never by setting its attributes. `subscribe`: a part
hears the effects (change, notify, watch, remove; `subscribers()` counts them). `follow_limits`:
the daemon's limit keeper hears each transcript event with usage limits (one listener, for the
daemon's life, so not a part's subscription). `serve_remote`: the broker part lends other
hosts' sessions (`remote`) while it runs. The feed is made here, with the engine's own
callbacks."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from purplemux.core import events as ev
from purplemux.core.events import Event, Kind, Source
from purplemux.core.listing import Board, GroupBox, board, group_boxes
from purplemux.core.machine import Broadcast, Effect, Notify, Persist, ScheduleTick, Unwatch, Watch
from purplemux.core.model import Session, State, evolve
from purplemux.core.present import Origin, SessionView, present, session_json
from purplemux.core.timeline import Entry, Timeline
from purplemux.daemon.feed import Feed
from purplemux.io import fd_shortage as fdlimit
from purplemux.io.log_once import RateLimitedLog
from purplemux.io.store_thread import AsyncStore
from purplemux.notify.once import LiveEntries

log = logging.getLogger(__name__)

BATCH = 512
SEEN_IDS = 50_000
"""Event ids kept in memory for dedupe; older ones are looked up in the event log."""


NotifyListener = Callable[[Session, Notify], None]
"""Called on a live entry into needs-input or review (push, desktop)."""
WatchListener = Callable[[Session, str | None], None]
"""Called with a transcript path to follow for the session, or None to stop."""
ChangeListener = Callable[[Session], None]
"""Called with each session that changed, after it is stored (tmux pane options, ...)."""
RemoveListener = Callable[[str], None]
"""Called with the id of a session that left the list (the broker tells other hosts)."""
LimitsListener = Callable[[Session, ev.TranscriptFacts], None]
"""Called with each applied transcript event that carries the agent's usage limits (Codex)."""
Unsubscribe = Callable[[], None]
"""Ends a subscription (engine.subscribe); calling it again does nothing."""


@dataclass(eq=False, frozen=True)
class _Subscription:
    """What one subscriber listens to (None: not that)."""

    change: ChangeListener | None = None
    notify: NotifyListener | None = None
    watch: WatchListener | None = None
    remove: RemoveListener | None = None


class RemoteSessions(Protocol):
    """Other hosts' sessions, merged into what the engine serves (purplemux/hosts)."""

    def snapshot(self, include_ended: bool) -> list[dict[str, Any]]: ...

    def get(self, session_id: str) -> dict[str, Any] | None: ...

    def views(self, include_ended: bool) -> list[SessionView]: ...


_Undo = dict[str, tuple[Session | None, Timeline | None, tuple[Session, list[Entry]] | None]]
"""Per session touched by a batch: its session, timeline, and the timeline's base and entries."""


@dataclass(eq=False)
class _Item:
    event: Event
    live: bool
    done: asyncio.Future[None] | None = None


@dataclass
class EngineStats:
    """Counters for health and benchmarks."""

    applied: int = 0
    duplicates: int = 0
    batches: int = 0
    notifications: int = 0


class Engine:
    """Consumes one queue; applies each event to its session's timeline; runs the effects."""

    def __init__(
        self,
        store: AsyncStore,
        clock: Callable[[], float] = time.time,
        queue_size: int = 10_000,
        host: str = "",
        context_window: int | None = None,
        named_accounts: frozenset[str] = frozenset(),
    ) -> None:
        self.store = store
        self.named_accounts = named_accounts
        """The agents with several accounts watched: their rows name the account."""
        self.host = host
        """This machine's name: every session this engine serves carries it as `host`."""
        self.context_window = context_window
        """One context window for every model (PURPLEMUX_CONTEXT_WINDOW), or None: the table."""
        self._remote: RemoteSessions | None = None
        """Other hosts' sessions (serve_remote): merged into snapshots, never stepped."""
        self.clock = clock
        self.sessions: dict[str, Session] = {}
        self.timelines: dict[str, Timeline] = {}
        self.feed = Feed(
            self.feed_snapshot,
            self.board,
            clock,
            busy=lambda: not self._queue.empty(),  # its batches join one message
            resolve=self._feed_json,
        )
        self._subscriptions: list[_Subscription] = []
        self.stats = EngineStats()
        self._failing = RateLimitedLog(log)
        """A store that keeps failing: the traceback once per cause, then a line a while."""
        self._fds = fdlimit.limiter()
        self._queue: asyncio.Queue[_Item | None] = asyncio.Queue(queue_size)
        self._seen: OrderedDict[str, float] = OrderedDict()
        """The ids of the events applied (or found stored) since the start, with their times;
        the oldest are forgotten past SEEN_IDS."""
        self._ticks: dict[tuple[str, float], asyncio.TimerHandle] = {}
        self._running = False
        self._end_now = False
        self._origin = Origin(host=host)
        self._layout: tuple[int, tuple[GroupBox, ...]] | None = None
        self._layout_stale = True
        """The sidebar's groups as last made (_groups), and whether a view changed place since."""
        self._public: dict[str, tuple[Session, Origin, dict[str, Any], SessionView]] = {}
        """Each session's served JSON and view, as last made (see public())."""
        self.live_since = clock()
        """Events from before this (a transcript's past, a spool kept while we were down) are
        history: they move the badge but never notify."""
        self.entries = LiveEntries(self.live_since)
        """Which entries notify: the one rule (purplemux.notify.once) other hosts' follow too."""
        self._logged_until = self.live_since
        """An event at or before this time whose id is not in _seen may be in the log already
        (stored by an earlier run, or forgotten from _seen since): only such an event's id is
        looked up there. One after it and not in _seen is new: nothing before this start could
        have stored it, and this run remembers every id it stored until it forgets it, which
        moves this time up to that event's."""
        self._limits_listener: LimitsListener | None = None
        """Told of each stored transcript event with the agent's usage limits (follow_limits)."""

    # --- loading ---------------------------------------------------------------------------

    def load(self, sessions: Iterable[Session]) -> list[Event]:
        """Adopt stored sessions; return the RESTART events to submit (not live)."""
        restarts: list[Event] = []
        for s in sessions:
            self.sessions[s.id] = s
            self.timelines[s.id] = Timeline(replace(s, seq=0))
            if s.state is State.BUSY:
                # Placed just after the last thing we knew, so whatever happened while we were
                # down (spooled hooks, the session file, the transcript) folds in after it.
                at = s.updated_at + 1e-6
                restarts.append(
                    ev.Restart(
                        session_id=s.id,
                        at=at,
                        id=f"restart:{s.id}:{self.clock()}",
                        source=Source.DAEMON,
                    )
                )
        return restarts

    @property
    def remote(self) -> RemoteSessions | None:
        """Other hosts' sessions (a broker is configured), or None."""
        return self._remote

    def serve_remote(self, remote: RemoteSessions) -> Unsubscribe:
        """Merge `remote` into what the engine serves (the broker part, while it runs);
        returns the way to stop."""
        self._remote = remote

        def stop() -> None:
            if self._remote is remote:
                self._remote = None

        return stop

    @property
    def origin(self) -> Origin:
        """Whose the local sessions are: this host, grouped by host when a broker is on (one
        object while those stay the same: every view made since is known current by identity)."""
        grouped = self._remote is not None
        kept = self._origin
        if kept.host != self.host or kept.grouped is not grouped:
            kept = self._origin = Origin(host=self.host, grouped=grouped)
        return kept

    def origin_of(self, session_id: str) -> Origin:
        """Whose a session is (ours, or another host's as the broker last said)."""
        row = self._remote.get(session_id) if self._remote is not None else None
        if session_id in self.sessions or row is None:
            return self.origin
        since = row.get("offline_since")
        return Origin(
            host=str(row.get("host") or ""),
            stale=bool(row.get("stale")),
            offline_since=float(since) if isinstance(since, int | float) else None,
            grouped=True,
        )

    def listed(self, include_ended: bool = True) -> list[Session]:
        """This host's sessions a list shows, newest first."""
        items = sorted(self.sessions.values(), key=lambda s: s.updated_at, reverse=True)
        return [s for s in items if not s.superseded and (include_ended or not s.ended)]

    def snapshot(self, include_ended: bool = True) -> list[dict[str, object]]:
        """Every listed session as JSON with its view (other hosts' too, with a broker), newest
        first."""
        local: list[dict[str, object]] = [self.public(s) for s in self.listed(include_ended)]
        if self._remote is None:
            return local
        merged = local + self._remote.snapshot(include_ended)
        merged.sort(key=lambda s: float(str(s.get("updated_at") or 0.0)), reverse=True)
        return merged

    def feed_snapshot(self) -> list[dict[str, object]]:
        """A new feed client's sessions: every live one and the first page of ended ones (the
        dashboard's list says which; GET /api/sessions?ended=1 pages on)."""
        first = set(self.board().ended)
        return [s for s in self.snapshot() if not s.get("ended") or s.get("id") in first]

    def views(self, include_ended: bool = True) -> list[SessionView]:
        """What the page lists: every session's view (other hosts' too)."""
        # (Every change message makes the board from these: one origin for all, no call each.)
        origin, kept, make = self.origin, self._public, self._kept
        local = []
        for s in self.listed(include_ended):
            k = kept.get(s.id)
            local.append(k[3] if k is not None and k[0] is s and k[1] is origin else make(s)[3])
        return local + (self._remote.views(include_ended) if self._remote is not None else [])

    def board(self) -> Board:
        """The dashboard's list now (purplemux.core.listing): the page, the feed and the API's."""
        views = self.views()
        return board(views, self._groups if self._remote is None else None)

    def _groups(self, active: list[SessionView]) -> tuple[GroupBox, ...]:
        """The sidebar's groups of the live local views: remade only when a view was made
        with another place, order or end than the one before it, or the live rows are not as
        many (every change message carries the board: at 150 rows, grouping them was most of
        its cost)."""
        kept = self._layout
        if kept is None or self._layout_stale or kept[0] != len(active):
            kept = self._layout = (len(active), group_boxes(active))
            self._layout_stale = False
        return kept[1]

    def view(self, session: Session) -> SessionView:
        """A local session's view, made once per change of the session (see public())."""
        return self._kept(session)[3]

    def public(self, session: Session) -> dict[str, Any]:
        """A local session's JSON as served: its fields, `host`, `stale` and `view`.

        Made once per change of the session (sessions are immutable): the feed's message, every
        new client's snapshot and the API reuse it. A copy: callers may add to it."""
        return dict(self._kept(session)[2])

    def _feed_json(self, session_id: str) -> dict[str, Any] | None:
        """A changed session's JSON for the feed's next message: as it is now (None: gone)."""
        session = self.sessions.get(session_id)
        return None if session is None or session.superseded else self.public(session)

    def _kept(self, session: Session) -> tuple[Session, Origin, dict[str, Any], SessionView]:
        origin = self.origin
        kept = self._public.get(session.id)
        if kept is None or kept[0] is not session or kept[1] != origin:
            view = present(session, origin, self.context_window, self.named_accounts)
            if kept is None or _moved(kept[0], kept[3], session, view):
                self._layout_stale = True
            kept = (session, origin, session_json(session, origin, self.context_window, view), view)
            self._public[session.id] = kept
        return kept

    # --- listening -------------------------------------------------------------------------

    def subscribe(
        self,
        *,
        change: ChangeListener | None = None,
        notify: NotifyListener | None = None,
        watch: WatchListener | None = None,
        remove: RemoveListener | None = None,
    ) -> Unsubscribe:
        """Hear of the engine's effects (called on the loop, after the batch is stored; a
        listener that raises is logged and costs only itself); returns the way to stop."""
        sub = _Subscription(change, notify, watch, remove)
        self._subscriptions.append(sub)

        def unsubscribe() -> None:
            if sub in self._subscriptions:
                self._subscriptions.remove(sub)

        return unsubscribe

    def follow_limits(self, listener: LimitsListener) -> Unsubscribe:
        """Tell `listener` of each stored transcript event with the agent's usage limits (the
        daemon's purplemux.daemon.limit_keeper; one at a time: it replaces any other);
        returns the way to stop."""
        self._limits_listener = listener

        def stop() -> None:
            if self._limits_listener is listener:
                self._limits_listener = None

        return stop

    def subscribers(self) -> int:
        """How many subscriptions are live (health, tests: a stopped part leaves none)."""
        return len(self._subscriptions)

    def tell_notify(self, session: Session, notify: Notify) -> None:
        """Give a notification to every notify listener (another host's session, through the
        broker, notifies here as a local one does)."""
        self._call("notify", session, notify)

    # --- submitting ------------------------------------------------------------------------

    async def submit(self, event: Event, live: bool = True) -> None:
        """Queue an event and wait until it is stored (or found to be a duplicate)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        await self._queue.put(_Item(event, live, done))
        await done

    async def put(self, event: Event, live: bool = True) -> None:
        """Queue an event, waiting only for room in the queue (a source with a backlog)."""
        await self._queue.put(_Item(event, live))

    def post(self, event: Event, live: bool = True) -> None:
        """Queue an event without waiting (sources and timers)."""
        try:
            self._queue.put_nowait(_Item(event, live))
        except asyncio.QueueFull:
            asyncio.get_running_loop().create_task(self._queue.put(_Item(event, live)))

    async def run(self) -> None:
        """Consume the queue until stop() is called; serial, so no locks."""
        self._running = True
        while True:
            if self._queue.empty():
                self.feed.idle()  # nothing more to join what the feed holds: it goes out soon
            item = await self._queue.get()
            if item is None:
                break
            batch = [item]
            while len(batch) < BATCH:
                try:
                    nxt = self._queue.get_nowait()
                except asyncio.QueueEmpty:
                    break
                if nxt is None:
                    self._queue.put_nowait(None)
                    break
                batch.append(nxt)
            try:
                await self._process(batch)
            except Exception as exc:
                # A store that keeps failing (a full disk, a truncated file) fails every batch:
                # the traceback once per cause, then a line per cause every 10 minutes.
                if fdlimit.exhausted(exc):
                    fdlimit.say("engine", exc, self._fds)
                else:
                    self._failing.log(
                        ("batch", type(exc).__name__, str(exc)[:200]),
                        logging.ERROR,
                        "engine failed to apply a batch of %d events: %s",
                        len(batch),
                        " ".join(str(exc).split())[:500],
                        exc_info=True,
                    )
                for it in batch:
                    if it.done and not it.done.done():
                        it.done.set_exception(exc)
            if self._end_now:
                break
        self.feed.flush()  # what it holds goes out before the end
        self._running = False

    async def stop(self) -> None:
        """Let the queue drain, then end run() (at once if the queue is full: never waits)."""
        for handle in self._ticks.values():
            handle.cancel()
        self._ticks.clear()
        try:
            self._queue.put_nowait(None)
        except asyncio.QueueFull:
            self._end_now = True  # run() ends after the batch it is applying

    # --- applying --------------------------------------------------------------------------

    async def _process(self, batch: list[_Item]) -> None:
        self.stats.batches += 1
        for it in batch:
            it.event = ev.sanitize(it.event)  # before anything stores, sends or compares it
        seen, until = self._seen, self._logged_until
        unseen = [e.id for it in batch if (e := it.event).id not in seen and e.at <= until]
        known = await self.store.known_ids(unseen) if unseen else set()
        to_log: list[Event] = []
        changed: dict[str, Session] = {}
        after: list[tuple[Session, list[Effect], bool, Event]] = []
        undo: _Undo = {}
        for it in batch:
            e = it.event
            if e.id in self._seen or e.id in known:
                self.stats.duplicates += 1
                self._remember(e)
                continue
            self._remember(e)
            timeline = self.timelines.get(e.session_id)
            if e.session_id not in undo:
                kept = (timeline.base, list(timeline.entries)) if timeline else None
                undo[e.session_id] = (self.sessions.get(e.session_id), timeline, kept)
            if timeline is None:
                timeline = self.timelines[e.session_id] = Timeline(
                    Session(id=e.session_id, state_since=e.at)
                )
            new, effects = timeline.apply(e)
            self.stats.applied += 1
            if e.kind is not Kind.TICK:
                to_log.append(e)
            prev = changed.get(e.session_id) or self.sessions.get(e.session_id)
            if prev is None or any(isinstance(x, Persist) for x in effects):
                new = evolve(new, seq=(prev.seq if prev else 0) + 1)
                changed[e.session_id] = new
            live = it.live and self.entries.is_live(e.at)
            shown = changed.get(e.session_id) or self.sessions[e.session_id]
            after.append((shown, list(effects), live, e))
        if to_log or changed:
            sessions = list(changed.values())
            try:
                await self.store.commit(
                    to_log, sessions, waited=any(it.done is not None for it in batch)
                )
            except Exception:
                # Not stored (the database locked or failing): forget the batch, so the sender's
                # retry (the hook script spools on an error) is applied, not taken as a duplicate.
                self._undo(undo, batch)
                raise
        # Only what is stored is shown: readers (the API, the page) see the new states once the
        # commit is done, so a crash can never take back a state someone has already seen.
        self.sessions.update(changed)
        for it in batch:
            if it.done and not it.done.done():
                it.done.set_result(None)
        broadcast: dict[str, Session] = {}
        for session, effects, live, e in after:
            for eff in effects:
                if isinstance(eff, Broadcast):
                    broadcast[session.id] = self.sessions[session.id]
                elif isinstance(eff, Notify):
                    self._notify(session, eff, live)
                elif isinstance(eff, ScheduleTick):
                    self._schedule_tick(session.id, eff.at)
                elif isinstance(eff, Watch | Unwatch):
                    path = eff.path if isinstance(eff, Watch) else None
                    self._call("watch", self.sessions[session.id], path)
            if e.kind is Kind.SESSION_START or any(isinstance(x, Unwatch) for x in effects):
                self._supersede(self.sessions[session.id])
            if isinstance(e, ev.TranscriptFacts) and e.rate_limits is not None:
                self._limits(self.sessions[session.id], e)
        # What changed together goes out together: one message per batch to every client, or
        # fewer (the feed joins batches; each session's JSON is made once, when it goes).
        updates: list[str] = []
        removed: list[str] = []
        for session in broadcast.values():
            (removed if session.superseded else updates).append(session.id)
        self.feed.publish_ids(updates, removed)
        for session in broadcast.values():
            if session.superseded:
                self._call("remove", session.id)
            self._call("change", session)

    def _undo(
        self,
        undo: _Undo,
        batch: list[_Item],
    ) -> None:
        """Put back what a batch that could not be stored changed in memory."""
        for sid, (session, timeline, kept) in undo.items():
            if session is None:
                self.sessions.pop(sid, None)
            else:
                self.sessions[sid] = session
            if timeline is None or kept is None:
                self.timelines.pop(sid, None)
            else:
                timeline.base, timeline.entries = kept[0], kept[1]
        for it in batch:
            self._seen.pop(it.event.id, None)  # the store still knows those it already has

    def _remember(self, event: Event) -> None:
        self._seen[event.id] = event.at
        if len(self._seen) > SEEN_IDS:
            _, at = self._seen.popitem(last=False)
            self._logged_until = max(self._logged_until, at)

    def _notify(self, session: Session, notify: Notify, live: bool) -> None:
        if session.state is not notify.state:
            return  # a later event in the same batch already moved on
        key = (session.id, notify.state.value, notify.since)
        if not self.entries.first(key, notify.state, notify.since, live=live):
            return
        self.stats.notifications += 1
        self._call("notify", session, notify)

    def _call(self, what: str, *args: object) -> None:
        for sub in list(self._subscriptions):
            listener: Callable[..., None] | None = getattr(sub, what)
            if listener is None:
                continue
            try:
                listener(*args)
            except Exception:
                log.exception("an engine listener failed")

    def _limits(self, session: Session, event: ev.TranscriptFacts) -> None:
        listener = self._limits_listener
        if listener is None:
            return
        try:
            listener(session, event)
        except Exception:
            log.exception("the usage-limit listener failed")

    def _schedule_tick(self, session_id: str, at: float) -> None:
        key = (session_id, at)
        if key in self._ticks:
            return
        delay = max(0.0, at - self.clock())
        loop = asyncio.get_running_loop()

        def fire() -> None:
            self._ticks.pop(key, None)
            self.post(
                ev.Tick(
                    session_id=session_id, at=at, id=f"tick:{session_id}:{at}", source=Source.DAEMON
                )
            )

        self._ticks[key] = loop.call_later(delay, fire)

    def _supersede(self, session: Session) -> None:
        """/clear moves a pane's row to the new id: tell the ended session on that pane.

        Hooks and the poller race, so this runs both when a session starts (it supersedes the
        ended ones on its pane) and when one ends (a live one may already hold its pane)."""
        if session.tmux is None:
            return
        for other in list(self.sessions.values()):
            if not _same_pane(other, session):
                continue
            old, new = (session, other) if session.ended else (other, session)
            if old.ended and not old.superseded and not new.ended:
                self.post(
                    ev.Superseded(
                        session_id=old.id,
                        at=max(old.updated_at, new.updated_at),
                        id=f"superseded:{old.id}:{new.id}",
                        source=Source.DAEMON,
                        by=new.id,
                    ),
                    live=False,
                )

    def forget(self, ids: Iterable[str], cutoff: float) -> None:
        """Drop sessions retention deleted from the store (if still ended and untouched since)."""
        removed: list[str] = []
        for sid in ids:
            session = self.sessions.get(sid)
            if session is None or not session.ended or session.updated_at >= cutoff:
                continue
            del self.sessions[sid]
            self.timelines.pop(sid, None)
            self._public.pop(sid, None)
            if not session.superseded:  # a superseded row already left every list
                removed.append(sid)
        self.feed.publish_changes([], removed)


def _moved(was: Session, old: SessionView, now: Session, new: SessionView) -> bool:
    """Whether a session's new view may sit elsewhere in the sidebar than its old one."""
    return (
        was.superseded is not now.superseded
        or old.ended is not new.ended
        or old.order != new.order
        or old.group != new.group
        or old.window != new.window
    )


def _same_pane(a: Session, b: Session) -> bool:
    """Two different sessions on one tmux pane (same server)."""
    return (
        a.id != b.id
        and a.tmux is not None
        and b.tmux is not None
        and a.tmux.pane == b.tmux.pane
        and a.tmux.socket == b.tmux.socket
    )
