"""install-hooks / uninstall-hooks for every agent: the script once, then each agent's config.

The hook script is copied into the daemon's home once (`install_script`); each agent's package
merges it into that agent's own config and takes exactly its entries out again
through its `Installer` (agents/base.py; Claude's settings.json, Codex's hooks.json and the trust
entries in config.toml). `targets` says which agents are set up on this machine.
"""

from __future__ import annotations

import contextlib
import stat
from dataclasses import dataclass
from pathlib import Path

from purplemux.agents import facts, hookfiles, registry
from purplemux.io import paths
from purplemux.io.settings import Settings


@dataclass(frozen=True, slots=True)
class Target:
    """One agent's config that install-hooks changes."""

    agent: str
    path: Path
    """What its agent's installer changes (Claude's settings.json, Codex's home)."""
    present: bool
    """The agent is set up here (its installer says: Claude always, its settings file is made;
    Codex when its home exists)."""
    account: str = ""
    """The account's label (Settings.accounts)."""


class UnknownAccount(ValueError):
    """--account names no configured account; the message lists them."""


def targets(
    settings: Settings, agent: str | None = None, account: str | None = None
) -> list[Target]:
    """What install-hooks acts on: every account (each Claude config dir's settings.json, each
    Codex home), or those of `agent` / the one labelled `account`; without `agent` or
    `account`, only what is set up here."""
    out: list[Target] = []
    for a in settings.accounts:
        installer = registry.get(a.agent).installer
        out.append(Target(a.agent, installer.target(a.dir), installer.present(a.dir), a.label))
    if account is not None:
        chosen = [t for t in out if t.account == account and agent in (None, t.agent)]
        if not chosen:
            known = ", ".join(f"{t.account} ({t.agent})" for t in out)
            raise UnknownAccount(
                f"no account {account!r}: the accounts are {known} "
                f"({', '.join(f.accounts_env for f in facts.known())})"
            )
        return chosen
    if agent is not None:
        return [t for t in out if t.agent == agent]
    return [t for t in out if t.present]


def install_script(home: Path) -> Path:
    """Copy the packaged hook script to home/status-hook.sh (mode 0755), and the statusLine
    wrapper next to it (statusline.sh); return the hook script's path."""
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    _copy(paths.statusline_script(), hookfiles.statusline_script(home))
    target = home / hookfiles.SCRIPT_NAME
    _copy(paths.hook_script(), target)
    return target


def _copy(source: Path, target: Path) -> None:
    data = source.read_bytes()
    with contextlib.suppress(OSError):
        if target.read_bytes() == data and stat.S_IMODE(target.stat().st_mode) == 0o755:
            return
    hookfiles.write_atomic(target, data, 0o755)
