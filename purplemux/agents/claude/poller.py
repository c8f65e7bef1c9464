"""Which Claude process runs which session, and in which pane: the process poller over the
process table (io/proctable.py) and Claude's session files' claims."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from purplemux.agents.claude.process import is_claude
from purplemux.core.events import Event, ProcessGone, ProcessSeen, Source
from purplemux.core.model import TmuxLocation
from purplemux.io import fd_shortage as fdlimit
from purplemux.io.proctable import (
    Cmdlines,
    Pane,
    ProcessTable,
    find_under,
    list_panes,
    snapshot,
    socket_from_tmux_env,
    tmux_env,
)

log = logging.getLogger(__name__)

START_SLACK = 1.0
"""Seconds two readings of one process's start time may differ (boot time is re-derived)."""


def find_claude_under(pid: int, table: ProcessTable) -> int | None:
    """The outermost Claude process at pid or below it (breadth first), if any."""
    return find_under(pid, table, is_claude)


class SessionClaim(Protocol):
    """A session file's word that a pid runs a session (claude_sessions.SessionFile fits)."""

    @property
    def pid(self) -> int: ...

    @property
    def session_id(self) -> str: ...

    @property
    def cwd(self) -> str | None: ...

    def started_as(self, create_time: float) -> bool: ...


@dataclass(frozen=True, slots=True)
class Known:
    """What the engine knows of a live session: pid, the pane its hooks report, alive."""

    pid: int | None = None
    pane: str | None = None
    socket: str | None = None
    alive: bool | None = None


_Found = tuple[int, float, TmuxLocation | None]


