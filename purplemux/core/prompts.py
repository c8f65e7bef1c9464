"""What a prompt on screen is, for every agent (pure: no I/O): its options, its id, what the
hooks said about it (`Context`), and helpers each agent's recogniser shares (agents/<agent>/
screen.py reads its own screens: Claude's in agents/claude/screen.py, Codex's in
agents/codex/screen.py).

A prompt carries `ambiguous` (a reason) instead of being answerable when two readings are
possible; an answer to it is refused (409) and nothing is typed (daemon/answer.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from purplemux.core.model import Session, State


@dataclass(frozen=True, slots=True)
class Option:
    """One choice as shown. `key` picks it directly (a footer hint); else it is selected with
    arrow keys and confirmed with Enter. `free_text` marks a question's "Type something."."""

    label: str
    selected: bool = False
    key: str | None = None
    free_text: bool = False
    number: int | None = None
    """The option's number as shown ("2. No"), None when unnumbered."""

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "selected": self.selected, "free_text": self.free_text}


@dataclass(frozen=True, slots=True)
class Prompt:
    """The prompt on screen."""

    id: str
    kind: str  # permission | question | dialog
    title: str
    question: str | None
    options: tuple[Option, ...]
    lines: tuple[str, ...]
    """The dialog's lines as on screen (header to footer)."""
    ambiguous: str | None = None
    """Why this screen has two readings (see the module's rules): then nothing is answered."""

    @property
    def selected(self) -> int | None:
        """Index of the option under the marker, or None."""
        return next((i for i, o in enumerate(self.options) if o.selected), None)

    @property
    def free_text(self) -> bool:
        return any(o.free_text for o in self.options)

    def option(self, label: str) -> int | None:
        """The index of the option with exactly this label."""
        return next((i for i, o in enumerate(self.options) if o.label == label), None)

    @property
    def numbered(self) -> bool:
        """Whether the options are numbered 1..n as shown (a digit key picks one)."""
        return bool(self.options) and all(o.number == i + 1 for i, o in enumerate(self.options))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "title": self.title,
            "question": self.question,
            "options": [o.to_json() for o in self.options],
            "free_text": self.free_text,
            "lines": list(self.lines),
            "ambiguous": self.ambiguous,
        }


@dataclass(frozen=True, slots=True)
class Context:
    """What the daemon knows besides the screen."""

    session_id: str = ""
    since: float = 0.0
    """When the session entered its current state (needs-input): part of the prompt's id."""
    waiting_for: str | None = None
    tool: str | None = None
    """The tool a PermissionRequest / PreToolUse(AskUserQuestion) named, if any."""
    needs_input: bool = True
    summary: str | None = None
    """What the hooks said the pending call is about: "Bash: <command>", or the question."""
    lookalike: bool = False
    """The pending call's input holds text that imitates a dialog (`imitates_dialog`)."""
    digest: str | None = None
    """The pending call's input fingerprint (agents/payload.py `digest`): what a dialog's
    command on screen must be exactly."""


def context_of(session: Session) -> Context:
    """The context of a session: its pending call (or, when no PermissionRequest named one, the
    last tool started: auto mode's approval has no hook of its own)."""
    pending = session.pending_tool
    if pending is not None:
        summary = session.waiting_for
    elif session.recent_tools:
        pending, summary = session.recent_tools[-1], session.current_tool
    else:
        summary = None
    return Context(
        session_id=session.id,
        since=session.state_since,
        waiting_for=session.waiting_for,
        tool=pending.name if pending else None,
        needs_input=session.state is State.NEEDS_INPUT,
        summary=summary,
        lookalike=pending.lookalike if pending else False,
        digest=pending.digest if pending else None,
    )


_LINE_BREAKS = re.compile(r"[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
MAX_LOOKALIKE_SCAN = 200_000
"""Characters of a tool input scanned for dialog look-alikes (more counts as one)."""


def any_text(tool_input: Any, hit: Callable[[str], bool]) -> bool:
    """Whether ``hit`` is true of a string anywhere in a tool input (a hook's JSON: mappings,
    lists and strings, nested). Past MAX_LOOKALIKE_SCAN characters in all it is a hit too: an
    input too big to scan might hide a look-alike, and is not answered either way."""
    budget = MAX_LOOKALIKE_SCAN
    stack: list[Any] = [tool_input]
    while stack:
        value = stack.pop()
        if isinstance(value, Mapping):
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
        elif isinstance(value, str):
            budget -= len(value)
            if budget < 0 or hit(value):
                return True
    return False


def text_lines(text: str) -> list[str]:
    """The lines of a string as a terminal may draw them: every line break counts."""
    return _LINE_BREAKS.split(text)
