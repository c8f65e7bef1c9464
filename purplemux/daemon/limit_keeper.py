"""The daemon's usage-limit readings (issue 25): the newest per account, stored, on the feed.

Readings come from two places: POST /api/statusline (Claude's statusLine input, handed on by
hooks/statusline.sh) and the engine's Codex transcript events (the rollout's token_count
`rate_limits`). Each is taken by `take`: the Board (core.limits) decides whether it changes
what an account shows; a change is stored (table `limits`, so the gauges survive a restart)
and then sent to every feed client as one `{"type": "limits", "limits": [...]}` message (all
accounts, as GET /api/limits answers). The feed's snapshot carries the same list as `limits`.

Wiring: `load` follows the engine's Codex readings (Engine.follow_limits, ended by `stop`) and
adds `limits` to the feed's snapshot (Feed.add_to_snapshot, for the feed's life).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from purplemux.agents import facts as agent_facts
from purplemux.core import events as ev
from purplemux.core.limits import Board, Reading, dir_label, from_rate_limits
from purplemux.core.model import Session
from purplemux.daemon.engine import Engine
from purplemux.io.settings import Settings
from purplemux.io.store_thread import AsyncStore

log = logging.getLogger(__name__)


def default_account(settings: Settings, agent: str, path: str | None = None) -> str:
    """The account a file of `agent` (a transcript, a rollout) belongs to, when no session
    names it: the account whose dir holds `path`, else the agent's first account (~/.claude ->
    "claude", ~/.codex -> "codex"), so a second config dir's readings get its own label."""
    mine = settings.accounts_of(agent)
    fallback = mine[0].label if mine else dir_label(Path.home() / agent_facts.default_dir(agent))
    return settings.account_of(agent, path) or fallback


def account_for(
    settings: Settings, session: Session | None, agent: str, path: str | None = None
) -> str:
    """A reading's account: the session's own when it is known, else that of its file."""
    if session is not None and session.account:
        return session.account
    return default_account(settings, agent, path or (session.transcript_path if session else None))


class LimitKeeper:
    """The Board of one daemon, with its store and its feed."""

    def __init__(
        self,
        settings: Settings,
        store: AsyncStore,
        engine: Engine,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.store = store
        self.engine = engine
        self.clock = clock
        self.board = Board()
        self._tasks: set[asyncio.Task[None]] = set()
        self._unfollow: Callable[[], None] | None = None
        """Ends following the engine's readings (while loaded and not stopped)."""
        self._in_snapshot = False

    async def load(self) -> None:
        """Adopt the stored readings and follow the engine's Codex readings."""
        records = await self.store.call(lambda s: s.load_limits())
        for record in records:
            try:
                self.board.offer(Reading.from_record(record))
            except (KeyError, TypeError, ValueError, ArithmeticError):
                continue  # another version's, or one no clock shows: the next one replaces it
        self._unfollow = self.engine.follow_limits(self._from_transcript)
        if not self._in_snapshot:
            self._in_snapshot = True
            self.engine.feed.add_to_snapshot(lambda: {"limits": self.to_json()})

    def stop(self) -> None:
        """Stop following the engine's readings (the snapshot keeps showing the board)."""
        if self._unfollow is not None:
            self._unfollow()
            self._unfollow = None

    def to_json(self) -> list[dict[str, Any]]:
        """Every account's reading as shown now (a passed reset reads as reset)."""
        return self.board.to_json(self.clock())

    async def take(self, reading: Reading, source: str | None = None) -> bool:
        """Offer a reading (from the session `source`): stored and sent when it changes what
        its account shows."""
        merged = self.board.offer(reading, source)
        if merged is None:
            return False
        record = merged.to_record()
        await self.store.call(lambda s: s.save_limit(record))
        self.engine.feed.publish({"type": "limits", "limits": self.to_json()})
        return True

    def _from_transcript(self, session: Session, event: ev.TranscriptFacts) -> None:
        if event.rate_limits is None:
            return
        agent = session.agent
        account = account_for(self.settings, session, agent, event.transcript_path)
        reading = from_rate_limits(event.rate_limits, agent, account, event.at)
        if reading is None:
            return
        task = asyncio.get_running_loop().create_task(self._take_logged(reading, session.id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _take_logged(self, reading: Reading, source: str) -> None:
        try:
            await self.take(reading, source)
        except Exception:
            log.warning("could not keep a usage-limit reading", exc_info=True)
