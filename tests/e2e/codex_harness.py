"""Helpers to drive the real OpenAI Codex CLI in a private tmux server (no pytest in here).

Codex differs from Claude in one way that shapes everything here (codex.md, "The shared
app-server daemon"): the TUI is only a client. The first TUI of a ``CODEX_HOME`` starts a
background app-server daemon (plus a ``pid-update-loop`` process), both in their own sessions,
re-parented to pid 1 when that TUI exits; every later TUI of the same ``CODEX_HOME`` uses it.
The daemon runs the model calls, the tools and the hooks, with the environment of the TUI
that started it. Killing the tmux server therefore leaves it running: :meth:`TmuxCodex.stop`
always runs ``codex app-server daemon stop``, kills the updater, kills the tmux server, and
then checks ``/proc`` for anything left of that ``CODEX_HOME``.

The pieces:

- :func:`install_codex` finds (or installs, through ``.ci/install-codex.sh``) the pinned CLI.
- :func:`make_codex_home` writes a throw-away ``HOME`` + ``CODEX_HOME`` + project whose
  config.toml points at the fake Responses API and skips every first-run screen;
  :func:`codex_hooks_json` registers one command for every hook event in
  ``$CODEX_HOME/hooks.json`` and :func:`hooks_trust_config` trusts it (config.toml
  ``[hooks.state]``), so the hooks run without a review screen.
  ``--dangerously-bypass-hook-trust`` (:data:`BYPASS_HOOK_TRUST`) runs untrusted hooks too,
  but seen here it also makes the TUI run its server in-process: **no daemon** (each TUI's
  hooks carry its own ``$TMUX_PANE``, as with ``--no-daemon``).
- :class:`TmuxCodex` is one private tmux server; :meth:`TmuxCodex.start_pane` starts a TUI in
  a new pane (all panes share the server's environment, hence one CODEX_HOME and one
  daemon) and returns a :class:`CodexPane` to drive it.

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
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from purplemux.agents.codex import trust
from purplemux.agents.codex.trust import CLAMPED_LABELS, EVENT_LABELS

from .harness import (
    HarnessError,
    HookCall,
    cache_root,
    require_npm,
    run_install_script,
    wait_until,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
VERSION_FILE = REPO_ROOT / ".ci" / "codex-version"
INSTALL_SCRIPT = REPO_ROOT / ".ci" / "install-codex.sh"
FAKE_OPENAI_KEY = "sk-fake"
MODEL = "gpt-5.5"


def _read_version() -> str:
    lines = (ln.strip() for ln in VERSION_FILE.read_text().splitlines())
    return next(ln for ln in lines if ln and not ln.startswith("#"))


CODEX_VERSION = _read_version()

#: The 14 hook events Codex 0.171.0 lists in ``/hooks`` (codex.md, "Hook events").
CODEX_HOOK_EVENTS = tuple(EVENT_LABELS)
#: Codex clamps these hooks' timeouts to 1..3 s (and warns when asked for more).
SHORT_TIMEOUT_EVENTS = frozenset(e for e, label in EVENT_LABELS.items() if label in CLAMPED_LABELS)
#: Runs hooks that have no trust entry in config.toml, for this invocation only.
BYPASS_HOOK_TRUST = "--dangerously-bypass-hook-trust"

#: The command approval dialog's first line, and the file-edit one's (codex.md).
APPROVAL_QUESTION = "Would you like to run the following command?"
EDIT_QUESTION = "Would you like to make the following edits?"
#: The row under a running turn ("• Working (3s • esc to interrupt)").
BUSY_TEXT = "esc to interrupt"
#: The empty composer's placeholder, after the prompt mark.
COMPOSER_MARK = "\u203a "  # a right-pointing angle quote and a space
COMPOSER_PLACEHOLDER = "Ask Codex to do anything"
ACTION_REQUIRED = "Action Required"
DEFAULT_TIMEOUT = 30.0
#: send_text presses Enter again when the text is still in the composer this much later.
ENTER_RETRY_AFTER = 2.0
RETYPES = 3
"""Times a text the composer did not show whole is cleared and typed again."""
RETYPE_AFTER = 5.0
"""Seconds typed text may take to show in the composer before it is typed again."""
REPRESS_AFTER = 3.0
"""Seconds a dialog's key may take to close it before it is pressed again (answer_dialog)."""

