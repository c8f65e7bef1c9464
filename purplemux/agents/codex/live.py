"""Codex's live source: its TUIs in tmux panes, each linked to its thread and its title read
(pane_watch.py), and how a session left `unknown` by a restart is judged again (agents/base.py
`Live`): by its pane's title when it has a pane, as idle when it has none.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from purplemux.agents.base import Daemon, Live, settled
from purplemux.agents.codex.pane_watch import (
    REFERENCES,
    TITLE_FORMAT,
    TITLES,
    CodexPanes,
    parse_panes,
    title_watch,
)
from purplemux.agents.facts import CODEX
from purplemux.core.events import Event
from purplemux.core.model import Session, State, TmuxLocation
from purplemux.core.spread import spread
from purplemux.io.exits import ExitWatch
from purplemux.io.proctable import Cmdlines, Pane, snapshot
from purplemux.io.settings import Settings
from purplemux.io.tmux import TmuxError, run, run_blocking
from purplemux.io.tmux_control import SUBSCRIPTION
from purplemux.io.watch import watch_dirs

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


def live(settings: Settings) -> Live:
    """Codex's live sources for one daemon."""
    return Live(parts=(codex_panes,), judge=judge)


def judge(sessions: Sequence[Session], now: float) -> list[Event]:
    """A Codex session in a pane is judged by its pane's title (codex_panes); one with none
    (its TUI gone while the daemon was down) has nothing left to say it is busy: idle."""
    return [settled(s, now) for s in sessions if s.tmux is None]


async def codex_panes(rt: Daemon) -> None:
    """Codex TUIs in tmux panes: each linked to its thread, its title read (pane_watch.py).

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
    mine = rt.settings.accounts_of(CODEX.name)
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

    exits = ExitWatch(exited)
    cmdlines = Cmdlines()  # (the walks below read a settled process's stat only)
    # (A longer poll_interval, PURPLEMUX_POLL_INTERVAL, makes every safety net slower.)
    first_quiet = quiet = spread(max(CODEX_QUIET, rt.settings.poll_interval), "codex panes")
    quiet_max = max(CODEX_QUIET_MAX, first_quiet)
    sockets: set[str] = {rt.tmux.key(None)}

    def on_change(session: Session) -> None:
        nonlocal walk_now
        if session.agent != CODEX.name or session.ended:
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
    unown = rt.owners.watch(CODEX.name, owner)
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
                        rt.engine.post(event)
                exits.follow(watcher.tui_pids())
                titles_watched = _watch_titles(rt, sockets, watcher.tui_panes())
                placed = [
                    s.state
                    for s in rt.engine.sessions.values()
                    # (its pane's title is what says it was answered, or is done)
                    if s.agent == CODEX.name and not s.ended and s.tmux is not None
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


def _watch_titles(rt: Daemon, sockets: set[str], panes: Mapping[str, set[str]]) -> bool:
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


async def _codex_pane_list(rt: Daemon, sockets: set[str]) -> list[tuple[Pane, str]]:
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
