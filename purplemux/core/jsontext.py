"""JSON text for what the store keeps: orjson (several times json.dumps's speed on an event or a
session record), the standard library for what orjson refuses (an integer past 64 bits).

The text is compact (no spaces after separators) and a NaN becomes null; json.loads reads it
back to the same values either way.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumpb(value: Any) -> bytes:
    """Compact UTF-8 JSON (the live feed's messages, the store's text)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:  # (orjson.JSONEncodeError is one)
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def dumps(value: Any) -> str:
    return dumpb(value).decode()
