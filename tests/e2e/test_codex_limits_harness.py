"""Proves the Codex half of the usage-limit harness against the real Codex 0.171.0: the fake
Responses API's window headers and LIMIT answers (fake_codex_limits.py) reach the rollout
(codex_rollout.py) and the screen as codex.md and README.md record.

- A 200 with the headers: ``token_count.rate_limits`` primary/secondary as sent.
- ``LIMIT:5h`` / ``LIMIT:7d`` (429 ``usage_limit_reached``): a ``token_count`` with the 429's
  windows and ``rate_limit_reached_type``, the turn failing with "You've hit your usage
  limit. ... try again at <time>." (a typographic apostrophe), then the "Approaching rate
  limits" modal.
- ``LIMIT:plain`` (429 ``rate_limit_exceeded``): "exceeded retry limit, last status: 429 Too
  Many Requests", no new reading.
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import pytest

from .codex_fixtures import StartCodex
from .codex_harness import CodexHome, CodexPane, by_start
from .codex_rollout import rate_limits, the_rollout, wait_task_complete
from .fake_codex_limits import REACHED_TYPE, CodexLimitControl
from .fake_responses import PLAIN_ANSWER, FakeResponsesAPI
from .harness import HookCall, HookLog

pytestmark = pytest.mark.e2e

USAGE_LIMIT = "You\u2019ve hit your usage limit. Visit https://chatgpt.com/settings/usage"
RETRY_LIMIT = "exceeded retry limit, last status: 429 Too Many Requests"
NUDGE = "Approaching rate limits"
KEEP_MODEL = "2"  # "2. Keep current model"


def failed_turn(pane: CodexPane, hooks: HookLog, prompt: str) -> HookCall:
    """Send ``prompt``; its PostModelRequest, which must say the model request failed."""
    n = len(hooks)
    pane.send_text(prompt)
    post = hooks.wait_for("PostModelRequest", since=n)
    assert post.get("status") == "failed"
    assert "Stop" not in [c.event for c in by_start(hooks.calls()[n:])]
    return post


def dismiss_nudge(pane: CodexPane) -> None:
    """The modal that follows a turn with a window at >= ~90 %: keep the model (codex.md)."""
    pane.wait_for_screen(NUDGE)
    pane.send_keys(KEEP_MODEL)
    pane.wait_for_screen(lambda screen: NUDGE not in screen and pane.composer() == "")


def clock(ts: float) -> set[str]:
    """Codex's "9:24 AM" for ``ts`` and the minute after it; a reset on another day than
    today's is dated first, "Dec 5th, 2026 1:34 AM" (seen when a 5 h window crossed midnight)."""
    out = set()
    today = datetime.now().date()
    for t in (ts, ts + 60):
        stamp = datetime.fromtimestamp(t)
        hour = f"{stamp.hour % 12 or 12}:{stamp.minute:02d} {'AM' if stamp.hour < 12 else 'PM'}"
        if stamp.date() == today:
            out.add(hour)
        else:
            day = stamp.day
            nth = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
            out.add(f"{stamp:%b} {day}{nth}, {stamp.year} {hour}")
    return out


def test_window_headers_and_a_5h_usage_limit_reach_the_rollout(
    start_codex: StartCodex,
    codex_hook_log: HookLog,
    codex_home: CodexHome,
    fake_responses: FakeResponsesAPI,
) -> None:
    fake_responses.limits = CodexLimitControl(primary=42, secondary=17)
    pane = start_codex()
    sent = time.time()
    pane.send_text("hello with limits")
    codex_hook_log.wait_for("Stop")
    rollout = the_rollout(codex_home)
    wait_task_complete(rollout, 1)
    [reading] = rate_limits(rollout)
    assert reading["limit_id"] == "codex" and reading["rate_limit_reached_type"] is None
    assert (reading["primary"]["used_percent"], reading["primary"]["window_minutes"]) == (42, 300)
    assert abs(reading["primary"]["resets_at"] - (sent + 300 * 60)) < 60
    assert reading["secondary"]["used_percent"] == 17
    assert reading["secondary"]["window_minutes"] == 10080

    sent = time.time()
    post = failed_turn(pane, codex_hook_log, "LIMIT:5h wall")
    message = str(post.get("error"))
    assert message.startswith(USAGE_LIMIT)
    assert any(message.endswith(f"try again at {t}.") for t in clock(sent + 300 * 60)), message
    done = wait_task_complete(rollout, 2)
    assert done["error"] == {"message": message, "codex_error_info": "usage_limit_exceeded"}
    assert done["last_agent_message"] is None
    wall = rate_limits(rollout)[-1]
    assert wall["rate_limit_reached_type"] == REACHED_TYPE
    assert (wall["primary"]["used_percent"], wall["secondary"]["used_percent"]) == (100, 62)
    pane.wait_for_screen(f"\u25a0 {USAGE_LIMIT}")
    dismiss_nudge(pane)

    post = failed_turn(pane, codex_hook_log, "LIMIT:plain wall")
    assert post.get("error") == RETRY_LIMIT
    done = wait_task_complete(rollout, 3)
    assert done["error"] == {
        "message": RETRY_LIMIT,
        "codex_error_info": {"response_too_many_failed_attempts": {"http_status_code": 429}},
    }
    assert len(rate_limits(rollout)) == 2  # a plain 429 leaves no reading
    pane.wait_for_screen(f"\u25a0 {RETRY_LIMIT}")


def test_the_control_rejects_every_turn_until_ok_after_and_7d_names_the_week(
    start_codex: StartCodex,
    codex_hook_log: HookLog,
    codex_home: CodexHome,
    fake_responses: FakeResponsesAPI,
) -> None:
    fake_responses.limits = CodexLimitControl(reject="7d", secondary_reset_in=3 * 86400)
    pane = start_codex()
    sent = time.time()
    message = str(failed_turn(pane, codex_hook_log, "an ordinary prompt").get("error"))
    assert message.startswith(USAGE_LIMIT)
    rollout = the_rollout(codex_home)
    wait_task_complete(rollout, 1)
    [wall] = rate_limits(rollout)
    assert (wall["primary"]["used_percent"], wall["secondary"]["used_percent"]) == (35, 100)
    assert abs(wall["secondary"]["resets_at"] - (sent + 3 * 86400)) < 60
    assert wall["rate_limit_reached_type"] == REACHED_TYPE
    dismiss_nudge(pane)

    fake_responses.limits.allow_from_now()
    n = len(codex_hook_log)
    pane.send_text("LIMIT:7d after the reset")
    stop = codex_hook_log.wait_for("Stop", since=n)
    assert stop.get("last_assistant_message") == PLAIN_ANSWER
    assert [r.status for r in fake_responses.turn_requests()] == [429, 200]
    assert str(Path(rollout).name).startswith("rollout-")
