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
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from purplemux.agents.codex.rollout import RolloutReader
from purplemux.core import events as ev
from purplemux.core.events import Event, Source
from purplemux.core.model import Session, State, TmuxLocation
from purplemux.core.spread import spread
from purplemux.daemon.runtime import Runtime
from purplemux.io.settings import Account
from purplemux.io.tmux import TmuxError, run, run_blocking
from purplemux.io.tmux_control import SUBSCRIPTION
from purplemux.io.watch import watch_dirs
from purplemux.sources.claude_jobs import JobWatcher
from purplemux.sources.claude_sessions import SessionFile
from purplemux.sources.codex_panes import AGENT as AGENT_CODEX
from purplemux.sources.codex_panes import (
    REFERENCES,
    TITLE_FORMAT,
    TITLES,
    CodexPanes,
    parse_panes,
    title_watch,
)
from purplemux.sources.processes import Cmdlines, Known, Pane, ProcessPoller, snapshot
from purplemux.sources.transcripts import TranscriptTailer, Turn, read_tail_state, transcript_path

log = logging.getLogger(__name__)

CODEX_FAST = 0.1
"""Seconds between looks at Codex panes while a Codex session waits for input."""
CODEX_SETTLE = 2.0
"""Seconds of quick looks after a Codex TUI exits."""
CODEX_BUSY = 1.0
"""Seconds between looks while a placed Codex session is busy: its title leaving the spinner is
the only sign a start-up, or a failed turn, is over (no hook, and maybe no rollout line)."""
CODEX_QUIET = 5.0
CODEX_QUIET_MAX = 60.0
"""The safety-net look at Codex panes: first after this, doubling while nothing changes."""
CODEX_WALK_EVERY = 60.0
"""The process table is walked at least this often (a TUI on a server nobody named yet)."""
RECOVERY_GRACE = 1.5
"""Seconds after start before an `unknown` is judged: the watchers report first."""
RECOVERY_EVERY = 1.0
MIN_POLL_GAP = 0.3
MAX_POLL_INTERVAL = 60.0
"""The process poll's timer backs off (doubling) up to this while nothing changes."""
SAVE_OFFSETS_EVERY = 2.0
"""Seconds between stores of how far each transcript was read (and at the part's end)."""
OFFSETS_SAVE_TIMEOUT = 0.5
"""Seconds the part's last store of the offsets may take while the daemon stops."""


async def session_files(rt: Runtime) -> None:
    """Claude's own per-process files: discover sessions (hooks or not) and their status."""
    async for batch in rt.session_files.events():
        for event in batch:
            rt.engine.post(_with_transcript(rt, event))


def _with_transcript(rt: Runtime, event: Event) -> Event:
    """A Claude session known only from its file still gets its transcript followed (only
    Claude's transcript path follows from the folder and the id; Codex names its rollout)."""
    known = rt.engine.sessions.get(event.session_id)
    if event.transcript_path or not event.cwd or (known and known.transcript_path):
        return event
    if (event.agent or (known.agent if known else "claude")) != "claude":
        return event
    path = transcript_path(_claude_dir(rt, event, known), event.cwd, event.session_id)
    return replace(event, transcript_path=str(path))


def _claude_dir(rt: Runtime, event: Event, known: Session | None) -> Path:
    """The config dir of the session's account (the event's, else the session's), else the
    first."""
    return rt.settings.account_dir("claude", event.account or (known.account if known else None))


