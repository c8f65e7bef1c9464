"""What a running daemon holds: settings, token, store, engine, and the parts' shared pieces."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from purplemux.answer import Desk
from purplemux.engine import Engine
from purplemux.events import Event
from purplemux.history import Ledger
from purplemux.hosts.broker import BrokerLink
from purplemux.notify.vapid import VapidKeys, load_or_create_keys
from purplemux.server.logins import FILE as LOGINS_FILE
from purplemux.server.logins import Logins
from purplemux.settings import Settings
from purplemux.sources.claude_sessions import SessionFileWatcher
from purplemux.sources.transcripts import TranscriptStats
from purplemux.store import AsyncStore
from purplemux.tmux_control import TmuxControl


@dataclass(eq=False)
class Runtime:
    """The live parts of one daemon, built by the app's lifespan."""

    settings: Settings
    token: str
    store: AsyncStore
    engine: Engine
    session_files: SessionFileWatcher = field(init=False)
    """Claude's session files, read by the session-file, process and recovery parts."""
    tmux: TmuxControl = field(init=False)
    """One tmux control client per server: pane changes (process part), writes (pane marker)."""
    vapid: VapidKeys | None = None
    desk: Desk = field(default_factory=Desk)
    """The prompt desk: when each dialog was first seen, one answer at a time per pane."""
    history: Ledger = field(default_factory=Ledger)
    """Every session's history fold, continued as events come (purplemux.server.history)."""
    history_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    transcripts: TranscriptStats = field(default_factory=TranscriptStats)
    """What the transcript part read: bytes, histories still being summed, resumed offsets."""
    logins: Logins = field(init=False)
    """The dashboard's login cookies (kept under the home, keyed with the token)."""
    broker: BrokerLink | None = None
    """The link to the shared Redis (with --broker), set while the broker part runs; its
    `view` holds the other hosts' sessions."""

    def __post_init__(self) -> None:
        self.session_files = SessionFileWatcher(self.settings.claude_dir / "sessions")
        self.tmux = TmuxControl()
        self.logins = Logins(self.settings.home / LOGINS_FILE, self.token)

    async def ingest(self, event: Event, live: bool = True) -> None:
        """Apply an event and wait until it is stored: only then may its sender forget it."""
        await self.engine.submit(event, live=live)

    async def vapid_keys(self) -> VapidKeys:
        """The daemon's VAPID keys, made on first use (0600 under $PURPLEMUX_HOME)."""
        if self.vapid is None:
            self.vapid = await asyncio.to_thread(load_or_create_keys, self.settings.home)
        return self.vapid
