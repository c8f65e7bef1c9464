"""Which process is a Claude Code CLI (the native binary, or node running the npm package)."""

from __future__ import annotations

import os

from purplemux.procinfo import ProcInfo

NAMES = frozenset({"claude", "claude.exe"})


def is_claude(info: ProcInfo) -> bool:
    """A Claude Code CLI: the native binary, or node running the npm package."""
    argv0 = os.path.basename(info.cmdline[0]) if info.cmdline else ""
    if info.name in NAMES or argv0 in NAMES:
        return True
    if info.name.startswith("node") or argv0.startswith("node"):
        return any("claude-code" in arg for arg in info.cmdline[1:])
    return False
