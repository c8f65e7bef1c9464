"""Which process is a Claude Code CLI (the native binary, or node running the npm package)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from purplemux.io.procinfo import ProcInfo, read_proc, start_ticks

NAMES = frozenset({"claude", "claude.exe"})


def is_claude(info: ProcInfo) -> bool:
    """A Claude Code CLI: the native binary, or node running the npm package."""
    argv0 = os.path.basename(info.cmdline[0]) if info.cmdline else ""
    if info.name in NAMES or argv0 in NAMES:
        return True
    if info.name.startswith("node") or argv0.startswith("node"):
        return any("claude-code" in arg for arg in info.cmdline[1:])
    return False


MAX_SESSION_FILE = 1 << 16


def shows(pid: int, dirs: Iterable[Path], session_id: str, job_id: str | None) -> bool | None:
    """Whether the Claude process `pid` is session `session_id`'s, by its own file:
    `sessions/<pid>.json` under one of the config dirs, written by this very process (its
    `procStart`, when given, is the process's start). A background session's attach window
    (`claude attach <job>`, attach.py) is that job's. None: nothing names a session."""
    if job_id is not None:
        read = read_proc(pid)
        args = [a for a in (read[1].split(b"\0") if read else []) if a]
        if len(args) >= 2 and args[-2:] == [b"attach", job_id.encode()]:
            return True
    for folder in dirs:
        try:
            with open(folder / "sessions" / f"{pid}.json", "rb") as f:
                raw = json.loads(f.read(MAX_SESSION_FILE))
        except (OSError, ValueError):
            continue
        if not isinstance(raw, dict) or raw.get("pid", pid) != pid:
            continue
        started = raw.get("procStart")
        ticks = str(started) if isinstance(started, str | int) else ""
        if ticks.isdigit() and start_ticks(pid) != int(ticks):
            continue  # a file left by an earlier process of that pid
        found = raw.get("sessionId")
        if isinstance(found, str) and found:
            return found == session_id
    return None
