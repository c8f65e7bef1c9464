"""A Claude session at its 5-hour limit, as Claude 2.1.332 reports it to a real daemon: the
prompt hook, the transcript's error entry with quotaLimits (the exact reset), then the
StopFailure hook (the screen's text). Shared by the resume-at-reset tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.support.daemon import Daemon
from tests.support.hooks import run_hook
from tests.support.input_pane import InputPane
from tests.support.waiting import wait_for

LINE = (
    Path(__file__).parents[1]
    / "samples/claude-code-2.1.332/bg-and-limits/transcripts/line-gw-5h-error.jsonl"
)
HIT = "You've hit your 5-hour limit · resets 10:32pm (UTC)"


def at_wall(d: Daemon, sid: str, pane: InputPane | None, resets_at: float, root: Path) -> None:
    """Claude's hooks and transcript for a turn that hit the 5-hour limit in `pane`: the prompt,
    the transcript's error entry (quotaLimits), then the StopFailure hook."""
    transcript = root / "claude" / "projects" / "-w-proj" / f"{sid}.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    where = (
        {"pane": "", "tmux": ""}
        if pane is None
        else {"pane": pane.pane, "tmux": f"{pane.socket},1,0"}
    )

    def hook(name: str, **extra: Any) -> None:
        payload = {
            "session_id": sid,
            "hook_event_name": name,
            "cwd": "/w/proj",
            "transcript_path": str(transcript),
            **extra,
        }
        run_hook(d.home, payload, **where)

    hook("SessionStart", source="startup")
    hook("UserPromptSubmit", prompt="LIMIT:5h")
    entry = json.loads(LINE.read_text())
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    entry.update(sessionId=sid, session_id=sid, cwd="/w/proj", timestamp=stamp)
    entry["quotaLimits"]["resetsAt"] = int(resets_at)
    entry["apiErrorParams"]["rate_limit_info"]["resetsAt"] = int(resets_at)
    transcript.write_text(json.dumps(entry) + "\n")
    hook("StopFailure", error="rate_limit", last_assistant_message=HIT)


def walled(d: Daemon, sid: str, resets_at: float) -> dict[str, Any]:
    """The session once its failed turn is a review with the transcript's exact reset."""

    def there() -> dict[str, Any] | None:
        s = d.session(sid)
        wall = s and s.get("limit")
        at_rest = s and s["state"] == "review"  # its prompt hook may land after the transcript
        return s if at_rest and wall and wall["resets_at"] == int(resets_at) else None

    return wait_for(there, what=f"{sid} at its wall")
