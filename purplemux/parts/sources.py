"""Parts that connect the live sources (session files, transcripts, processes) to the engine.

Each is `async def part(rt)`, run (and restarted) by the supervisor for the daemon's life.
Sources only post typed events; the engine decides. Recovery after a restart needs nobody to
look: once the sources have had a moment to speak, any session still `unknown` is judged from
its session file, its transcript tail and its process, and re-judged on a timer until resolved.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from purplemux import events as ev
from purplemux.events import Event, Source
from purplemux.model import Session, State
from purplemux.runtime import Runtime
from purplemux.sources.claude_sessions import SessionFile
from purplemux.sources.processes import Known, ProcessPoller
from purplemux.sources.transcripts import TranscriptTailer, Turn, read_tail_state, transcript_path

log = logging.getLogger(__name__)

RECOVERY_GRACE = 1.5
"""Seconds after start before an `unknown` is judged: the watchers report first."""
RECOVERY_EVERY = 1.0
MIN_POLL_GAP = 0.3


async def session_files(rt: Runtime) -> None:
    """Claude's own per-process files: discover sessions (hooks or not) and their status."""
    async for batch in rt.session_files.events():
        for event in batch:
            rt.engine.post(_with_transcript(rt, event))


def _with_transcript(rt: Runtime, event: Event) -> Event:
    """A session known only from its file still gets its transcript followed."""
    known = rt.engine.sessions.get(event.session_id)
    if event.transcript_path or not event.cwd or (known and known.transcript_path):
        return event
    path = transcript_path(rt.settings.claude_dir, event.cwd, event.session_id)
    return replace(event, transcript_path=str(path))


async def transcripts(rt: Runtime) -> None:
    """Follow each live session's transcript (interrupts, lost Stops, snippet, tokens, model)."""
    tailer = TranscriptTailer()

    def on_watch(session: Session, path: str | None) -> None:
        if path:
            tailer.watch(session.id, Path(path))
        else:
            tailer.unwatch(session.id)

    rt.engine.on_watch.append(on_watch)
    for session in list(rt.engine.sessions.values()):
        if session.transcript_path and not session.ended:
            tailer.watch(session.id, Path(session.transcript_path))
    try:
        async for batch in tailer.events():
            for event in batch:
                # A first read of a long transcript gives thousands of events: wait for room
                # in the queue rather than park each one in a task of its own.
                await rt.engine.put(event)
            del batch  # a catch-up batch can be huge: not kept until the next one comes
    finally:
        rt.engine.on_watch.remove(on_watch)


async def processes(rt: Runtime) -> None:
    """The tmux panes and the process tree: pid, pane, alive; gone -> ended."""
    watcher = rt.session_files
    poller = ProcessPoller(lambda: watcher.known().values())
    wake = asyncio.Event()
    looked: dict[str, tuple[object, ...]] = {}

    def on_change(session: Session) -> None:
        if session.tmux and session.tmux.socket:
            poller.add_socket(session.tmux.socket)
        if session.ended or session.alive is not None:
            looked.pop(session.id, None)
        elif session.tmux or session.pid:
            # A pane or pid we have not matched yet: look now, not in seconds. Once per place:
            # a pane on a server we cannot reach must not cost a process-table walk per event.
            where = (session.tmux, session.pid)
            if looked.get(session.id) != where:
                looked[session.id] = where
                wake.set()

    rt.engine.on_change.append(on_change)
    try:
        while True:
            started = time.monotonic()
            wake.clear()  # before the poll: a session that shows up during it is looked for next
            for event in await poller.poll(_known(rt)):
                rt.engine.post(_with_transcript(rt, event))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), rt.settings.poll_interval)
            await asyncio.sleep(max(0.0, MIN_POLL_GAP - (time.monotonic() - started)))
    finally:
        rt.engine.on_change.remove(on_change)


def _known(rt: Runtime) -> dict[str, Known]:
    return {
        s.id: Known(
            pid=s.pid,
            pane=s.tmux.pane if s.tmux else None,
            socket=s.tmux.socket if s.tmux else None,
            alive=s.alive,
        )
        for s in rt.engine.sessions.values()
        if not s.ended
    }


async def recovery(rt: Runtime) -> None:
    """Resolve `unknown` sessions from the file, the transcript tail and the process."""
    await asyncio.sleep(RECOVERY_GRACE)
    while True:
        files = {sf.session_id: sf for sf in rt.session_files.known().values()}
        for session in list(rt.engine.sessions.values()):
            if session.state is State.UNKNOWN and not session.ended:
                event = await asyncio.to_thread(judge, session, files.get(session.id), time.time())
                if event is not None:
                    rt.engine.post(event, live=False)
        await asyncio.sleep(RECOVERY_EVERY)


def judge(session: Session, sf: SessionFile | None, now: float) -> Event | None:
    """The evidence about an unknown session, as one event stamped now (blocking: reads a file)."""
    turn = read_tail_state(Path(session.transcript_path)) if session.transcript_path else Turn.NONE
    common: dict[str, Any] = {
        "session_id": session.id,
        "at": now,
        "id": f"recover:{session.id}:{now}",
    }
    if sf is not None and sf.status == "busy":
        return ev.StatusBusy(**common, source=Source.SESSION_FILE, pid=sf.pid)
    if sf is not None and sf.status == "waiting":
        return ev.StatusWaiting(
            **common, source=Source.SESSION_FILE, pid=sf.pid, waiting_for=sf.waiting_for
        )
    if turn is Turn.FINISHED:
        return ev.Stop(**common, source=Source.TRANSCRIPT)
    if turn is Turn.FAILED:
        return ev.StopFailure(**common, source=Source.TRANSCRIPT, error="the last turn failed")
    if turn is Turn.INTERRUPTED:
        return ev.Interrupt(**common, source=Source.TRANSCRIPT)
    if turn is Turn.IN_PROGRESS and sf is None and session.alive is not False:
        return ev.StatusBusy(**common, source=Source.TRANSCRIPT)
    # An idle file, or nothing left to say a turn is running: it is not busy.
    return ev.StatusIdle(**common, source=Source.SESSION_FILE if sf else Source.DAEMON)


ALL = (session_files, transcripts, processes, recovery)
"""The live-source parts, in start order."""
