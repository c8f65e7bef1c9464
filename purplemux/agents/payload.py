"""Reading a hook payload, for every agent: capped text, a tool input's digest and summary.

A payload is untrusted JSON from the agent (and the model behind it): every string taken from it
is cut to a cap, and a value that is not what the field should be reads as absent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import orjson

MAX_ID = 200
MAX_TEXT = 2000
MAX_SHORT = 300


def _dumps(value: Any, sort_keys: bool = False) -> str:
    try:
        return json.dumps(value, sort_keys=sort_keys, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):
        # Nested as deep as the parser allows: encoding it again, deeper in the stack, may not be.
        return "<too deeply nested>"


def text(value: Any, cap: int = MAX_TEXT) -> str | None:
    """A field as text (JSON for a non-string), cut to `cap`; None when absent."""
    if value is None:
        return None
    out = value if isinstance(value, str) else _dumps(value)
    return out[:cap]


def digest(tool_input: Any) -> str:
    """A stable fingerprint of a tool call's input, to pair PreToolUse with PermissionRequest."""
    try:  # orjson: a twentieth of json.dumps's time; every tool call's hooks make one
        raw = orjson.dumps(tool_input, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # (orjson.JSONEncodeError) past 64 bits, a lone surrogate, too deep
        raw = _dumps(tool_input, sort_keys=True).encode("utf-8", "surrogatepass")
    return hashlib.sha1(raw).hexdigest()[:16]


def first_question(tool_input: Mapping[str, Any]) -> str | None:
    """The first question's text of a question tool's input (`questions[0].question`)."""
    questions = tool_input.get("questions")
    if isinstance(questions, list) and questions and isinstance(questions[0], Mapping):
        q = questions[0].get("question")
        if isinstance(q, str):
            return q[:MAX_SHORT]
    return None


def describe_tool(name: str, tool_input: Any) -> str:
    """What a dialog asks for, in a few words: the tool and its command, file or question."""
    if isinstance(tool_input, Mapping):
        question = first_question(tool_input)
        if question:
            return question[:MAX_SHORT]
        for key in ("command", "file_path", "path", "url", "pattern", "prompt", "description"):
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                return f"{name}: {value}"[:MAX_SHORT]
    return name[:MAX_SHORT]
