"""Recognise the prompt Claude shows in a pane (pure: no I/O).

`recognise(screen, context)` reads the pane's plain text (tmux capture-pane) together with what
the hooks and Claude's session file said (the pending tool, `waiting_for`, the session's
`state_since`) and returns the open prompt, or None:

- **permission**: a tool approval, "Do you want to proceed?" with options. 2.1.197 lists three
  (Yes; Yes, and always allow …; No), 2.1.332's manual mode four (… Yes, and switch to auto
  mode …), and auto mode's own approval lists "No" *first*, unnumbered.
- **question**: AskUserQuestion ("☐ <header>", the question, numbered options with a
  description under each, "Type something." for a free-text answer, "Chat about this").
- **dialog**: anything else with "Esc to cancel" at the bottom, e.g. 2.1.332's "Auto mode can't
  check actions in this session", whose choices are only named in its footer ("Enter to stay in
  auto mode · shift+Tab to leave … · Esc to cancel").

Options are read as shown, with the selection marker (U+276F): answering picks by label and moves
the marker with arrow keys, never by position. A prompt's `id` names this instance: it hashes
the session, the time it entered its state, and what the dialog says (not where the marker is),
so a moved selection keeps the id and a re-asked identical dialog gets a new one.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any

from purplemux.model import Session, State

MARKER = "\u276f"  # the selection marker (and the input box prompt)
FREE_TEXT_LABEL = "Type something."
CANCEL_HINT = "Esc to cancel"
GENERIC_WAITING = frozenset({"permission prompt", "input needed", "dialog open"})
"""waitingFor values of Claude's session file: they tell the kind, not what is asked."""
FOOTER_KEYS = {"Enter": "Enter", "shift+Tab": "BTab", "Tab": "Tab"}
"""Footer hints of a dialog without listed options ("Enter to stay in auto mode"): tmux keys."""
FOOTER_LOOKBACK = 3
"""The footer is among the last few non-empty lines of the screen."""
MAX_DIALOG_LINES = 80

_NUMBERED = re.compile(r"^\s*(?:\u276f\s*)?\d+\.\s+\S")
_NUMBER = re.compile(r"^(\d+)\.\s+")
_FOOTER_PART = re.compile(r"^(Enter|shift\+Tab|Tab) to (.+)$")


@dataclass(frozen=True, slots=True)
class Option:
    """One choice as shown. `key` picks it directly (a footer hint); else it is selected with
    arrow keys and confirmed with Enter. `free_text` marks a question's "Type something."."""

    label: str
    selected: bool = False
    key: str | None = None
    free_text: bool = False

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

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "title": self.title,
            "question": self.question,
            "options": [o.to_json() for o in self.options],
            "free_text": self.free_text,
            "lines": list(self.lines),
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


def context_of(session: Session) -> Context:
    return Context(
        session_id=session.id,
        since=session.state_since,
        waiting_for=session.waiting_for,
        tool=session.pending_tool.name if session.pending_tool else None,
        needs_input=session.state is State.NEEDS_INPUT,
    )


# --- reading the screen --------------------------------------------------------------------


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_rule(line: str, char: str = "─") -> bool:
    text = line.strip()
    return len(text) >= 10 and set(text) == {char}


def _is_marker(line: str) -> bool:
    return line.lstrip(" ").startswith(MARKER)


def _label(text: str) -> str:
    return _NUMBER.sub("", text.strip(), count=1).strip()


def _footer_index(lines: list[str]) -> int | None:
    seen = 0
    for i in range(len(lines) - 1, -1, -1):
        if not lines[i].strip():
            continue
        if CANCEL_HINT in lines[i]:
            return i
        seen += 1
        if seen >= FOOTER_LOOKBACK:
            return None
    return None


def _top_index(lines: list[str], footer: int) -> int:
    """The rule the dialog starts under: the nearest full rule above the footer that is not the
    separator inside a question's option list (the one before "4. Chat about this")."""
    low = max(0, footer - MAX_DIALOG_LINES)
    for i in range(footer - 1, low - 1, -1):
        if not _is_rule(lines[i]):
            continue
        after = next((line for line in lines[i + 1 : footer] if line.strip()), "")
        if not _NUMBERED.match(after):
            return i
    return low - 1


