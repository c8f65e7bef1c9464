"""A real daemon for tests: `python -m purplemux serve` in a subprocess on a free port."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import pytest

from tests.support.waiting import free_port, wait_for

REPO = Path(__file__).resolve().parents[2]
SERVE = ("-m", "purplemux", "serve")


def fake_command(bin_dir: Path, name: str, script: str) -> str:
    """Write an executable shell script `bin_dir/name` (`script`: what follows `#!/bin/sh`);
    return a PATH that finds it first."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    command = bin_dir / name
    command.write_text("#!/bin/sh\n" + script)
    command.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}"


@dataclass
class Daemon:
    """One `purplemux serve` process with its own home and Claude config dir."""

    home: Path
    claude_dir: Path
    port: int = field(default_factory=free_port)
    env_extra: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None

    @classmethod
    def under(cls, root: Path, home: str = "home", **env: str) -> Self:
        """A daemon, not started, with its home (ROOT/HOME) and Claude dir (ROOT/claude) in ROOT
        and ENV added to its environment."""
        return cls(home=root / home, claude_dir=root / "claude", env_extra=env)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            PURPLEMUX_HOME=str(self.home),
            CLAUDE_CONFIG_DIR=str(self.claude_dir),
            # Codex TUIs elsewhere on this machine (another test's) are not this daemon's.
            CODEX_HOME=str(self.claude_dir.parent / "codex"),
            PURPLEMUX_PORT=str(self.port),
            PYTHONPATH=str(REPO),
        )
        env.update(self.env_extra)
        return env

    def spawn(
        self, *command: str, log_path: Path | None = None, **popen: Any
    ) -> subprocess.Popen[bytes]:
        """Run `python COMMAND` (default: `-m purplemux serve`) in this daemon's environment, its
        output appended to `log_path` (default: daemon-PORT.log beside the home), and return at
        once; `popen`: more arguments for subprocess.Popen (cwd, env, preexec_fn)."""
        self.log_path = log_path or self.home.parent / f"daemon-{self.port}.log"
        popen.setdefault("env", self.env)
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, *(command or SERVE)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                **popen,
            )
        return self.proc

    def start(
        self, *command: str, timeout: float = 60.0, interval: float = 0.02, **popen: Any
    ) -> Self:
        """spawn(), then wait until /api/health answers and the port file is written. `timeout`
        is a deadline for a loaded machine, not a speed target."""
        self.spawn(*command, **popen)
        wait_for(self._healthy, timeout=timeout, interval=interval)
        wait_for(lambda: (self.home / "port").exists())
        return self

    def cli(
        self, *args: str, timeout: float = 60.0, check: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """`purplemux ARGS` as the user runs it on this daemon's machine (its environment)."""
        return subprocess.run(
            [sys.executable, "-m", "purplemux", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=check,
        )

    def _healthy(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"daemon exited: {self.logs()}")
        try:
            with urllib.request.urlopen(self.url + "/api/health", timeout=1) as r:
                # "starting": it answers while its app loads (purplemux.server.starting)
                return bool(r.status == 200 and json.loads(r.read()).get("status") == "ok")
        except (OSError, ValueError):
            return False

    def logs(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path else ""

    @property
    def token(self) -> str:
        return (self.home / "token").read_text().strip()

    def api(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read())

    def sessions(self, all: bool = True) -> list[dict[str, Any]]:
        return list(self.api("GET", "/api/sessions" + ("?all=1" if all else ""))["sessions"])

    def session(self, sid: str) -> dict[str, Any] | None:
        try:
            return dict(self.api("GET", f"/api/sessions/{sid}"))
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            raise

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        self.kill(signal.SIGTERM)


def cli_sees(d: Daemon, monkeypatch: pytest.MonkeyPatch) -> Daemon:
    """Point the CLI run in this process at `d`: its home, Claude and Codex dirs and port,
    through the environment."""
    for key in ("PURPLEMUX_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "PURPLEMUX_PORT"):
        monkeypatch.setenv(key, d.env[key])
    return d
