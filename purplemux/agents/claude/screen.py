"""Recognise the prompt Claude Code shows in a pane (pure: no I/O; the types: core/prompts.py).

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

Options are read as shown, with the selection marker (U+276F). A prompt's `id` names this
instance: it hashes the session, the time it entered its state, and what the dialog says (not
where the marker is), so a moved selection keeps the id and a re-asked identical dialog gets a
new one.

**The screen is hostile input.** The dialog draws the tool's input (a Bash command, a `Write`
file's content, a description, a question's text and options) inside itself, and 2.1.197 draws
a multi-line command with no gutter: a command holding the lines `  1. Yes` and `(U+276F) 2. No`
looks like a second option list. So the recogniser reads only the dialog's **own option block**:

- the footer ("Esc to cancel") is among the last lines of the screen;
- the block is the run of option lines directly above the footer (blank lines between them
  and the footer only), all at one column: the selection marker at column M or the label at
  M + 2; numbered options count down to `1.` without a gap (unnumbered ones — auto mode's
  approval — stop at the first line that is not an option); lines indented further are a
  question's descriptions; a full rule at column 0 may stand before the last option (the
  question's "Chat about this"). Nothing else is inside it;
- the dialog starts under the nearest full rule at column 0 above the block.

A prompt carries `ambiguous` (a reason) instead of being answerable when two readings are
possible; an answer to it is refused (409) and nothing is typed. That is when:

- the block does not end at the footer, or its options do not count down to 1;
- the block holds no selection marker or more than one;
- a line of the dialog outside the block, or a description or label inside it, holds a
  selection marker or looks like an option (`N. text`): text from the tool's input;
- the hooks say the pending tool's input itself holds such text (`Context.lookalike`: checked
  on the whole input, so a fake rule or a scrolled-off line cannot hide it);
- the hooks and the screen disagree: a question on screen but no AskUserQuestion pending (or
  the reverse), no pending tool for a permission dialog, a heading that is not the pending
  tool's (`Bash command` for Bash, …), or a command or question that is not the pending one.

Answering (answer.py) then picks the option by its number key where the dialog is numbered (a
permission dialog: the digit selects and confirms in one key on 2.1.197 and 2.1.332), so where
a marker is drawn does not matter; otherwise it moves the one validated marker with arrow keys
and reads it back.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any

from purplemux.core.prompts import Context, Option, Prompt, any_text, text_lines

_LOOKALIKE_LINE = re.compile(r"^[\s│▎]*\d+[.)](?:\s|$)")
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


def imitates_dialog(tool_input: Any) -> bool:
    """Whether a tool call's input holds text that could pass for part of a dialog when drawn
    inside one: a selection marker anywhere, a line that starts like an option ("2. No"), a
    dialog's footer or question, a full rule. Checked on the whole input the hook received."""
    return any_text(tool_input, _imitates_dialog)


def _imitates_dialog(value: str) -> bool:
    if MARKER in value or CANCEL_HINT in value or "─" * 10 in value:
        return True
    return any(_LOOKALIKE_LINE.match(line) for line in text_lines(value))


# --- reading the screen --------------------------------------------------------------------


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_rule(line: str, char: str = "─") -> bool:
    text = line.strip()
    return len(text) >= 10 and set(text) == {char}


def _is_marker(line: str) -> bool:
    return line.lstrip(" ").startswith(MARKER)


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


# --- the dialog's own option block ---------------------------------------------------------

_OPTION_LINE = re.compile(r"^( *)(\u276f *)?(?:(\d+)\. +)?(\S.*)$")
_LOOKS_LIKE_OPTION = re.compile(r"^[\s│▎]*(?:\u276f|\d+\.\s+\S)")
MAX_OPTIONS = 12


@dataclass(frozen=True, slots=True)
class _Block:
    """The option block above the footer: its lines (indices into the screen) and options."""

    first: int
    options: tuple[Option, ...]
    descriptions: tuple[int, ...]


class _Refused(Exception):
    """The screen has two readings: the reason."""


def _option_at(line: str, col: int) -> tuple[bool, int | None, str] | None:
    """(selected, number, label) when `line` is an option at marker column `col`, else None."""
    if line.startswith(" " * col + MARKER):
        rest = line[col + len(MARKER) :]
        if not rest.startswith(" ") or rest.startswith("   "):
            return None
        text, selected = rest.lstrip(" "), True
    elif line.startswith(" " * (col + 2)) and not line[col + 2 : col + 3].isspace():
        text, selected = line[col + 2 :], False
    else:
        return None
    match = _NUMBER.match(text)
    number = int(match.group(1)) if match else None
    label = text[match.end() :].strip() if match else text.strip()
    return selected, number, label