def _options(body: list[str], marker: int) -> tuple[list[Option], int, int]:
    """The option block around the marker line: (options, first line, last line) in `body`."""
    line = body[marker]
    after = line.lstrip(" ")[len(MARKER) :]
    col = len(line) - len(after.lstrip(" "))

    def kind(text: str) -> str:
        if not text.strip() or _is_rule(text):
            return "gap"
        if _is_marker(text):
            return "option"
        indent = _indent(text)
        if indent == col:
            return "option"
        return "description" if indent > col else "end"

    first = marker
    for i in range(marker - 1, -1, -1):
        k = kind(body[i])
        if k == "end":
            break
        if k == "option":
            first = i
    last = marker
    for i in range(marker + 1, len(body)):
        k = kind(body[i])
        if k == "end":
            break
        if k == "option":
            last = i
    options: list[Option] = []
    for i in range(first, last + 1):
        text = body[i]
        if kind(text) != "option":
            continue
        selected = _is_marker(text)
        raw = text.lstrip(" ")[len(MARKER) :] if selected else text
        label = _label(raw)
        # A question's free-text entry is the option above the rule that sets "Chat about this"
        # apart; its label turns into what is typed there.
        ruled = any(_is_rule(body[j]) for j in range(i + 1, last + 1)) and not any(
            kind(body[j]) == "option" for j in range(i + 1, _next_rule(body, i, last))
        )
        options.append(Option(label, selected, None, label == FREE_TEXT_LABEL or ruled))
    return options, first, last


def _next_rule(body: list[str], start: int, last: int) -> int:
    return next((j for j in range(start + 1, last + 1) if _is_rule(body[j])), last + 1)


def _footer_options(footer: str) -> list[Option]:
    options: list[Option] = []
    for part in footer.split("·"):
        match = _FOOTER_PART.match(part.strip())
        if match:
            label = match.group(2).strip()
            key = FOOTER_KEYS[match.group(1)]
            options.append(Option(label[:1].upper() + label[1:], False, key))
    return options


def _command(body: list[str], heading_at: int, stop: int) -> str | None:
    """What a permission dialog is about: the text in its dashed box (2.1.332), or the first line
    under the heading (2.1.197)."""
    dashed = [i for i in range(heading_at + 1, stop) if _is_rule(body[i], "╌")]
    if len(dashed) >= 2:
        inside = [body[i].strip() for i in range(dashed[0] + 1, dashed[1]) if body[i].strip()]
        return " ".join(inside) or None
    for i in range(heading_at + 1, stop):
        text = body[i].strip()
        if text and not text.startswith("Tip:"):
            return text
    return None


def recognise(screen: str, ctx: Context | None = None) -> Prompt | None:
    """The prompt on this screen, or None when nothing is asked."""
    ctx = ctx or Context()
    lines = [line.rstrip() for line in screen.split("\n")]
    footer = _footer_index(lines)
    if footer is None:
        return None
    top = _top_index(lines, footer)
    body = lines[top + 1 : footer]
    if any(
        _is_rule(line) and _is_marker(nxt) and not _NUMBERED.match(nxt)
        for line, nxt in itertools.pairwise(body)
    ):
        return None  # an input box (a rule, then the prompt mark) below: not a dialog
    heading_at = next((i for i, line in enumerate(body) if line.strip()), None)
    if heading_at is None:
        return None
    heading = body[heading_at].strip()
    marker = next((i for i, line in enumerate(body) if _is_marker(line)), None)
    question: str | None = None
    if marker is not None:
        options, first, _ = _options(body, marker)
        before = [line.strip() for line in body[heading_at:first] if line.strip()]
        question = before[-1] if before else None
        stop = first
    else:
        options = _footer_options(lines[footer])
        stop = len(body)
    if not options:
        return None
    footer_text = lines[footer]
    if (
        heading.startswith("☐")
        or "Enter to select" in footer_text
        or ctx.tool == "AskUserQuestion"
        or ctx.waiting_for == "input needed"
    ) and marker is not None:
        kind = "question"
        title = question or (ctx.waiting_for if ctx.waiting_for not in GENERIC_WAITING else None)
        title = title or heading.lstrip("☐ ").strip()
    elif marker is not None and (
        (question or "").startswith("Do you want to")
        or (ctx.tool is not None and ctx.tool != "AskUserQuestion")
    ):
        kind = "permission"
        question_at = next(
            (i for i in range(stop - 1, heading_at, -1) if body[i].strip() == question), stop
        )
        command = _command(body, heading_at, question_at)
        title = f"{heading}: {command}" if command else heading
    else:
        kind = "dialog"
        title = heading
    shown = tuple(line for line in [*body[heading_at:], footer_text])
    fingerprint = json.dumps(
        [
            ctx.session_id,
            repr(ctx.since),
            kind,
            heading,
            title,
            question,
            [o.label for o in options if not o.free_text],
        ]
    )
    pid = "p-" + hashlib.sha256(fingerprint.encode()).hexdigest()[:16]
    return Prompt(pid, kind, title, question, tuple(options), shown)
