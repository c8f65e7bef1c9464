"""doctor's checks of Claude Code: its hooks and statusLine in each config dir's settings.json,
the config dir itself, and the `claude` command."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from purplemux.agents import hookfiles
from purplemux.agents.claude import statusline
from purplemux.agents.claude.install import (
    HOOK_EVENTS,
    SettingsError,
    is_ours,
    read_file,
)
from purplemux.agents.doctor import (
    Which,
    first,
    hook_home_of,
    hook_script_of,
    named,
    on_path,
    words,
)
from purplemux.core.checks import Check
from purplemux.core.termtext import clean
from purplemux.io.settings import Account, Settings


def _claude_settings(
    settings: Settings, check: str, account: Account | None
) -> tuple[Path, str, str]:
    """(settings.json, the check's name, its fix) for a Claude account (default: the first)."""
    account = account or first(settings, "claude")
    path = account.dir / "settings.json" if account else settings.settings_json
    name = named(settings, check, account)
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
    parts = words(command or "")
    script = Path(parts[1]).expanduser()
    home = Path(parts[0].removeprefix("PURPLEMUX_HOME=")).expanduser()
    if not script.is_file() or not os.access(script, os.X_OK):
        return Check(name, "warn", f"{script} is missing or not executable", fix)
    if home.resolve() != settings.home.resolve():
        return Check(name, "warn", f"it reports to {home}, not to {settings.home}", fix)
    runs = f"then runs {clean(user)!r}" if user else "no statusLine of your own"
    return Check(name, "ok", f"wrapped in {path} ({runs})")


def check_claude_dir(settings: Settings, account: Account | None = None) -> Check:
    """Claude's config dir exists and Claude has run with it (sessions/, projects/)."""
    account = account or first(settings, "claude")
    root = account.dir if account else settings.claude_dir
    name = named(settings, "claude config", account)
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


def check_claude_cli(which: Which = shutil.which) -> Check:
    """The `claude` command is on PATH (a warning only: it may live where we cannot see)."""
    return on_path(
        "claude", which, "not on PATH", "install Claude Code: npm i -g @anthropic-ai/claude-code"
    )


def checks(settings: Settings, account: Account) -> list[Check]:
    """Every check of one Claude config dir: its hooks, its statusLine, the dir itself."""
    return [
        check_hooks(settings, account),
        check_statusline(settings, account),
        check_claude_dir(settings, account),
    ]
