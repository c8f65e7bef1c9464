"""What every agent's doctor checks share: how a hook command names its script and home, a
check's name per account, and a command on PATH (the checks: agents/<agent>/doctor.py)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

from purplemux.agents.hookfiles import SCRIPT_NAME
from purplemux.core.checks import Check
from purplemux.io.settings import Account, Settings

Which = Callable[[str], str | None]


def words(command: str) -> list[str]:
    """A hook command's words as the shell splits them (none if it cannot be split)."""
    try:
        return shlex.split(command)
    except ValueError:
        return []


def hook_script_of(command: str) -> Path | None:
    """The script a hook command runs (the word ending in status-hook.sh), if any."""
    script = next((w for w in words(command) if w.endswith(SCRIPT_NAME)), None)
    return Path(script).expanduser() if script else None


def hook_home_of(command: str) -> Path | None:
    """The PURPLEMUX_HOME a hook command names, if it names one."""
    prefix = "PURPLEMUX_HOME="
    home = next((w.removeprefix(prefix) for w in words(command) if w.startswith(prefix)), None)
    return Path(home).expanduser() if home is not None else None


def named(settings: Settings, name: str, account: Account | None) -> str:
    """A check's name, with its account when the agent has several ("hooks (claude-work)")."""
    if account is None or len(settings.accounts_of(account.agent)) < 2:
        return name
    return f"{name} ({account.label})"


def first(settings: Settings, agent: str) -> Account | None:
    return next(iter(settings.accounts_of(agent)), None)


def on_path(command: str, which: Which, missing: str, fix: str) -> Check:
    """`ok` with where `command` is, or a warning (`missing`, `fix`) when PATH has none."""
    path = which(command)
    if path is None:
        return Check(command, "warn", missing, fix)
    return Check(command, "ok", path)
