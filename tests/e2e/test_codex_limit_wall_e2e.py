"""Codex's limit wall through a real daemon with the real Codex 0.171.0 (issue #25): a turn
the fake Responses API refuses at the 5-hour limit (429 usage_limit_reached with the window
headers, fake_codex_limits.py) ends in a review at the wall, with its window and reset from
the rollout's token_count (rate_limit_reached_type); a plain 429 is a wall with no time."""

from __future__ import annotations

from typing import Any

import pytest

from purplemux.core.timefmt import wall_clock
from tests.support import Daemon

from .codex_fixtures import StartCodex
from .conftest import FeedRecorder
from .fake_codex_limits import CodexLimitControl
from .fake_responses import FakeResponsesAPI
from .test_codex_daemon_e2e import (  # noqa: F401 - fixtures, found by name
    codex_hook_command,
    daemon,
    feed,
    on_pane,
    prompt,
)
from .test_codex_limits_harness import dismiss_nudge

pytestmark = pytest.mark.e2e


def walled(rows: FeedRecorder, sid: str, since: int, window: str | None) -> dict[str, Any]:
    def ok(s: dict[str, Any]) -> bool:
        wall = s.get("limit") or {}
        return s.get("state") == "review" and bool(wall) and wall.get("window") == window

    return rows.wait(sid, ok, since=since, timeout=60, what=f"the {window} wall").session


def test_codex_plain_429_then_a_5_hour_wall(
    daemon: Daemon,  # noqa: F811
    feed: FeedRecorder,  # noqa: F811
    start_codex: StartCodex,
    fake_responses: FakeResponsesAPI,
) -> None:
    fake_responses.limits = CodexLimitControl(primary=42, secondary=17)
    pane = start_codex()
    sid = on_pane(feed, pane).session["id"]
    mark = feed.mark()
    prompt(pane, "LIMIT:plain wall")
    s = walled(feed, sid, mark, None)
    assert s["limit"]["resets_at"] is None and s["view"]["detail"] == "limit hit"
    assert "429 Too Many Requests" in (s["error"] or "")

    mark = feed.mark()
    prompt(pane, "LIMIT:5h wall")
    feed.wait_state(sid, "busy", since=mark)
    s = walled(feed, sid, mark, "five_hour")
    wall = s["limit"]
    assert wall["resets_at"] is not None and wall["auto_resume_at"] is None
    view = s["view"]
    assert (view["wall"], view["wall_at"], view["wall_window"]) == (
        "limit hit · resets",
        wall["resets_at"],
        "5-hour limit",
    )
    assert view["detail"] == f"limit hit · resets {wall_clock(wall['resets_at'], wall['at'])}"
    assert view["headline"].startswith("Codex · ") and "limit hit · resets" in view["headline"]
    assert "limit hit · resets" in daemon.cli("status", check=True).stdout
    dismiss_nudge(pane)
