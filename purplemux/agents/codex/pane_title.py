"""A Codex pane's title (tmux `#{pane_title}`, set by the TUI over OSC), parsed into what it says.

The title is the cheapest live signal Codex gives: it changes within 0.1 s of a state change and
needs no hook, which matters where no hook fires (an approval answered, a failed turn's end).
Codex 0.171.0 draws the `[tui] terminal_title` items joined by " | ", in the configured order
(`DEFAULT_ITEMS` when the user configured none):

    "proj"                                   before the first prompt (default items)
    "hello | proj"                           idle: the thread title (the first prompt), project
    "⠸ hello | proj"                         busy: a braille spinner prefix (also while retrying)
    "[ . ] Action Required | hello | proj"   an approval or question dialog ("[ ! ]" alternates)
    "Ready | 01a2333b-f7f0-74e3-863a-94b9e... | proj"   run-state and thread-id configured
    "⠴ Working | …", "Thinking"              run-state words (Ready, Working, Thinking)
    "01a23346-259b-7293-9fd5-4a80a..."       thread-id alone: never shows a state
    ""                                       the TUI has quit

The thread title is the user's first prompt, verbatim: text the user (or a prompt the model
suggested) wrote, which may hold " | ", a thread id, a spinner or "[ ! ] Action Required". So the
title is read only by its known structure (`Layout`, from the TUI's own config, agents/codex/
layout.py): the parts are fitted to the configured items in order, every way they fit (an item
may be missing: no thread id before the thread exists, no thread title before the first prompt;
"Action Required" takes the run-state's place). A field is read only when every way to fit the
title agrees on it, so text the user wrote can never be taken for a thread id, and an id is read
only where the layout has one. Where the thread title itself starts like a spinner or an "Action
Required" part, the title has two readings (`readings`): it then claims nothing until the
thread's own title (from its state DB) tells them apart (`resolve`).

Before Codex sets it the title is tmux's default (the host name), which looks like a bare
project: so a plain title claims idle only when its project part is the one the caller expects.
The project item is the project's name (Codex: the git root's folder, else the cwd's). Anything
else parses conservatively: fields it can read, no state claimed. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from purplemux.core.model import State

SEPARATOR = " | "
ACTION_REQUIRED = ("[ . ] Action Required", "[ ! ] Action Required")
BUSY_WORDS = frozenset({"Working", "Thinking"})
IDLE_WORDS = frozenset({"Ready"})
OTHER_WORDS = frozenset({"Starting"})
"""Run-state words in the binary that were not seen on screen: read, no state claimed."""
ID_PREFIX_LEN = 29
"""Codex cuts the thread id to its first 29 characters plus "..." (enough to match an id)."""
DEFAULT_ITEMS: tuple[str, ...] = ("spinner", "thread-title", "project-name")
"""What Codex 0.171.0 draws with no `[tui] terminal_title`: no thread id, no run-state."""
FREE_TEXT = "thread-title"
"""The one item whose text the user wrote (the first prompt): any length, any " | "."""
_SPINNER = re.compile(r"^[\u2800-\u28ff] ")
_THREAD_ID = re.compile(
    r"^(?P<id>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-(?:[0-9a-f]{5}\.\.\.|[0-9a-f]{12}))$"
)


@dataclass(frozen=True, slots=True)
class Layout:
    """The items a TUI draws in its title, in order (its `[tui] terminal_title`)."""

    items: tuple[str, ...] = DEFAULT_ITEMS

    @property
    def spinner(self) -> bool:
        return "spinner" in self.items

    @property
    def parts(self) -> tuple[str, ...]:
        """The items drawn as " | "-separated parts (the spinner is a prefix, not a part)."""
        return tuple(i for i in self.items if i != "spinner")


DEFAULT_LAYOUT = Layout()


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
    """The thread id as shown, without the "..." (29 characters), or the whole id: read only
    from the id item's own place in the layout, never from text the user wrote."""
    claim: State | None = None
    readings: tuple[PaneTitle, ...] = ()
    """Every way the title can be read, when there is more than one (then this reading claims
    no state and names no thread title: `resolve` picks one by the thread's own title)."""

    def matches(self, thread_id: str) -> bool:
        """The title names this thread (by its shown id prefix)."""
        return bool(self.thread_id_prefix) and thread_id.startswith(self.thread_id_prefix or "")

    @property
    def thread_titles(self) -> tuple[str, ...]:
        """The thread titles the title may show: one, or one per reading."""
        found = [r.thread_title for r in (self.readings or (self,))]
        return tuple(t for t in found if t)

    @property
    def untitled_reading(self) -> PaneTitle | None:
        """The reading that shows no thread title (a thread not prompted yet), if one does."""
        return next((r for r in (self.readings or (self,)) if r.thread_title is None), None)

    def resolve(self, known: str | None) -> PaneTitle:
        """The reading whose thread title is the thread's own `known` title (its first line);
        this title itself when it has one reading; a reading that claims nothing when several
        remain (two readings: do nothing)."""
        if not self.readings:
            return self
        if known:
            fits = [
                r for r in self.readings if r.thread_title and title_fits(r.thread_title, known)
            ]
        else:
            fits = [r for r in self.readings if not r.thread_title]
        return fits[0] if len(fits) == 1 else self