async def claude_jobs(rt: Runtime) -> None:
    """Claude's background jobs (claude --bg, the agent view): each job's state.json, under
    every Claude account's jobs/ (each job's events name that account)."""

    async def follow(account: Account) -> None:
        async for batch in JobWatcher(account.dir / "jobs").events():
            for event in batch:
                rt.engine.post(_with_transcript(rt, replace(event, account=account.label)))

    async with asyncio.TaskGroup() as group:
        for account in rt.settings.accounts_of("claude"):
            group.create_task(follow(account), name=f"claude-jobs-{account.label}")


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
    """One tailer per account: Claude's under its config dir's projects/, Codex's rollouts
    under its home's sessions/ (a tailer reads only files under its root)."""
    out: dict[tuple[str, str], TranscriptTailer] = {}
    for account in rt.settings.accounts:
        if account.agent == "claude":
            out[("claude", account.label)] = TranscriptTailer(
                root=account.dir / "projects", stats=rt.transcripts
            )
        elif account.agent == "codex":
            out[("codex", account.label)] = TranscriptTailer(
                root=account.dir / "sessions",
                stats=rt.transcripts,
                reader=RolloutReader,
                tail_first=False,  # every token_count repeats the totals: read straight through
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


async def processes(rt: Runtime) -> None:
    """The tmux panes and the process tree: pid, pane, alive; gone -> ended.

    Nothing here ticks while nothing happens: a poll runs when a session names a pid or pane
    not matched yet (its session file appeared, a hook came), when a matched process exits (a
    pidfd per process, readable at its exit), and when a tmux server's control client reports
    windows or panes coming and going. The timer (`poll_interval`) is a safety net that doubles
    while polls find nothing new, up to MAX_POLL_INTERVAL."""
    watcher = rt.session_files
    # A spare worker (claude --bg's daemon keeps one ready) runs no session yet: no claim.
    poller = ProcessPoller(lambda: [sf for sf in watcher.known().values() if not sf.spare])
    wake = asyncio.Event()
    looked: dict[str, tuple[object, ...]] = {}
    exits = _ExitWatch(wake.set)

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
                rt.engine.post(_with_transcript(rt, event))
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


class _ExitWatch:
    """A pidfd per followed process on the event loop: its exit wakes the poller (Linux >= 5.3;
    elsewhere the timer alone notices)."""

    def __init__(self, wake: Callable[[], None]) -> None:
        self._wake = wake
        self._fds: dict[int, int] = {}
        self._loop = asyncio.get_running_loop()
        self._usable = hasattr(os, "pidfd_open")

    def follow(self, pids: set[int]) -> None:
        for pid in set(self._fds) - pids:
            self._drop(pid)
        if not self._usable:
            return
        for pid in pids - set(self._fds):
            try:
                fd = os.pidfd_open(pid)
            except ProcessLookupError:
                self._wake()  # gone already: the next poll says so
                continue
            except OSError:
                self._usable = False  # an old kernel, or not allowed: the timer it is
                return
            self._fds[pid] = fd
            self._loop.add_reader(fd, self._exited, pid)

    def _exited(self, pid: int) -> None:
        self._drop(pid)
        self._wake()

    def _drop(self, pid: int) -> None:
        fd = self._fds.pop(pid, None)
        if fd is not None:
            self._loop.remove_reader(fd)
            os.close(fd)

    def close(self) -> None:
        for pid in list(self._fds):
            self._drop(pid)


async def codex_panes(rt: Runtime) -> None:
    """Codex TUIs in tmux panes: each linked to its thread, its title read (sources/codex_panes.py).

    A look is one `list-panes -a` per server through its control client; the process table is
    walked only when the panes changed, a TUI exited, or a Codex session has no pane yet.
    Nothing ticks while nothing happens: a look comes when a Codex session changes (its hooks,
    its rollout), a TUI exits (a pidfd per TUI), tmux says panes came or went, or a TUI opens a
    thread (its reference folder, watched). Only while a Codex session waits for input or works
    are looks timed: every CODEX_FAST while it waits (its title leaving "Action Required" is the
    only sign that the approval was answered), every CODEX_BUSY while it is busy (its title's
    spinner ending is the only sign that a start-up or a failed turn is over). Where every
    server with a Codex pane has taken the title subscription (`title_watch`, tmux 3.2+), tmux
    tells of each title change instead: no timer then while nothing waits for an answer. On a
    server without it (no control client, an old tmux), a safety-net look comes after
    CODEX_QUIET, doubling up to CODEX_QUIET_MAX while looks find nothing new, and every
    CODEX_BUSY while a Codex session is busy; a look walks the process table when the last walk
    is older than CODEX_WALK_EVERY. A TUI on a tmux server nobody named yet is found by the walk
    its thread's reference file calls for; the watch's start walks too (`may_have_opened`), so a
    file written before the watch began is not missed."""
    mine = rt.settings.accounts_of("codex")
    homes = [str(a.dir) for a in mine]
    watcher = CodexPanes(homes, accounts={str(a.dir): a.label for a in mine})
    wake = asyncio.Event()
    walk_now = True
    settle_until = 0.0
    """Looks come every CODEX_FAST until then: a TUI just exited (its pane title and its parent's
    reaping of it follow a moment later)."""

    def exited() -> None:
        nonlocal walk_now, settle_until
        walk_now = True
        settle_until = time.monotonic() + CODEX_SETTLE
        wake.set()

    exits = _ExitWatch(exited)
    cmdlines = Cmdlines()  # (the walks below read a settled process's stat only)
    # (A longer poll_interval, PURPLEMUX_POLL_INTERVAL, makes every safety net slower.)
    first_quiet = quiet = spread(max(CODEX_QUIET, rt.settings.poll_interval), "codex panes")
    quiet_max = max(CODEX_QUIET_MAX, first_quiet)
    sockets: set[str] = {rt.tmux.key(None)}

    def on_change(session: Session) -> None:
        nonlocal walk_now
        if session.agent != "codex" or session.ended:
            return
        if session.tmux is None:
            walk_now = True  # a hook for a thread not placed yet: find its TUI now
        wake.set()  # its hooks or rollout moved it: its pane may say more (/clear, a title)

    def on_tmux(socket: str, line: str) -> None:
        nonlocal walk_now
        if line.startswith(SUBSCRIPTION):
            if line.startswith(f"{SUBSCRIPTION} {TITLES} "):
                wake.set()  # a Codex pane's title changed: look (no walk: the panes are the same)
            return
        if watcher.has_tuis() or any(os.path.isdir(h) for h in homes):
            walk_now = True  # (a machine without Codex walks nothing for a tmux change)
            wake.set()

    async def owner(loc: TmuxLocation, pid: int) -> str | None:
        """Whose the pane is, for the desk: the linked thread, if its title says so now."""
        try:
            raw = await run(loc.socket, "display-message", "-p", "-t", loc.pane, "#{pane_title}")
        except TmuxError:
            return None
        return watcher.owner((loc.socket or "", loc.pane), pid, raw.removesuffix("\n"))

    unsubscribe = rt.engine.subscribe(change=on_change)
    unlisten = rt.tmux.listen(on_tmux)
    unown = rt.desk.owners.watch(AGENT_CODEX, owner)
    last_walk = 0.0

    async def on_thread_opened() -> None:
        # A TUI opening a thread writes a reference file: a Codex TUI started somewhere
        # (maybe on a tmux server nobody named): walk the process table now, no timer needed.
        nonlocal walk_now
        async for changed in watch_dirs(
            lambda: _codex_ref_dirs(homes),
            name="codex threads",
            debounce_ms=20,
            step_ms=500,
            recheck_ms=60_000,
        ):
            if may_have_opened(changed):
                walk_now = True
                wake.set()

    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(on_thread_opened(), name="codex-thread-refs")
            while True:
                wake.clear()
                sockets.update(rt.tmux.clients)
                panes = await _codex_pane_list(rt, sockets)
                # No Codex home on this machine: nothing to look for until a Codex hook comes.
                codex_here = any(os.path.isdir(h) for h in homes)
                stale = codex_here and time.monotonic() - last_walk > CODEX_WALK_EVERY
                if walk_now or stale or watcher.needs_walk(panes):
                    walk_now = False
                    last_walk = time.monotonic()
                    table = await asyncio.to_thread(snapshot, cmdlines)
                    await asyncio.to_thread(watcher.walk, panes, table)
                    for socket in watcher.unplaced_sockets(table, sockets):
                        sockets.add(socket)
                        rt.tmux.want(socket)
                        walk_now = True  # list that server's panes on the next look
                found: list[Event] = []
                if watcher.has_tuis() or watcher.links:
                    found = await asyncio.to_thread(watcher.look, panes, time.time())
                    for event in found:
                        rt.engine.post(_with_transcript(rt, event))
                exits.follow(watcher.tui_pids())
                titles_watched = _watch_titles(rt, sockets, watcher.tui_panes())
                placed = [
                    s.state
                    for s in rt.engine.sessions.values()
                    # (its pane's title is what says it was answered, or is done)
                    if s.agent == "codex" and not s.ended and s.tmux is not None
                ]
                waiting = State.NEEDS_INPUT in placed
                quiet = first_quiet if found else min(quiet * 2, quiet_max)
                settling = time.monotonic() < settle_until
                interval: float | None = CODEX_FAST if waiting or walk_now or settling else quiet
                if titles_watched and interval == quiet:
                    interval = None  # tmux tells of a title's change; pidfds, tmux, refs the rest
                elif State.BUSY in placed and interval == quiet:
                    interval = min(quiet, CODEX_BUSY)
                if interval == quiet and not codex_here and not watcher.has_tuis():
                    interval = None  # woken only by a Codex hook, tmux or a thread opened
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), interval)
    finally:
        exits.close()
        unsubscribe()
        unlisten()
        unown()


