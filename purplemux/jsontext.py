"""JSON text for what the store keeps: orjson (several times json.dumps's speed on an event or a
session record), the standard library for what orjson refuses (an integer past 64 bits).

The text is compact (no spaces after separators) and a NaN becomes null; json.loads reads it
back to the same values either way.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:  # (orjson.JSONEncodeError is one)
        return json.dumps(value)
