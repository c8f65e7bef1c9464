"""Reading a Codex rollout (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``) for what
issue #25 needs: the rate-limit readings (``event_msg`` ``token_count.rate_limits``) and how
a turn ended (``event_msg`` ``task_complete``, whose ``error`` holds a failed turn's message
and ``codex_error_info``). Codex appends live, so a line caught mid-write is skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .codex_harness import CodexHome
from .harness import DEFAULT_TIMEOUT, wait_until


def events(path: Path, kind: str) -> list[dict[str, Any]]:
    """The payloads of the rollout's ``event_msg`` entries of type ``kind``, in order."""
    found: list[dict[str, Any]] = []
    for line in path.read_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("type") != "event_msg":
            continue
        payload = entry.get("payload")
        if isinstance(payload, dict) and payload.get("type") == kind:
            found.append(payload)
    return found


def rate_limits(path: Path) -> list[dict[str, Any]]:
    """Every ``token_count.rate_limits`` that names a window (primary or secondary)."""
    readings = (e.get("rate_limits") for e in events(path, "token_count"))
    return [r for r in readings if isinstance(r, dict) and (r.get("primary") or r.get("secondary"))]


def the_rollout(home: CodexHome, timeout: float = DEFAULT_TIMEOUT) -> Path:
    """The one rollout of a home with one thread."""
    found = wait_until(home.rollouts, timeout, describe="a rollout file")
    if len(found) != 1:
        raise AssertionError(f"expected one rollout, found {found}")
    return found[0]


def wait_task_complete(path: Path, count: int, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """The ``count``-th ``task_complete`` (1-based), once it is written."""

    def probe() -> dict[str, Any] | None:
        done = events(path, "task_complete")
        return done[count - 1] if len(done) >= count else None

    return wait_until(probe, timeout, describe=f"task_complete #{count} in {path.name}")
