"""The header's usage gauges: hidden with no readings, one per account once an agent reports,
updated live from the feed, the reset time in the browser's local time, "reset" once passed."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
from playwright.sync_api import Page, expect

from tests.support import Daemon

pytestmark = pytest.mark.browser


def statusline(daemon: Daemon, five: float, seven: float, five_resets: float) -> None:
    body = {
        "session_id": "s-1",
        "transcript_path": "/tmp/s-1.jsonl",
        "rate_limits": {
            "five_hour": {"used_percentage": five, "resets_at": five_resets},
            "seven_day": {"used_percentage": seven, "resets_at": time.time() + 4 * 86400},
        },
    }
    req = urllib.request.Request(
        daemon.url + "/api/statusline", data=json.dumps(body).encode(), method="POST"
    )
    req.add_header("Authorization", f"Bearer {daemon.token}")
    with urllib.request.urlopen(req, timeout=5) as r:
        assert json.loads(r.read())["changed"] is True


def test_the_gauge_appears_and_follows_the_feed(dashboard: Page, daemon: Daemon) -> None:
    gauges = dashboard.locator('[data-slot="limits"]')
    expect(dashboard.locator("#connection")).to_have_attribute("data-connection", "live")
    expect(gauges).to_be_hidden()
    dashboard.evaluate("window.__sameDocument = true")
    resets = time.time() + 2 * 3600
    statusline(daemon, 42, 81, resets)
    gauge = gauges.locator('.limit[data-agent="claude"][data-account="claude"]')
    expect(gauges).to_be_visible()
    expect(gauge.locator(".limit-who")).to_have_text("claude")
    five = gauge.locator('[data-window="5h"]')
    # The browser's local time; dated when that is another day than today (a test run late in
    # the evening: the reset, two hours on, falls after midnight).
    local = dashboard.evaluate(
        """(ts) => {
            const when = new Date(ts * 1000);
            const two = (n) => String(n).padStart(2, '0');
            const hm = `${two(when.getHours())}:${two(when.getMinutes())}`;
            if (when.toDateString() === new Date().toDateString()) return hm;
            return `${when.toLocaleString('en-US', {month: 'short'})} ${when.getDate()} ${hm}`;
        }""",
        resets,
    )
    expect(five.locator(".limit-text")).to_have_text(f"5h 42% · {local}")
    expect(five.locator("meter")).to_have_attribute("value", "42")
    expect(gauge.locator('[data-window="7d"] .limit-text')).to_contain_text("7d 81%")
    statusline(daemon, 57, 81, resets)  # live: the same page, the new use
    expect(five.locator(".limit-text")).to_have_text(f"5h 57% · {local}")
    # A window whose reset has passed shows as reset, not as its old use.
    statusline(daemon, 99, 82, time.time() - 5)
    expect(five.locator(".limit-text")).to_have_text("5h reset")
    expect(five.locator("meter")).to_have_attribute("value", "0")
    assert dashboard.evaluate("window.__sameDocument") is True
    dashboard.reload()  # a new page gets the readings in its first snapshot
    expect(gauge.locator('[data-window="7d"] .limit-text')).to_contain_text("7d 82%")
