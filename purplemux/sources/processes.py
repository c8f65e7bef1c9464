"""tmux panes and the process tree: which Claude process runs which session, and where."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import psutil  # type: ignore[import-untyped]  # psutil ships no type hints

from purplemux.agents.claude.process import is_claude
from purplemux.core.events import Event, ProcessGone, ProcessSeen, Source
from purplemux.core.model import TmuxLocation
from purplemux.io import fd_shortage as fdlimit
from purplemux.io.procinfo import ProcInfo, proc_name
from purplemux.io.tmux import TmuxError, run_blocking

log = logging.getLogger(__name__)

PANE_FORMAT = "#{pane_id}\t#{pane_pid}\t#{session_name}\t#{window_index}\t#{socket_path}"
START_SLACK = 1.0
"""Seconds two readings of one process's start time may differ (boot time is re-derived)."""


@dataclass(frozen=True, slots=True)
class Pane:
    """One tmux pane: its id, the pid of its own process, and where it sits."""

    pane_id: str
    pid: int
    session: str
    window: str
    socket: str

    def location(self) -> TmuxLocation:
        """The pane as the session record shows it."""
        return TmuxLocation(self.pane_id, self.socket, self.session, self.window)


@dataclass(slots=True)
class ProcessTable:
    """A snapshot of all processes, with a parent -> children index."""

    procs: dict[int, ProcInfo] = field(default_factory=dict)
    children: dict[int, list[int]] = field(default_factory=dict)


def socket_from_tmux_env(value: str | None) -> str | None:
    """The socket path in a $TMUX value ("path,server-pid,session")."""
    return (value.split(",", 1)[0] or None) if value else None


def tmux_env(pid: int) -> str | None:
    """$TMUX of a running process (Linux /proc; None elsewhere or when it cannot be read).

    Read as the process table is (_read: no buffered file, no 1 MiB buffer made for a few KiB)
    and searched, not split: a start reads every live session's (500 in the 10k world)."""
    data = _read(f"/proc/{pid}/environ", whole=True)
    if not data:
        return None
    if data.startswith(b"TMUX="):
        start = 5
    else:
        at = data.find(b"\0TMUX=")
        if at < 0:
            return None
        start = at + 6
    end = data.find(b"\0", start)
    return data[start : end if end >= 0 else len(data)].decode("utf-8", "replace")


def list_panes(
    socket: str | None = None, *, tmux: str = "tmux", timeout: float = 2.0
) -> list[Pane]:
    """Every pane of one tmux server, in one call; [] if tmux or its server is not there."""
    try:
        out = run_blocking(
            socket, "list-panes", "-a", "-F", PANE_FORMAT, timeout=timeout, tmux=tmux
        )
    except TmuxError:
        return []  # no tmux binary, a hung server, "no server running" and the like
    panes: list[Pane] = []
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) != 5 or not parts[1].isdigit():
            continue
        pane_id, pid, session, window, path = parts
        panes.append(Pane(pane_id, int(pid), session, window, path or socket or ""))
    return panes


def snapshot(known: Cmdlines | None = None) -> ProcessTable:
    """All processes in one walk (children(recursive=True) per pane costs far more); `known`:
    the argv of processes read by an earlier walk of the same caller, kept and reused."""
    if os.path.isdir("/proc/self"):
        try:
            return _proc_snapshot(known)
        except (OSError, ValueError, IndexError):
            pass  # not the /proc we know: psutil's walk below
    return _psutil_snapshot()


SETTLED_ARGV = 10.0
"""Seconds a process has run before its argv is taken as settled: a program may rewrite its
own (node's process.title) as it starts, but an exec changes its command name, which is read
again every walk."""


class Cmdlines:
    """The argv of each process a walk read, by pid, with the stat fields it was read under
    (command name, start time): the next walk reads a known, settled process's stat only.

    One per caller (the process poller, the Codex panes' watcher): walks run in worker threads,
    each caller's one at a time."""

    __slots__ = ("by_pid",)

    def __init__(self) -> None:
        self.by_pid: dict[int, tuple[bytes, bytes, tuple[str, ...]]] = {}