class ProcessPoller:
    """Matches sessions to Claude processes and panes; reports them found, moved or gone."""

    def __init__(
        self,
        claims: Callable[[], Iterable[SessionClaim]] | None = None,
        *,
        sockets: Iterable[str] = (),
        default_socket: bool = True,
        tmux: str = "tmux",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._claims = claims or (lambda: ())
        self._sockets: list[str | None] = [None] if default_socket else []
        self._sockets += [s for s in sockets if s not in self._sockets]
        self._tmux = tmux
        self._clock = clock
        self._seen: dict[str, tuple[int, float, TmuxLocation | None]] = {}
        self._lock = asyncio.Lock()
        self._asked: set[int] = set()  # pids whose environment was read for $TMUX
        self._cmdlines = Cmdlines()  # (each walk reads a settled process's stat only)
        self._fds = fdlimit.limiter()  # running out of descriptors, said once a while
        self._stop = threading.Event()

    def stop(self) -> None:
        """Stop polling: a poll in its thread asks no further tmux server (each call is bounded
        by its timeout), so the daemon's exit never waits on several wedged servers."""
        self._stop.set()

    def pids(self) -> set[int]:
        """The Claude processes matched to a session by the last polls."""
        return {pid for pid, _, _ in self._seen.values()}

    def sockets(self) -> list[str]:
        """The tmux servers' socket paths this poller asks (not the default one)."""
        return [s for s in self._sockets if s]

    def add_socket(self, path: str) -> None:
        """Also query the tmux server at this socket path."""
        if path and path not in self._sockets:
            self._sockets.append(path)

    def panes(self, extra: Iterable[str | None] = ()) -> list[Pane]:
        """Panes of every known server, each pane once (blocking)."""
        out: dict[tuple[str, str], Pane] = {}
        for sock in dict.fromkeys([*self._sockets, *extra]):
            if self._stop.is_set():
                break
            for pane in list_panes(sock, tmux=self._tmux):
                out.setdefault((pane.socket, pane.pane_id), pane)
        return list(out.values())

    async def poll(self, known_sessions: Mapping[str, Known]) -> list[Event]:
        """One look at processes and panes; [] if a poll is already running."""
        if self._lock.locked():
            return []  # the previous poll is still out: a second one would only repeat it
        async with self._lock:
            try:
                claims = list(self._claims())
                return await asyncio.to_thread(self._poll, dict(known_sessions), claims)
            except Exception as exc:
                if fdlimit.exhausted(exc):
                    fdlimit.say("process poll", exc, self._fds)  # once, not every poll
                else:
                    log.warning("process poll failed: %s", exc)
                return []

    def _learn_sockets(self, claims: list[SessionClaim]) -> None:
        """A Claude without our hooks never names its tmux server: its environment does."""
        for claim in claims:
            if claim.pid in self._asked:
                continue
            self._asked.add(claim.pid)
            socket = socket_from_tmux_env(tmux_env(claim.pid))
            if socket:
                self.add_socket(socket)
        if len(self._asked) > 10_000:
            self._asked.clear()

    def _poll(self, known: dict[str, Known], claims: list[SessionClaim]) -> list[Event]:
        self._learn_sockets(claims)
        table = snapshot(self._cmdlines)
        panes = self.panes(k.socket for k in known.values() if k.socket)
        now = self._clock()
        in_pane: dict[tuple[str, str], int] = {}
        pane_of: dict[int, Pane] = {}
        for pane in panes:
            pid = find_claude_under(pane.pid, table)
            if pid is not None:
                in_pane[(pane.socket, pane.pane_id)] = pid
                pane_of.setdefault(pid, pane)

        def found(pid: int) -> _Found:
            pane = pane_of.get(pid)
            return pid, table.procs[pid].create_time, pane.location() if pane else None

        now_found: dict[str, _Found] = {}
        owner: dict[int, str] = {}
        # 2.1.332 writes its session file before it has a status: a session this poller finds
        # first must come with the folder its file names, or it is listed without one.
        cwd_of: dict[str, str] = {}
        for claim in claims:
            info = table.procs.get(claim.pid)
            if info is not None and claim.started_as(info.create_time):
                now_found[claim.session_id] = found(claim.pid)
                owner[claim.pid] = claim.session_id
                if claim.cwd:
                    cwd_of[claim.session_id] = claim.cwd
        for sid, k in known.items():
            if sid in now_found:
                continue
            pid = None
            if k.pane:
                pid = next(
                    (
                        p
                        for (sock, pane_id), p in in_pane.items()
                        if pane_id == k.pane and (k.socket is None or sock == k.socket)
                    ),
                    None,
                )
            if pid is None and k.pid is not None and k.pid in table.procs:
                pid = k.pid if is_claude(table.procs[k.pid]) else None
            if pid is not None and owner.get(pid, sid) == sid:
                now_found[sid] = found(pid)

        out: list[Event] = []
        gone: set[str] = set()
        for sid, (pid, created, _) in list(self._seen.items()):
            info = table.procs.get(pid)
            reused = info is None or abs(info.create_time - created) > START_SLACK
            # After /clear the process's file names another session: this one is over.
            moved_on = owner.get(pid, sid) != sid
            if reused or moved_on:
                out.append(self._gone(sid, pid, created, now))
                gone.add(sid)
                del self._seen[sid]
        for sid, k in known.items():
            fresh = sid not in self._seen and sid not in gone and sid not in now_found
            if k.alive and k.pid is not None and fresh:
                info = table.procs.get(k.pid)
                if info is None or not is_claude(info):
                    # Seen alive by an earlier run of the daemon and gone since.
                    out.append(self._gone(sid, k.pid, 0.0, now))
        for sid, fact in now_found.items():
            if self._seen.get(sid) != fact:
                self._seen[sid] = fact
                pid, created, loc = fact
                where = f"{loc.socket}:{loc.session}:{loc.window}:{loc.pane}" if loc else "-"
                out.append(
                    ProcessSeen(
                        session_id=sid,
                        at=now,
                        id=f"ps:{sid}:{pid}:{created:.2f}:{where}",
                        source=Source.PROCESS,
                        pid=pid,
                        tmux=loc,
                        cwd=cwd_of.get(sid),
                    )
                )
        return out

    def _gone(self, sid: str, pid: int, created: float, now: float) -> Event:
        return ProcessGone(
            session_id=sid,
            at=now,
            id=f"pg:{sid}:{pid}:{created:.2f}",
            source=Source.PROCESS,
            pid=pid,
        )
