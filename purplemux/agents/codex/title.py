"""A Codex pane title (tmux #{pane_title}), read (pure). codex.md, "What the pane shows".

Default shapes (0.171.0): "<project>" before the first prompt, "<thread title> | <project>"
after it, a braille spinner in front while a turn runs ("⠸ hello | proj"), and "[ . ] Action
Required | …" / "[ ! ] Action Required | …" (alternating every second) while an approval or a
question waits. With `[tui] terminal_title` including "run-state" and "thread-id": "Ready |
01a2333b-f7f0-74e3-863a-94b9e... | proj", "⠴ Working | …". After the TUI quits: "".

The thread title is the model's input (the first prompt): it may hold " | " itself, so the
project is what follows the last separator, and the title is whatever stands between.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SEPARATOR = " | "
_SPINNER = re.compile(r"^[\u2800-\u28ff] ")
_ACTION = re.compile(r"^\[ [.!] \] Action Required$")
_THREAD_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{0,12}\.\.\.$")
RUN_STATES = frozenset({"Ready", "Working", "Thinking", "Starting"})


@dataclass(frozen=True, slots=True)
class Title:
    """What a Codex pane title says."""

    raw: str
    busy: bool = False
    """A spinner in front: a turn runs (also while an approved command runs, and retries)."""
    action_required: bool = False
    """An approval or a question waits ("Action Required")."""
    project: str | None = None
    thread_title: str | None = None
    """The thread's title (its first prompt here); None before the first prompt."""
    thread_id_prefix: str | None = None
    """The thread id's first 29 characters, when the user's terminal_title shows it."""

    @property
    def empty(self) -> bool:
        """The TUI has quit (it clears the title), or it has not set one yet."""
        return not self.raw

    @property
    def settled(self) -> bool:
        """Neither a turn nor a dialog: the composer waits for a prompt."""
        return not (self.busy or self.action_required)


def parse(raw: str) -> Title:
    """Read a pane title; a shape this does not know claims no state (busy and action false)."""
    text = raw.strip()
    if not text:
        return Title(raw="")
    busy = bool(_SPINNER.match(text))
    if busy:
        text = text[2:]
    parts = text.split(SEPARATOR)
    action = bool(parts and _ACTION.match(parts[0]))
    if action:
        parts = parts[1:]
    if parts and parts[0] in RUN_STATES:
        busy = busy or parts[0] == "Working"
        parts = parts[1:]
    thread_id = None
    if parts and _THREAD_ID.match(parts[0]):
        thread_id = parts[0][:-3]
        parts = parts[1:]
    if not parts:
        return Title(raw=raw, busy=busy, action_required=action, thread_id_prefix=thread_id)
    project = parts[-1] or None
    thread_title = SEPARATOR.join(parts[:-1]) or None
    return Title(
        raw=raw,
        busy=busy,
        action_required=action,
        project=project,
        thread_title=thread_title,
        thread_id_prefix=thread_id,
    )
