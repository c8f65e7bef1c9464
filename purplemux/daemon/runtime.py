"""What a running daemon holds: settings, token, store, engine, adapters, and the verbs.

Wiring: the broker part lends its link with `Runtime.attach_broker`, which returns the callable
that takes it back; `Runtime.broker` is read-only."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from purplemux.agents import registry
from purplemux.agents.base import Owners
from purplemux.core.events import Event
from purplemux.core.history import Ledger
from purplemux.daemon.actions import Actions, Relay
from purplemux.daemon.answer import Desk, PaneOwners
from purplemux.daemon.engine import Engine
from purplemux.daemon.limit_keeper import LimitKeeper
from purplemux.io.log_once import RateLimitedLog
from purplemux.io.logins import FILE as LOGINS_FILE
from purplemux.io.logins import Logins
from purplemux.io.settings import Settings
from purplemux.io.store_thread import AsyncStore
from purplemux.io.tmux_control import TmuxControl
from purplemux.notify.vapid import VapidKeys, load_or_create_keys
from purplemux.sources.transcripts import TranscriptStats

log = logging.getLogger(__name__)


class Broker(Relay, Protocol):
    """The link to the shared Redis as the daemon uses it (purplemux.hosts.broker.BrokerLink)."""

    def health(self) -> dict[str, Any]:
        """`{"state": connected|connecting|down, "since": ts}` for /api/health and the page."""
        ...


@dataclass(frozen=True, slots=True)
class Adapters:
    """What a daemon reads and drives beyond its store; create_app builds them (a test may give
    its own)."""

    tmux: TmuxControl
    """One tmux control client per server: pane changes (process part), writes (pane marker)."""
    logins: Logins
    """The dashboard's login cookies (kept under the home, keyed with the token)."""


def default_adapters(settings: Settings, token: str) -> Adapters:
    """The real ones: tmux's servers, the logins file in the home (each agent's own files are
    its live sources': agents/<agent>/live.py)."""
    return Adapters(
        tmux=TmuxControl(default_socket=settings.tmux_default_socket),
        logins=Logins(settings.home / LOGINS_FILE, token),
    )


@dataclass(eq=False)
class Runtime:
    """The live parts of one daemon, built by the app's lifespan."""

    settings: Settings
    token: str
    store: AsyncStore
    engine: Engine
    adapters: Adapters
    vapid: VapidKeys | None = None
    desk: Desk = field(init=False)
    """The prompt desk: when each dialog was first seen, one answer at a time per pane, and
    whose each pane is (each agent's config dirs; its panes' watcher, once a source runs)."""
    history: Ledger = field(default_factory=Ledger)
    """Every session's history fold, continued as events come (purplemux.server.history)."""
    history_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    transcripts: TranscriptStats = field(default_factory=TranscriptStats)
    spool_log: RateLimitedLog = field(
        default_factory=lambda: RateLimitedLog(logging.getLogger("purplemux.sources.spool"))
    )
    """What draining the spool skips or waits for, said once a while (per daemon)."""
    """What the transcript part read: bytes, histories still being summed, resumed offsets."""
    _broker: Broker | None = field(default=None, init=False, repr=False)
    actions: Actions = field(init=False)
    """What a person can do to a session (screen, answer, focus, dismiss), relayed to the
    owning host through the broker when another host has it."""
    limits: LimitKeeper = field(init=False)
    """The usage-limit readings per account (statusLine input, Codex rollouts)."""

    def __post_init__(self) -> None:
        dirs = {n: tuple(a.dir for a in self.settings.accounts_of(n)) for n in registry.names()}
        self.desk = Desk(owners=PaneOwners(dirs=dirs))
        self.actions = Actions(self.engine, self.desk, self.settings, relay=lambda: self.broker)
        self.limits = LimitKeeper(self.settings, self.store, self.engine)

    @property
    def broker(self) -> Broker | None:
        """The link to the shared Redis (with --broker), while the broker part runs: the
        broker's health, and the relay that hands other hosts' sessions to their owners."""
        return self._broker

    def attach_broker(self, link: Broker) -> Callable[[], None]:
        """Serve `link` as the daemon's broker; returns the way to take it back (calling it
        again does nothing)."""
        self._broker = link

        def detach() -> None:
            if self._broker is link:
                self._broker = None

        return detach

    @property
    def owners(self) -> Owners:
        """Whose each pane is, for the desk (an agent's live sources add their own signs)."""
        return self.desk.owners

    @property
    def tmux(self) -> TmuxControl:
        return self.adapters.tmux

    @property
    def logins(self) -> Logins:
        return self.adapters.logins

    async def ingest(self, event: Event, live: bool = True) -> str | None:
        """Apply a hook's event and wait until it is stored: only then may its sender forget it.
        A hook that must not make a row (its agent's `makes_row`: Claude's agent view's spare
        worker and notices) is not applied: the reason is returned."""
        if event.session_id not in self.engine.sessions:
            why = registry.get(event.agent).makes_row(event)
            if why is not None:
                log.info(
                    "hook %s of session %s makes no row: %s", event.name, event.session_id, why
                )
                return why
        await self.engine.submit(event, live=live)
        return None

    async def vapid_keys(self) -> VapidKeys:
        """The daemon's VAPID keys, made on first use (0600 under $PURPLEMUX_HOME)."""
        if self.vapid is None:
            self.vapid = await asyncio.to_thread(load_or_create_keys, self.settings.home)
        return self.vapid
