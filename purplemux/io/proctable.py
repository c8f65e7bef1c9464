"""tmux panes and the process tree, walked: every process's name, argv and parent, every pane's
first process, and the walk from a pane down to the program an agent runs in it (`find_under`)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psutil  # type: ignore[import-untyped]  # psutil ships no type hints

from purplemux.core.model import TmuxLocation
from purplemux.io.procinfo import ProcInfo, proc_name
from purplemux.io.tmux import TmuxError, run_blocking

PANE_FORMAT = "#{pane_id}\t#{pane_pid}\t#{session_name}\t#{window_index}\t#{socket_path}"


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


def environ(pid: int, names: tuple[str, ...]) -> dict[str, bytes] | None:
    """Those variables of a running process's environment, as bytes (Linux /proc; None elsewhere
    or when it cannot be read; a variable it lacks is not in the result).

    Read as the process table is (_read: no buffered file, no 1 MiB buffer made for a few KiB)
    and searched, not split: a start reads every live session's (500 in the 10k world)."""
    data = _read(f"/proc/{pid}/environ", whole=True)
    if data is None:
        return None
    out: dict[str, bytes] = {}
    for name in names:
        key = name.encode() + b"="
        if data.startswith(key):
            start = len(key)
        else:
            at = data.find(b"\0" + key)
            if at < 0:
                continue
            start = at + 1 + len(key)
        end = data.find(b"\0", start)
        out[name] = data[start : end if end >= 0 else len(data)]
    return out


def tmux_env(pid: int) -> str | None:
    """$TMUX of a running process (None elsewhere or when it cannot be read)."""
    found = (environ(pid, ("TMUX",)) or {}).get("TMUX")
    return found.decode("utf-8", "replace") if found is not None else None


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