def _block(lines: list[str], footer: int) -> _Block | None:
    """The dialog's own option block ending at the footer; None when the line above the footer
    is no option (a dialog whose choices are in its footer). Raises _Refused when it is broken."""
    bottom = next((i for i in range(footer - 1, -1, -1) if lines[i].strip()), None)
    if bottom is None:
        return None
    match = _OPTION_LINE.match(lines[bottom])
    if match is None:
        return None
    lead, mark, number = match.group(1), match.group(2), match.group(3)
    col = len(lead) if mark is not None else len(lead) - 2
    if col < 0:
        return None
    if number is None:
        return _unnumbered(lines, bottom, col)
    found: list[tuple[int, bool, int | None, str]] = []
    descriptions: list[int] = []
    ruled = False
    for i in range(bottom, -1, -1):
        line = lines[i]
        option = _option_at(line, col)
        if option is not None and option[1] is not None:
            expected = found[-1][2] - 1 if found and found[-1][2] is not None else option[1]
            if option[1] != expected:
                raise _Refused("the dialog's options do not count down to 1 above its footer")
            found.append((i, *option))
            if len(found) > MAX_OPTIONS:
                raise _Refused("too many options above the dialog's footer")
            if option[1] == 1:
                break
        elif line.strip() and _indent(line) > col + 2:
            descriptions.append(i)  # a question's description (or a wrapped label)
        elif len(found) == 1 and not ruled and _is_rule(line) and line.startswith("─"):
            ruled = True  # the rule before a question's "Chat about this"
        else:
            raise _Refused("the dialog's option list does not end at its footer")
    else:
        raise _Refused("the dialog's options do not count down to 1 above its footer")
    found.reverse()
    options = tuple(
        Option(
            label, selected, None, label == FREE_TEXT_LABEL or (ruled and n == len(found) - 2), num
        )
        for n, (_, selected, num, label) in enumerate(found)
    )
    return _Block(found[0][0], options, tuple(descriptions))


def _unnumbered(lines: list[str], bottom: int, col: int) -> _Block | None:
    """Auto mode's approval: unnumbered options ("No" under the marker, "Yes"), one a line."""
    found: list[tuple[int, bool, int | None, str]] = []
    for i in range(bottom, -1, -1):
        option = _option_at(lines[i], col)
        if option is None or option[1] is not None:
            break
        found.append((i, *option))
        if len(found) > MAX_OPTIONS:
            raise _Refused("too many options above the dialog's footer")
    if len(found) < 2 or not any(selected for _, selected, _, _ in found):
        return None
    found.reverse()
    options = tuple(Option(label, selected) for _, selected, _, label in found)
    return _Block(found[0][0], options, ())


def _top(lines: list[str], first: int) -> int:
    """The full rule at column 0 the dialog starts under (-1 when none is in reach)."""
    low = max(0, first - MAX_DIALOG_LINES)
    for i in range(first - 1, low - 1, -1):
        if _is_rule(lines[i]) and lines[i].startswith("─"):
            return i
    return low - 1


HEADINGS = {
    "Bash": ("Bash command",),
    "Write": ("Create file", "Overwrite file"),
    "Edit": ("Edit file",),
    "MultiEdit": ("Edit file",),
    "NotebookEdit": ("Edit notebook",),
}
"""The heading each tool's permission dialog has (a tool not listed is not checked)."""


