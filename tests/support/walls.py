"""A Claude session at its 5-hour limit, as Claude 2.1.332 reports it to a real daemon: the
prompt hook, the transcript's error entry with quotaLimits (the exact reset), then the
StopFailure hook (the screen's text). Shared by the resume-at-reset tests."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.support.daemon import Daemon
from tests.support.hooks import run_hook
from tests.support.input_pane import InputPane
from tests.support.screens import own_pane_in
from tests.support.waiting import wait_for

LINE = (
    Path(__file__).parents[1]
    / "samples/claude-code-2.1.332/bg-and-limits/transcripts/line-gw-5h-error.jsonl"
)
HIT = "You've hit your 5-hour limit · resets 10:32pm (UTC)"


def at_wall(d: Daemon, sid: str, pane: InputPane | None, resets_at: float, root: Path) -> None:
    """Claude's hooks and transcript for a turn that hit the 5-hour limit in `pane`: the prompt,
    the transcript's error entry (quotaLimits), then the StopFailure hook."""
    _hook(d, sid, pane, root)("SessionStart", source="startup")
    hit_wall(d, sid, pane, resets_at, root, "LIMIT:5h")


def hit_wall(
    d: Daemon, sid: str, pane: InputPane | None, resets_at: float, root: Path, prompt: str
) -> None:
    """A new turn of the session (`prompt`, e.g. the "continue" purplemux typed) that hits the
    5-hour limit again: its prompt hook, a new error entry in the transcript, the StopFailure."""
    hook = _hook(d, sid, pane, root)
    hook("UserPromptSubmit", prompt=prompt)
    entry = json.loads(LINE.read_text())
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    entry.update(sessionId=sid, session_id=sid, cwd="/w/proj", timestamp=stamp)
    entry.update(uuid=str(uuid.uuid4()))
    entry["message"]["id"] = str(uuid.uuid4())
    entry["quotaLimits"]["resetsAt"] = int(resets_at)
    entry["apiErrorParams"]["rate_limit_info"]["resetsAt"] = int(resets_at)
    with _transcript(sid, root).open("a") as f:
        f.write(json.dumps(entry) + "\n")
    hook("StopFailure", error="rate_limit", last_assistant_message=HIT)


def _transcript(sid: str, root: Path) -> Path:
    return root / "claude" / "projects" / "-w-proj" / f"{sid}.jsonl"


def _hook(d: Daemon, sid: str, pane: InputPane | None, root: Path) -> Callable[..., None]:
    """Run one of the session's hooks in `pane` (None: outside tmux)."""
    transcript = _transcript(sid, root)
    transcript.parent.mkdir(parents=True, exist_ok=True)
    where = (
        {"pane": "", "tmux": ""}
        if pane is None
        else {"pane": pane.pane, "tmux": f"{pane.socket},1,0"}
    )

    if pane is not None:
        own_pane_in(d.claude_dir, sid, pane.socket, pane.pane)

    def hook(name: str, **extra: Any) -> None:
        payload = {
            "session_id": sid,
            "hook_event_name": name,
            "cwd": "/w/proj",
            "transcript_path": str(transcript),
            **extra,
        }
        run_hook(d.home, payload, **where)

    return hook


def walled(d: Daemon, sid: str, resets_at: float, after: float | None = None) -> dict[str, Any]:
    """The session once its failed turn is a review with the transcript's exact reset (and,
    given `after`, a wall that began after that: a new one)."""

    def there() -> dict[str, Any] | None:
        s = d.session(sid)
        wall = s and s.get("limit")
        at_rest = s and s["state"] == "review"  # its prompt hook may land after the transcript
        new = wall and (after is None or wall["at"] > after)
        return s if at_rest and new and wall["resets_at"] == int(resets_at) else None

    return wait_for(there, what=f"{sid} at its wall")
