"""Codex as an `Agent` record (agents/base.py): everything purplemux knows of it."""

from __future__ import annotations

from pathlib import Path

from purplemux.agents.base import Agent, Changed, Installer, Transcripts
from purplemux.agents.codex import doctor, install, live
from purplemux.agents.codex.hooks import to_event
from purplemux.agents.codex.process import is_codex
from purplemux.agents.codex.rollout import RolloutReader
from purplemux.agents.codex.screen import recognise
from purplemux.agents.facts import CODEX


def _install(home_dir: Path, script: Path, home: Path) -> Changed:
    result = install.install(home_dir, install.hook_command(script, home))
    return Changed(tuple(install.summary(result, installed=True)))


def _uninstall(home_dir: Path) -> Changed:
    return Changed(tuple(install.summary(install.uninstall(home_dir), installed=False)))


INSTALLER = Installer(
    target=lambda folder: folder,
    present=lambda folder: folder.is_dir(),
    missing=(
        "no Codex home here (set CODEX_HOME or PURPLEMUX_CODEX_HOMES to the homes Codex uses)"
    ),
    install=_install,
    uninstall=_uninstall,
    standalone=None,
    checks=doctor.checks,
    cli=None,  # optional: its home says whether it is used (doctor checks its hooks there)
)

AGENT = Agent(
    facts=CODEX,
    hook_event=to_event,
    pane_from_hook=False,
    makes_row=lambda event: None,  # every hook of a thread makes its row
    is_tui=is_codex,
    recognise=recognise,
    approve=("Yes, proceed", "No, and tell Codex what to do differently"),
    key_guard=0.0,
    input_box=None,
    shows=None,
    installer=INSTALLER,
    # Its rollouts, under each home's sessions/: every token_count repeats the totals, so they
    # are read straight through; only its hooks and its files name a thread's rollout.
    transcripts=Transcripts(
        folder="sessions", reader=RolloutReader, tail_first=False, path_of=None
    ),
    live=live.live,
    background=None,
    statusline=None,
)
