"""What a running daemon holds: settings, token, store, engine, and the parts' shared pieces."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from purplemux.engine import Engine
from purplemux.events import Event
from purplemux.notify.vapid import VapidKeys, load_or_create_keys
from purplemux.settings import Settings
from purplemux.sources.claude_sessions import SessionFileWatcher
from purplemux.store import AsyncStore


@dataclass(eq=False)
class Runtime:
    """The live parts of one daemon, built by the app's lifespan."""

    settings: Settings
    token: str
    store: AsyncStore
    engine: Engine
    session_files: SessionFileWatcher = field(init=False)
    """Claude's session files, read by the session-file, process and recovery parts."""
    vapid: VapidKeys | None = None

    def __post_init__(self) -> None:
        self.session_files = SessionFileWatcher(self.settings.claude_dir / "sessions")

    async def ingest(self, event: Event, live: bool = True) -> None:
        """Apply an event and wait until it is stored: only then may its sender forget it."""
        await self.engine.submit(event, live=live)

    async def vapid_keys(self) -> VapidKeys:
        """The daemon's VAPID keys, made on first use (0600 under $PURPLEMUX_HOME)."""
        if self.vapid is None:
            self.vapid = await asyncio.to_thread(load_or_create_keys, self.settings.home)
        return self.vapid
