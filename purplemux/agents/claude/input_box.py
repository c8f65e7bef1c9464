"""Claude Code's input box on screen: what is typed in it (pure).

2.1.332 draws it as a rule of `─`, a line starting with the prompt mark (U+276F) (then a no-break
space when empty), any continuation lines, and another rule, with only the footer below
(samples/claude-code-2.1.332/bg-and-limits/screens). A plain capture has no colours, so a
dimmed placeholder reads as typed text: that errs on the side of typing nothing.
"""

from __future__ import annotations

from purplemux.agents.base import InputBox

MARK = "\u276f"
RULE = "\u2500"
MIN_RULE = 20
"""A rule is at least this many `─` (a dialog's own box lines are other characters)."""
MAX_LINES = 12
"""Lines an input box may take between its rules (longer typed text wraps)."""
FOOTER_LINES = 6
"""Lines below the box's bottom rule: the footer (mode, status line, limit notices)."""
PLACEHOLDERS = frozenset({"Resend your message to try again"})
"""Claude's own dimmed hints in an empty box (after an API error), read as empty."""
SELF_RESUMING = ("Continuing automatically", "set to continue automatically")
"""Claude's own words when it will continue by itself at the reset (a subscription login)."""


def _is_rule(line: str) -> bool:
    text = line.strip()
    return len(text) >= MIN_RULE and set(text) == {RULE}


def read_input_box(screen: str) -> InputBox:
    """The text in the one input box at the bottom of the screen ("" when empty), or why it
    cannot be read: none, two, not at the bottom, or Claude says it continues by itself."""
    lines = [line.rstrip() for line in screen.replace("\u00a0", " ").split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    boxes: list[tuple[int, int]] = []
    for i, line in enumerate(lines[:-1]):
        if not (_is_rule(line) and lines[i + 1].startswith(MARK)):
            continue
        end = next(
            (j for j in range(i + 2, min(len(lines), i + 2 + MAX_LINES)) if _is_rule(lines[j])),
            None,
        )
        if end is not None:
            boxes.append((i, end))
    if not boxes:
        return InputBox(unreadable="no input box on screen")
    if len(boxes) > 1:
        return InputBox(unreadable="two input boxes on screen")
    top, bottom = boxes[0]
    below = lines[bottom + 1 :]
    if len(below) > FOOTER_LINES or any(_is_rule(line) for line in below):
        return InputBox(unreadable="the input box is not at the bottom of the screen")
    if any(words in line for line in below for words in SELF_RESUMING):
        return InputBox(unreadable="Claude says it continues by itself")
    typed = [lines[top + 1][len(MARK) :], *lines[top + 2 : bottom]]
    text = " ".join(" ".join(part.split()) for part in typed).strip()
    return InputBox(text="" if text in PLACEHOLDERS else text)