def _watch_titles(rt: Runtime, sockets: set[str], panes: Mapping[str, set[str]]) -> bool:
    """Subscribe each server's control client to the titles of its Codex panes (none: drop
    it); True when every server with a Codex pane has taken it (its changes then wake the
    look: no timer needed)."""
    for socket in sockets:
        ids = panes.get(socket)
        rt.tmux.subscribe(socket, TITLES, title_watch(ids) if ids else None)
    return all(rt.tmux.subscribed(s, TITLES) for s, ids in panes.items() if ids)


def may_have_opened(changed: set[str] | None) -> bool:
    """Whether a yield of the reference folders' watch may hide a TUI that opened a thread: a
    reference file or folder written, or a watch (re)started (None: a file written before it
    began, while the daemon started or while the watch moved from the home to the new reference
    folder, is told by nothing else). Not a quiet spell's re-check (empty: a walk of the process
    table each minute would double the safety nets' share), nor other files of a home watched
    until its reference folder exists (its logs)."""
    if changed is None:
        return True
    return any(REFERENCES in path for path in changed)


def _codex_ref_dirs(homes: list[str]) -> set[Path]:
    """Each home's thread reference folder, or the home itself until that folder exists."""
    out: set[Path] = set()
    for home in homes:
        refs = Path(home) / REFERENCES
        if refs.is_dir():
            out.add(refs)
        elif Path(home).is_dir():
            out.add(Path(home))
    return out


