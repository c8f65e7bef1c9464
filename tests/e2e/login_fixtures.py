"""Pytest fixture for Claude under each login (imported by tests/e2e/conftest.py).

- ``start_login``: a factory ``(login, *, env=None, args=()) -> LoggedIn`` starting the real
  Claude of ``login`` ("apikey", "gateway", "subscription"; logins.py) in its own throw-away
  HOME (``tmp_path/<login>``; call it again with another login for a second HOME) and its own
  private tmux server, with the recording hook for every event and the recording statusLine
  command; returns once the idle prompt is on screen and sessions/<pid>.json exists. Every
  Claude it started is killed at teardown.

Why a factory of its own rather than ``claude_home``/``start_claude``: those are one HOME per
test with an API key; the limit tests compare logins side by side.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pytest

from .fake_api import FakeAnthropicAPI
from .harness import ClaudeHome, HookCall, HookLog, TmuxClaude, make_claude_home, read_transcript
from .statusline import StatusLineLog


@dataclass
class LoggedIn:
    """One Claude of one login, with its hook and statusLine recorders."""

    login: str
    claude: TmuxClaude
    home: ClaudeHome
    hooks: HookLog
    statusline: StatusLineLog

    def transcript_path(self) -> Path:
        start = self.hooks.wait_for("SessionStart")
        return Path(str(start.get("transcript_path")))

    def transcript(self) -> list[dict[str, Any]]:
        return read_transcript(self.transcript_path())

    def turn(self, prompt: str, event: str = "Stop", timeout: float = 30) -> HookCall:
        """Send ``prompt``; the hook ``event`` (Stop / StopFailure) that ends its turn."""
        n = len(self.hooks)
        self.claude.send_text(prompt)
        return self.hooks.wait_for(event, since=n, timeout=timeout)


class StartLogin(Protocol):
    def __call__(
        self, login: str, *, env: Mapping[str, str] | None = None, args: Sequence[str] = ()
    ) -> LoggedIn: ...


@pytest.fixture
def start_login(
    tmp_path: Path, claude_bin: Path, fake_api: FakeAnthropicAPI
) -> Iterator[StartLogin]:
    started: list[TmuxClaude] = []

    def start(
        login: str, *, env: Mapping[str, str] | None = None, args: Sequence[str] = ()
    ) -> LoggedIn:
        root = tmp_path / login
        hooks = HookLog(root / "hooks.jsonl")
        statusline = StatusLineLog(root / "statusline.jsonl")
        home = make_claude_home(
            root, hooks.command, login=login, statusline_command=statusline.command
        )
        claude = TmuxClaude(claude_bin, home, fake_api.base_url, args=args, env=env, login=login)
        started.append(claude)
        claude.start()
        claude.wait_ready(timeout=60)
        claude.wait_started(timeout=60)
        return LoggedIn(login, claude, home, hooks, statusline)

    yield start
    for claude in started:
        claude.kill()
