"""Another host's session row checked field by field before this daemon holds or serves it (pure).

Whoever can write to the shared Redis can write any row, as any host. A row is served only if
every field it has is of the type, size and value set that this version publishes; anything
else refuses the whole row (BadRow says which field), so no shape from outside can fail later
in present(), the CLI or the page. Unknown fields (a newer host's) are dropped, not served.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from purplemux.core.model import State
from purplemux.io.settings import HOST_NAME

MAX_ROW_BYTES = 32 * 1024
"""Longest row (its JSON) read from the broker; a longer one is refused unread."""
MAX_ID = 200
"""As a hook's session_id (sources/hooks.py)."""
MAX_PATH = 4096
MAX_TEXT = 2000
MAX_WORD = 300
MAX_TASKS = 64
"""Background tasks in one row (a host keeps 32)."""
MAX_NUMBER = 1e15
"""Largest count, size or amount a row may carry."""
MAX_TIME = 4_102_444_800.0
"""Latest time (unix seconds, 2100-01-01) a row may carry: any clock can show it."""


class BadRow(ValueError):
    """A remote row refused: the field and what is wrong with it."""


Check = Callable[[str, Any], Any]


def _text(limit: int, optional: bool = True) -> Check:
    def check(name: str, value: Any) -> Any:
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise BadRow(f"{name} is {type(value).__name__}, not a string")
        if len(value) > limit:
            raise BadRow(f"{name} is longer than {limit} characters")
        return value

    return check


def _number(optional: bool = False, integer: bool = False, top: float = MAX_NUMBER) -> Check:
    def check(name: str, value: Any) -> Any:
        if value is None and optional:
            return None
        kinds = (int,) if integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise BadRow(f"{name} is {type(value).__name__}, not a number")
        # Compared, never converted: a 400-digit int has no float; NaN fails every comparison.
        if not 0 <= value <= top:
            raise BadRow(f"{name} is out of range")
        return value

    return check


def _time(optional: bool = False) -> Check:
    """Unix seconds, from 1970 to MAX_TIME."""
    return _number(optional, top=MAX_TIME)


def _flag(optional: bool = False) -> Check:
    def check(name: str, value: Any) -> Any:
        if value is None and optional:
            return None
        if not isinstance(value, bool):
            raise BadRow(f"{name} is {type(value).__name__}, not true or false")
        return value

    return check


def _one_of(values: frozenset[str]) -> Check:
    def check(name: str, value: Any) -> Any:
        if not isinstance(value, str) or value not in values:
            raise BadRow(f"{name} is not one of {', '.join(sorted(values))}")
        return value

    return check


def _object(fields: Mapping[str, Check], optional: bool = True) -> Check:
    def check(name: str, value: Any) -> Any:
        if value is None and optional:
            return None
        if not isinstance(value, dict):
            raise BadRow(f"{name} is {type(value).__name__}, not an object")
        extra = set(value) - set(fields)
        if extra:
            raise BadRow(f"{name} has unknown fields {sorted(map(str, extra))[:3]}")
        return {key: fields[key](f"{name}.{key}", value.get(key)) for key in fields}

    return check


def _list_of(item: Check, limit: int) -> Check:
    def check(name: str, value: Any) -> Any:
        if value is None:
            return []
        if not isinstance(value, list):
            raise BadRow(f"{name} is {type(value).__name__}, not a list")
        if len(value) > limit:
            raise BadRow(f"{name} has more than {limit} items")
        return [item(f"{name}[{n}]", v) for n, v in enumerate(value)]

    return check


def _session_id(name: str, value: Any) -> Any:
    _text(MAX_ID, optional=False)(name, value)
    if not value.strip():
        raise BadRow(f"{name} is empty")
    return value