def _read(path: str, whole: bool) -> bytes | None:
    """A /proc file's bytes (one read of a stat line; to the end for `whole`); None if gone."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        data = os.read(fd, 4096)
        if whole and len(data) == 4096:
            chunks = [data]
            while chunk := os.read(fd, 65536):
                chunks.append(chunk)
            data = b"".join(chunks)
        return data
    except OSError:
        return None
    finally:
        os.close(fd)


def _proc_cmdline(data: str) -> tuple[str, ...]:
    """argv from /proc/<pid>/cmdline, split as psutil does (some programs rewrite it)."""
    if not data:
        return ()
    sep = "\0" if data.endswith("\0") else " "
    if data.endswith(sep):
        data = data[:-1]
    args = data.split(sep)
    if sep == "\0" and len(args) == 1 and " " in data:
        args = data.split(" ")
    return tuple(args)


def _proc_snapshot(known: Cmdlines | None = None) -> ProcessTable:
    """Linux: two reads per process (stat, cmdline), the same facts as psutil's walk gives;
    one (stat) for a process `known` has read before under the same name and start time.

    psutil's accessors read /proc several times per process; on a machine with hundreds of
    processes, polled every few seconds, that walk was most of the daemon's idle CPU."""
    boot = float(psutil.boot_time())
    ticks = float(os.sysconf("SC_CLK_TCK"))
    settled_before = (time.time() - boot - SETTLED_ARGV) * ticks
    before = known.by_pid if known is not None else {}
    kept: dict[int, tuple[bytes, bytes, tuple[str, ...]]] = {}
    table = ProcessTable()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        stat = _read(f"/proc/{entry}/stat", whole=False)
        if stat is None:
            continue  # it exited meanwhile, or is not ours to read
        pid = int(entry)
        # The command name may hold spaces and parentheses: it ends at the last ')'.
        head, _, rest = stat.rpartition(b")")
        fields = rest.split()
        ppid, started = int(fields[1]), int(fields[19])
        old = before.get(pid)
        if old is not None and old[0] == head and old[1] == fields[19]:
            cmdline = old[2]
        else:
            raw = _read(f"/proc/{entry}/cmdline", whole=True)
            if raw is None:
                continue
            cmdline = _proc_cmdline(raw.decode("utf-8", "surrogateescape"))
        if known is not None and started < settled_before:
            kept[pid] = (head, fields[19], cmdline)
        name = proc_name(head, cmdline)
        table.procs[pid] = ProcInfo(pid, ppid, name, cmdline, boot + started / ticks)
        table.children.setdefault(ppid, []).append(pid)
    if known is not None:
        known.by_pid = kept
    return table


def _psutil_snapshot() -> ProcessTable:
    """All processes from one psutil walk (other systems than Linux)."""
    table = ProcessTable()
    for proc in psutil.process_iter(["pid", "ppid", "name", "cmdline", "create_time"]):
        info = proc.info
        pid, ppid = info.get("pid"), info.get("ppid")
        if not isinstance(pid, int):
            continue
        ppid = ppid if isinstance(ppid, int) else 0
        table.procs[pid] = ProcInfo(
            pid,
            ppid,
            info.get("name") or "",
            tuple(info.get("cmdline") or ()),
            float(info.get("create_time") or 0.0),
        )
        table.children.setdefault(ppid, []).append(pid)
    return table


def find_under(pid: int, table: ProcessTable, wanted: Callable[[ProcInfo], bool]) -> int | None:
    """The outermost process at pid or below it (breadth first) that is `wanted`, if any."""
    queue, seen = [pid], set()
    while queue:
        current = queue.pop(0)
        if current in seen:
            continue
        seen.add(current)
        info = table.procs.get(current)
        if info is not None and wanted(info):
            return current
        queue.extend(table.children.get(current, ()))
    return None


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