_SPINNER = re.compile(r"^[\u2800-\u28ff] ")


class LeftoverProcesses(HarnessError):
    """Processes of a CODEX_HOME were still alive after the teardown (they were killed)."""


# ---------------------------------------------------------------------------------------------
# Installing the CLI


def cached_codex_bin(version: str = CODEX_VERSION) -> Path | None:
    """``node_modules/.bin/codex`` as install-codex.sh left it in the cache, if it is there."""
    candidate = cache_root() / f"codex-{version}" / "node_modules" / ".bin" / "codex"
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def install_codex(version: str = CODEX_VERSION) -> Path:
    """The pinned codex launcher; runs .ci/install-codex.sh (which checks ``codex --version``
    and does nothing when it is installed). HarnessError with its output when it fails."""
    if cached_codex_bin(version) is None:
        require_npm(f"the Codex CLI {version}", INSTALL_SCRIPT)
    return run_install_script(INSTALL_SCRIPT, {"CODEX_VERSION": version}, timeout=900)


# ---------------------------------------------------------------------------------------------
# A throw-away HOME + CODEX_HOME


def _toml_str(value: str) -> str:
    # A JSON string is a valid TOML basic string for everything a path or a model name holds.
    return json.dumps(value, ensure_ascii=False)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _toml_str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise HarnessError(f"cannot write {value!r} as a TOML value")


def dump_toml(data: Mapping[str, Any]) -> str:
    """TOML for nested dicts of strings, numbers, booleans and lists of them: the scalars of
    each table first, then its sub-tables as ``[a."b c".d]`` headers."""
    lines: list[str] = []

    def table(path: tuple[str, ...], values: Mapping[str, Any]) -> None:
        scalars = {k: v for k, v in values.items() if not isinstance(v, Mapping)}
        tables = {k: v for k, v in values.items() if isinstance(v, Mapping)}
        if path and (scalars or not tables):
            lines.append("[" + ".".join(_toml_key(p) for p in path) + "]")
        lines.extend(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in scalars.items())
        if scalars:
            lines.append("")
        for key, sub in tables.items():
            table((*path, key), sub)

    table((), data)
    return "\n".join(lines)


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_str(key)