def shown_title(title: str) -> str:
    """A thread's title as its pane shows it: the first line, trimmed."""
    return title.split("\n", 1)[0].strip()


CUT = "..."
"""What Codex draws at the end of a thread title it cut short (a long first prompt)."""


def title_fits(shown: str, title: str) -> bool:
    """Whether a pane shows this thread title: whole, or cut short with "..." (Codex draws the
    first few dozen characters of a long one)."""
    full = shown_title(title)
    shown = shown.strip()
    if shown == full:
        return True
    head = shown.removesuffix(CUT)
    return shown.endswith(CUT) and bool(head) and len(full) > len(head) and full.startswith(head)


def parse_title(
    title: str, project: str | None = None, layout: Layout = DEFAULT_LAYOUT
) -> PaneTitle:
    """Parse a pane title; `project`: the project name the pane's Codex should show; `layout`:
    the items its TUI was configured to draw."""
    if title == "":
        return PaneTitle(raw=title, empty=True)
    readings: list[PaneTitle] = []
    spun = layout.spinner and bool(_SPINNER.match(title))
    for spin in (True, False) if spun else (False,):
        rest = title[2:] if spin else title
        acted = rest.split(SEPARATOR, 1)[0] in ACTION_REQUIRED
        for act in (True, False) if acted else (False,):
            parts = rest.split(SEPARATOR)[1:] if act else rest.split(SEPARATOR)
            # A prefix left in the text is the thread title's own first characters.
            in_text = (spun and not spin) or (acted and not act)
            for fields in _assign(layout.parts, parts, act, in_text):
                readings.append(_reading(title, project, spin, act, fields))
                if len(readings) > MAX_READINGS:
                    return PaneTitle(raw=title)
    if not readings:
        return PaneTitle(raw=title)
    if len(readings) == 1:
        return readings[0]
    return _agreed(title, project, readings)


MAX_READINGS = 64
"""More ways to read one title than this: it is read as none (a layout of many unknown items)."""
REQUIRED = frozenset({"project-name", "run-state"})
"""Items drawn in every title of their layout (run-state gives way to "Action Required")."""


def _assign(
    items: tuple[str, ...], parts: list[str], act: bool, in_text: bool
) -> list[dict[str, str]]:
    """Every way the parts fit the items, in order: each item takes one part (the thread title
    one or more), an item that may be missing takes none; a run-state must be a run-state word
    and a thread id an id. `in_text`: the first part must be the thread title's."""
    wanted = tuple(i for i in items if not (act and i == "run-state"))
    out: list[dict[str, str]] = []

    def walk(i: int, j: int, taken: dict[str, str]) -> None:
        if len(out) > MAX_READINGS:
            return
        if i == len(wanted):
            if j == len(parts):
                out.append(dict(taken))
            return
        item = wanted[i]
        if item not in REQUIRED:
            walk(i + 1, j, taken)  # not drawn (no thread yet, no prompt yet, an unknown item)
        if in_text and j == 0 and item != FREE_TEXT:
            return
        ends = range(j + 1, len(parts) + 1) if item == FREE_TEXT else range(j + 1, j + 2)
        for end in ends:
            if end > len(parts):
                break
            text = SEPARATOR.join(parts[j:end])
            if not _fits(item, text):
                continue
            taken[item] = text
            walk(i + 1, end, taken)
            del taken[item]

    walk(0, 0, {})
    if in_text:
        out = [f for f in out if FREE_TEXT in f]
    return out


def _fits(item: str, text: str) -> bool:
    if item == "run-state":
        return text in BUSY_WORDS | IDLE_WORDS | OTHER_WORDS
    if item == "thread-id":
        return bool(_THREAD_ID.match(text))
    return text != ""


def _reading(
    title: str, project: str | None, spin: bool, act: bool, fields: dict[str, str]
) -> PaneTitle:
    found = _THREAD_ID.match(fields.get("thread-id", ""))
    run_state = fields.get("run-state")
    name = fields.get("project-name")
    matched = bool(project) and name == project
    return PaneTitle(
        raw=title,
        spinner=spin,
        action_required=act,
        run_state=run_state,
        thread_title=fields.get(FREE_TEXT),
        project=name,
        project_matched=matched,
        thread_id_prefix=found.group("id").removesuffix("...") if found else None,
        claim=_claim(spin, act, run_state, matched),
    )


def _agreed(title: str, project: str | None, readings: list[PaneTitle]) -> PaneTitle:
    """Several readings: only what they all say, and no state unless they all claim it."""

    def same(name: str) -> object:
        values = {getattr(r, name) for r in readings}
        return values.pop() if len(values) == 1 else None

    name = same("project")
    return PaneTitle(
        raw=title,
        spinner=bool(same("spinner")),
        action_required=bool(same("action_required")),
        run_state=same("run_state"),  # type: ignore[arg-type]
        thread_title=same("thread_title"),  # type: ignore[arg-type]
        project=name,  # type: ignore[arg-type]
        project_matched=bool(project) and name == project,
        thread_id_prefix=same("thread_id_prefix"),  # type: ignore[arg-type]
        claim=same("claim"),  # type: ignore[arg-type]
        readings=tuple(readings),
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
