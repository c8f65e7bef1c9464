"""A toy third agent, defined here and nowhere else: it registers through the one door
(agents/registry.py `register`) and is then listed, installed and watched like Claude and Codex,
without a change to any file outside this package (tests/agents/test_door.py).

What "toy" is: a program whose config dir ($TOY_HOME, default ~/.toy) holds `hooks.txt` (its
hook command, one line, written by install-hooks) and `status/<session id>` files it keeps
saying "busy" or "idle"; its hooks are Claude-shaped JSON (`hook_event_name`, `session_id`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from purplemux.agents.base import Agent, Changed, Daemon, Installer, Live
from purplemux.agents.facts import Facts
from purplemux.core import events as ev
from purplemux.core.checks import Check
from purplemux.core.events import Event, Source
from purplemux.core.model import Session
from purplemux.io.settings import Account, Settings
from purplemux.io.watch import watch_dirs

FACTS = Facts(
    name="toy",
    label="Toy",
    command="toy",
    config_env="TOY_HOME",
    default_dir=".toy",
    accounts_env="PURPLEMUX_TOY_HOMES",
    canonical_dirs=False,
)
HOOKS = "hooks.txt"


def hook_event(name: str, payload: Mapping[str, Any], common: dict[str, Any]) -> Event:
    """Its hooks: Start, Prompt (a turn begins) and Stop; anything else is `Other`."""
    kinds: dict[str, type[Event]] = {
        "Start": ev.SessionStart,
        "Prompt": ev.Prompt,
        "Stop": ev.Stop,
    }
    return kinds.get(name, ev.Other)(**common)


def _install(home: Path, script: Path, daemon_home: Path) -> Changed:
    path = home / HOOKS
    line = f"PURPLEMUX_HOME={daemon_home} PURPLEMUX_AGENT=toy {script}\n"
    if path.exists() and path.read_text() == line:
        return Changed((f"{path}: nothing to change (already installed)",))
    path.write_text(line)
    return Changed((f"installed purplemux hooks in {path}",))


def _uninstall(home: Path) -> Changed:
    path = home / HOOKS
    if not path.exists():
        return Changed((f"{path}: nothing to change (no purplemux hooks)",))
    path.unlink()
    return Changed((f"removed purplemux hooks from {path}",))


def _checks(settings: Settings, account: Account) -> list[Check]:
    found = (account.dir / HOOKS).exists()
    if found:
        return [Check(f"toy hooks ({account.label})", "ok", f"in {account.dir / HOOKS}")]
    fix = "run: purplemux install-hooks --agent toy"
    return [Check(f"toy hooks ({account.label})", "warn", "not installed", fix)]


def live(settings: Settings) -> Live:
    """Its one live source: the status files of each of its config dirs."""
    folders = {a.dir / "status": a.label for a in settings.accounts_of(FACTS.name)}

    async def toy_status(rt: Daemon) -> None:
        seen: dict[str, str] = {}
        async for _ in watch_dirs(
            lambda: {f for f in folders if f.is_dir()} or {f.parent for f in folders},
            name="toy status",
            debounce_ms=10,
            step_ms=50,
            recheck_ms=1000,
        ):
            for folder, label in folders.items():
                for file in sorted(folder.glob("*")) if folder.is_dir() else ():
                    said = file.read_text().strip()
                    if seen.get(file.name) == said:
                        continue
                    seen[file.name] = said
                    kind = ev.StatusBusy if said == "busy" else ev.StatusIdle
                    rt.engine.post(
                        kind(
                            session_id=file.name,
                            at=file.stat().st_mtime,
                            id=f"toy:{file.name}:{said}:{file.stat().st_mtime_ns}",
                            source=Source.SESSION_FILE,
                            agent=FACTS.name,
                            account=label,
                        )
                    )

    def judge(sessions: Sequence[Session], now: float) -> list[Event]:
        return []  # its status files say, once its source has read them

    return Live(parts=(toy_status,), judge=judge)


AGENT = Agent(
    facts=FACTS,
    hook_event=hook_event,
    pane_from_hook=True,
    makes_row=lambda event: None,
    is_tui=lambda info: info.name == "toy",
    recognise=lambda screen, ctx: None,  # it shows no dialog purplemux answers
    approve=("Yes", "No"),
    key_guard=0.0,
    input_box=None,
    shows=None,
    installer=Installer(
        target=lambda folder: folder,
        present=lambda folder: folder.is_dir(),
        missing="no toy home here (set TOY_HOME)",
        install=_install,
        uninstall=_uninstall,
        standalone=None,
        checks=_checks,
        cli=None,
    ),
    transcripts=None,
    live=live,
    background=None,
    statusline=None,
)
