"""Recognise the prompt Codex CLI 0.171.0 draws in a pane, and the key of each option (pure).

`recognise(screen, context)` reads the pane's plain text (tmux capture-pane) with what the hooks
said (`purplemux.core.prompts.Context`: the pending tool, its command or question, the look-alike
flag) and returns the open prompt as a `purplemux.core.prompts.Prompt`, or None. Codex draws its
dialogs in the bottom pane, in place of the composer, so a dialog's footer is the **last**
non-empty line of the screen:

- **permission**, a command approval: "Would you like to run the following command?", the
  `Environment:`, `Reason:` (the model's justification) and `$ <command>` lines, then options
  `(U+203A) 1. Yes, proceed (y)`, `2. Yes, and don't ask again for commands that start with … (p)`,
  `3. No, and tell Codex what to do differently (esc)`, footer "Press enter to confirm or esc to
  cancel". A file-edit approval is the same with "Would you like to make the following edits?",
  `Description:`/`Destination:` lines and `(a)` ("don't ask again for these files").
  Each option's label is read without its key hint; the hint becomes `Option.key` (the tmux
  key: "y", "p", "a", or "Escape" for `(esc)`), which picks and confirms it in one key.
- **question** (request_user_input): "Question 1/1 (1 unanswered)", the question, numbered
  options with a description in a second column (Codex adds "None of the above"), footer
  "tab to add notes | enter to submit answer | esc to interrupt". An option's digit picks and
  submits it at once (`Option.key`). Codex takes a free-text answer as notes on "None of the
  above" (verified: Down to it, Tab, the text, Enter answers `["None of the above",
  "user_note: <text>"]`; its digit would submit it without notes, and text typed before Tab
  lands on the options, where a digit picks one), but no option is marked `free_text`, so the
  answering desk refuses free text to a Codex question (422). While the notes box is open
  (footer "tab or esc to clear notes | …") the screen is no prompt.
- **dialog**: a selection view with a footer "enter <verb> · esc <verb>", such as the
  "Approaching rate limits" modal that opens after a turn near the limits (no hook, no title
  change). The modal's options are picked by their digit.

The answering desk (purplemux/daemon/answer.py) presses an option's `key`; it reaches an option
with none (a selection view's, a question's tenth) with arrow keys from `Prompt.selected`, one
at a time, reading the marker back, then Enter. Cancel is Escape: it denies an approval and
interrupts the turn on a question.

**The screen is hostile input.** The approval draws the model's command and reason inside the
dialog, the question draws the model's question and option descriptions, and a command can
hold real line breaks: a command holding `(U+203A) 1. Yes, proceed (y)` or a fake footer could pass
for the dialog's own lines. So, mirroring Claude's (agents/claude/screen.py):

- the footer is the last non-empty line, at column 2, and is one of the footers above (a
  question's may wrap onto two lines in a narrow pane);
- the options are the dialog's **own block** directly above the footer (blank lines between
  them and the footer only): one column, the selection marker (U+203A) at column M or the
  number at M + 2, counting down to `1.` without a gap; lines indented further are wrapped
  lines of the option above (a question's and a selection view's hold the label's rest left of
  the description column, the description's right of it); nothing else is inside it;
- the heading is the nearest line above the block that is one (an approval's "Would you like
  to …", "Question n/m …"); the dialog is heading to footer.

The prompt comes back with `ambiguous` set (nothing is typed for it) when:

- the block is broken, has no selection marker or more than one, or an approval option has no
  key hint, a hint twice, or does not start with `(y)` and end with `(esc)`;
- a line between the heading and the block, a description, a wrapped line or a label holds the
  selection marker, starts like an option (`N. text`), or holds a footer or heading text, or
  an approval shows more than one `$ ` command line;
- a line above the heading is itself a heading of these dialogs (the real heading then is
  further up, and what sits under it is text of the model's);
- the hooks' pending call imitates a dialog (`Context.lookalike`, set from `imitates_dialog`);
- the hooks and the screen disagree: an approval with no pending tool, a command heading when
  the pending tool is not Bash (an edits heading: not apply_patch), a `$ <command>` that is not
  the PermissionRequest's tool_input.command, a question with no pending request_user_input or
  another question text; or an approval heading this module does not know.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from purplemux.agents.payload import digest as payload_digest
from purplemux.core.prompts import Context, Option, Prompt, any_text, text_lines

MARKER = "\u203a"  # the selection marker, and the composer's prompt mark
APPROVAL_FOOTER = "Press enter to confirm or esc to cancel"
RUN_HEADING = "Would you like to run the following command?"
EDIT_HEADING = "Would you like to make the following edits?"
APPROVAL_HEADING_START = "Would you like to "
LIMITS_HEADING = "Approaching rate limits"
QUESTION_TOOL = "request_user_input"
TOOL_OF_HEADING = {RUN_HEADING: "Bash", EDIT_HEADING: "apply_patch"}  # see PATCH_TOOL
"""The tool the hooks name (PermissionRequest's tool_name) for each approval heading."""
KEY_OF_HINT = {"esc": "Escape"}
"""tmux key names of hints that are not a single letter (`(esc)`)."""
INDENT = 2
"""Codex draws every dialog line, footer and heading included, from column 2."""
MAX_OPTIONS = 12
MAX_DIGIT = 9
"""Options numbered up to this are picked by their digit (questions, the rate-limit modal)."""
MAX_WRAPPED = 16
"""Lines one option's label or description may wrap onto."""
MAX_DIALOG_LINES = 80

_QUESTION_HEADING = re.compile(r"^Question (\d+)/(\d+)(?: \(\d+ unanswered\))?$")
_SELECT_FOOTER = re.compile(r"^enter [a-z]+ · esc [a-z]+$")
_OPTION = re.compile(r"^( *)(\u203a )?(\d+)\. (\S.*)$")
_LOOKS_LIKE_OPTION = re.compile(r"^[\s│▎]*(?:\u203a|\d+[.)](?:\s|$))")
_HINT = re.compile(r"^(.*\S) \(([a-z]|esc)\)$")
_DESCRIPTION_GAP = re.compile(r"\S( {2,})(?=\S)")
_FOOTER_TEXTS = ("Press enter to confirm", "esc to cancel", "enter to submit", "esc to interrupt")


class _Refused(Exception):
    """The screen has two readings: the reason."""


@dataclass(frozen=True, slots=True)
class _Row:
    """One option as drawn: the line it starts on, its text after `N. `, the lines it wraps to."""

    at: int
    selected: bool
    number: int
    text: str
    wrapped: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Block:
    first: int
    col: int
    rows: tuple[_Row, ...]


# --- reading the screen --------------------------------------------------------------------


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _family(footer: str) -> str | None:
    """Which kind of dialog a footer closes: approval, question, select; None: no dialog."""
    text = footer.strip()
    if text == APPROVAL_FOOTER:
        return "approval"
    parts = text.split(" | ")
    if parts[-1] == "esc to interrupt" and any(p.startswith("enter to ") for p in parts[:-1]):
        return "question"
    if _SELECT_FOOTER.match(text):
        return "select"
    return None


def _option_at(line: str, col: int) -> tuple[bool, int, str] | None:
    """(selected, number, text) when `line` is an option drawn at marker column `col`."""
    match = _OPTION.match(line)
    if match is None:
        return None
    lead, mark = len(match.group(1)), match.group(2) is not None
    if (lead if mark else lead - INDENT) != col:
        return None
    return mark, int(match.group(3)), match.group(4)


def _block(lines: list[str], footer: int) -> _Block | None:
    """The dialog's own option block ending at the footer: None when no option stands above the
    footer; raises _Refused when the lines above it are not one clean block."""
    above = [i for i in range(footer - 1, -1, -1) if lines[i].strip()]
    if not above or footer - above[0] > 3:
        return None
    bottom = next((i for i in above[: MAX_WRAPPED + 1] if _OPTION.match(lines[i])), None)
    if bottom is None:
        return None
    match = _OPTION.match(lines[bottom])
    assert match is not None
    col = len(match.group(1)) - (0 if match.group(2) else INDENT)
    if col < 0:
        return None
    rows: list[_Row] = []
    wrapped: list[str] = []
    for i in range(above[0], -1, -1):
        line = lines[i]
        option = _option_at(line, col)
        if option is not None:
            selected, number, text = option
            if rows and number != rows[-1].number - 1:
                raise _Refused("the dialog's options do not count down to 1 above its footer")
            rows.append(_Row(i, selected, number, text, tuple(reversed(wrapped))))
            wrapped = []
            if len(rows) > MAX_OPTIONS:
                raise _Refused("too many options above the dialog's footer")
            if number == 1:
                break
        elif line.strip() and _indent(line) > col + INDENT and len(wrapped) < MAX_WRAPPED:
            wrapped.append(line)
        else:
            raise _Refused("the dialog's option list does not end at its footer")
    else:
        raise _Refused("the dialog's options do not count down to 1 above its footer")
    if wrapped:
        raise _Refused("the dialog's option list does not end at its footer")
    rows.reverse()
    return _Block(rows[0].at, col, tuple(rows))


def _columns(block: _Block, lines: list[str]) -> list[tuple[str, str | None]]:
    """(label, description) of each row. Codex pads the labels so that the descriptions start
    at one column, and wraps a long label and a long description each in its own column: a
    wrapped line holds the label's rest left of that column and the description's right of it.
    Descriptions that do not line up mean a label holds a wide gap itself."""
    starts: list[int | None] = []
    for row in block.rows:
        gap = _DESCRIPTION_GAP.search(row.text)
        starts.append(len(lines[row.at]) - len(row.text) + gap.end() if gap else None)
    columns = {at for at in starts if at is not None}
    if len(columns) > 1:
        raise _Refused("the options' descriptions do not line up (a label holds a wide gap)")
    column = columns.pop() if columns else None
    out: list[tuple[str, str | None]] = []
    for row in block.rows:
        first = lines[row.at]
        label_at = len(first) - len(row.text)
        if column is None:
            parts = [row.text, *row.wrapped]
            out.append((" ".join(p.strip() for p in parts if p.strip()), None))
            continue
        label = [first[label_at:column], *(w[:column] for w in row.wrapped)]
        description = [first[column:], *(w[column:] for w in row.wrapped)]
        out.append(
            (
                " ".join(p.strip() for p in label if p.strip()),
                " ".join(p.strip() for p in description if p.strip()) or None,
            )
        )
    return out


def _is_heading(text: str) -> bool:
    """Whether a line's text is exactly the heading of one of these dialogs."""
    return (
        text in TOOL_OF_HEADING
        or text == LIMITS_HEADING
        or _QUESTION_HEADING.match(text) is not None
    )


def _heading_at(lines: list[str], first: int, family: str) -> int | None:
    """The line of the dialog's heading above its block (None when none is in reach)."""
    low = max(0, first - MAX_DIALOG_LINES)
    if family == "select":
        # A selection view's heading is the top of the paragraph right above its options.
        i = first - 1
        while i >= low and not lines[i].strip():
            i -= 1
        if i < low:
            return None
        while i - 1 >= low and lines[i - 1].strip():
            i -= 1
        return i
    for i in range(first - 1, low - 1, -1):
        line = lines[i]
        if _indent(line) != INDENT:
            continue
        text = line.strip()
        if family == "approval" and text.startswith(APPROVAL_HEADING_START):
            return i
        if family == "question" and _QUESTION_HEADING.match(text):
            return i
    return None


def _looks_like_dialog(text: str) -> bool:
    """Whether one line of text (not the dialog's own) could pass for a part of a dialog."""
    stripped = text.strip()
    return (
        MARKER in text
        or _LOOKS_LIKE_OPTION.match(text) is not None
        or any(part in text for part in _FOOTER_TEXTS)
        or _is_heading(stripped)
        or stripped.startswith(APPROVAL_HEADING_START)
        or _family(stripped) is not None
    )


FIELDS = ("Environment:", "Reason:", "Description:", "Destination:", "$ ")
"""The lines an approval's body starts its parts with (a part's wrapped lines follow it)."""


def _fields(body: list[str]) -> dict[str, str]:
    """The approval's parts by their start ("$ " → the command), wrapped lines joined; text
    before the first part is under "" (the question's text)."""
    out: dict[str, list[str]] = {}
    name = ""
    for line in body:
        text = line.strip()
        if not text:
            name = ""
            continue
        start = next((f for f in FIELDS if text.startswith(f)), None)
        if start is not None:
            name = start
            text = text[len(start) :].strip()
        out.setdefault(name, []).append(text)
    return {k: " ".join(v).strip() for k, v in out.items()}


def _squash(text: str) -> str:
    return " ".join(text.split())


def _bare(text: str) -> str:
    """The text without any white space: a wrapped line on screen may lose or gain a space."""
    return "".join(text.split())


def _agrees(shown: str | None, told: str | None) -> bool:
    """Whether what the screen shows and what the hooks said start alike (either may be cut)."""
    if not shown or not told:
        return True
    a, b = _bare(shown), _bare(told)
    n = min(len(a), len(b))
    return a[:n] == b[:n]


MAX_COMMAND_LINES = 8
"""Lines of a command on screen compared with the pending one at most (3**7 ways to join)."""
_JOINS = ("", " ", "\n")
"""What a line break on screen may stand for in the command: a wrap inside a word, a wrap at a
space (the space is not drawn), or the command's own newline."""


def _same_command(drawn: tuple[str, ...], wanted: str | None) -> bool:
    """Whether the command drawn is exactly the pending call's (by its fingerprint, `digest`),
    one of the ways its line breaks can be read: never a command that only starts alike."""
    if not wanted or not drawn or len(drawn) > MAX_COMMAND_LINES:
        return False
    for joins in itertools.product(_JOINS, repeat=len(drawn) - 1):
        command = drawn[0] + "".join(j + line for j, line in zip(joins, drawn[1:], strict=True))
        if payload_digest({"command": command}) == wanted:
            return True
    return False


def _told(ctx: Context) -> str | None:
    """The pending call's input as the hooks summarised it ("Bash: <command>" → the command)."""
    if ctx.summary is None or ctx.tool is None:
        return None
    prefix = f"{ctx.tool}: "
    return ctx.summary[len(prefix) :] if ctx.summary.startswith(prefix) else None


# --- the recogniser ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Reading:
    kind: str
    heading: str
    title: str
    question: str | None
    options: tuple[Option, ...]
    shown: str | None = None
    """What the hooks' input must agree with: the command, a destination, the question."""
    command: tuple[str, ...] = ()
    """A command's lines as drawn (wrapped where the pane is narrow), "$ " taken off."""


def _approval(heading: str, body: list[str], block: _Block) -> _Reading:
    options: list[Option] = []
    for row in block.rows:
        text = " ".join([row.text.strip(), *(w.strip() for w in row.wrapped)])
        match = _HINT.match(text)
        if match is None:
            raise _Refused(f"the option {text!r} has no key hint")
        hint = match.group(2)
        options.append(
            Option(match.group(1), row.selected, KEY_OF_HINT.get(hint, hint), False, row.number)
        )
    keys = [o.key for o in options]
    if len(set(keys)) != len(keys):
        raise _Refused("two options of the dialog have the same key hint")
    if keys[0] != "y" or keys[-1] != "Escape":
        raise _Refused("the dialog's options are not Yes (y) … No (esc)")
    fields = _fields(body)
    commands = [line for line in body if line.lstrip().startswith("$ ")]
    if len(commands) > 1:
        raise _Refused("the dialog shows more than one `$ ` command line")
    if heading == RUN_HEADING:
        # The command is the body's last part: from its `$ ` line on (blank lines too).
        at = next((i for i, line in enumerate(body) if line.lstrip().startswith("$ ")), None)
        rest = [line.strip() for line in body[at:]] if at is not None else []
        command = " ".join(line for line in rest if line)[2:] or None
        title = f"Run: {_squash(command)}" if command else "Run a command"
        drawn = list(rest)
        while drawn and not drawn[-1]:
            drawn.pop()
        if drawn:
            drawn[0] = drawn[0][2:]
        return _Reading(
            "permission", heading, title, heading, tuple(options), command, tuple(drawn)
        )
    if heading == EDIT_HEADING:
        where = fields.get("Destination:")
        title = f"Edit: {where}" if where else "Edit files"
        return _Reading("permission", heading, title, heading, tuple(options), where)
    raise _Refused(f"an approval this recogniser does not know ({heading!r})")


def _digit(number: int) -> str | None:
    return str(number) if 1 <= number <= MAX_DIGIT else None


def _question(heading: str, body: list[str], block: _Block, lines: list[str]) -> _Reading:
    question = " ".join(line.strip() for line in body if line.strip()) or None
    options = tuple(
        Option(label, row.selected, _digit(row.number), False, row.number)
        for row, (label, _) in zip(block.rows, _columns(block, lines), strict=True)
    )
    return _Reading("question", "Question", question or heading, question, options, question)


def _select(heading: str, body: list[str], block: _Block, lines: list[str]) -> _Reading:
    rest = [line.strip() for line in body if line.strip()]
    digits = heading == LIMITS_HEADING  # verified: its digits pick and confirm at once
    options = tuple(
        Option(label, row.selected, _digit(row.number) if digits else None, False, row.number)
        for row, (label, _) in zip(block.rows, _columns(block, lines), strict=True)
    )
    return _Reading("dialog", heading, heading, " ".join(rest) or None, options)


def _check_lines(body: Iterable[str], block: _Block, reading_labels: Iterable[str]) -> None:
    for line in body:
        if _looks_like_dialog(line):
            raise _Refused(
                "text inside the dialog (the model's command, reason or question) looks like "
                "an option, a selection or a footer"
            )
    for row in block.rows:
        described = _DESCRIPTION_GAP.search(row.text)
        parts = [*row.wrapped, row.text[described.end() :] if described else ""]
        if any(part.strip() and _looks_like_dialog(part) for part in parts):
            raise _Refused("an option's description or wrapped text looks like part of a dialog")
    for label in reading_labels:
        if MARKER in label or _LOOKS_LIKE_OPTION.match(label):
            raise _Refused("an option's label holds a selection marker or another option")
    if sum(row.selected for row in block.rows) != 1:
        raise _Refused("the dialog's option list has no single selected option")


def _check_hooks(reading: _Reading, ctx: Context) -> None:
    """Refuse when the hooks' pending call and the dialog on screen are not the same."""
    if reading.kind == "dialog":
        return  # the selection views (rate limits, …) have no hook at all
    if ctx.lookalike:
        raise _Refused("the pending tool's input holds text that imitates a dialog")
    if reading.kind == "question":
        if ctx.tool != QUESTION_TOOL:
            raise _Refused("a question is on screen but the hooks name no pending question")
        if not _agrees(reading.shown, ctx.summary):
            raise _Refused("the question on screen is not the one the hooks say is pending")
        return
    if ctx.tool is None or ctx.tool == QUESTION_TOOL:
        raise _Refused("an approval is on screen but the hooks name no pending tool")
    wanted = TOOL_OF_HEADING.get(reading.heading)
    if ctx.tool != wanted:
        raise _Refused(
            f"the dialog on screen ({reading.heading!r}) is not for the pending {ctx.tool}"
        )
    told = _told(ctx)
    if reading.heading == RUN_HEADING and not _agrees(reading.shown, told):
        raise _Refused("the command on screen is not the one the hooks say is pending")
    if reading.heading == RUN_HEADING and not reading.command:
        raise _Refused("the dialog does not show its command: it cannot be compared")
    if reading.heading == RUN_HEADING and not _same_command(reading.command, ctx.digest):
        raise _Refused("the command on screen is not exactly the one the hooks say is pending")
    edited = reading.shown.split(",")[0] if reading.shown else None
    if reading.heading == EDIT_HEADING and edited and told and _bare(edited) not in _bare(told):
        raise _Refused("the file on screen is not in the patch the hooks say is pending")


def recognise(screen: str, ctx: Context | None = None) -> Prompt | None:
    """The prompt on this screen, or None when nothing is asked. A prompt with two readings
    comes back with `ambiguous` set (see the module's rules)."""
    ctx = ctx or Context()
    lines = [line.rstrip() for line in screen.split("\n")]
    last = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip()), None)
    if last is None or _indent(lines[last]) != INDENT:
        return None
    footer, family = last, _family(lines[last])
    if family is None and last > 0 and _indent(lines[last - 1]) == INDENT:
        # A narrow pane wraps a question's footer: "… | enter to submit answer" / "esc to …".
        joined = f"{lines[last - 1].strip()} | {lines[last].strip()}"
        footer, family = last - 1, "question" if _family(joined) == "question" else None
    if family is None:
        return None
    try:
        block = _block(lines, footer)
    except _Refused as exc:
        return _refused(lines, last, family, ctx, str(exc))
    if block is None:
        if family == "select":
            return None
        return _refused(lines, last, family, ctx, "no option list ends at the dialog's footer")
    at = _heading_at(lines, block.first, family)
    if at is None:
        return _refused(lines, last, family, ctx, "the dialog's heading is not on screen")
    heading = lines[at].strip()
    body = lines[at + 1 : block.first]
    shown = tuple(lines[at : last + 1])
    try:
        if family == "approval":
            reading = _approval(heading, body, block)
        elif family == "question":
            reading = _question(heading, body, block, lines)
        else:
            reading = _select(heading, body, block, lines)
    except _Refused as exc:
        return _refused(lines, last, family, ctx, str(exc), heading=heading, shown=shown)
    reason: str | None = None
    try:
        if family != "select" and any(_is_heading(line.strip()) for line in lines[:at]):
            # The nearest heading was taken: one further up means that one is text inside
            # the dialog (a fake footer up there is harmless: the real one is the last line).
            raise _Refused("a line above the dialog's heading is a heading too")
        _check_lines(body, block, (o.label for o in reading.options))
        _check_hooks(reading, ctx)
    except _Refused as exc:
        reason = str(exc)
    return _prompt(ctx, reading, shown, reason)


