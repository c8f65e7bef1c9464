"""`purplemux doctor`: one check per part, each saying what is wrong and how to fix it."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TextIO

from purplemux import __version__
from purplemux.agents import hookfiles
from purplemux.agents.claude import statusline
from purplemux.agents.claude.install import (
    HOOK_EVENTS,
    SCRIPT_NAME,
    SettingsError,
    is_ours,
    read_file,
)
from purplemux.core.termtext import clean
from purplemux.io.settings import Account, Settings
from purplemux.io.tmux import TmuxError, run_blocking

Level = Literal["ok", "warn", "fail"]
Which = Callable[[str], str | None]

INOTIFY_WATCHES = Path("/proc/sys/fs/inotify/max_user_watches")
LOW_WATCHES = 8192
"""Below this, a few editors and dev servers can exhaust inotify watches and blind the daemon."""
VAPID_KEY = "vapid_private.pem"
LABELS = {"ok": "ok", "warn": "warn", "fail": "FAIL"}
COLOURS = {"ok": "\033[32m", "warn": "\033[33m", "fail": "\033[31;1m"}


@dataclass(frozen=True, slots=True)
class Check:
    """One finding: what was checked, how it went, what was seen, and how to fix it."""

    name: str
    level: Level
    detail: str
    fix: str = ""

    def line(self, colour: bool = False) -> str:
        """`ok|warn|FAIL  name: detail — fix` (the fix only when not ok)."""
        label = LABELS[self.level].ljust(4)
        if colour:
            label = f"{COLOURS[self.level]}{label}\033[0m"
        # Details quote paths, versions and answers from outside: plain text only.
        text = f"{label}  {clean(self.name)}: {clean(self.detail)}"
        if self.level != "ok" and self.fix:
            text += f" — {clean(self.fix)}"
        return text


def _private_file(path: Path) -> tuple[bool, int | None]:
    """Whether path is a regular file, and its permission bits."""
    try:
        st = path.stat()
    except OSError:
        return False, None
    return stat.S_ISREG(st.st_mode), stat.S_IMODE(st.st_mode)


def _daemon_url(settings: Settings) -> str:
    try:
        port = int(settings.port_path.read_text().strip())
    except (OSError, ValueError):
        port = settings.port
    return f"{settings.base_url.rsplit(':', 1)[0]}:{port}"


def check_daemon(settings: Settings, timeout: float = 2.0) -> Check:
    """The daemon answers /api/health, runs this version, and accepts our token."""
    url = _daemon_url(settings)
    start = "start it: `purplemux serve` (or `purplemux service install --enable`)"
    try:
        with urllib.request.urlopen(url + "/api/health", timeout=timeout) as resp:
            health = json.loads(resp.read())
    except (OSError, ValueError) as exc:
        return Check("daemon", "fail", f"no answer at {url} ({_reason(exc)})", start)
    version = str(health.get("version", "?")) if isinstance(health, dict) else "?"
    token = _read(settings.token_path)
    if not token:
        return Check("daemon", "fail", f"running {version} at {url}, but no token", start)
    req = urllib.request.Request(url + "/api/sessions")
    req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            live = len(json.loads(resp.read()).get("sessions", []))
    except urllib.error.HTTPError as exc:
        if exc.code == 401:
            return Check(
                "daemon",
                "fail",
                f"running {version} at {url}, but it rejects the token in {settings.token_path}",
                "another daemon home? restart the daemon so both use the same PURPLEMUX_HOME",
            )
        return Check("daemon", "fail", f"/api/sessions answered HTTP {exc.code}", start)
    except (OSError, ValueError) as exc:
        return Check("daemon", "fail", f"/api/sessions failed ({_reason(exc)})", start)
    detail = f"running {version} at {url}, {live} live session{'s' * (live != 1)}"
    if version != __version__:
        return Check(
            "daemon",
            "warn",
            f"{detail}; this command is {__version__}",
            "restart the daemon to run the installed version",
        )
    return Check("daemon", "ok", detail)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    return str(exc) or type(exc).__name__


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def check_token(settings: Settings) -> Check:
    """The access token exists and only its owner can read it."""
    path = settings.token_path
    is_file, mode = _private_file(path)
    if not is_file or not _read(path):
        return Check(
            "token", "fail", f"{path} is missing", "start the daemon once: it creates the token"
        )
    if mode is not None and mode & 0o077:
        return Check(
            "token", "fail", f"{path} has mode {mode:04o}: others can read it", f"chmod 600 {path}"
        )
    return Check("token", "ok", f"{path} (mode 0600)")


def _words(command: str) -> list[str]:
    """A hook command's words as the shell splits them (none if it cannot be split)."""
    try:
        return shlex.split(command)
    except ValueError:
        return []


