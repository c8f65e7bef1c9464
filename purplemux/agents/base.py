"""What every agent package hands the rest of purplemux: one `Agent` record of its knowledge.

The sources and adapters hold no `if agent == ...`: they ask the session's agent (registry.get).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from purplemux.core.events import Event
from purplemux.core.prompts import Context, Prompt
from purplemux.io.procinfo import ProcInfo

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


@dataclass(frozen=True)
class Agent:
    """One agent's knowledge, as plain functions and facts."""

    name: str
    """As sessions carry it: "claude", "codex"."""
    label: str
    """As people read it: "Claude", "Codex"."""
    hook_event: HookEvent
    pane_from_hook: bool
    """Whether a hook's $TMUX_PANE is the session's pane (Claude: yes; Codex: the daemon's)."""
    is_tui: Callable[[ProcInfo], bool]
    """Whether a process is this agent's interactive program (the one a pane shows)."""
    recognise: Recognise
    """How its prompts look on screen (the options carry the keys that answer them)."""
    key_guard: float
    """Seconds a new dialog ignores keys (Claude drops keys sent sooner; Codex has no guard)."""
    input_box: ReadInput | None = None
    """How its input box reads (None: not known; nothing is typed into it unasked)."""
    shows: Shows | None = None
    """Which session a process of it is, from its own files (Claude's sessions/<pid>.json);
    None: its files do not say (Codex: its panes' watcher says, answer.PaneOwners)."""
