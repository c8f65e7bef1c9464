"""Text from sessions made safe for a terminal: no escape sequence, no control character.

A cwd, a command or an answer can hold `ESC]0;…BEL` (the window title), `ESC[2J` (clear the
screen), OSC 52 (write the clipboard) or a CR/LF that fakes table rows. Every session-provided
string the CLI prints goes through clean(); the colours the CLI adds itself are added after.
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
_WHITESPACE = re.compile(r"[\t\n\v\f\r\x85\u2028\u2029]+")
# What is left: C0, DEL, C1, and the bidirectional overrides that reorder what is shown.
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: object) -> str:
    """One line of plain text: escape sequences removed, line breaks and tabs made spaces."""
    s = text if isinstance(text, str) else str(text)
    s = _SEQUENCES.sub("", s)
    s = _WHITESPACE.sub(" ", s)
    return _CONTROLS.sub("", s)
