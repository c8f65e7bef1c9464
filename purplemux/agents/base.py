"""The one door of an agent: the `Agent` record lists everything an agent supplies, and the rest
of purplemux asks it (agents/registry.py `get`) instead of testing the agent's name.

An agent's package (agents/<agent>/) builds its record in agent.py; a test
(tests/agents/test_door.py) checks that every registered agent fills every field, and a toy
third agent defined in a test registers through the same door and is listed, installed and
watched without a change outside its own package.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from purplemux.agents.facts import Facts
from purplemux.core import events as ev
from purplemux.core.checks import Check
from purplemux.core.events import Event
from purplemux.core.limits import Reading
from purplemux.core.model import Session, TmuxLocation
from purplemux.core.prompts import Context, Prompt
from purplemux.io.procinfo import ProcInfo
from purplemux.io.settings import Account, Settings
from purplemux.io.tmux_control import TmuxControl

HookEvent = Callable[[str, Mapping[str, Any], dict[str, Any]], Event]
"""(hook_event_name, payload, common event fields) -> the typed event."""
Recognise = Callable[[str, Context | None], Prompt | None]
"""(the pane's plain text, what the hooks said) -> the prompt on screen, or None."""


@dataclass(frozen=True, slots=True)
class InputBox:
    """What the agent's input box holds on screen: its text ("" when empty), or why it cannot
    be read with one reading (`unreadable`; then nothing is typed)."""

    text: str = ""
    unreadable: str | None = None


ReadInput = Callable[[str], InputBox]
"""(the pane's plain text) -> the input box on it."""
Shows = Callable[[int, Iterable[Path], str, str | None], bool | None]
"""(the agent's process, its config dirs, a session id, the session's background job) -> whether
that process is that session's, by the agent's own files; None: they do not say."""
MakesRow = Callable[[Event], str | None]
"""A hook's event of a session not known yet -> why it makes no row (a spare worker, a notice),
or None: it does."""


# --- hooks: install-hooks, uninstall-hooks and doctor ------------------------------------------


@dataclass(frozen=True, slots=True)
class Changed:
    """What install-hooks or uninstall-hooks did to one account's config."""

    lines: tuple[str, ...]
    """What it did, a line each (printed)."""
    notes: tuple[str, ...] = ()
    """What it left alone on purpose (a statusLine it cannot wrap), said on stderr."""


@dataclass(frozen=True, slots=True)
class Installer:
    """How install-hooks and uninstall-hooks change one account of the agent (its config dir)."""

    target: Callable[[Path], Path]
    """The account's dir -> what is changed (Claude's settings.json, Codex's home)."""
    present: Callable[[Path], bool]
    """Whether the agent is set up in that dir (Claude: always, its settings file is made)."""
    missing: str
    """What to say when it is not (how to name the dirs the agent uses)."""
    install: Callable[[Path, Path, Path], Changed]
    """(target, the hook script, the daemon's home) -> what it did; hookfiles.InstallError when
    it refused (the files untouched)."""
    uninstall: Callable[[Path], Changed]
    """(target) -> what it did; hookfiles.InstallError when it refused."""
    standalone: Callable[[Path, Path, Path], str] | None
    """(a settings file of its own, the hook script, the home) -> how to run the agent with it
    (`install-hooks --settings FILE`); None: the agent has no such file."""
    checks: Callable[[Settings, Account], Sequence[Check]]
    """doctor's checks of one account (its hooks, its config dir, ...)."""
    cli: Callable[[], Check] | None
    """doctor's check that the agent's command is installed; None: not checked (an agent that
    is optional, whose config dir says whether it is used: Codex)."""


# --- live sources: what the daemon runs to watch the agent -------------------------------------


class Engine(Protocol):
    """The engine as an agent's live sources use it (daemon/engine.py)."""

    @property
    def sessions(self) -> Mapping[str, Session]: ...

    def post(self, event: Event, live: bool = True) -> None: ...

    def subscribe(
        self,
        *,
        change: Callable[[Session], None] | None = None,
    ) -> Callable[[], None]: ...


Owner = Callable[[TmuxLocation, int], Awaitable[str | None]]
"""(a pane, its agent's process) -> the session whose pane it is now, by the agent's own signs."""


class Owners(Protocol):
    """Whose each pane is, for the answering desk (daemon/answer.py PaneOwners)."""

    def watch(self, agent: str, owner: Owner) -> Callable[[], None]: ...


class Daemon(Protocol):
    """What an agent's live sources use of the running daemon (daemon/runtime.py Runtime)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def engine(self) -> Engine: ...

    @property
    def tmux(self) -> TmuxControl: ...

    @property
    def owners(self) -> Owners: ...


Part = Callable[[Daemon], Coroutine[Any, Any, None]]
"""A long-running source: run (and restarted) by the supervisor for the daemon's life."""
Judge = Callable[[Sequence[Session], float], list[Event]]
"""(the agent's sessions left `unknown` by a restart, now) -> the evidence of their states, an
event each; a session with none is judged by another source (blocking: it may read files)."""


def settled(session: Session, now: float) -> Event:
    """A session with nothing left to say it is busy, as the judge's event: idle."""
    return ev.StatusIdle(
        session_id=session.id, at=now, id=f"recover:{session.id}:{now}", source=ev.Source.DAEMON
    )


@dataclass(frozen=True, slots=True)
class Live:
    """The agent's live sources for one daemon: its parts, and how an `unknown` session of it
    is judged again after a restart."""

    parts: tuple[Part, ...]
    judge: Judge


@dataclass(frozen=True, slots=True)
class Transcripts:
    """Where the agent writes each session's transcript, and how it is read."""

    folder: str
    """Under each account's dir: only files there are read (Claude's projects/)."""
    reader: Callable[[str], Any]
    """A session id -> its reader (a JsonlReader of the agent's: sources/transcripts.py)."""
    tail_first: bool
    """A big file read tail first, its history summed behind (Claude's); or straight through
    (Codex's rollouts: every entry repeats the totals)."""
    path_of: Callable[[Path, str, str], Path] | None
    """(the account's dir, the session's folder, its id) -> its transcript; None: the agent
    names the file itself (Codex's rollouts), only its hooks and files say where."""


# --- sessions with no pane of their own ---------------------------------------------------------


class AttachError(Exception):
    """A window for a session with no pane could not be opened."""


class Attacher(Protocol):
    """The windows an agent opens to show a session that has no pane of its own (Claude's
    background sessions: `claude attach <job>`)."""

    async def open(self, session: Session) -> TmuxLocation: ...

    def shown(self, session: Session) -> AbstractAsyncContextManager[Session]: ...

    async def close(self, job: str) -> None: ...

    async def shutdown(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Background:
    """Sessions of the agent that run with no pane of their own, and how they are shown."""

    needs_attach: Callable[[Session], bool]
    attacher: Callable[[Settings], Attacher]
    """The daemon's attach windows (made once per daemon)."""
    jump: Callable[[Session, Settings, str | None, str | None], Awaitable[str]]
    """(session, settings, the user's tmux client, socket) -> a pane in the user's tmux that
    shows it (Jump); AttachError when it cannot."""


@dataclass(frozen=True)
class Agent:
    """One agent's knowledge, as plain functions and facts: every field is given (no default),
    so an agent that leaves one out does not construct; None where it means "this agent has
    none" (said on each field)."""

    facts: Facts
    """Name, label, config dir variables (agents/facts.py)."""
    hook_event: HookEvent
    pane_from_hook: bool
    """Whether a hook's $TMUX_PANE is the session's pane (Claude: yes; Codex: the daemon's)."""
    makes_row: MakesRow
    """Whether a hook of an unknown session makes a row (Claude's agent view: its spare worker
    does not)."""
    is_tui: Callable[[ProcInfo], bool]
    """Whether a process is this agent's interactive program (the one a pane shows)."""
    recognise: Recognise
    """How its prompts look on screen (the options carry the keys that answer them)."""
    key_guard: float
    """Seconds a new dialog ignores keys (Claude drops keys sent sooner; Codex has no guard)."""
    approve: tuple[str, str]
    """Its permission dialog's one-time approval and refusal, as labelled on screen: what a
    notification's Yes and No buttons answer (never "always allow")."""
    input_box: ReadInput | None
    """How its input box reads (None: not known; nothing is typed into it unasked)."""
    shows: Shows | None
    """Which session a process of it is, from its own files (Claude's sessions/<pid>.json);
    None: its files do not say (Codex: its panes' watcher says, through `Daemon.owners`)."""
    installer: Installer
    transcripts: Transcripts | None
    """None: the agent leaves no transcript purplemux reads."""
    live: Callable[[Settings], Live]
    """Its live sources, made once per daemon (they may share state: Claude's session files)."""
    background: Background | None
    """None: every session of it has a pane (or none at all)."""
    statusline: Callable[[object, str, float], tuple[str | None, Reading | None]] | None
    """(a statusLine input, the account, now) -> (its session id, its usage-limit reading or
    None); core.limits.ReadingError when it is not one. None: the agent has no statusLine."""

    @property
    def name(self) -> str:
        """As sessions carry it: "claude", "codex"."""
        return self.facts.name

    @property
    def label(self) -> str:
        """As people read it: "Claude", "Codex"."""
        return self.facts.label
