"""Helpers to drive the real Claude Code CLI in a private tmux server (no pytest in here).

The pieces:

- :func:`install_claude` finds (or installs, through ``.ci/install-claude.sh``) the pinned CLI.
- :func:`make_claude_home` writes a throw-away ``HOME`` that skips every first-run screen, and
  :func:`hooks_settings` / :func:`write_user_settings` register one command for every hook event.
- :class:`HookLog` reads what ``record_hook.sh`` wrote and waits for events.
- ``make_claude_home(..., login=...)`` and ``claude_env(..., login=...)`` set up one of the
  three logins (logins.py); ``statusline_command=`` sets a user statusLine command.
- :class:`TmuxClaude` runs ``claude`` in a 160x50 pane of a private tmux server and drives it
  (type, press keys, read and wait for the screen).

Every wait polls with a deadline; nothing sleeps a fixed time.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from purplemux.agents.claude.install import HOOK_EVENTS
from tests.support.e2e_report import TIMINGS
from tests.support.waiting import describe_probe

from .logins import FAKE_API_KEY, login_variables, write_login_files

CLAUDE_VERSION = "2.1.197"
REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL_SCRIPT = REPO_ROOT / ".ci" / "install-claude.sh"
RECORD_HOOK = Path(__file__).resolve().parent / "record_hook.sh"

#: Every hook event the daemon registers for (the installer's list); all get the same command.
#: Events whose hook entries take a tool-name matcher ("*" = every tool).
TOOL_MATCHER_EVENTS = frozenset(
    {"PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure"}
)

#: What the TUI shows once it is ready for input (the footer hint under the prompt box), in
#: the default permission mode; other modes show "... on (shift+tab to cycle)" instead.
READY_TEXT = "? for shortcuts"
MODE_FOOTER_TEXT = "(shift+tab to cycle)"
#: The first line of the Bash permission dialog, and its first (approving) option.
BASH_PERMISSION_TITLE = "Bash command"
PERMISSION_QUESTION = "Do you want to proceed?"
#: While a turn runs the footer says this.
BUSY_TEXT = "esc to interrupt"

DEFAULT_TIMEOUT = 30.0
POLL_INTERVAL = 0.05
#: send_text presses Enter again when the typed text is still in the input box this much later.
ENTER_RETRY_AFTER = 2.0
PROMPT_MARK = "\u276f"  # the input box mark
_RULE = "─" * 20

T = TypeVar("T")


class HarnessError(RuntimeError):
    """The harness could not set something up (not a failed expectation about Claude)."""


# ---------------------------------------------------------------------------------------------
# Polling


def wait_until(
    probe: Callable[[], T | None],
    timeout: float = DEFAULT_TIMEOUT,
    interval: float = POLL_INTERVAL,
    describe: Callable[[], str] | str | None = None,
) -> T:
    """Call ``probe`` until it returns something truthy, and return that; TimeoutError after
    ``timeout`` seconds, with ``describe`` (a string or a callable giving the state; by default
    the probe's own source) and the probe's last value in it."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            if describe is None:
                detail = describe_probe(probe)
            else:
                detail = describe() if callable(describe) else describe
            raise TimeoutError(
                f"timed out after {timeout:.0f}s waiting for: {detail} (last: {value!r})"
            )
        time.sleep(interval)


# ---------------------------------------------------------------------------------------------
# Installing the CLI


def cache_root() -> Path:
    env = os.environ.get("PURPLEMUX_E2E_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "purplemux-e2e"


def cached_claude_bin(version: str = CLAUDE_VERSION) -> Path | None:
    """The binary install-claude.sh put in the cache, if it is there."""
    pkg = cache_root() / f"claude-{version}" / "node_modules" / "@anthropic-ai" / "claude-code"
    for candidate in (pkg / "bin" / "claude.exe", pkg / "bin" / "claude"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def install_claude(version: str = CLAUDE_VERSION) -> Path:
    """Return the pinned claude binary, running .ci/install-claude.sh when it is not cached.

    Raises HarnessError with the installer's output when npm is missing or the install fails.
    """
    found = cached_claude_bin(version)
    if found is not None:
        return found
    require_npm(f"Claude Code {version}", INSTALL_SCRIPT)
    return run_install_script(INSTALL_SCRIPT, {"CLAUDE_CODE_VERSION": version}, timeout=600)


def require_npm(what: str, script: Path) -> None:
    """HarnessError saying ``what`` (a CLI and its version) needs npm, when npm is not on PATH."""
    if shutil.which("npm") is None:
        raise HarnessError(
            f"the e2e tier needs {what}, which installs with npm, and npm is not on PATH: "
            f"install Node.js + npm (or run {script} on a machine that has it, with "
            "PURPLEMUX_E2E_CACHE pointing at a shared cache)"
        )


def run_install_script(script: Path, env: Mapping[str, str], timeout: float) -> Path:
    """Run an ``.ci/install-*.sh`` with ``env`` added to the environment and return the path it
    prints last on stdout: the pinned CLI, installed with npm into the cache once. HarnessError
    with the script's output when it fails or prints no path of an existing file."""
    proc = subprocess.run(
        ["sh", str(script)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise HarnessError(f"{script} failed (exit {proc.returncode}):\n{proc.stderr}{proc.stdout}")
    lines = proc.stdout.strip().splitlines()
    path = Path(lines[-1]) if lines else None
    if path is None or not path.is_file():
        raise HarnessError(f"{script} printed no path of the CLI:\n{proc.stdout}")
    return path


# ---------------------------------------------------------------------------------------------
# A throw-away HOME


def claude_json(project_dirs: Iterable[Path], api_key: str = FAKE_API_KEY) -> dict[str, Any]:
    """The ``$HOME/.claude.json`` that lets the TUI start straight into the prompt.

    What each key skips (seen on 2.1.197, see README.md):

    - ``hasCompletedOnboarding``: the first-run theme picker ("Choose the text style ...").
    - ``customApiKeyResponses.approved``: "Detected a custom API key in your environment ...
      Do you want to use this API key?" (default answer: No). Claude stores the key's last
      20 characters.
    - ``projects.<dir>.hasTrustDialogAccepted``: "Accessing workspace: ... Is this a project
      you created or one you trust?"; without it hooks do not run at all.
    - ``projects.<dir>.hasCompletedProjectOnboarding``: the big "Welcome back! / Tips for
      getting started" box (not a dialog; the compact header instead).
    - ``bypassPermissionsModeAccepted``: the "WARNING: Claude Code running in Bypass
      Permissions mode" dialog, only shown with ``--dangerously-skip-permissions`` (which as
      root also needs ``IS_SANDBOX=1`` in the environment, or Claude exits at once).
    """
    projects = {
        str(p): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}
        for p in project_dirs
    }
    return {
        "hasCompletedOnboarding": True,
        "customApiKeyResponses": {"approved": [api_key[-20:]], "rejected": []},
        "bypassPermissionsModeAccepted": True,
        "projects": projects,
    }


def hooks_settings(
    command: str, events: Iterable[str] = HOOK_EVENTS, timeout: int = 10
) -> dict[str, Any]:
    """A settings.json ``hooks`` block running ``command`` for each event."""
    hooks: dict[str, Any] = {}
    for event in events:
        entry: dict[str, Any] = {
            "hooks": [{"type": "command", "command": command, "timeout": timeout}]
        }
        if event in TOOL_MATCHER_EVENTS:
            entry = {"matcher": "*", **entry}
        hooks[event] = [entry]
    return {"hooks": hooks}


def record_hook_command(log_path: Path) -> str:
    """The hook command for record_hook.sh writing to ``log_path``."""
    return f"{shlex.quote(str(RECORD_HOOK))} {shlex.quote(str(log_path))}"


@dataclass(frozen=True)
class ClaudeHome:
    """A throw-away HOME for Claude and the project it runs in."""

    home: Path
    project: Path

    @property
    def config_dir(self) -> Path:
        return self.home / ".claude"

    @property
    def settings_path(self) -> Path:
        return self.config_dir / "settings.json"

    @property
    def sessions_dir(self) -> Path:
        return self.config_dir / "sessions"

    def transcripts_dir(self, cwd: Path | None = None) -> Path:
        """``~/.claude/projects/<cwd, every non-alphanumeric character replaced by ->``."""
        slug = re.sub(r"[^A-Za-z0-9]", "-", str(cwd or self.project))
        return self.config_dir / "projects" / slug

    def transcript(self, session_id: str, cwd: Path | None = None) -> Path:
        return self.transcripts_dir(cwd) / f"{session_id}.jsonl"

    def session_file(self, pid: int) -> Path:
        return self.sessions_dir / f"{pid}.json"

    def read_session_file(self, pid: int) -> dict[str, Any] | None:
        """``~/.claude/sessions/<pid>.json`` or None (absent, or caught mid-write)."""
        try:
            data = json.loads(self.session_file(pid).read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None


def make_claude_home(
    root: Path,
    hook_command: str | None = None,
    *,
    project_name: str = "proj",
    api_key: str = FAKE_API_KEY,
    extra_settings: Mapping[str, Any] | None = None,
    login: str = "apikey",
    statusline_command: str | None = None,
) -> ClaudeHome:
    """Create ``root/home`` (with .claude.json and .claude/settings.json) and
    ``root/home/<project_name>``; register ``hook_command`` for every event when given.

    ``login`` ("apikey", "gateway", "subscription"; logins.py) adds that login's files; start
    Claude with the same ``login`` (``claude_env`` / ``TmuxClaude(login=...)``).
    ``statusline_command`` becomes the user's ``statusLine`` command in settings.json."""
    home = root / "home"
    project = home / project_name
    project.mkdir(parents=True, exist_ok=True)
    claude_home = ClaudeHome(home=home, project=project)
    (home / ".claude.json").write_text(json.dumps(claude_json([project], api_key), indent=2))
    claude_home.config_dir.mkdir(exist_ok=True)
    write_login_files(home, login)
    settings = dict(extra_settings or {})
    if statusline_command is not None:
        settings.update(statusline_settings(statusline_command))
    write_user_settings(claude_home, hook_command, settings)
    return claude_home


def statusline_settings(command: str) -> dict[str, Any]:
    """The settings.json block of a user's own statusLine command."""
    return {"statusLine": {"type": "command", "command": command}}


def write_user_settings(
    claude_home: ClaudeHome,
    hook_command: str | None,
    extra_settings: Mapping[str, Any] | None = None,
) -> None:
    """(Re)write ``~/.claude/settings.json``; running sessions pick the change up."""
    settings: dict[str, Any] = {}
    if hook_command is not None:
        settings.update(hooks_settings(hook_command))
    settings.update(extra_settings or {})
    tmp = claude_home.settings_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(settings, indent=2))
    tmp.replace(claude_home.settings_path)


# ---------------------------------------------------------------------------------------------
# Reading what the recording hook wrote


@dataclass(frozen=True)
class HookCall:
    ts: float
    pane: str | None
    payload: dict[str, Any]

    @property
    def event(self) -> str:
        return str(self.payload.get("hook_event_name", ""))

    def get(self, key: str, default: Any = None) -> Any:
        return self.payload.get(key, default)


NO_STATE_HOOKS = ("MessageDisplay", "PostToolBatch")

ANSWERED_DIALOG_HOOKS = [
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "Notification",
    "PostToolUse",
    "Stop",
]
"""The state hooks of a turn whose tool call asked in a dialog that was answered, in order."""
"""Hooks that carry no state, left out of hook orders. The installer registers them since
2.1.332 fires them; 2.1.197 fires them too once registered (seen in the e2e tier), at points
that vary (MessageDisplay per displayed text block, sometimes after Stop)."""


@dataclass
class HookLog:
    """The JSON lines file record_hook.sh appends to."""

    path: Path
    _bad: list[str] = field(default_factory=list)

    @property
    def command(self) -> str:
        return record_hook_command(self.path)

    def calls(self) -> list[HookCall]:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return []
        calls: list[HookCall] = []
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                # A line still being appended; anything else is a bug worth seeing.
                if line not in self._bad:
                    self._bad.append(line)
                continue
            payload = row.get("payload")
            calls.append(
                HookCall(
                    ts=float(row.get("ts", 0.0)),
                    pane=row.get("pane"),
                    payload=payload if isinstance(payload, dict) else {},
                )
            )
        return calls

    def events(self, since: int = 0) -> list[str]:
        return [c.event for c in self.calls()[since:]]

    def state_events(self, since: int = 0) -> list[str]:
        """The hooks from ``since`` on without those that carry no state (NO_STATE_HOOKS)."""
        return [e for e in self.events(since) if e not in NO_STATE_HOOKS]

    def __len__(self) -> int:
        return len(self.calls())

    def wait_for(
        self,
        event: str,
        predicate: Callable[[HookCall], bool] | None = None,
        *,
        since: int = 0,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> HookCall:
        """The first call of ``event`` at index >= ``since`` matching ``predicate``."""

        def probe() -> HookCall | None:
            for call in self.calls()[since:]:
                if call.event == event and (predicate is None or predicate(call)):
                    return call
            return None

        return wait_until(
            probe,
            timeout,
            describe=lambda: f"hook {event} (since #{since}); got {self.events()}",
        )


# ---------------------------------------------------------------------------------------------
# Claude's sessions/<pid>.json, watched


@dataclass(frozen=True)
class StatusChange:
    ts: float  # time.time() when the watcher saw it
    status: str | None  # None: the file is gone (or not there yet)
    waiting_for: str | None = None


class SessionStatusWatcher:
    """Polls ``~/.claude/sessions/<pid>.json`` from a thread and keeps every change of
    (status, waitingFor). A busy spell of a fake turn lasts a few hundred ms; the 10 ms poll
    catches it (sampling the file from the test thread between tmux calls would not)."""

    def __init__(self, home: ClaudeHome, pid: int, interval: float = 0.01) -> None:
        self.home = home
        self.pid = pid
        self.interval = interval
        self._changes: list[StatusChange] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"session-status-{pid}", daemon=True)

    def start(self) -> SessionStatusWatcher:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        last: tuple[str | None, str | None] | None = None
        path = self.home.session_file(self.pid)
        while not self._stop.is_set():
            try:
                data = json.loads(path.read_text())
            except FileNotFoundError:
                data = None
            except (OSError, ValueError):
                # Caught mid-write: look again next tick.
                self._stop.wait(self.interval)
                continue
            state: tuple[str | None, str | None] = (None, None)
            if isinstance(data, dict) and data.get("status") is not None:
                waiting_for = data.get("waitingFor")
                state = (str(data["status"]), None if waiting_for is None else str(waiting_for))
            if state != last and (last is not None or state[0] is not None):
                with self._lock:
                    self._changes.append(StatusChange(time.time(), state[0], state[1]))
            last = state
            self._stop.wait(self.interval)

    def changes(self) -> list[StatusChange]:
        with self._lock:
            return list(self._changes)

    def statuses(self, since: int = 0) -> list[str | None]:
        """The distinct successive statuses seen (None: file absent), from index ``since``."""
        return [c.status for c in self.changes()[since:]]

    def current(self) -> str | None:
        changes = self.changes()
        return changes[-1].status if changes else None

    def wait_for(
        self, status: str | None, since: int = 0, timeout: float = DEFAULT_TIMEOUT
    ) -> StatusChange:
        """The first change at index >= ``since`` to ``status``."""

        def probe() -> StatusChange | None:
            return next((c for c in self.changes()[since:] if c.status == status), None)

        return wait_until(
            probe, timeout, describe=lambda: f"session status {status!r}; saw {self.statuses()}"
        )


# ---------------------------------------------------------------------------------------------
# Timings, for the report at the end of the run

# TIMINGS (and REPORT_LINES) live in tests/support/e2e_report.py (imported from there, they are the
# same lists however this module is imported: pytest names it e2e.harness, others
# tests.e2e.harness), which prints them at the end of the run.


def record_timing(name: str, seconds: float) -> None:
    TIMINGS.append((name, seconds))


# ---------------------------------------------------------------------------------------------
# Claude in tmux

#: Variables from the outer environment that must not leak into Claude or tmux.
_SCRUB_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "CLAUDECODE", "TMUX", "AWS_", "GOOGLE_", "VERTEX_")


def claude_env(
    home: Path,
    base_url: str,
    *,
    api_key: str = FAKE_API_KEY,
    extra: Mapping[str, str] | None = None,
    login: str = "apikey",
) -> dict[str, str]:
    """The environment for the tmux server and Claude: the outer one without any
    Anthropic/Claude/tmux variables, plus the offline set-up from claude-code.md and the
    variables of ``login`` (logins.py: only "apikey" sets ``ANTHROPIC_API_KEY``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUB_PREFIXES)}
    env.pop("PYTEST_CURRENT_TEST", None)
    env.update(
        {
            "HOME": str(home),
            "ANTHROPIC_BASE_URL": base_url,
            **login_variables(login, api_key),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "LANG": env.get("LANG") or "C.UTF-8",
        }
    )
    env.update(extra or {})
    return env


class TmuxClaude:
    """``claude`` running in a 160x50 pane of a private tmux server (``tmux -L <socket>``).

    ``start()`` launches it; use as a context manager or call ``kill()`` to end the server.
    """

    WIDTH = 160
    HEIGHT = 50

    def __init__(
        self,
        claude_bin: Path,
        home: ClaudeHome,
        base_url: str,
        *,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        socket_name: str | None = None,
        login: str = "apikey",
    ) -> None:
        self.claude_bin = claude_bin
        self.login = login
        self.home = home
        self.cwd = cwd or home.project
        self.args = list(args)
        self.socket_name = socket_name or f"purplemux-e2e-{secrets.token_hex(4)}"
        self.session_name = "claude"
        self.env = claude_env(home.home, base_url, extra=env, login=login)
        self._pane_id: str | None = None
        self._pane_pid: int | None = None
        self.started_at: float | None = None
        #: How often send_text had to press Enter again (see its docstring).
        self.enter_retries = 0
        self.status_watcher: SessionStatusWatcher | None = None
        self._socket_path: Path | None = None

    # -- tmux plumbing -----------------------------------------------------------------------

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run one tmux command against the private server."""
        proc = subprocess.run(
            ["tmux", "-L", self.socket_name, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=30,
        )
        if check and proc.returncode != 0:
            raise HarnessError(f"tmux {' '.join(args)} failed: {proc.stderr.strip()}")
        return proc

    @property
    def command_line(self) -> str:
        # exec: the pane's pid is Claude's pid (TESTING.md), so sessions/<pid>.json matches.
        return "exec " + shlex.join([str(self.claude_bin), *self.args])

    def start(self) -> TmuxClaude:
        if shutil.which("tmux") is None:
            raise HarnessError("tmux is not on PATH")
        self.started_at = time.monotonic()
        self.tmux(
            "start-server",
            ";", "set-option", "-g", "remain-on-exit", "on",
            ";", "set-option", "-g", "history-limit", "5000",
            # Without it Claude shows a "tmux focus-events off" hint in its footer.
            ";", "set-option", "-g", "focus-events", "on",
            ";", "new-session", "-d",
            "-s", self.session_name,
            "-x", str(self.WIDTH), "-y", str(self.HEIGHT),
            "-c", str(self.cwd),
            self.command_line,
        )  # fmt: skip
        out = self.tmux(
            "list-panes", "-t", self.session_name, "-F", "#{pane_id} #{pane_pid}"
        ).stdout.split()
        self._pane_id, self._pane_pid = out[0], int(out[1])
        socket_path = self.tmux("display-message", "-p", "#{socket_path}").stdout.strip()
        self._socket_path = Path(socket_path) if socket_path else None
        self.status_watcher = SessionStatusWatcher(self.home, self._pane_pid).start()
        return self

    @property
    def watcher(self) -> SessionStatusWatcher:
        """The watcher of Claude's session file, started with Claude."""
        assert self.status_watcher is not None, "Claude has not been started"
        return self.status_watcher

    def __enter__(self) -> TmuxClaude:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()

    @property
    def pane_id(self) -> str:
        if self._pane_id is None:
            raise HarnessError("not started")
        return self._pane_id

    @property
    def pane_pid(self) -> int:
        """The pid of the pane's process, which is Claude itself (the command is exec'd)."""
        if self._pane_pid is None:
            raise HarnessError("not started")
        return self._pane_pid

    def pane_dead(self) -> bool:
        """True once Claude has exited (the pane stays, remain-on-exit is on)."""
        proc = self.tmux("display-message", "-p", "-t", self.pane_id, "#{pane_dead}", check=False)
        return proc.returncode != 0 or proc.stdout.strip() == "1"

    def kill(self) -> None:
        """Kill the private tmux server (and with it Claude). Safe to call twice."""
        if self.status_watcher is not None:
            self.status_watcher.stop()
        self.tmux("kill-server", check=False)
        if self._socket_path is not None:
            # tmux leaves its socket file behind after kill-server.
            with contextlib.suppress(OSError):
                self._socket_path.unlink()
        pid = self._pane_pid
        if pid is not None:
            # Claude gets SIGHUP from tmux; make sure it is gone before HOME is deleted.
            try:
                wait_until(lambda: not _alive(pid), timeout=10, describe=f"pid {pid} to exit")
            except TimeoutError:
                _kill_pid(pid)

    # -- driving -----------------------------------------------------------------------------

    def type_text(self, text: str) -> None:
        """Type ``text`` literally (``send-keys -l``), without pressing Enter."""
        self.tmux("send-keys", "-t", self.pane_id, "-l", text)

    def send_text(self, text: str, enter: bool = True, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Type ``text`` into the prompt, then press Enter in a separate send-keys.

        Claude reads a burst of typed characters as a paste, and an Enter that arrives while
        it is still taking the paste in can be lost (seen right after start-up). So: wait until
        the text is in the input box, press Enter, and press it again only if the text is
        still sitting in the input box a while later (never when a dialog has replaced it).
        """
        self.type_text(text)
        if not enter:
            return
        needle = _squash(text)[-40:]

        def in_box() -> bool:
            box = input_box(self.screen())
            return box is not None and needle in _squash(box)

        def submitted() -> bool:
            # /exit ends Claude: its last frame, text still in the box, stays on the dead pane.
            return not in_box() or self.pane_dead()

        wait_until(
            in_box,
            timeout,
            describe=lambda: f"typed text {text!r} in the input box; screen:\n{self.screen()}",
        )
        deadline = time.monotonic() + timeout
        while True:
            self.press("Enter")
            try:
                wait_until(submitted, timeout=ENTER_RETRY_AFTER, describe="submit")
                return
            except TimeoutError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(
                        f"Enter did not submit {text!r}; screen:\n{self.screen()}"
                    ) from None
            if submitted():  # look again right before pressing: a dialog may be up by now
                return
            self.enter_retries += 1

    def press(self, *keys: str) -> None:
        """Press tmux keys: "Enter", "Escape", "Down", "C-c", ..."""
        self.tmux("send-keys", "-t", self.pane_id, *keys)

    def screen(self, history: bool = False) -> str:
        """The pane's text (``capture-pane -p``); with ``history`` the scrollback too."""
        args = ["capture-pane", "-p", "-t", self.pane_id]
        if history:
            args += ["-S", "-"]
        return self.tmux(*args).stdout

    def wait_screen(
        self,
        expected: str | Callable[[str], bool],
        timeout: float = DEFAULT_TIMEOUT,
        history: bool = False,
    ) -> str:
        """Poll the screen until it contains ``expected`` (or ``expected(screen)`` is true);
        return that screen. TimeoutError shows the last screen."""
        last = ""

        def probe() -> str | None:
            nonlocal last
            last = self.screen(history=history)
            ok = expected in last if isinstance(expected, str) else expected(last)
            return last if ok else None

        return wait_until(
            probe,
            timeout,
            describe=lambda: f"screen to show {expected!r}; last screen:\n{last}",
        )

    def wait_ready(self, timeout: float = DEFAULT_TIMEOUT) -> str:
        """Wait for the idle prompt: an empty input box, an idle footer, no "esc to
        interrupt". Returns the screen."""
        return self.wait_screen(is_idle_screen, timeout=timeout)

    def wait_started(self, timeout: float = DEFAULT_TIMEOUT) -> str:
        """Wait until Claude is fully up: the idle prompt is on screen and its
        ``sessions/<pid>.json`` exists. That file appears up to ~1 s after the prompt (and
        the SessionStart hook also runs just after the prompt shows), so a turn sent right at
        the prompt may never show ``busy`` in it. Returns the screen."""
        screen = self.wait_ready(timeout)
        wait_until(
            lambda: self.session_file() is not None,
            timeout,
            describe=lambda: f"{self.home.session_file(self.pane_pid)} to appear",
        )
        return screen

    def wait_exit(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Wait for Claude's process to end (its pane stays, dead)."""
        wait_until(
            lambda: self.pane_dead() and not _alive(self.pane_pid),
            timeout,
            describe=lambda: f"claude (pid {self.pane_pid}) to exit; screen:\n{self.screen()}",
        )

    # -- Claude's own files ------------------------------------------------------------------

    def session_file(self) -> dict[str, Any] | None:
        """``~/.claude/sessions/<pid>.json`` of this Claude, or None."""
        return self.home.read_session_file(self.pane_pid)

    def wait_session_status(self, status: str, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """Poll sessions/<pid>.json until its ``status`` is ``status``; return its content."""

        def probe() -> dict[str, Any] | None:
            data = self.session_file()
            return data if data and data.get("status") == status else None

        return wait_until(
            probe,
            timeout,
            interval=0.02,
            describe=lambda: f"session status {status!r}; file: {self.session_file()}",
        )


def is_idle_screen(screen: str) -> bool:
    """The idle prompt is on screen: empty input box, idle footer, nothing running."""
    return (
        input_box(screen) == ""
        and BUSY_TEXT not in screen
        and (READY_TEXT in screen or MODE_FOOTER_TEXT in screen)
    )


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def input_box(screen: str) -> str | None:
    """The text in Claude's input box (between the last two horizontal rules, after the
    prompt mark U+276F), "" when empty, or None when no input box is on screen (e.g. a dialog)."""
    lines = screen.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith(_RULE)]
    if len(rules) < 2:
        return None
    box = lines[rules[-2] + 1 : rules[-1]]
    if not box or not box[0].startswith(PROMPT_MARK):
        return None
    return "\n".join(box)[len(PROMPT_MARK) :].strip()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _kill_pid(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, 9)


def read_transcript(path: Path) -> list[dict[str, Any]]:
    """The transcript's entries, skipping lines that do not parse (it is appended live)."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return []
    entries: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def transcript_texts(entries: Iterable[Mapping[str, Any]], role: str = "user") -> list[str]:
    """Every text of entries of ``type`` ``role``, whether content is a string or blocks."""
    texts: list[str] = []
    for entry in entries:
        if entry.get("type") != role:
            continue
        message = entry.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(
                str(b.get("text", ""))
                for b in content
                if isinstance(b, Mapping) and b.get("type") == "text"
            )
    return texts