async def _codex_pane_list(rt: Runtime, sockets: set[str]) -> list[tuple[Pane, str]]:
    """Every pane of those servers with its title: through each control client, or a tmux
    process where none is attached."""
    out: list[tuple[Pane, str]] = []
    for socket in sorted(sockets):
        args = ["list-panes", "-a", "-F", TITLE_FORMAT]
        if not os.path.exists(socket):
            continue  # no server there (yet): nothing to list, no tmux process to spawn
        lines = await rt.tmux.query(socket, args)
        if lines is None:
            try:
                text = await asyncio.to_thread(run_blocking, socket, *args, timeout=2.0)
            except TmuxError:
                continue
            lines = text.splitlines()
        out.extend(parse_panes(lines, socket))
    return out


async def tmux_clients(rt: Runtime) -> None:
    """The tmux control clients (one per server named so far), for the daemon's life."""
    await rt.tmux.run()


def _known(rt: Runtime) -> dict[str, Known]:
    return {
        s.id: Known(
            pid=s.pid,
            pane=s.tmux.pane if s.tmux else None,
            socket=s.tmux.socket if s.tmux else None,
            alive=s.alive,
        )
        for s in rt.engine.sessions.values()
        # Codex sessions are placed by codex_panes: their processes are not Claude's.
        if not s.ended and s.agent == "claude"
    }


async def recovery(rt: Runtime) -> None:
    """Resolve `unknown` sessions from the file, the transcript tail and the process.

    Re-judged every RECOVERY_EVERY while any is unknown; otherwise asleep until one is."""
    someone = asyncio.Event()

    def on_change(session: Session) -> None:
        if session.state is State.UNKNOWN and not session.ended:
            someone.set()

    unsubscribe = rt.engine.subscribe(change=on_change)
    projects = {a.label: a.dir / "projects" for a in rt.settings.accounts_of("claude")}
    first = rt.settings.claude_dir / "projects"
    try:
        await asyncio.sleep(RECOVERY_GRACE)
        while True:
            someone.clear()
            files = {sf.session_id: sf for sf in rt.session_files.known().values()}
            unknown = [
                s
                for s in list(rt.engine.sessions.values())
                if s.state is State.UNKNOWN
                and not s.ended
                # A Codex session in a pane is judged by its pane title (codex_panes).
                and not (s.agent == "codex" and s.tmux is not None)
            ]
            for session in unknown:
                # Read only under the session's own account's projects/.
                root = projects.get(session.account or "", first)
                event = await asyncio.to_thread(
                    judge, session, files.get(session.id), time.time(), root
                )
                if event is not None:
                    rt.engine.post(event, live=False)
            if unknown:
                await asyncio.sleep(RECOVERY_EVERY)
            else:
                await someone.wait()
    finally:
        unsubscribe()


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


ALL = (session_files, transcripts, processes, codex_panes, recovery, claude_jobs)
"""The live-source parts, in start order."""
