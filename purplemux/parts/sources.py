"""Parts that connect the live sources to the engine: each agent's own (agents/<agent>/live.py:
Claude's session files, jobs and processes; Codex's panes), the transcripts of every agent, and
the recovery of `unknown` sessions.

Each is `async def part(rt)`, run (and restarted) by the supervisor for the daemon's life.
Sources only post typed events; the engine decides. Recovery after a restart needs nobody to
look: once the sources have had a moment to speak, any session still `unknown` is judged by its
agent (its session file, its transcript's tail, its process, its pane), and re-judged on a timer
until resolved.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any

from purplemux.agents import registry
from purplemux.agents.base import Live, settled
from purplemux.core.events import Event
from purplemux.core.model import Session, State
from purplemux.daemon.runtime import Runtime
from purplemux.io.settings import Settings
from purplemux.sources.transcripts import TranscriptTailer

log = logging.getLogger(__name__)

Part = Callable[[Runtime], Coroutine[Any, Any, None]]
"""As the supervisor runs it (parts/supervisor.py)."""

RECOVERY_GRACE = 1.5
"""Seconds after start before an `unknown` is judged: the watchers report first."""
RECOVERY_EVERY = 1.0
SAVE_OFFSETS_EVERY = 2.0
"""Seconds between stores of how far each transcript was read (and at the part's end)."""
OFFSETS_SAVE_TIMEOUT = 0.5
"""Seconds the part's last store of the offsets may take while the daemon stops."""


async def transcripts(rt: Runtime) -> None:
    """Follow each live session's transcript (interrupts, lost Stops, snippet, tokens, model):
    Claude's under its config dir, Codex's rollouts under its home, each with its agent's reader.

    A big Claude transcript is read tail first (state and last answer at once), its history
    summed in the background; how far each was read is stored, so a restart continues there."""
    tailers = _tailers(rt)
    stored = await rt.store.call(lambda s: s.load_transcript_offsets())
    for tailer in tailers.values():
        tailer.remember(dict(stored))

    def tailer_of(session: Session) -> TranscriptTailer | None:
        # The account whose dir holds the file, else the session's, else the agent's first.
        path = session.transcript_path
        label = rt.settings.account_of(session.agent, path) if path else None
        for key in ((session.agent, label), (session.agent, session.account)):
            if key in tailers:
                return tailers[key]
        return next((t for (agent, _), t in tailers.items() if agent == session.agent), None)

    def on_watch(session: Session, path: str | None) -> None:
        tailer = tailer_of(session)
        for other in tailers.values():
            if other is not tailer:
                other.unwatch(session.id)  # (a session never changes agent; a guard only)
        if tailer is None:
            return
        if path:
            tailer.watch(session.id, Path(path))
        else:
            tailer.unwatch(session.id)

    unsubscribe = rt.engine.subscribe(watch=on_watch)
    for session in list(rt.engine.sessions.values()):
        follows = tailer_of(session)
        if follows is not None and session.transcript_path and not session.ended:
            follows.watch(session.id, Path(session.transcript_path))
    try:
        # The history summing and the offset saver are this part's own: in its TaskGroup, so
        # one that crashes ends the part (logged, restarted by the supervisor), never silently.
        async with asyncio.TaskGroup() as group:
            for (agent, label), tailer in tailers.items():
                name = f"{agent}-{label}"
                group.create_task(tailer.backfill(), name=f"transcript-history-{name}")
                group.create_task(_save_offsets(rt, tailer), name=f"transcript-offsets-{name}")
            # The events are followed in the group's body (a sub-task's crash cancels it, and
            # the part ends with that crash, not as if it were being stopped).
            await asyncio.gather(*(_follow(rt, tailer) for tailer in tailers.values()))
    finally:
        unsubscribe()
        for tailer in tailers.values():
            tailer.stop()  # a read or sum still in its thread ends within a block
        rows = [row for tailer in tailers.values() for row in tailer.checkpoint()]
        if rows:
            # Stored even while stopping: the next start resumes here, not from the start.
            try:
                async with asyncio.timeout(OFFSETS_SAVE_TIMEOUT):
                    await asyncio.shield(rt.store.call(lambda s: s.save_transcript_offsets(rows)))
            except Exception:
                log.exception("could not store the transcript offsets")


def _tailers(rt: Runtime) -> dict[tuple[str, str], TranscriptTailer]:
    """One tailer per account of each agent that writes transcripts, over its folder (Claude's
    projects/, Codex's sessions/): a tailer reads only files under its root."""
    out: dict[tuple[str, str], TranscriptTailer] = {}
    for account in rt.settings.accounts:
        spec = registry.get(account.agent).transcripts
        if spec is None:
            continue
        out[(account.agent, account.label)] = TranscriptTailer(
            root=account.dir / spec.folder,
            stats=rt.transcripts,
            reader=spec.reader,
            tail_first=spec.tail_first,
        )
    return out


async def _follow(rt: Runtime, tailer: TranscriptTailer) -> None:
    """Hand one tailer's events to the engine, a batch at a time."""
    async for batch in tailer.events(backfill=False):
        for event in batch[:-1]:
            # A first read of a long transcript gives thousands of events: wait for room in
            # the queue rather than park each one in a task of its own.
            await rt.engine.put(event)
        # Stored before the next batch is asked for: the tailer then counts what it read for
        # this one as safe to resume after.
        await rt.engine.submit(batch[-1])
        del batch  # a catch-up batch can be huge: not kept until the next one comes


async def _save_offsets(rt: Runtime, tailer: TranscriptTailer) -> None:
    """Store how far each transcript was read since the last time: at most every
    SAVE_OFFSETS_EVERY, and only once something was read (no timer while all is quiet)."""
    while True:
        await tailer.read_further.wait()
        await asyncio.sleep(SAVE_OFFSETS_EVERY)  # what is read meanwhile goes in the same store
        tailer.read_further.clear()
        if rows := tailer.checkpoint():
            try:
                await rt.store.call(lambda s: s.save_transcript_offsets(rows))
            except Exception:
                log.exception("could not store the transcript offsets")


async def tmux_clients(rt: Runtime) -> None:
    """The tmux control clients (one per server named so far), for the daemon's life."""
    await rt.tmux.run()


async def recovery(rt: Runtime, lives: Mapping[str, Live]) -> None:
    """Resolve `unknown` sessions, each by its agent's judge (its files, its transcript's tail,
    its process; agents/<agent>/live.py), or as idle when its agent has none running.

    Re-judged every RECOVERY_EVERY while any is unknown; otherwise asleep until one is."""
    someone = asyncio.Event()

    def on_change(session: Session) -> None:
        if session.state is State.UNKNOWN and not session.ended:
            someone.set()

    unsubscribe = rt.engine.subscribe(change=on_change)
    try:
        await asyncio.sleep(RECOVERY_GRACE)
        while True:
            someone.clear()
            unknown = [
                s
                for s in list(rt.engine.sessions.values())
                if s.state is State.UNKNOWN and not s.ended
            ]
            by_agent: dict[str, list[Session]] = {}
            for session in unknown:
                by_agent.setdefault(session.agent, []).append(session)
            judged = 0
            for agent, sessions in by_agent.items():
                live = lives.get(agent)
                judge = live.judge if live is not None else _idle
                for event in await asyncio.to_thread(judge, sessions, time.time()):
                    judged += 1
                    rt.engine.post(event, live=False)
            if judged:
                await asyncio.sleep(RECOVERY_EVERY)
            else:
                await someone.wait()
    finally:
        unsubscribe()


def _idle(sessions: Sequence[Session], now: float) -> list[Event]:
    """Unknown sessions of an agent with no live sources here: nothing says they are busy."""
    return [settled(s, now) for s in sessions]


def parts(settings: Settings) -> list[Part]:
    """The live-source parts, in start order: each agent's own (agents/<agent>/live.py), the
    transcripts of every agent that writes them, and the recovery of `unknown` sessions."""
    lives = {agent.name: agent.live(settings) for agent in registry.all_agents()}

    async def recover(rt: Runtime) -> None:
        await recovery(rt, lives)

    recover.__name__ = "recovery"
    agent_parts: list[Part] = [part for live in lives.values() for part in live.parts]
    return [transcripts, *agent_parts, recover]
