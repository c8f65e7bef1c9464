"""Helpers for Claude's background sessions (2.1.332: ``claude --bg``, the agent view) in e2e.

- :class:`BackgroundClaude` starts jobs with ``claude --bg`` in a throw-away HOME (no terminal
  needed: it returns in about a second with ``backgrounded · <id>``), reads their job files and
  stops them all, and the Claude daemon that ``--bg`` started, at the end (``claude stop`` per
  job, then the daemon's own "idle 5s" exit, else its pid is killed).
- :class:`AgentView` runs ``claude agents`` (a full-screen TUI) in a private tmux server.

Facts: ../shared/claude-code-bg-and-limits.md, A. Nothing here sleeps a fixed time.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .harness import ClaudeHome, HarnessError, claude_env, wait_until

BACKGROUNDED = re.compile(r"backgrounded · ([0-9a-f]{6,64})")
DAEMON_EXIT_TIMEOUT = 30.0


def both_hooks(first: str, second: str) -> str:
    """A hook command that hands the same stdin to two commands (a recorder and the daemon's
    hook), each silent, exiting 0."""
    return f"p=$(cat); printf '%s' \"$p\" | {first}; printf '%s' \"$p\" | {second}; exit 0"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[0] != b"Z"
    except OSError:
        return False


@dataclass
class BackgroundClaude:
    """``claude --bg`` jobs of one throw-away HOME, all stopped by :meth:`close`."""

    claude_bin: Path
    home: ClaudeHome
    base_url: str
    extra_env: Mapping[str, str] = field(default_factory=dict)
    jobs: list[str] = field(default_factory=list)
    daemon_pids: set[int] = field(default_factory=set)

    @property
    def env(self) -> dict[str, str]:
        return claude_env(self.home.home, self.base_url, extra=self.extra_env)

    def run(self, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        """``claude ARGS`` in this HOME, from the project folder."""
        return subprocess.run(
            [str(self.claude_bin), *args],
            env=self.env,
            cwd=self.home.project,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def start(self, prompt: str, *args: str) -> str:
        """``claude --bg ARGS PROMPT``; the job id it printed."""
        done = self.run("--bg", *args, prompt)
        found = BACKGROUNDED.search(done.stdout)
        self._learn_daemon()
        if done.returncode != 0 or found is None:
            raise HarnessError(
                f"claude --bg failed ({done.returncode}): {done.stdout}{done.stderr}"
            )
        self.jobs.append(found.group(1))
        return found.group(1)

    def job_dir(self, job: str) -> Path:
        return self.home.config_dir / "jobs" / job

    def state(self, job: str) -> dict[str, Any] | None:
        """The job's state.json now (None while it is missing or half-written)."""
        try:
            data = json.loads((self.job_dir(job) / "state.json").read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def wait_state(self, job: str, timeout: float = 60.0, **want: str) -> dict[str, Any]:
        """Until the job's state.json has these values (state=..., tempo=...)."""

        def probe() -> dict[str, Any] | None:
            st = self.state(job)
            return st if st and all(st.get(k) == v for k, v in want.items()) else None

        return wait_until(probe, timeout=timeout, describe=lambda: f"job {job}: {self.state(job)}")

    def session_id(self, job: str) -> str:
        st = self.wait_state(job)
        return str(st["sessionId"])

    def session_files(self) -> list[dict[str, Any]]:
        out = []
        for path in (self.home.config_dir / "sessions").glob("*.json"):
            with contextlib.suppress(OSError, ValueError):
                data = json.loads(path.read_text())
                if isinstance(data, dict):
                    out.append(data)
        return out

    def _learn_daemon(self) -> None:
        """The Claude daemon's pid, from its roster (supervisorPid) or status file."""
        for name in ("daemon/roster.json", "daemon.status.json"):
            with contextlib.suppress(OSError, ValueError):
                data = json.loads((self.home.config_dir / name).read_text())
                pid = data.get("supervisorPid") or data.get("pid")
                if isinstance(pid, int) and pid > 1:
                    self.daemon_pids.add(pid)

    def close(self) -> None:
        """Stop every job, then wait for the Claude daemon to exit (kill it if it does not)."""
        self._learn_daemon()
        for job in self.jobs:
            with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                self.run("stop", job, timeout=30)
        for pid in self.daemon_pids:
            try:
                wait_until(lambda p=pid: not _alive(p), timeout=DAEMON_EXIT_TIMEOUT)
            except TimeoutError:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)


@dataclass
class AgentView:
    """``claude agents`` in a 200x50 pane of a private tmux server."""

    claude_bin: Path
    home: ClaudeHome
    base_url: str
    socket_name: str = field(default_factory=lambda: f"pmx-agents-{secrets.token_hex(4)}")
    pane: str | None = None

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-L", self.socket_name, *args],
            capture_output=True,
            text=True,
            check=check,
            timeout=15,
            env=claude_env(self.home.home, self.base_url),
        )

    def start(self) -> AgentView:
        out = self.tmux(
            "-f", os.devnull, "new-session", "-d", "-s", "agents", "-x", "200", "-y", "50",
            "-c", str(self.home.project), "-P", "-F", "#{pane_id}", "--",
            str(self.claude_bin), "agents",
        )  # fmt: skip
        self.pane = out.stdout.strip()
        return self

    def screen(self) -> str:
        if self.pane is None:
            return ""
        return self.tmux("capture-pane", "-p", "-t", self.pane, check=False).stdout

    def close(self) -> None:
        self.tmux("kill-server", check=False)
