"""Pytest fixtures for the Codex half of the e2e tier (imported by tests/e2e/conftest.py).

- ``codex_bin`` (session): Path of the pinned ``node_modules/.bin/codex`` (installed on
  first use by .ci/install-codex.sh; fails, never skips, when it cannot be).
- ``fake_responses``: a started :class:`FakeResponsesAPI`; every request is recorded.
- ``codex_hook_log``: the :class:`HookLog` the stand-in hook ``record_hook.sh`` appends to.
- ``codex_hook_command``: the command registered for every Codex hook event; defaults to
  the recording hook. Override it (in a test module) to hook in something else, or return
  None for no hooks.
- ``codex_home``: a throw-away :class:`CodexHome` (HOME, CODEX_HOME, project ``proj``) whose
  config.toml points at ``fake_responses`` and whose hooks.json runs ``codex_hook_command``,
  pre-trusted. Change its fields and call ``write()`` before starting Codex for more TOML.
- ``codex_tmux``: the test's private tmux server (:class:`TmuxCodex`) for ``codex_home``;
  its teardown always stops the daemon, kills the updater loop and the server, and fails the
  test (:class:`LeftoverProcesses`) if any process of that CODEX_HOME had to be killed.
- ``start_codex``: a factory ``(*args, cwd=None, env=None, wait_ready=True) -> CodexPane``
  starting ``codex <args>`` in a new pane of ``codex_tmux`` (all panes share the CODEX_HOME,
  hence one daemon); with ``wait_ready`` it returns once the thread has started (the pane
  title is the project name).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Protocol

import pytest

from .codex_harness import CodexHome, CodexPane, TmuxCodex, install_codex, make_codex_home
from .fake_responses import FakeResponsesAPI
from .harness import HarnessError, HookLog, record_timing


class StartCodex(Protocol):
    def __call__(
        self,
        *args: str,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        wait_ready: bool = True,
    ) -> CodexPane: ...


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    """The pinned Codex CLI launcher; installs it (npm) into the cache when missing.

    Fails, never skips: a missing CLI must not turn the e2e tier green."""
    try:
        return install_codex()
    except HarnessError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def fake_responses() -> Iterator[FakeResponsesAPI]:
    with FakeResponsesAPI() as api:
        yield api


@pytest.fixture
def codex_hook_log(tmp_path: Path) -> HookLog:
    return HookLog(tmp_path / "codex-hooks.jsonl")


@pytest.fixture
def codex_hook_command(codex_hook_log: HookLog) -> str | None:
    """The command every Codex hook event runs (None: no hooks.json). Override to test a
    real hook."""
    return codex_hook_log.command


@pytest.fixture
def codex_home(
    tmp_path: Path, fake_responses: FakeResponsesAPI, codex_hook_command: str | None
) -> CodexHome:
    return make_codex_home(tmp_path, fake_responses.base_url, hook_command=codex_hook_command)


@pytest.fixture
def codex_tmux(codex_bin: Path, codex_home: CodexHome) -> Iterator[TmuxCodex]:
    server = TmuxCodex(codex_bin, codex_home)
    yield server
    server.stop()


@pytest.fixture
def start_codex(codex_tmux: TmuxCodex) -> StartCodex:
    def start(
        *args: str,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        wait_ready: bool = True,
    ) -> CodexPane:
        t0 = time.monotonic()
        first = not codex_tmux.panes
        pane = codex_tmux.start_pane(args, cwd=cwd, env=env)
        if wait_ready:
            pane.wait_ready()
            which = "first pane" if first else "later pane"
            record_timing(f"codex start ({which}): spawn -> thread started", time.monotonic() - t0)
        return pane

    return start
