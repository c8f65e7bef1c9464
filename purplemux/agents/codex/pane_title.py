"""A Codex pane's title (tmux `#{pane_title}`, set by the TUI over OSC), parsed into what it says.

The title is the cheapest live signal Codex gives: it changes within 0.1 s of a state change and
needs no hook, which matters where no hook fires (an approval answered, a failed turn's end).
Codex 0.171.0 draws the `[tui] terminal_title` items joined by " | ", in the configured order:

    "proj"                                   before the first prompt (default items)
    "hello | proj"                           idle: the thread title (the first prompt), project
    "⠸ hello | proj"                         busy: a braille spinner prefix (also while retrying)
    "[ . ] Action Required | hello | proj"   an approval or question dialog ("[ ! ]" alternates)
    "Ready | 01a2333b-f7f0-74e3-863a-94b9e... | proj"   run-state and thread-id configured
    "⠴ Working | …", "Thinking"              run-state words (Ready, Working, Thinking)
    "01a23346-259b-7293-9fd5-4a80a..."       thread-id alone: never shows a state
    ""                                       the TUI has quit

Before Codex sets it the title is tmux's default (the host name), which looks like a bare
project: so a plain title claims idle only when its project part is the one the caller expects.
The project item is the project's name (Codex: the git root's folder, else the cwd's). Anything
else parses conservatively: fields it can read, no state claimed. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from purplemux.model import State

SEPARATOR = " | "
ACTION_REQUIRED = ("[ . ] Action Required", "[ ! ] Action Required")
BUSY_WORDS = frozenset({"Working", "Thinking"})
IDLE_WORDS = frozenset({"Ready"})
OTHER_WORDS = frozenset({"Starting"})
"""Run-state words in the binary that were not seen on screen: read, no state claimed."""
ID_PREFIX_LEN = 29
"""Codex cuts the thread id to its first 29 characters plus "..." (enough to match an id)."""
_SPINNER = re.compile(r"^[\u2800-\u28ff] ")
_THREAD_ID = re.compile(
    r"^(?P<id>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-(?:[0-9a-f]{5}\.\.\.|[0-9a-f]{12}))$"
)


@dataclass(frozen=True, slots=True)
class PaneTitle:
    """What one pane title says. `claim` is the state it shows, None when it shows none."""

    raw: str
    empty: bool = False
    """The title is "": the TUI has quit (or never drew one)."""
    spinner: bool = False
    """A braille spinner prefix: a turn runs (also while a command runs, or retrying)."""
    action_required: bool = False
    """"[ . ] / [ ! ] Action Required": an approval or question dialog is open."""
    run_state: str | None = None
    """The run-state word when configured: "Ready", "Working", "Thinking"."""
    thread_title: str | None = None
    project: str | None = None
    project_matched: bool = False
    """The project part is the one the caller expected (so this is Codex's title, not tmux's)."""
    thread_id_prefix: str | None = None
    """The thread id as shown, without the "..." (29 characters), or the whole id."""
    claim: State | None = None

    def matches(self, thread_id: str) -> bool:
        """The title names this thread (by its shown id prefix)."""
        return bool(self.thread_id_prefix) and thread_id.startswith(self.thread_id_prefix or "")


def parse_title(title: str, project: str | None = None) -> PaneTitle:
    """Parse a pane title; `project`: the project name the pane's Codex should show."""
    if title == "":
        return PaneTitle(raw=title, empty=True)
    rest = title
    spinner = bool(_SPINNER.match(rest))
    if spinner:
        rest = rest[2:]
    parts = rest.split(SEPARATOR)
    action = parts[0] in ACTION_REQUIRED
    if action:
        parts = parts[1:]
    run_state = None
    if parts and parts[0] in BUSY_WORDS | IDLE_WORDS | OTHER_WORDS:
        run_state, parts = parts[0], parts[1:]
    thread_id = None
    for i, part in enumerate(parts):
        found = _THREAD_ID.match(part)
        if found:
            thread_id = found.group("id").removesuffix("...")
            parts = parts[:i] + parts[i + 1 :]
            break
    # The project item comes last in every order Codex 0.171.0 was seen to use.
    name = parts[-1] if parts else None
    matched = bool(project) and name == project
    parts = parts[:-1]
    thread_title = SEPARATOR.join(parts) or None
    return PaneTitle(
        raw=title,
        spinner=spinner,
        action_required=action,
        run_state=run_state,
        thread_title=thread_title,
        project=name,
        project_matched=matched,
        thread_id_prefix=thread_id,
        claim=_claim(spinner, action, run_state, matched),
    )


def _claim(spinner: bool, action: bool, run_state: str | None, matched: bool) -> State | None:
    if action:
        return State.NEEDS_INPUT
    if spinner or run_state in BUSY_WORDS:
        return State.BUSY
    if run_state in IDLE_WORDS:
        return State.IDLE
    if run_state is not None:  # a word it shows but this does not know the meaning of
        return None
    # A plain title is idle only if it is surely Codex's: tmux's default title (the host name)
    # looks like a bare project, and a thread-id-only title never shows a state.
    return State.IDLE if matched else None
