"""A session at a usage limit, as the dashboard row shows it: when it comes back, in the
viewer's own local time (the view carries the time; the script writes it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import Browser, expect

from tests.support import Daemon
from tests.support.browser import hook, new_page, sign_in, wait_state

pytestmark = pytest.mark.browser

VIEWER = "Asia/Tokyo"
"""The viewer's zone: not the daemon's (UTC or this machine's), so the row proves whose it is."""


def claude_clock(when: datetime) -> str:
    """How Claude writes a time in its wall message ("10:32pm")."""
    return f"{when.hour % 12 or 12}:{when.minute:02d}{'pm' if when.hour >= 12 else 'am'}"


def test_the_row_says_when_the_limit_resets_in_the_viewers_time(
    browser: Browser, daemon: Daemon
) -> None:
    reset = (datetime.now(UTC) + timedelta(hours=2)).replace(second=0, microsecond=0)
    hook(daemon, "wall-5h", "UserPromptSubmit", pane="%1", cwd="/w/api-server", prompt="go")
    hook(
        daemon,
        "wall-5h",
        "StopFailure",
        pane="%1",
        cwd="/w/api-server",
        error="rate_limit",
        last_assistant_message=f"You've hit your 5-hour limit · resets {claude_clock(reset)} (UTC)",
    )
    wait_state(daemon, "wall-5h", "review")
    there = reset.astimezone(ZoneInfo(VIEWER))
    today = datetime.now(ZoneInfo(VIEWER)).date()
    shown = f"{there:%H:%M}" if there.date() == today else f"{there:%b} {there.day} {there:%H:%M}"
    with new_page(browser, timezone_id=VIEWER) as page:
        sign_in(page, daemon)
        detail = page.locator('[data-session-id="wall-5h"] .detail')
        expect(detail).to_have_attribute("data-kind", "limit")
        expect(detail).to_have_text(f"limit hit · resets {shown}")
        expect(detail).to_have_attribute("title", "5-hour limit")
        # The next prompt starts a turn: the wall is gone from the row.
        hook(daemon, "wall-5h", "UserPromptSubmit", pane="%1", cwd="/w/api-server", prompt="on")
        expect(detail).not_to_have_attribute("data-kind", "limit")
        expect(page.locator('[data-session-id="wall-5h"]')).to_have_attribute("data-state", "busy")