FIELDS: dict[str, Check] = {
    "id": _session_id,
    "state": _one_of(frozenset(s.value for s in State)),
    "state_since": _time(),
    "alive": _flag(optional=True),
    "ended": _flag(),
    "cwd": _text(MAX_PATH),
    "project": _text(MAX_PATH),
    "pid": _number(optional=True, integer=True),
    "tmux": _object(
        {
            "pane": _text(MAX_ID, optional=False),
            "socket": _text(MAX_PATH),
            "session": _text(MAX_WORD),
            "window": _text(MAX_WORD),
        }
    ),
    "transcript_path": _text(MAX_PATH),
    "seq": _number(integer=True),
    "last_event": _object({"name": _text(MAX_WORD, optional=False), "at": _time()}),
    "current_tool": _text(MAX_WORD),
    "waiting_for": _text(MAX_TEXT),
    "snippet": _text(MAX_TEXT),
    "tokens": _object(
        {k: _number(integer=True) for k in ("input", "output", "cache_read", "cache_creation")},
        optional=False,
    ),
    "model": _text(MAX_WORD),
    "compacting": _flag(),
    "error": _text(MAX_TEXT),
    "updated_at": _time(),
    "name": _text(MAX_TEXT),
    "title": _text(MAX_TEXT),
    "permission_mode": _text(MAX_WORD),
    "context": _object(
        {
            "tokens": _number(optional=True, integer=True),
            "window": _number(optional=True, integer=True),
            "percent": _number(optional=True),
            "band": _text(MAX_WORD, optional=False),
        }
    ),
    "cost_usd": _number(optional=True),
    "cost_source": _text(MAX_WORD),
    "retries": _number(integer=True),
    "error_kind": _text(MAX_WORD),
    "background_tasks": _list_of(
        _object(
            {
                "id": _text(MAX_ID, optional=False),
                "type": _text(MAX_WORD, optional=False),
                "description": _text(MAX_TEXT),
                "status": _text(MAX_WORD, optional=False),
            },
            optional=False,
        ),
        MAX_TASKS,
    ),
    "superseded": _flag(),
    "account": _text(MAX_WORD),
    "background": _flag(),
    "job_id": _text(MAX_ID),
    "limit": _object(
        {
            "window": _text(MAX_WORD),
            "resets_at": _time(optional=True),
            "auto_resume_at": _time(optional=True),
            "at": _time(),
        }
    ),
    "resume": _object(
        {
            "wall_at": _time(),
            "state": _text(MAX_WORD, optional=False),
            "by": _text(MAX_WORD, optional=False),
            "at": _time(),
            "reason": _text(MAX_TEXT),
        }
    ),
}
"""Each field of a session's public JSON (model.Session.to_json) and how it must look."""

DEFAULTS: dict[str, Any] = {
    "state": State.IDLE.value,
    "state_since": 0.0,
    "ended": False,
    "seq": 0,
    "tokens": {"input": 0, "output": 0, "cache_read": 0, "cache_creation": 0},
    "compacting": False,
    "updated_at": 0.0,
    "retries": 0,
    "superseded": False,
    "background": False,
}
"""What a missing field means (an older host leaves it out)."""


def check_row(data: Any) -> dict[str, Any]:
    """The row with every known field checked (BadRow names the first bad one); unknown fields
    dropped; missing ones as the owner would have sent them."""
    if not isinstance(data, dict):
        raise BadRow(f"the row is {type(data).__name__}, not an object")
    out: dict[str, Any] = {}
    for name, check in FIELDS.items():
        value = data.get(name, DEFAULTS.get(name))
        out[name] = check(name, value)
    return out


def beat_time(text: str | None) -> float | None:
    """A heartbeat's time from the broker; None (no beat: the host shows offline) for anything
    but unix seconds a row may carry."""
    try:
        beat = float(text) if text is not None else None
    except (ValueError, OverflowError):
        return None
    return beat if beat is not None and 0 <= beat <= MAX_TIME else None


def host_name_ok(host: object) -> bool:
    """Whether a name from the broker can be a host's (as PURPLEMUX_HOST_NAME must be)."""
    return isinstance(host, str) and HOST_NAME.fullmatch(host) is not None
