"""Claude Code's live sources: its session files, its background jobs, its processes in panes,
and how a session left `unknown` by a restart is judged again (agents/base.py `Live`).

Each part is `async def part(rt)`, run (and restarted) by the supervisor for the daemon's life;
the session files' watcher is made once per daemon (`live`) and shared by the parts that read
it: the session-file part posts what it says, the process part matches its pids to panes, and
the judge reads a session's file beside its transcript's tail.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from purplemux.agents.base import Daemon, Live
from purplemux.agents.claude.jobs import JobWatcher
from purplemux.agents.claude.poller import Known, ProcessPoller
from purplemux.agents.claude.sessions import SessionFile, SessionFiles, SessionFileWatcher
from purplemux.agents.claude.transcript import read_tail_state, transcript_path
from purplemux.agents.facts import CLAUDE
from purplemux.agents.jsonl import Turn
from purplemux.core import events as ev
from purplemux.core.events import Event, Source
from purplemux.core.model import Session
from purplemux.core.spread import spread
from purplemux.io.exits import ExitWatch
from purplemux.io.settings import Account, Settings
from purplemux.io.tmux_control import SUBSCRIPTION

MIN_POLL_GAP = 0.3
MAX_POLL_INTERVAL = 60.0
"""The process poll's timer backs off (doubling) up to this while nothing changes."""

Files = SessionFiles | SessionFileWatcher


def live(settings: Settings, files: Files | None = None) -> Live:
    """Claude's live sources for one daemon: over one watcher of every config dir's sessions/
    (`files`: a test's own)."""
    watched = files if files is not None else session_files(settings)
    projects = {a.label: a.dir / "projects" for a in settings.accounts_of(CLAUDE.name)}
    first = settings.claude_dir / "projects"

    async def files_part(rt: Daemon) -> None:
        await _session_files(rt, watched)

    async def processes_part(rt: Daemon) -> None:
        await _processes(rt, watched)

    def judge_all(sessions: Sequence[Session], now: float) -> list[Event]:
        found = {sf.session_id: sf for sf in watched.known().values()}  # once for them all
        out = []
        for session in sessions:
            # Read only under the session's own account's projects/.
            root = projects.get(session.account or "", first)
            event = judge(session, found.get(session.id), now, root)
            if event is not None:
                out.append(event)
        return out

    files_part.__name__ = "session_files"
    processes_part.__name__ = "processes"
    return Live(parts=(files_part, claude_jobs, processes_part), judge=judge_all)


def session_files(settings: Settings) -> SessionFiles:
    """The watcher of every Claude config dir's sessions/ folder."""
    return SessionFiles(
        tuple(
            SessionFileWatcher(a.dir / "sessions", account=a.label)
            for a in settings.accounts_of(CLAUDE.name)
        )
    )


async def _session_files(rt: Daemon, files: Files) -> None:
    """Claude's own per-process files: discover sessions (hooks or not) and their status."""
    async for batch in files.events():
        for event in batch:
            rt.engine.post(with_transcript(rt, event))


def with_transcript(rt: Daemon, event: Event) -> Event:
    """A Claude session known only from its file still gets its transcript followed (its
    transcript's path follows from the folder and the id)."""
    known = rt.engine.sessions.get(event.session_id)
    if event.transcript_path or not event.cwd or (known and known.transcript_path):
        return event
    if (event.agent or (known.agent if known else CLAUDE.name)) != CLAUDE.name:
        return event
    path = transcript_path(_claude_dir(rt, event, known), event.cwd, event.session_id)
    return replace(event, transcript_path=str(path))


def _claude_dir(rt: Daemon, event: Event, known: Session | None) -> Path:
    """The config dir of the session's account (the event's, else the session's), else the
    first."""
    return rt.settings.account_dir(CLAUDE.name, event.account or (known.account if known else None))


