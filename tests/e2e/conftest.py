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

For tests of the real daemon (``test_daemon_e2e.py``):

- ``purplemux_daemon``: a started ``purplemux serve`` (:class:`tests.daemon.Daemon`) with home
  ``tmp_path/"pmx"`` and ``CLAUDE_CONFIG_DIR`` = the ``.claude`` folder of ``claude_home``'s
  HOME. It does not start by itself: override ``hook_command`` with ``daemon_hook_command`` (or
  request it) so it starts before Claude does.
- ``daemon_hook_command``: the installed status hook's command line for that daemon.
- ``connect_feed``: a factory ``(daemon) -> FeedRecorder``, a WebSocket client of
  ``/api/stream`` recording every message with its receive time; closed at teardown.
- ``start_claude(..., window_of=other)`` starts Claude in a new window of ``other``'s private
  tmux server (same socket) instead of a server of its own.

For the real Codex CLI (codex_fixtures.py, imported here): ``codex_bin`` (session),
``fake_responses``, ``codex_hook_log``, ``codex_hook_command``, ``codex_home``, ``codex_tmux``
and ``start_codex(*args, cwd=None, env=None, wait_ready=True) -> CodexPane``.

For Claude under each login (login_fixtures.py): ``start_login(login, *, env=None, args=())
-> LoggedIn``, one HOME and tmux server per login, with hook and statusLine recorders.

For the browser tests (``-m browser``):

- ``chromium`` (module): the system Chromium, launched through Playwright's sync API.
- ``page``: a fresh (incognito) context's page per test, closed at teardown.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pytest
from playwright.sync_api import Browser, Page, sync_playwright
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from purplemux.agents import install
from purplemux.agents.claude import install as claude_install
from tests.chromium import CHROMIUM, LAUNCH_ARGS, require
from tests.support import Daemon
from tests.support.browser import new_page

from .codex_fixtures import (  # noqa: F401 - fixtures, found by name
    codex_bin,
    codex_home,
    codex_hook_command,
    codex_hook_log,
    codex_tmux,
    fake_responses,
    start_codex,
)
from .fake_api import FakeAnthropicAPI
from .harness import (
    ClaudeHome,
    HarnessError,
    HookLog,
    SessionStatusWatcher,
    TmuxClaude,
    _alive,
    _kill_pid,
    install_claude,
    make_claude_home,
    record_timing,
    wait_until,
)
from .login_fixtures import start_login  # noqa: F401 - a fixture, found by name
from .versions import VERSIONS, Profile, profile


