"""What a walk of the process table knows of one process, and whether it is a Claude Code CLI.

Below the sources and the answering desk alike: the process poller finds sessions' panes with it,
and the desk checks that the program in front of a pane is Claude before typing into it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

CLAUDE_NAMES = frozenset({"claude", "claude.exe"})


@dataclass(frozen=True, slots=True)
class ProcInfo:
    """What one process-table walk knows of a process."""

    pid: int
    ppid: int
    name: str
    cmdline: tuple[str, ...]
    create_time: float


def is_claude(info: ProcInfo) -> bool:
    """A Claude Code CLI: the native binary, or node running the npm package."""
    argv0 = os.path.basename(info.cmdline[0]) if info.cmdline else ""
    if info.name in CLAUDE_NAMES or argv0 in CLAUDE_NAMES:
        return True
    if info.name.startswith("node") or argv0.startswith("node"):
        return any("claude-code" in arg for arg in info.cmdline[1:])
    return False