def merge_config(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` merged in, tables recursively (``extra`` wins)."""
    out = dict(base)
    for key, value in extra.items():
        old = out.get(key)
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            out[key] = merge_config(old, value)
        else:
            out[key] = value
    return out


def base_config(project: Path, base_url: str, *, model: str = MODEL) -> dict[str, Any]:
    """``$CODEX_HOME/config.toml`` for the fake API, as a dict; each key is needed, skips a
    screen, or speeds the tests up (codex.md, "Running the real CLI offline")."""
    return {
        "model": model,  # a known model (context window 258400)
        "model_provider": "fake",
        "approval_policy": "on-request",  # -a takes only on-request|never
        "sandbox_mode": "workspace-write",
        "check_for_update_on_startup": False,
        "model_providers": {
            "fake": {
                "name": "Fake",
                "base_url": base_url,  # Codex POSTs {base_url}/responses
                "wire_api": "responses",
                "env_key": "FAKE_OPENAI_KEY",  # the bearer token; no login, no auth.json
                "request_max_retries": 0,  # the default retries a 500 six times over ~26 s
                "stream_max_retries": 0,
            }
        },
        # Else the "Folder access / Trust this folder?" screen.
        "projects": {str(project): {"trust_level": "trusted"}},
        # request_user_input (the fake's ASK:) is refused in Default mode without it.
        "features": {"default_mode_request_user_input": True},
        "tui": {
            "screen_reader_detection_done": True,
            "model_availability_nux": {"gpt-6.1-sol": 1},  # else "Meet GPT-6 Sol"
        },
        "notice": {"model_migrations": {model: "gpt-6-sol"}},
    }


def codex_hooks_json(
    command: str, events: Iterable[str] = CODEX_HOOK_EVENTS, timeout: int = 10
) -> dict[str, Any]:
    """``$CODEX_HOME/hooks.json`` running ``command`` for each event. The timeout is always
    written (Codex hashes the normalized value for trust), 3 s for the clamped events."""
    hooks: dict[str, Any] = {}
    for event in events:
        seconds = min(timeout, 3) if event in SHORT_TIMEOUT_EVENTS else timeout
        hooks[event] = [{"hooks": [{"type": "command", "command": command, "timeout": seconds}]}]
    return {"hooks": hooks}


def hook_label(event: str) -> str:
    """The snake_case label of an event in trust keys: PreToolUse -> pre_tool_use."""
    return EVENT_LABELS[event]


def trusted_hash(event: str, group: Mapping[str, Any], handler: Mapping[str, Any]) -> str:
    """The ``trusted_hash`` Codex 0.171.0 writes for ``handler`` of a matcher ``group`` of
    ``event`` (codex.md, "Hooks: trust"): the product's hash (purplemux.agents.codex.trust),
    so the e2e tier can pre-trust its recording hook and still run the daemon
    (``--dangerously-bypass-hook-trust`` runs the TUI without one). test_codex_home checks it
    against the hashes Codex itself wrote (samples/codex-0.171.0/manual/hash-vectors.json)."""
    return trust.trusted_hash(hook_label(event), {**group, "hooks": [handler]})


def hooks_trust_config(declared_in: Path, hooks: Mapping[str, Any]) -> dict[str, Any]:
    """The config.toml ``[hooks.state]`` entries that trust every handler of a hooks.json at
    ``declared_in`` (an absolute path: a hash is void once the file moves)."""
    state: dict[str, Any] = {}
    for event, groups in hooks.get("hooks", {}).items():
        for g, group in enumerate(groups):
            for h, handler in enumerate(group.get("hooks", [])):
                key = trust.state_key(declared_in, hook_label(event), g, h)
                state[key] = {"trusted_hash": trusted_hash(event, group, handler)}
    return {"hooks": {"state": state}}


@dataclass(frozen=True)
class CodexProcess:
    pid: int
    argv: tuple[str, ...]

    @property
    def is_daemon(self) -> bool:
        """The app-server daemon itself (not its pid-update-loop, not a TUI)."""
        return "app-server" in self.argv[1:2] and "--managed-daemon" in self.argv


@dataclass(slots=True)
class CodexHome:
    """A throw-away HOME, its CODEX_HOME (``HOME/.codex``) and a project dir in HOME.

    :meth:`write` (re)writes ``config.toml`` and, when a hook command is set, ``hooks.json``
    plus (with ``trust_hooks``) the ``[hooks.state]`` entries that trust it, so the TUI opens
    no "Hooks need review" screen and the hooks run in the daemon."""

    home: Path
    codex_home: Path
    project: Path
    base_url: str
    hook_command: str | None = None
    hook_events: tuple[str, ...] = CODEX_HOOK_EVENTS
    trust_hooks: bool = True
    #: Merged into the base config (tables recursively), e.g. ``{"tui": {"terminal_title":
    #: ["spinner", "thread-id"]}}`` or ``{"features": {"daemon_auto_start": False}}``.
    extra_config: dict[str, Any] = field(default_factory=dict)
    #: Raw TOML appended after everything else: only tables the base config does not have
    #: (TOML forbids defining one twice); for [tui], [features] ... use ``extra_config``.
    extra_toml: str = ""

    @property
    def config_path(self) -> Path:
        return self.codex_home / "config.toml"

    @property
    def hooks_path(self) -> Path:
        return self.codex_home / "hooks.json"

    @property
    def sessions_dir(self) -> Path:
        """Where the rollout files go: ``sessions/YYYY/MM/DD/rollout-<ts>-<thread>.jsonl``."""
        return self.codex_home / "sessions"

    @property
    def daemon_dir(self) -> Path:
        return self.codex_home / "app-server-daemon"

    @property
    def updater_pid_path(self) -> Path:
        return self.daemon_dir / "daemon-updater.pid"

    @property
    def daemon_pid_path(self) -> Path:
        return self.daemon_dir / "daemon.pid"

    def rollouts(self) -> list[Path]:
        return sorted(self.sessions_dir.glob("*/*/*/rollout-*.jsonl"))

    def write(self) -> None:
        """Write config.toml (and hooks.json) from the fields; a running daemon reads hook
        changes only for new threads, so change them before starting Codex."""
        config = merge_config(base_config(self.project, self.base_url), self.extra_config)
        if self.hook_command is not None:
            hooks = codex_hooks_json(self.hook_command, self.hook_events)
            self.hooks_path.write_text(json.dumps(hooks, indent=2))
            if self.trust_hooks:
                config = merge_config(config, hooks_trust_config(self.hooks_path, hooks))
        else:
            self.hooks_path.unlink(missing_ok=True)
        header = "# Written by tests/e2e/codex_harness.py for the fake Responses API.\n"
        extra = f"\n{self.extra_toml.strip()}\n" if self.extra_toml.strip() else ""
        self.config_path.write_text(header + dump_toml(config) + extra)

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return codex_env(self, extra)

    def processes(self) -> list[CodexProcess]:
        """Every live process of this CODEX_HOME: its path in the command line (the daemon's
        binary copy lives under it) or ``CODEX_HOME=<it>`` in the environment (TUIs, hooks,
        tool commands, the tmux server)."""
        return processes_of(self.codex_home)

    def daemons(self) -> list[CodexProcess]:
        """The app-server daemons of this CODEX_HOME (one at most, while any TUI uses it)."""
        return [p for p in self.processes() if p.is_daemon]


def make_codex_home(
    root: Path,
    base_url: str,
    *,
    hook_command: str | None = None,
    hook_events: Iterable[str] = CODEX_HOOK_EVENTS,
    trust_hooks: bool = True,
    project_name: str = "proj",
    extra_config: Mapping[str, Any] | None = None,
    extra_toml: str = "",
) -> CodexHome:
    """Create ``root/home`` with ``.codex/config.toml`` (and ``.codex/hooks.json`` running
    ``hook_command`` for every event, trusted unless ``trust_hooks`` is false) and the
    project ``root/home/<project_name>``. ``extra_config`` is merged into config.toml,
    ``extra_toml`` appended to it."""
    home = root.resolve() / "home"
    codex_home = CodexHome(
        home,
        home / ".codex",
        home / project_name,
        base_url,
        hook_command=hook_command,
        hook_events=tuple(hook_events),
        trust_hooks=trust_hooks,
        extra_config=dict(extra_config or {}),
        extra_toml=extra_toml,
    )
    codex_home.project.mkdir(parents=True, exist_ok=True)
    codex_home.codex_home.mkdir(exist_ok=True)
    codex_home.write()
    return codex_home


#: Variables of the outer environment that must not reach Codex or tmux.
_SCRUB_PREFIXES = ("OPENAI_", "CODEX_", "TMUX", "ANTHROPIC_", "CLAUDE_", "AZURE_", "RUST_LOG")


def codex_env(home: CodexHome, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of the tmux server, and so of every TUI and the daemon: the outer one
    without OpenAI/Codex/tmux variables, plus HOME, CODEX_HOME and the fake key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUB_PREFIXES)}
    env.pop("PYTEST_CURRENT_TEST", None)
    env.update(
        {
            "HOME": str(home.home),
            "CODEX_HOME": str(home.codex_home),
            "FAKE_OPENAI_KEY": FAKE_OPENAI_KEY,
            "LANG": env.get("LANG") or "C.UTF-8",
        }
    )
    env.update(extra or {})
    return env


def processes_of(codex_home: Path) -> list[CodexProcess]:
    """Processes whose command line holds ``codex_home`` or whose environment sets
    ``CODEX_HOME`` to it (zombies left out)."""
    needle = str(codex_home).encode()
    env_entry = b"CODEX_HOME=" + needle
    found: list[CodexProcess] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state == "Z" or not cmdline:
            continue
        if needle in cmdline or env_entry in environ.split(b"\0"):
            argv = tuple(a.decode(errors="replace") for a in cmdline.rstrip(b"\0").split(b"\0"))
            found.append(CodexProcess(int(entry.name), argv))
    return found


def _read_pid(path: Path) -> int | None:
    """A pid file of the daemon: JSON ``{"pid": ...}`` or a bare number."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if isinstance(data, dict):
        data = data.get("pid")
    return data if isinstance(data, int) and data > 1 else None


# ---------------------------------------------------------------------------------------------
# Codex in tmux


class TmuxCodex:
    """A private tmux server (``tmux -L purplemux-e2e-codex-<random> -f /dev/null``) whose
    panes run Codex TUIs of one :class:`CodexHome`, hence one app-server daemon.

    The server is started with the Codex environment (:func:`codex_env`); every pane inherits
    it, so the hooks of every pane's threads see the environment of the first TUI, which
    started the daemon (its ``$TMUX_PANE`` too). :meth:`stop` ends it all; safe to call twice.
    """

    WIDTH = 160
    HEIGHT = 50
    SESSION = "codex"

    def __init__(
        self,
        codex_bin: Path,
        home: CodexHome,
        *,
        env: Mapping[str, str] | None = None,
        socket_name: str | None = None,
    ) -> None:
        self.codex_bin = codex_bin
        self.home = home
        self.socket_name = socket_name or f"purplemux-e2e-codex-{secrets.token_hex(4)}"
        self.env = codex_env(home, env)
        self.panes: list[CodexPane] = []
        self._socket_path: Path | None = None
        self.stopped = False

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

    def command_line(self, args: Sequence[str]) -> str:
        return "exec " + shlex.join([str(self.codex_bin), *args])

    def start_pane(
        self,
        args: Sequence[str] = (),
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CodexPane:
        """Start ``codex <args>`` in a new pane (the first one creates the server and its
        session, later ones a new window). Returns at once; see :meth:`CodexPane.wait_ready`."""
        if shutil.which("tmux") is None:
            raise HarnessError("tmux is not on PATH")
        if self.stopped:
            raise HarnessError("this tmux server was stopped")
        cwd = cwd or self.home.project
        env_args = [a for k, v in (env or {}).items() for a in ("-e", f"{k}={v}")]
        fmt = ("-P", "-F", "#{pane_id} #{pane_pid}")
        if not self.panes:
            out = self.tmux(
                "start-server",
                ";", "set-option", "-g", "remain-on-exit", "on",
                ";", "set-option", "-g", "history-limit", "5000",
                ";", "set-option", "-g", "focus-events", "on",
                ";", "new-session", "-d", "-s", self.SESSION,
                "-x", str(self.WIDTH), "-y", str(self.HEIGHT),
                "-c", str(cwd), *env_args, *fmt, self.command_line(args),
            ).stdout.split()  # fmt: skip
            socket_path = self.tmux("display-message", "-p", "#{socket_path}").stdout.strip()
            self._socket_path = Path(socket_path) if socket_path else None
        else:
            out = self.tmux(
                "new-window", "-d", "-t", f"{self.SESSION}:", "-c", str(cwd),
                *env_args, *fmt, self.command_line(args),
            ).stdout.split()  # fmt: skip
        pane = CodexPane(self, out[0], int(out[1]), cwd)
        self.panes.append(pane)
        return pane

    # -- teardown ----------------------------------------------------------------------------

    def daemon_stop(self, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        """``codex app-server daemon stop`` for this CODEX_HOME (fires SessionEnd for every
        loaded thread). Harmless when no daemon runs."""
        return subprocess.run(
            [str(self.codex_bin), "app-server", "daemon", "stop"],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.home.home,
            timeout=timeout,
        )

    def stop(self, timeout: float = 15.0) -> None:
        """Stop the daemon, kill its updater loop and the tmux server, then make sure no
        process of this CODEX_HOME is left: anything still alive after ``timeout`` is killed
        and reported with :class:`LeftoverProcesses`. Also removes the daemon's 385 MB copy of
        the binaries under ``$CODEX_HOME/packages``. Safe to call twice."""
        if self.stopped:
            return
        self.stopped = True
        errors: list[str] = []
        try:
            stopped = self.daemon_stop()
            if stopped.returncode != 0:
                errors.append(f"daemon stop exited {stopped.returncode}: {stopped.stderr[-500:]}")
        except (OSError, subprocess.TimeoutExpired) as exc:
            errors.append(f"daemon stop failed: {exc!r}")
        updater = _read_pid(self.home.updater_pid_path)
        if updater is not None and self._owns(updater):
            _signal(updater, signal.SIGTERM)
        self.tmux("kill-server", check=False)
        if self._socket_path is not None:
            with contextlib.suppress(OSError):
                self._socket_path.unlink()
        try:
            wait_until(
                lambda: not self.home.processes(),
                timeout,
                interval=0.1,
                describe=lambda: f"no process of {self.home.codex_home}: {self.home.processes()}",
            )
        except TimeoutError:
            left = self.home.processes()
            for proc in left:
                _signal(proc.pid, signal.SIGKILL)
            errors.append(f"still alive {timeout:.0f}s after the teardown, killed: {left}")
        shutil.rmtree(self.home.codex_home / "packages", ignore_errors=True)
        if errors:
            raise LeftoverProcesses("; ".join(errors))

    def _owns(self, pid: int) -> bool:
        return any(p.pid == pid for p in self.home.processes())

    def __enter__(self) -> TmuxCodex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


@dataclass
class CodexPane:
    """One Codex TUI in a pane of a :class:`TmuxCodex` server."""

    server: TmuxCodex
    pane_id: str
    pane_pid: int
    cwd: Path
    #: How often send_text had to press Enter again (see its docstring).
    enter_retries: int = field(default=0)
    #: How often send_text cleared the composer and typed its text again.
    retypes: int = field(default=0)

    @property
    def project_name(self) -> str:
        return self.cwd.name

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.server.tmux(*args, check=check)

    # -- reading -----------------------------------------------------------------------------

    def title(self) -> str:
        """The pane title Codex sets: the project name before the first prompt, then
        ``"<thread title> | <project>"``; a braille spinner prefix while busy,
        ``"[ ! ] Action Required | ..."`` while a dialog waits; "" after the TUI quit."""
        return self._tmux(
            "display-message", "-p", "-t", self.pane_id, "#{pane_title}"
        ).stdout.rstrip("\n")

    def capture(self, history: bool = False) -> str:
        """The pane's text (``capture-pane -p``); with ``history`` the scrollback too."""
        args = ["capture-pane", "-p", "-t", self.pane_id]
        if history:
            args += ["-S", "-"]
        return self._tmux(*args).stdout

    def composer(self) -> str | None:
        """The text in the composer, "" when it shows the placeholder, None when no composer
        is on screen. The composer is the last line starting with COMPOSER_MARK plus the
        lines under it up to the first blank one (a long prompt wraps onto those)."""
        return composer_text(self.capture())

    def dead(self) -> bool:
        proc = self._tmux("display-message", "-p", "-t", self.pane_id, "#{pane_dead}", check=False)
        return proc.returncode != 0 or proc.stdout.strip() == "1"

    # -- waiting -----------------------------------------------------------------------------

    def wait_for_screen(
        self,
        pattern: str | re.Pattern[str] | Callable[[str], bool],
        timeout: float = DEFAULT_TIMEOUT,
        history: bool = False,
    ) -> str:
        """Poll the screen until it contains ``pattern`` (a string, a regex searched, or a
        predicate over the screen); return that screen. TimeoutError shows the last one."""
        last = ""

        def probe() -> str | None:
            nonlocal last
            last = self.capture(history=history)
            if isinstance(pattern, str):
                ok = pattern in last
            elif isinstance(pattern, re.Pattern):
                ok = pattern.search(last) is not None
            else:
                ok = pattern(last)
            return last if ok else None

        return wait_until(
            probe,
            timeout,
            describe=lambda: f"screen to show {pattern!r}; title {self.title()!r}, screen:\n{last}",
        )

    def wait_title(
        self, predicate: Callable[[str], bool], timeout: float = DEFAULT_TIMEOUT, what: str = ""
    ) -> str:
        last = ""

        def probe() -> str | None:
            nonlocal last
            last = self.title()
            return last if predicate(last) else None

        return wait_until(
            probe,
            timeout,
            describe=lambda: (
                f"pane title {what or predicate!r}; last {last!r}, screen:\n{self.capture()}"
            ),
        )

    def wait_ready(self, timeout: float = DEFAULT_TIMEOUT) -> str:
        """Wait until the thread has started: the title is the project name with no spinner
        (Codex ignores Enter before that; the first start of a CODEX_HOME copies the daemon's
        binaries and takes longest). Also after ``/new`` or ``/clear``. Returns the title."""
        return self.wait_title(lambda t: t == self.project_name, timeout, "== project name")

    def wait_idle(self, timeout: float = DEFAULT_TIMEOUT) -> str:
        """Wait until the title shows no spinner and no Action Required (the turn ended)."""
        return self.wait_title(is_idle_title, timeout, "idle")

    # -- driving -----------------------------------------------------------------------------

    def send_keys(self, *keys: str) -> None:
        """Press tmux keys: "Enter", "Escape", "y", "C-c", ..."""
        self._tmux("send-keys", "-t", self.pane_id, *keys)

    def answer_dialog(self, key: str, dialog: str = APPROVAL_QUESTION) -> int:
        """Press ``key`` on the dialog whose screen shows ``dialog``, and wait until the dialog
        has left the screen; the presses it took. Under load the TUI can drop a key pressed as
        its dialog draws (seen with four workers: a "y" on the approval, then no PostToolUse in
        30 s), as a person sees nothing happen and presses again: pressed again only while that
        dialog is still on screen, RETYPES times at most."""
        for presses in range(1, RETYPES + 1):
            self.send_keys(key)
            try:
                wait_until(
                    lambda: dialog not in self.capture(),
                    REPRESS_AFTER,
                    describe=f"the dialog {dialog!r} gone after {key!r}",
                )
                return presses
            except TimeoutError:
                continue
        raise HarnessError(f"{key!r} pressed {RETYPES} times; the dialog {dialog!r} stays")

    def type_text(self, text: str) -> None:
        """Type ``text`` literally (``send-keys -l``), no Enter."""
        self._tmux("send-keys", "-t", self.pane_id, "-l", text)

    def send_text(self, text: str, enter: bool = True, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Type ``text`` into the composer and submit it with Enter (a separate send-keys).

        Waits until the text shows in the composer before pressing Enter (a burst of keys can
        be taken as a paste, and an Enter inside it as a newline), and presses Enter again only
        when the text still sits in the composer a while later. Call :meth:`wait_ready` first:
        Codex ignores Enter until the thread has started.
        """
        self.type_text(text)
        if not enter:
            return
        needle = "".join(text.split())[-40:]

        def in_composer() -> bool:
            box = self.composer()
            return box is not None and needle in "".join(box.split())

        # Under load the TUI can drop a typed key ("ASK:Which colour?" arrived without its
        # "?"): then clear the composer and type the text again, a few times at most.
        for _ in range(RETYPES):
            try:
                wait_until(in_composer, RETYPE_AFTER, describe="the text in the composer")
                break
            except TimeoutError:
                box = self.composer() or ""
                self.send_keys(*["BSpace"] * (len(box) + 2))
                wait_until(
                    lambda: not (self.composer() or "").strip(), RETYPE_AFTER, describe="cleared"
                )
                self.retypes += 1
                self.type_text(text)
        wait_until(
            in_composer,
            timeout,
            describe=lambda: f"{text!r} in the composer; screen:\n{self.capture()}",
        )
        deadline = time.monotonic() + timeout
        while True:
            self.send_keys("Enter")
            try:
                wait_until(
                    lambda: not in_composer() or self.dead(), ENTER_RETRY_AFTER, describe="submit"
                )
                return
            except TimeoutError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(
                        f"Enter did not submit {text!r}; screen:\n{self.capture()}"
                    ) from None
            self.enter_retries += 1


def composer_text(screen: str) -> str | None:
    """See :meth:`CodexPane.composer`; whitespace runs (the wrapping) become one space."""
    lines = screen.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.startswith(COMPOSER_MARK)]
    if not starts:
        return None
    box = [lines[starts[-1]][len(COMPOSER_MARK) :]]
    for line in lines[starts[-1] + 1 :]:
        if not line.strip():
            break
        box.append(line)
    text = " ".join(" ".join(box).split())
    return "" if text == COMPOSER_PLACEHOLDER else text


def by_start(calls: Iterable[HookCall]) -> list[HookCall]:
    """Hook calls in the order the hooks started (record_hook.sh's ``ts``), not the order
    their lines were appended: hooks are separate processes (codex.md: order by start)."""
    return sorted(calls, key=lambda c: c.ts)


def is_idle_title(title: str) -> bool:
    """A pane title of a TUI that is not working and not waiting for an answer."""
    return bool(title) and not _SPINNER.match(title) and ACTION_REQUIRED not in title
