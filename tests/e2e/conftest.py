"""Fixtures for the e2e tier: the real Claude Code CLI in a private tmux server, talking to
a local fake Messages API, with hooks registered for every event.

Fixtures (see README.md):

- ``claude_bin`` (session): Path of the pinned claude binary (installed on first use).
- ``fake_api``: a started :class:`FakeAnthropicAPI`; every request is recorded.
- ``hook_log``: the :class:`HookLog` the stand-in hook ``record_hook.sh`` appends to.
- ``hook_command``: the command registered for every hook event; defaults to the recording
  hook. Override this fixture (in a test module or a nested conftest) to hook in the daemon.
- ``claude_home``: a throw-away HOME (:class:`ClaudeHome`) with .claude.json and
  .claude/settings.json set up for ``hook_command``.
- ``start_claude``: a factory ``(*, args=(), env=None, cwd=None, wait_ready=True) ->
  TmuxClaude`` starting claude in its own private tmux server (with ``wait_ready``: returns once
  the idle prompt is on screen and sessions/<pid>.json exists); all are killed at teardown.
- ``claude``: ``start_claude()`` already at its idle prompt.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import pytest

from .fake_api import FakeAnthropicAPI
from .harness import (
    TIMINGS,
    ClaudeHome,
    HarnessError,
    HookLog,
    TmuxClaude,
    install_claude,
    make_claude_home,
    record_timing,
)


class StartClaude(Protocol):
    def __call__(
        self,
        *,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        wait_ready: bool = True,
    ) -> TmuxClaude: ...


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The pinned Claude Code binary; installs it (npm) into the cache when missing.

    Fails, never skips, when it cannot be installed: a missing CLI must not turn the e2e tier
    green."""
    try:
        return install_claude()
    except HarnessError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropicAPI]:
    with FakeAnthropicAPI() as api:
        yield api


@pytest.fixture
def hook_log(tmp_path: Path) -> HookLog:
    return HookLog(tmp_path / "hooks.jsonl")


@pytest.fixture
def hook_command(hook_log: HookLog) -> str:
    """The command every hook event runs. Override to test a real hook."""
    return hook_log.command


@pytest.fixture
def claude_home(tmp_path: Path, hook_command: str) -> ClaudeHome:
    return make_claude_home(tmp_path, hook_command)


@pytest.fixture
def start_claude(
    claude_bin: Path, claude_home: ClaudeHome, fake_api: FakeAnthropicAPI
) -> Iterator[StartClaude]:
    started: list[TmuxClaude] = []

    def start(
        *,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        wait_ready: bool = True,
    ) -> TmuxClaude:
        claude = TmuxClaude(claude_bin, claude_home, fake_api.base_url, args=args, env=env, cwd=cwd)
        started.append(claude)
        t0 = time.monotonic()
        claude.start()
        if wait_ready:
            claude.wait_ready()
            record_timing("start: spawn -> idle prompt on screen", time.monotonic() - t0)
            claude.wait_started()
            record_timing("start: spawn -> sessions/<pid>.json written", time.monotonic() - t0)
        return claude

    yield start
    for claude in started:
        claude.kill()


@pytest.fixture
def claude(start_claude: StartClaude) -> TmuxClaude:
    return start_claude()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not TIMINGS:
        return
    by_name: dict[str, list[float]] = {}
    for name, seconds in TIMINGS:
        by_name.setdefault(name, []).append(seconds)
    terminalreporter.write_sep("-", "e2e timings (Claude Code with the fake API)")
    for name, values in by_name.items():
        terminalreporter.write_line(
            f"{name}: n={len(values)} min={min(values):.2f}s "
            f"median={sorted(values)[len(values) // 2]:.2f}s max={max(values):.2f}s"
        )
