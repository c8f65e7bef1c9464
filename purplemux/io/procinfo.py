"""What a walk of the process table knows of one process (agents/<agent>/process.py says
whether it is that agent's program).

Below the sources and the answering desk alike: the process poller finds sessions' panes with it,
and the desk checks that the program in front of a pane is the session's agent before typing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ProcInfo:
    """What one process-table walk knows of a process."""

    pid: int
    ppid: int
    name: str
    cmdline: tuple[str, ...]
    create_time: float


def read_proc(pid: int | str) -> tuple[bytes, bytes] | None:
    """A process's /proc/<pid>/stat and cmdline (None: it exited, or is not ours to read)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return stat, raw


def start_ticks(pid: int) -> int | None:
    """Field 22 of /proc/<pid>/stat (start time in clock ticks after boot), if readable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = data.rpartition(b")")[2].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def proc_name(stat_head: bytes, cmdline: tuple[str, ...]) -> str:
    """The command name from a stat line's part before its last ')' (the name may hold spaces
    and parentheses). The kernel keeps 15 characters of it; psutil then takes argv[0]'s."""
    name = stat_head.partition(b"(")[2].decode("utf-8", "surrogateescape")
    if len(name) >= 15 and cmdline:
        full = os.path.basename(cmdline[0])
        name = full if full.startswith(name) else name
    return name