class StartClaude(Protocol):
    def __call__(
        self,
        *,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        wait_ready: bool = True,
        window_of: TmuxClaude | None = None,
    ) -> TmuxClaude: ...


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test that starts Claude runs once per release of .ci/claude-versions, or on the
    ones its ``claude_versions`` marker names (behaviour that differs between releases)."""
    if "claude_version" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("claude_versions")
    versions = [v for v in VERSIONS if marker is None or v in marker.args]
    metafunc.parametrize("claude_version", versions, scope="session", ids=versions)


@pytest.fixture(scope="session")
def claude_bin(claude_version: str) -> Path:
    """The pinned Claude Code binary of this release; installs it (npm) into the cache when
    missing.

    Fails, never skips, when it cannot be installed: a missing CLI must not turn the e2e tier
    green."""
    try:
        return install_claude(claude_version)
    except HarnessError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def claude_profile(claude_version: str) -> Profile:
    """What tests do differently on this release (launch arguments, dialog guard, sleep)."""
    return profile(claude_version)


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
        window_of: TmuxClaude | None = None,
    ) -> TmuxClaude:
        claude: TmuxClaude
        if window_of is None:
            claude = TmuxClaude(
                claude_bin, claude_home, fake_api.base_url, args=args, env=env, cwd=cwd
            )
        else:
            claude = TmuxClaudeWindow(
                window_of, claude_bin, claude_home, fake_api.base_url, args=args, env=env, cwd=cwd
            )
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


class TmuxClaudeWindow(TmuxClaude):
    """Claude in a new window of another :class:`TmuxClaude`'s private tmux server.

    Same socket, so whatever learnt that server's socket (from the first Claude's hooks) can
    list this pane too. The window inherits the server's environment (HOME, the fake API), plus
    ``env``. ``kill`` ends this pane only; the server belongs to the first Claude."""

    def __init__(
        self,
        host: TmuxClaude,
        claude_bin: Path,
        home: ClaudeHome,
        base_url: str,
        *,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        super().__init__(
            claude_bin, home, base_url, args=args, env=env, cwd=cwd, socket_name=host.socket_name
        )
        self.host = host
        self.extra_env = dict(env or {})

    def start(self) -> TmuxClaudeWindow:
        self.started_at = time.monotonic()
        env_args = [arg for k, v in self.extra_env.items() for arg in ("-e", f"{k}={v}")]
        out = self.tmux(
            "new-window", "-d", "-t", f"{self.host.session_name}:", "-c", str(self.cwd),
            *env_args, "-P", "-F", "#{pane_id} #{pane_pid}", self.command_line,
        ).stdout.split()  # fmt: skip
        self._pane_id, self._pane_pid = out[0], int(out[1])
        self.status_watcher = SessionStatusWatcher(self.home, self._pane_pid).start()
        return self

    def kill(self) -> None:
        if self.status_watcher is not None:
            self.status_watcher.stop()
        if self._pane_id is not None:
            self.tmux("kill-pane", "-t", self._pane_id, check=False)
        pid = self._pane_pid
        if pid is not None:
            try:
                wait_until(lambda: not _alive(pid), timeout=10, describe=f"pid {pid} to exit")
            except TimeoutError:
                _kill_pid(pid)


# ---------------------------------------------------------------------------------------------
# The real daemon


@pytest.fixture
def purplemux_daemon(tmp_path: Path) -> Iterator[Daemon]:
    """``purplemux serve`` for the Claude of this test; started before any Claude is.

    Its ``CLAUDE_CONFIG_DIR`` is where ``claude_home`` (``make_claude_home(tmp_path)``) puts
    Claude's config: ``tmp_path/home/.claude``."""
    daemon = Daemon(home=tmp_path / "pmx", claude_dir=tmp_path / "home" / ".claude")
    daemon.start()
    yield daemon
    daemon.stop()


@pytest.fixture
def daemon_hook_command(purplemux_daemon: Daemon) -> str:
    """The real status hook, installed in the daemon's home, as install-hooks registers it."""
    script = install.install_script(purplemux_daemon.home)
    return claude_install.hook_command(script, purplemux_daemon.home)


@dataclass(frozen=True)
class FeedMessage:
    """One message of WS /api/stream and when it arrived (both clocks)."""

    mono: float  # time.monotonic()
    wall: float  # time.time(), comparable with the daemon's event times
    data: dict[str, Any]


@dataclass(frozen=True)
class SessionUpdate:
    """One appearance of a session on the feed: in a snapshot or a ``session`` message."""

    index: int  # the message's index in FeedRecorder.messages()
    mono: float
    wall: float
    session: dict[str, Any]

    @property
    def state(self) -> str:
        return str(self.session.get("state"))