async def claude_jobs(rt: Daemon) -> None:
    """Claude's background jobs (claude --bg, the agent view): each job's state.json, under
    every Claude account's jobs/ (each job's events name that account)."""

    async def follow(account: Account) -> None:
        async for batch in JobWatcher(account.dir / "jobs").events():
            for event in batch:
                rt.engine.post(with_transcript(rt, replace(event, account=account.label)))

    async with asyncio.TaskGroup() as group:
        for account in rt.settings.accounts_of(CLAUDE.name):
            group.create_task(follow(account), name=f"claude-jobs-{account.label}")


async def _processes(rt: Daemon, files: Files) -> None:
    """The tmux panes and the process tree: pid, pane, alive; gone -> ended.

    Nothing here ticks while nothing happens: a poll runs when a session names a pid or pane
    not matched yet (its session file appeared, a hook came), when a matched process exits (a
    pidfd per process, readable at its exit), and when a tmux server's control client reports
    windows or panes coming and going. The timer (`poll_interval`) is a safety net that doubles
    while polls find nothing new, up to MAX_POLL_INTERVAL."""
    # A spare worker (claude --bg's daemon keeps one ready) runs no session yet: no claim.
    poller = ProcessPoller(lambda: [sf for sf in files.known().values() if not sf.spare])
    wake = asyncio.Event()
    looked: dict[str, tuple[object, ...]] = {}
    exits = ExitWatch(wake.set)

    def on_change(session: Session) -> None:
        if session.tmux and session.tmux.socket:
            poller.add_socket(session.tmux.socket)
            rt.tmux.want(session.tmux.socket)
        if session.ended or session.alive is not None:
            looked.pop(session.id, None)
        elif session.tmux or session.pid:
            # A pane or pid we have not matched yet: look now, not in seconds. Once per place:
            # a pane on a server we cannot reach must not cost a process-table walk per event.
            where = (session.tmux, session.pid)
            if looked.get(session.id) != where:
                looked[session.id] = where
                wake.set()

    def on_tmux(socket: str, line: str) -> None:
        if not line.startswith(SUBSCRIPTION):  # (a watched title: Codex's, not a pane change)
            wake.set()

    unsubscribe = rt.engine.subscribe(change=on_change)
    unlisten = rt.tmux.listen(on_tmux)
    rt.tmux.want(None)
    for socket in poller.sockets():
        rt.tmux.want(socket)
    first = interval = spread(rt.settings.poll_interval, "processes")
    longest = max(rt.settings.poll_interval, MAX_POLL_INTERVAL)
    try:
        while True:
            started = time.monotonic()
            wake.clear()  # before the poll: a session that shows up during it is looked for next
            found = await poller.poll(_known(rt))
            for event in found:
                rt.engine.post(with_transcript(rt, event))
            exits.follow(poller.pids())
            interval = first if found else min(interval * 2, longest)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), interval)
            await asyncio.sleep(max(0.0, MIN_POLL_GAP - (time.monotonic() - started)))
    finally:
        poller.stop()  # a poll still in its thread asks no further server
        exits.close()
        unsubscribe()
        unlisten()


def _known(rt: Daemon) -> dict[str, Known]:
    return {
        s.id: Known(
            pid=s.pid,
            pane=s.tmux.pane if s.tmux else None,
            socket=s.tmux.socket if s.tmux else None,
            alive=s.alive,
        )
        for s in rt.engine.sessions.values()
        # Codex sessions are placed by codex_panes: their processes are not Claude's.
        if not s.ended and s.agent == CLAUDE.name
    }


def judge(
    session: Session, sf: SessionFile | None, now: float, projects: Path | None = None
) -> Event | None:
    """The evidence about an unknown session, as one event stamped now (blocking: reads a file).

    Its transcript is read only if it is a regular file under `projects` (when given).
    """
    path = session.transcript_path
    turn = read_tail_state(Path(path), root=projects) if path else Turn.NONE
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
