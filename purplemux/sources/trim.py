"""Hook bodies past the request limit, made to fit: every long JSON string is cut.

Claude's payloads grow past 1 MiB on big tools (an Edit's `tool_response.originalFile` holds the
whole file, a Write's `tool_input.content` all it writes). The daemon keeps at most a few KiB of
any field, so cutting each string to KEEP bytes changes nothing it stores, and the event (a
PermissionRequest the user must see) is not lost. Strings are found by a scan of the raw JSON
(no parsing of the big body); a cut never splits an escape or a UTF-8 character.
"""

from __future__ import annotations

import re

KEEP = 8192
"""Bytes kept of each JSON string of an oversized body."""
MARK = b"\xe2\x80\xa6[trimmed by purplemux]"

# A JSON string: a quote, runs of plain bytes or escapes, a quote (unrolled: fast on long runs).
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_PARTIAL_ESCAPE = re.compile(rb"\\(?:u[0-9A-Fa-f]{0,3})?$")


def _cut(m: re.Match[bytes]) -> bytes:
    token = m.group(0)
    if len(token) <= KEEP + 2:
        return token
    head = token[1 : KEEP + 1]
    # Drop a trailing partial escape: "\" or "\u12" at the end of the kept part.
    while True:
        trailing = len(head) - len(head.rstrip(b"\\"))
        if trailing % 2:
            head = head[:-1]
            continue
        partial = _PARTIAL_ESCAPE.search(head)
        if partial and trailing == 0:
            head = head[: partial.start()]
            continue
        break
    # A \uD83D whose low half was cut would be a lone surrogate: the parser takes that.
    head = head.decode("utf-8", "ignore").encode("utf-8")  # no half of a character at the end
    return b'"' + head + MARK + b'"'


def trim_strings(body: bytes) -> bytes:
    """`body` with every JSON string longer than KEEP bytes cut to KEEP and marked."""
    return _STRING.sub(_cut, body)