class FeedRecorder:
    """A WebSocket client of the daemon's ``/api/stream``, recording every message from a
    thread with its receive time. ``mark()`` returns a position; the queries take ``since``."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self._messages: list[FeedMessage] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self.closed = False
        url = daemon.url.replace("http://", "ws://") + "/api/stream"
        self._ws: ClientConnection = connect(
            url,
            additional_headers={"Authorization": f"Bearer {daemon.token}"},
            proxy=None,
            open_timeout=10,
        )
        self._thread = threading.Thread(target=self._run, name="feed-recorder", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                try:
                    raw = self._ws.recv(timeout=0.1)
                except TimeoutError:
                    continue
                mono, wall = time.monotonic(), time.time()
                with self._lock:
                    self._messages.append(FeedMessage(mono, wall, json.loads(raw)))
        except ConnectionClosed:
            pass  # the daemon went away (stopped or killed)
        except Exception as exc:  # kept for the test to see, never raised in the thread
            self.error = exc
        finally:
            self.closed = True

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        with contextlib.suppress(Exception):
            self._ws.close()

    # -- reading -----------------------------------------------------------------------------

    def messages(self) -> list[FeedMessage]:
        with self._lock:
            return list(self._messages)

    def mark(self) -> int:
        """The position after the last message received so far."""
        with self._lock:
            return len(self._messages)

    def updates(self, session_id: str | None = None, since: int = 0) -> list[SessionUpdate]:
        """Every appearance of a session (or of all sessions) from message ``since`` on."""
        out: list[SessionUpdate] = []
        for index, msg in enumerate(self.messages()):
            if index < since:
                continue
            if msg.data.get("type") in ("snapshot", "sessions"):  # sessions: what changed together
                sessions = msg.data.get("sessions") or []
            else:
                continue
            for session in sessions:
                if session_id is None or session.get("id") == session_id:
                    out.append(SessionUpdate(index, msg.mono, msg.wall, session))
        return out

    def states(self, session_id: str, since: int = 0) -> list[str]:
        """The states the feed showed for a session from ``since`` on, consecutive duplicates
        collapsed; a first state equal to the one it had before ``since`` is left out."""
        seen: list[str] = []
        before = self.updates(session_id)
        previous = [u.state for u in before if u.index < since]
        last = previous[-1] if previous else None
        for update in before:
            if update.index < since:
                continue
            if update.state != last:
                seen.append(update.state)
                last = update.state
        return seen

    def removed(self, session_id: str, since: int = 0) -> FeedMessage | None:
        """The first ``sessions`` message from ``since`` on that removes the session's row."""
        for index, msg in enumerate(self.messages()):
            data = msg.data
            if (
                index >= since
                and data.get("type") == "sessions"
                and session_id in (data.get("removed") or [])
            ):
                return msg
        return None

    def wait(
        self,
        session_id: str | None,
        predicate: Callable[[dict[str, Any]], bool],
        *,
        since: int = 0,
        timeout: float = 15.0,
        what: str = "a session update",
    ) -> SessionUpdate:
        """The first update at or after ``since`` (of ``session_id``, or of any session when
        None) that satisfies ``predicate``; TimeoutError with what the feed showed."""

        def probe() -> SessionUpdate | None:
            if self.error is not None:
                raise AssertionError(f"the feed client failed: {self.error!r}")
            return next((u for u in self.updates(session_id, since) if predicate(u.session)), None)

        return wait_until(
            probe,
            timeout,
            interval=0.01,
            describe=lambda: (
                f"{what} for {session_id}; states since #{since}: "
                f"{self.states(session_id, since) if session_id else '-'}; "
                f"last updates: {[u.session for u in self.updates(session_id, since)][-3:]}"
            ),
        )

    def wait_state(
        self, session_id: str, state: str, *, since: int = 0, timeout: float = 15.0
    ) -> SessionUpdate:
        return self.wait(
            session_id,
            lambda s: s.get("state") == state,
            since=since,
            timeout=timeout,
            what=f"state {state!r}",
        )


@pytest.fixture
def connect_feed() -> Iterator[Callable[[Daemon], FeedRecorder]]:
    recorders: list[FeedRecorder] = []

    def open_feed(daemon: Daemon) -> FeedRecorder:
        recorder = FeedRecorder(daemon)
        recorders.append(recorder)
        return recorder

    yield open_feed
    for recorder in recorders:
        recorder.close()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    require()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium: Browser) -> Iterator[Page]:
    with new_page(chromium) as fresh:
        yield fresh