def _squash(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


def _agrees(shown: str | None, told: str | None) -> bool:
    """Whether what the screen shows starts like what the hooks said (either may be cut)."""
    if not shown or not told:
        return True
    a, b = _squash(shown), _squash(told)
    n = min(len(a), len(b), 60)
    return a[:n] == b[:n]


def _check_hooks(
    kind: str, heading: str, command: str | None, question: str | None, ctx: Context
) -> None:
    """Refuse when the hooks' pending call and the dialog on screen are not the same."""
    if ctx.lookalike:
        raise _Refused("the pending tool's input holds text that imitates a dialog")
    if kind == "question":
        if ctx.tool != "AskUserQuestion":
            raise _Refused("a question is on screen but the hooks name no pending question")
        if not _agrees(question, ctx.summary):
            raise _Refused("the question on screen is not the one the hooks say is pending")
        return
    if ctx.tool is None or ctx.tool == "AskUserQuestion":
        raise _Refused("a permission dialog is on screen but the hooks name no pending tool")
    headings = HEADINGS.get(ctx.tool)
    if headings is not None and heading not in headings:
        raise _Refused(f"the dialog on screen ({heading!r}) is not for the pending {ctx.tool}")
    prefix = f"{ctx.tool}: "
    told = ctx.summary[len(prefix) :] if ctx.summary and ctx.summary.startswith(prefix) else None
    if ctx.tool == "Bash" and told is not None and not _agrees(command, told):
        raise _Refused("the command on screen is not the one the hooks say is pending")


def _lookalikes(body: list[str]) -> None:
    for line in body:
        if MARKER in line or _LOOKS_LIKE_OPTION.match(line):
            raise _Refused(
                "text inside the dialog (the tool's input) looks like an option or a selection"
            )


def recognise(screen: str, ctx: Context | None = None) -> Prompt | None:
    """The prompt on this screen, or None when nothing is asked. A prompt with two readings
    comes back with `ambiguous` set (see the module's rules)."""
    ctx = ctx or Context()
    lines = [line.rstrip() for line in screen.split("\n")]
    footer = _footer_index(lines)
    if footer is None:
        return None
    footer_text = lines[footer]
    reason: str | None = None
    try:
        block = _block(lines, footer)
    except _Refused as exc:
        block, reason = None, str(exc)
    first = block.first if block is not None else footer
    top = _top(lines, first)
    body = lines[top + 1 : first]
    if any(
        _is_rule(line) and _is_marker(nxt) and not _NUMBERED.match(nxt)
        for line, nxt in itertools.pairwise(lines[top + 1 : footer])
    ):
        return None  # an input box (a rule, then the prompt mark) below: not a dialog
    heading_at = next((i for i, line in enumerate(body) if line.strip()), None)
    if heading_at is None:
        return None
    heading = body[heading_at].strip()
    has_marker = any(_is_marker(line) for line in lines[top + 1 : footer])
    if block is None and reason is None and has_marker:
        reason = "a selection marker is on screen but no option list ends at the dialog's footer"
    if block is not None:
        options = list(block.options)
    elif reason is None:
        options = _footer_options(footer_text)
    else:
        options = []
    if not options and reason is None:
        return None
    before = [line.strip() for line in body[heading_at:] if line.strip()]
    question = before[-1] if block is not None and len(before) > 1 else None
    listed = block is not None or (reason is not None and has_marker)
    if listed and (
        heading.startswith("☐")
        or "Enter to select" in footer_text
        or ctx.tool == "AskUserQuestion"
        or ctx.waiting_for == "input needed"
    ):
        kind = "question"
        title = question or (ctx.waiting_for if ctx.waiting_for not in GENERIC_WAITING else None)
        title = title or heading.lstrip("☐ ").strip()
    elif listed and (
        (question or "").startswith("Do you want to")
        or any("Do you want to" in line for line in body)
        or (ctx.tool is not None and ctx.tool != "AskUserQuestion")
    ):
        kind = "permission"
        question_at = next(
            (i for i in range(len(body) - 1, heading_at, -1) if body[i].strip() == question),
            len(body),
        )
        command = _command(body, heading_at, question_at)
        title = f"{heading}: {_squash(command)}" if command else heading
    else:
        kind = "dialog"
        title = heading
        command = None
    if reason is None and block is not None:
        try:
            _lookalikes(body[heading_at:])
            _lookalikes([lines[i].strip() for i in block.descriptions])
            if sum(o.selected for o in block.options) != 1:
                raise _Refused("the dialog's option list has no single selected option")
            if any(MARKER in o.label or _LOOKS_LIKE_OPTION.match(o.label) for o in options):
                raise _Refused("an option's label holds a selection marker or another option")
            _check_hooks(kind, heading, command if kind == "permission" else None, question, ctx)
        except _Refused as exc:
            reason = str(exc)
    shown = tuple(line for line in [*body[heading_at:], *lines[first:footer], footer_text])
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
    return Prompt(pid, kind, title, question, tuple(options), shown, reason)