def hook_script_of(command: str) -> Path | None:
    """The script a hook command runs (the word ending in status-hook.sh), if any."""
    script = next((w for w in _words(command) if w.endswith(SCRIPT_NAME)), None)
    return Path(script).expanduser() if script else None


def hook_home_of(command: str) -> Path | None:
    """The PURPLEMUX_HOME a hook command names, if it names one."""
    prefix = "PURPLEMUX_HOME="
    home = next((w.removeprefix(prefix) for w in _words(command) if w.startswith(prefix)), None)
    return Path(home).expanduser() if home is not None else None


def _named(settings: Settings, name: str, account: Account | None) -> str:
    """A check's name, with its account when the agent has several ("hooks (claude-work)")."""
    if account is None or len(settings.accounts_of(account.agent)) < 2:
        return name
    return f"{name} ({account.label})"


def _first(settings: Settings, agent: str) -> Account | None:
    return next(iter(settings.accounts_of(agent)), None)


def _claude_settings(
    settings: Settings, check: str, account: Account | None
) -> tuple[Path, str, str]:
    """(settings.json, the check's name, its fix) for a Claude account (default: the first)."""
    account = account or _first(settings, "claude")
    path = account.dir / "settings.json" if account else settings.settings_json
    name = _named(settings, check, account)
    pick = f" --account {account.label}" if account and name != check else ""
    return path, name, f"run `purplemux install-hooks{pick}`"


def _settings_json(path: Path) -> object:
    """settings.json's JSON value, None when it is missing; SettingsError when it is not a
    readable file (read as the installer reads it: a FIFO never blocks), ValueError when it is
    not JSON."""
    raw = read_file(path)
    return None if raw is None else json.loads(raw.decode("utf-8"))


def check_hooks(settings: Settings, account: Account | None = None) -> Check:
    """Our hook is registered for every event, runs an existing script, for this daemon home
    (in `account`'s settings.json; default: the first Claude account's)."""
    path, name, fix = _claude_settings(settings, "hooks", account)
    try:
        data = _settings_json(path)
    except SettingsError as exc:  # not a readable file: said as the installer says it
        return Check(name, "fail", str(exc).removesuffix(hookfiles.FIX), "then " + fix)
    except ValueError as exc:
        return Check(name, "fail", f"cannot read {path}: {exc}", "fix the JSON, then " + fix)
    if data is None:
        return Check(name, "fail", f"{path} does not exist", fix)
    hooks = data.get("hooks") if isinstance(data, dict) else None
    commands: dict[str, list[str]] = {}
    for event in HOOK_EVENTS:
        entries = hooks.get(event) if isinstance(hooks, dict) else None
        found = [
            h["command"]
            for entry in (entries if isinstance(entries, list) else [])
            if isinstance(entry, dict) and isinstance(entry.get("hooks"), list)
            for h in entry["hooks"]
            if is_ours(h)
        ]
        commands[event] = found
    missing = [e for e, found in commands.items() if not found]
    if len(missing) == len(HOOK_EVENTS):
        return Check(name, "fail", f"not installed in {path}", fix)
    if missing:
        return Check(name, "fail", f"missing for {', '.join(missing)} in {path}", fix)
    problems = []
    for command in sorted({c for found in commands.values() for c in found}):
        script = hook_script_of(command)
        if script is None or not script.is_file():
            problems.append(f"{script or command} does not exist")
        elif not os.access(script, os.X_OK):
            problems.append(f"{script} is not executable")
        home = hook_home_of(command)
        if home is not None and home.resolve() != settings.home.resolve():
            problems.append(f"they report to {home}, not to {settings.home}")
    if problems:
        return Check(name, "fail", "; ".join(problems), fix)
    return Check(name, "ok", f"all {len(HOOK_EVENTS)} events in {path}")


