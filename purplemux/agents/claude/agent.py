"""Claude Code as an `Agent` record (agents/base.py): everything purplemux knows of it."""

from __future__ import annotations

from pathlib import Path

from purplemux.agents import hookfiles
from purplemux.agents.base import Agent, Background, Changed, Installer, Transcripts
from purplemux.agents.claude import attach, doctor, install, live, statusline
from purplemux.agents.claude.background import not_a_row
from purplemux.agents.claude.hooks import to_event
from purplemux.agents.claude.input_box import read_input_box
from purplemux.agents.claude.process import is_claude, shows
from purplemux.agents.claude.screen import recognise
from purplemux.agents.claude.transcript import TranscriptReader, transcript_path
from purplemux.agents.facts import CLAUDE


def _install(settings_json: Path, script: Path, home: Path) -> Changed:
    command = install.hook_command(script, home)
    wrapper = (hookfiles.statusline_script(home), home)
    result = install.install(settings_json, command, statusline=wrapper)
    notes = (f"{settings_json}: {result.note}",) if result.note else ()
    return Changed((install.summary(result, installed=True),), notes)


def _uninstall(settings_json: Path) -> Changed:
    return Changed((install.summary(install.uninstall(settings_json), installed=False),))


def _standalone(path: Path, script: Path, home: Path) -> str:
    install.write_standalone(path, install.hook_command(script, home))
    return f"wrote {path}; run: claude --settings {path}"


INSTALLER = Installer(
    target=lambda folder: folder / "settings.json",
    present=lambda folder: True,  # its settings file is made
    missing="",
    install=_install,
    uninstall=_uninstall,
    standalone=_standalone,
    checks=doctor.checks,
    cli=doctor.check_claude_cli,
)

AGENT = Agent(
    facts=CLAUDE,
    hook_event=to_event,
    pane_from_hook=True,
    makes_row=not_a_row,
    is_tui=is_claude,
    recognise=recognise,
    approve=("Yes", "No"),
    key_guard=1.5,
    input_box=read_input_box,
    shows=shows,
    installer=INSTALLER,
    transcripts=Transcripts(
        folder="projects", reader=TranscriptReader, tail_first=True, path_of=transcript_path
    ),
    live=live.live,
    background=Background(
        needs_attach=attach.needs_attach, attacher=attach.attacher, jump=attach.jump_from
    ),
    statusline=lambda data, account, at: statusline.from_statusline(data, CLAUDE.name, account, at),
)