def _prompt(ctx: Context, reading: _Reading, shown: tuple[str, ...], reason: str | None) -> Prompt:
    """The Prompt; its id hashes the session, when it entered its state and what the dialog
    says (not where the marker is, nor the question's "(n unanswered)" count)."""
    fingerprint = json.dumps(
        [
            "codex",
            ctx.session_id,
            repr(ctx.since),
            reading.kind,
            reading.heading,
            reading.title,
            reading.question,
            [o.label for o in reading.options],
        ]
    )
    pid = "p-" + hashlib.sha256(fingerprint.encode()).hexdigest()[:16]
    return Prompt(
        pid, reading.kind, reading.title, reading.question, reading.options, shown, reason
    )


def _refused(
    lines: list[str],
    footer: int,
    family: str,
    ctx: Context,
    reason: str,
    heading: str | None = None,
    shown: tuple[str, ...] | None = None,
) -> Prompt:
    """A dialog that is on screen but cannot be read one way: shown, with no options."""
    kind = {"approval": "permission", "question": "question"}.get(family, "dialog")
    title = heading or {"approval": "Approval", "question": "Question"}.get(family, "Dialog")
    lines_shown = shown or tuple(lines[max(0, footer - 20) : footer + 1])
    return _prompt(ctx, _Reading(kind, title, title, None, ()), lines_shown, reason)


# --- what the hooks' input holds -----------------------------------------------------------


_PATCH_PATHS = re.compile(r"^\*\*\* (?:(?:Add|Update|Delete) File|Move to): ")
PATCH_TOOL = "apply_patch"


def imitates_dialog(tool_input: Any, tool_name: str | None = None) -> bool:
    """Whether a tool call's input (a hook's tool_input: a command, a reason, a question and its
    options) holds text that could pass for part of a Codex dialog when drawn inside one: the
    selection marker, a line that starts like an option ("2. No"), a `$ ` command line, a
    dialog's heading or footer. Checked on the whole input the hook received, except for
    apply_patch (`tool_name`), whose edit dialog draws only the patch's file names (the diff
    goes to the history above the dialog): there only the `*** … File:` lines count."""
    patch = tool_name == PATCH_TOOL

    def hit(value: str) -> bool:
        for line in text_lines(value):
            if patch and not _PATCH_PATHS.match(line):
                continue
            if patch:
                line = _PATCH_PATHS.sub("", line)
            if _looks_like_dialog(line) or line.lstrip().startswith("$ "):
                return True
        return False

    return any_text(tool_input, hit)
