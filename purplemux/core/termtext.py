"""Text from sessions made safe for a terminal: no escape sequence, no control character.

A cwd, a command, an answer or another host's row can hold `ESC]0;…BEL` (the window title),
`ESC[2J` (clear the screen), OSC 52 (write the clipboard), a CR/LF that fakes table rows, or a
bidi override that shows text reordered. Every session-provided string a terminal shows goes
through clean() (the CLI's tables, `peek`, `report`, `doctor`); the colours a caller adds itself
are added after. tmux_text() layers tmux's own escaping on top, for text tmux draws as a format
(the status line, pane options shown in formats).
"""

from __future__ import annotations

import re

# ESC-introduced sequences (7-bit) and their 8-bit C1 forms, each removed whole:
_SEQUENCES = re.compile(
    r"""
      (?:\x1b\[|\x9b)[\x20-\x3f]*[\x40-\x7e]?               # CSI: parameters, then a final byte
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])               # OSC, DCS, SOS, PM, APC: a string
      [^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?                 #   up to BEL or ST (or the end)
    | \x1b[\x20-\x2f]*[\x30-\x7e]?                           # any other escape (charset, RIS, ...)
    """,
    re.VERBOSE,
)
_BREAKS = re.compile(r"[\t\n\v\f\r\x85\u2028\u2029]+")
# What is left to drop: C0, DEL, C1; the bidirectional marks, embeddings, overrides and isolates
# that reorder what is shown; and invisible format characters (soft hyphen, zero-width space,
# word joiner, invisible operators, BOM, interlinear annotation, tags). ZWJ/ZWNJ stay: emoji and
# scripts need them, and they move nothing.
_FORMAT = (
    "\u00ad\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f"
    "\ufeff\ufff9-\ufffb\U000e0000-\U000e007f"
)
_CONTROLS = re.compile(f"[\x00-\x1f\x7f-\x9f{_FORMAT}]")
_LINE_CONTROLS = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_FORMAT}]")
"""The same, but for the line break and the tab a screen keeps."""
_SURROGATES = re.compile("[\ud800-\udfff]")
"""A lone surrogate (JSON `\\udc00`) cannot be written to a terminal: shown as U+FFFD."""


def clean(text: object, lines: bool = False) -> str:
    """Plain text: escape sequences and control and format characters removed.

    One line by default (line breaks and tabs made spaces); with `lines` (a pane's screen),
    `\\n` and tabs are kept (CRLF read as `\\n`), every other control removed just the same."""
    s = text if isinstance(text, str) else str(text)
    s = _SURROGATES.sub("\ufffd", _SEQUENCES.sub("", s))
    if lines:
        return _LINE_CONTROLS.sub("", s.replace("\r\n", "\n"))
    return _CONTROLS.sub("", _BREAKS.sub(" ", s))


def tmux_text(text: object) -> str:
    """clean(), then every `#` doubled: tmux draws `##` as `#`, so no `#[style]`, `#{format}`
    or `#(command)` in session text is ever read by tmux as one."""
    return clean(text).replace("#", "##")


NAME_LIMIT = 40
"""Longest name shown in the status bar (and in the pane's @purplemux_name)."""

TMUX_COLOURS = {
    "yellow": "yellow",
    "magenta": "magenta",
    "cyan": "cyan",
    "grey": "colour244",
    "white": "colour244",
}
"""tmux colour names for the colour tokens of purplemux.core.present.LOOKS."""


def tmux_name(text: str, limit: int = NAME_LIMIT) -> str:
    """A name as tmux draws it: one line of termtext.clean() text (a session file's `name` is
    Claude's, or whatever a user typed), blanks collapsed, cut, then tmux-escaped (`#` doubled),
    so no `#[style]` in it is ever read by tmux as one."""
    text = " ".join(clean(text).split())
    return tmux_text(text if len(text) <= limit else text[: limit - 1] + "…")