def check_statusline(settings: Settings, account: Account | None = None) -> Check:
    """Claude's statusLine goes through our wrapper, for this daemon home: the only way a
    subscription or gateway login's usage limits reach purplemux (a warning: nothing else
    depends on it). Its settings.json unreadable is check_hooks' failure, not this one's."""
    path, name, fix = _claude_settings(settings, "statusline", account)
    try:
        data = _settings_json(path)
    except ValueError:
        data = None
    if data is None:
        return Check(name, "warn", f"cannot read {path}: usage limits will not show", fix)
    current = data.get(statusline.KEY) if isinstance(data, dict) else None
    is_command = isinstance(current, dict) and current.get("type") == "command"
    command = current.get("command") if isinstance(current, dict) and is_command else None
    ours, user = statusline.wrapped_command(command)
    if not ours:
        if current is not None and (not is_command or not isinstance(command, str)):
            return Check(
                name,
                "warn",
                f'"{statusline.KEY}" in {path} is not a command: limits will not show',
                f'make it {{"type": "command", "command": ...}}, then {fix}',
            )
        return Check(name, "warn", f"not wrapped in {path}: usage limits will not show", fix)
    words = _words(command or "")
    script = Path(words[1]).expanduser()
    home = Path(words[0].removeprefix("PURPLEMUX_HOME=")).expanduser()
    if not script.is_file() or not os.access(script, os.X_OK):
        return Check(name, "warn", f"{script} is missing or not executable", fix)
    if home.resolve() != settings.home.resolve():
        return Check(name, "warn", f"it reports to {home}, not to {settings.home}", fix)
    runs = f"then runs {clean(user)!r}" if user else "no statusLine of your own"
    return Check(name, "ok", f"wrapped in {path} ({runs})")


def check_codex_hooks(settings: Settings, account: Account | None = None) -> Check | None:
    """Codex's hooks: ours for every event in $CODEX_HOME/hooks.json, and trusted (a hash in
    config.toml that Codex accepts now: a modified one silently stops running). None when no
    Codex home exists here (Codex is optional). `account`: which home (default: the first)."""
    from purplemux.agents.codex import install as codex
    from purplemux.agents.install import targets

    account = account or _first(settings, "codex")
    if account is None:
        return None
    [target] = targets(settings, "codex", account.label)
    if not target.present:
        return None
    script = settings.home / "status-hook.sh"
    title = _named(settings, "codex hooks", account)
    fix = "run: purplemux install-hooks --agent codex" + (
        f" --account {account.label}" if title != "codex hooks" else ""
    )
    try:
        st = codex.status(target.path, codex.hook_command(script, settings.home))
    except codex.CodexConfigError as exc:
        return Check(title, "fail", str(exc), "fix the file, then " + fix)
    if not st.installed:
        missing = ", ".join(st.missing)
        return Check(title, "fail", f"missing for {missing} in {st.hooks_json}", fix)
    if st.modified:
        which = ", ".join(st.modified)
        why = f"changed since they were trusted ({which}): Codex skips them without a word"
        return Check(title, "fail", why, fix)
    if st.untrusted:
        which = ", ".join(st.untrusted)
        return Check(title, "fail", f"not trusted in {st.config_toml} ({which})", fix)
    if st.other_command:
        return Check(
            title,
            "warn",
            f"installed for another purplemux home or script ({', '.join(st.other_command)})",
            fix,
        )
    return Check(title, "ok", f"all {len(codex.EVENTS)} events, trusted, in {target.path}")


def check_claude_dir(settings: Settings, account: Account | None = None) -> Check:
    """Claude's config dir exists and Claude has run with it (sessions/, projects/)."""
    account = account or _first(settings, "claude")
    root = account.dir if account else settings.claude_dir
    name = _named(settings, "claude config", account)
    if not root.is_dir():
        return Check(
            name,
            "fail",
            f"{root} does not exist",
            "run `claude` once, or set CLAUDE_CONFIG_DIR (several: PURPLEMUX_CLAUDE_DIRS) to the "
            "dirs Claude uses",
        )
    absent = [name for name in ("sessions", "projects") if not (root / name).is_dir()]
    if absent:
        return Check(
            name,
            "warn",
            f"{root} has no {' or '.join(n + '/' for n in absent)}",
            "start a Claude session once; until then only hooks report state",
        )
    return Check(name, "ok", f"{root}")


def _on_path(command: str, which: Which, missing: str, fix: str) -> Check:
    """`ok` with where `command` is, or a warning (`missing`, `fix`) when PATH has none."""
    path = which(command)
    if path is None:
        return Check(command, "warn", missing, fix)
    return Check(command, "ok", path)


def check_tmux(which: Which = shutil.which) -> Check:
    """tmux is on PATH (optional: without it, panes are not shown or marked)."""
    found = _on_path(
        "tmux",
        which,
        "not on PATH",
        "install tmux to see panes and mark them; sessions are still followed",
    )
    if found.level != "ok":
        return found
    try:
        out = run_blocking(None, "-V", timeout=2, tmux=found.detail)
    except TmuxError:
        return found
    return Check("tmux", "ok", out.strip() or found.detail)


def check_claude_cli(which: Which = shutil.which) -> Check:
    """The `claude` command is on PATH (a warning only: it may live where we cannot see)."""
    return _on_path(
        "claude", which, "not on PATH", "install Claude Code: npm i -g @anthropic-ai/claude-code"
    )


