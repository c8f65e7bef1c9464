"""A stand-in for a background job's worker process (claude --bg), for tests of the daemon's
attach windows: the daemon reads the worker's HOME and start time from /proc."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path


def proc_ticks(pid: int) -> str:
    """/proc/<pid>/stat field 22 (start time in clock ticks), as Claude's session file has it."""
    return Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[19].decode()


def worker_process(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A process standing in for the job's worker, with the session's own HOME (for a
    fixture: `yield from worker_process(tmp_path)`)."""
    home = tmp_path / "user"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    env.pop("CLAUDE_CONFIG_DIR", None)
    proc = subprocess.Popen(["sleep", "600"], env=env)
    yield proc
    proc.kill()
    proc.wait()
