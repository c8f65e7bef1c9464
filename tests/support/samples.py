"""The captured Claude Code samples: hook logs as lines and as events, and the states reached."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from purplemux.core.events import Event
from purplemux.core.model import State
from purplemux.sources.hooks import to_event
from tests.support.daemon import REPO


def _samples_dir() -> Path:
    for base in (REPO / "tests" / "samples", REPO.parent / "shared" / "samples"):
        candidate = base / "claude-code-2.1.197"
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("claude-code-2.1.197 samples not found")


SAMPLES = _samples_dir()


def load_hooks(name: str = "hooks.jsonl") -> list[dict[str, Any]]:
    """Lines of a captured hook log: {"ts", "tmux_pane", "payload"}."""
    return [json.loads(line) for line in (SAMPLES / name).read_text().splitlines() if line.strip()]


def hook_events(name: str = "hooks.jsonl") -> list[Event]:
    out = []
    for n, line in enumerate(load_hooks(name)):
        headers = {
            "x-purplemux-event-id": f"e{n}",
            "x-purplemux-ts": str(int(line["ts"] * 1e9)),
            "x-purplemux-pane": line["tmux_pane"],
        }
        out.append(to_event(line["payload"], headers, now=0.0))
    return out


# The captured real scenario, one session after the other: each hook and the state the session
# is in after it.
_FIRST = [  # session 054c…
    ("SessionStart", State.IDLE),
    ("UserPromptSubmit", State.BUSY),
    ("Stop", State.REVIEW),
    ("UserPromptSubmit", State.BUSY),
    ("PreToolUse", State.BUSY),
    ("PermissionRequest", State.NEEDS_INPUT),
    ("Notification", State.NEEDS_INPUT),
    ("PostToolUse", State.BUSY),
    ("Stop", State.REVIEW),
    ("UserPromptSubmit", State.BUSY),
    ("PreToolUse", State.BUSY),  # then Esc: no hook (the transcript tells)
    ("UserPromptSubmit", State.BUSY),
    ("Stop", State.REVIEW),
    ("PreCompact", State.REVIEW),
    ("SubagentStop", State.REVIEW),
    ("SessionStart", State.REVIEW),  # source=compact
    ("PostCompact", State.REVIEW),
    ("SessionEnd", State.IDLE),
]
_SECOND = [  # session d609…
    ("SessionStart", State.IDLE),
    ("UserPromptSubmit", State.BUSY),
    ("Stop", State.REVIEW),
    ("SessionEnd", State.IDLE),
]
EXPECTED = [
    (hook, prefix, state)
    for prefix, turns in (("054c", _FIRST), ("d609", _SECOND))
    for hook, state in turns
]
"""(hook name, session id prefix, state after it), in the log's order."""