def check_curl(which: Which = shutil.which) -> Check:
    """curl is on PATH; without it the hook script spools every event to disk."""
    return _on_path(
        "curl",
        which,
        "not on PATH: hooks spool events to disk and the daemon picks them up (slower)",
        "install curl",
    )


def check_file_watch(platform: str = sys.platform, watches_path: Path = INOTIFY_WATCHES) -> Check:
    """watchfiles imports and, on Linux, inotify has room for our watches."""
    try:
        import watchfiles
    except ImportError as exc:
        return Check(
            "file watch", "fail", f"watchfiles does not import ({exc})", "pip install watchfiles"
        )
    version = getattr(watchfiles, "__version__", "?")
    if not platform.startswith("linux"):
        return Check("file watch", "ok", f"watchfiles {version}")
    try:
        limit = int(watches_path.read_text().strip())
    except (OSError, ValueError):
        return Check(
            "file watch",
            "warn",
            f"watchfiles {version}, but {watches_path} is not readable: inotify may be missing",
            "transcripts are then followed late; check the kernel's inotify support",
        )
    if limit < LOW_WATCHES:
        return Check(
            "file watch",
            "warn",
            f"watchfiles {version}, inotify max_user_watches is only {limit}",
            "sudo sysctl fs.inotify.max_user_watches=524288",
        )
    return Check("file watch", "ok", f"watchfiles {version}, inotify ({limit} watches)")


def check_push_keys(settings: Settings) -> Check:
    """The Web Push (VAPID) key exists and is private; made on first start when missing."""
    path = settings.home / VAPID_KEY
    is_file, mode = _private_file(path)
    if not is_file:
        return Check(
            "push keys",
            "warn",
            f"{path} does not exist yet",
            "it is made when a page first asks for notifications",
        )
    if mode is not None and mode & 0o077:
        return Check(
            "push keys",
            "fail",
            f"{path} has mode {mode:04o}: others can read it",
            f"chmod 600 {path}",
        )
    return Check("push keys", "ok", f"{path} (mode 0600)")


def check_broker(settings: Settings, timeout: float = 2.0) -> Check | None:
    """With several machines: the daemon's link to the shared Redis (None: no broker in use)."""
    try:
        url = _daemon_url(settings)
        with urllib.request.urlopen(url + "/api/health", timeout=timeout) as resp:
            health = json.loads(resp.read())
    except (OSError, ValueError):
        health = {}
    broker = health.get("broker") if isinstance(health, dict) else None
    state = broker.get("state") if isinstance(broker, dict) else None
    if not isinstance(broker, dict) or state in (None, "off"):
        if not settings.broker:
            return None
        return Check(
            "broker",
            "warn",
            "PURPLEMUX_BROKER is set, but the running daemon does not use a broker",
            "restart the daemon with the same environment (or `purplemux serve --broker URL`)",
        )
    if state == "connected":
        return Check("broker", "ok", "connected: this daemon shares its sessions with other hosts")
    since = broker.get("since")
    when = time.strftime("%H:%M:%S", time.localtime(float(since))) if since else "?"
    error = f" ({broker['error']})" if broker.get("error") else ""
    return Check(
        "broker",
        "warn",
        f"{state} since {when}{error}: this daemon serves only its own sessions meanwhile",
        "check that the Redis in PURPLEMUX_BROKER is reachable from this machine, and its "
        "password (PURPLEMUX_BROKER_PASSWORD_FILE); the daemon retries by itself",
    )


def run_checks(settings: Settings) -> list[Check]:
    """Every check, in the order a person would fix things."""
    broker = check_broker(settings)
    claude = settings.accounts_of("claude")
    codex_hooks = [check_codex_hooks(settings, a) for a in settings.accounts_of("codex")]
    return [
        check_daemon(settings),
        *([broker] if broker else []),
        check_token(settings),
        *(check_hooks(settings, a) for a in claude),
        *(check_statusline(settings, a) for a in claude),
        *(c for c in codex_hooks if c is not None),
        *(check_claude_dir(settings, a) for a in claude),
        check_file_watch(),
        check_push_keys(settings),
        check_tmux(),
        check_claude_cli(),
        check_curl(),
    ]


def report(checks: Iterable[Check], out: TextIO, colour: bool = False) -> int:
    """Print one line per check; the exit code is 1 if any required check failed."""
    failed = False
    for check in checks:
        print(check.line(colour), file=out)
        failed = failed or check.level == "fail"
    return 1 if failed else 0
