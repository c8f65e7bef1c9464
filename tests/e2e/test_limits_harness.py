"""Proves the usage-limit harness against the real Claude Code 2.1.332: each login
(logins.py) in its own HOME, the fake's LIMIT prompts and rate-limit headers
(fake_limits.py), and a recording statusLine command (statusline.py).

What each test checks is the behaviour claude-code-bg-and-limits.md ("B. Usage limits")
records, so a test of issue #25 built on these pieces starts from known ground:

- gateway and subscription: the statusLine input carries ``rate_limits`` from the headers of
  a 200; ``LIMIT:5h`` ends in StopFailure ``rate_limit`` and "You've hit your 5-hour limit ·
  resets <time>"; the subscription adds "set to continue automatically at <time>" and an
  informational transcript entry.
- API key: never ``rate_limits``; ``LIMIT:5h`` shows the retry banner, then "API Error:
  Request rejected (429)".

Retries are cut to one (``CLAUDE_CODE_MAX_RETRIES=1``, ``retry-after`` 2 s) so the file runs
in well under three minutes.
"""

from __future__ import annotations

import re
import time
from datetime import datetime
from typing import Any

import pytest

from .fake_api import PLAIN_ANSWER, FakeAnthropicAPI
from .fake_limits import ACCOUNT_MESSAGE, LimitControl, usage_headers
from .harness import wait_until
from .login_fixtures import LoggedIn, StartLogin
from .statusline import STATUSLINE_OUTPUT
from .versions import CURRENT

pytestmark = [pytest.mark.e2e, pytest.mark.claude_versions(CURRENT)]

RETRY_ENV = {"CLAUDE_CODE_MAX_RETRIES": "1"}
RETRY_AFTER = 2.0
RESET_IN = 2 * 3600
WALL_5H = "You've hit your 5-hour limit · resets "
WALL_7D = "You've hit your weekly limit · resets "
SUBSCRIPTION_WALL = "Usage limit reached · set to continue automatically at "
RETRY_BANNER = "5-hour limit reached · retrying in"
API_KEY_WALL = f"API Error: Request rejected (429) · {ACCOUNT_MESSAGE}"


def clock(ts: float) -> set[str]:
    """How Claude writes a reset time ("10:32pm", and "10pm" on the hour: its binary drops
    ":00"), for ``ts`` and the minute after it (the screen may round up)."""
    out = set()
    for t in (ts, ts + 60):
        stamp = datetime.fromtimestamp(t)
        minute = f":{stamp.minute:02d}" if stamp.minute else ""
        out.add(f"{stamp.hour % 12 or 12}{minute}{'am' if stamp.hour < 12 else 'pm'}")
    return out


def api_errors(logged: LoggedIn) -> list[dict[str, Any]]:
    """The transcript's API error entries (Claude's synthetic assistant messages)."""
    return [
        e
        for e in logged.transcript()
        if e.get("type") == "assistant" and e.get("isApiErrorMessage")
    ]


def last_api_error(logged: LoggedIn, earlier: int = 0) -> dict[str, Any]:
    """The transcript's last API error entry (written just after the StopFailure hook), once
    there are more than `earlier` of them (a second wall's entry lands after its hook)."""

    def probe() -> dict[str, Any] | None:
        found = api_errors(logged)
        return found[-1] if len(found) > earlier else None

    return wait_until(probe, describe=f"API error entry #{earlier + 1} in the transcript")


def headers_on_every_200(api: FakeAnthropicAPI) -> None:
    api.limits = LimitControl(headers=usage_headers(0.42, 0.81), retry_after=RETRY_AFTER)
    api.limits.reset_in = RESET_IN


def check_rate_limits_from_a_200(logged: LoggedIn, sent_at: float) -> None:
    readings = logged.statusline.wait_for_rate_limits("seven_day")
    assert readings["five_hour"]["used_percentage"] == 42
    assert readings["seven_day"]["used_percentage"] == 81
    # usage_headers: 5h resets 2 h out, 7d 3 days out.
    assert abs(readings["five_hour"]["resets_at"] - (sent_at + 7200)) < 60
    assert abs(readings["seven_day"]["resets_at"] - (sent_at + 3 * 86400)) < 60


@pytest.mark.parametrize("login", ["gateway", "subscription"])
def test_a_subscription_like_login_gets_rate_limits_and_the_limit_wall(
    start_login: StartLogin, fake_api: FakeAnthropicAPI, login: str
) -> None:
    headers_on_every_200(fake_api)
    logged = start_login(login, env=RETRY_ENV)
    if login == "subscription":
        assert "Claude Max" in logged.claude.screen()
    sent = time.time()
    logged.turn("hello with headers")
    check_rate_limits_from_a_200(logged, sent)
    main = fake_api.messages_requests()
    assert main and all("x-api-key" not in r.headers for r in main)
    assert all(r.headers.get("authorization", "").startswith("Bearer ") for r in main)

    sent = time.time()
    failure = logged.turn("LIMIT:5h", event="StopFailure", timeout=60)
    assert failure.get("error") == "rate_limit"
    message = str(failure.get("last_assistant_message"))
    assert message.startswith(WALL_5H) and message.endswith("(UTC)")
    assert any(f"resets {t} (" in message for t in clock(sent + RESET_IN)), message
    screen = logged.claude.wait_screen(WALL_5H)
    assert STATUSLINE_OUTPUT in screen  # the user's own status line is still there

    error = last_api_error(logged)
    assert error["error"] == "rate_limit" and error["apiErrorStatus"] == 429
    assert error["apiError"] == "usage_limit_reached"
    assert error["quotaLimits"]["rateLimitType"] == "five_hour"
    assert error["quotaLimits"]["status"] == "rejected"
    assert abs(error["quotaLimits"]["resetsAt"] - (sent + RESET_IN)) < 60
    readings = logged.statusline.rate_limits
    rejected = wait_until(
        lambda: next((r for r in readings() if r["five_hour"]["used_percentage"] == 100), None),
        describe=lambda: f"a 5h reading of 100 %; got {logged.statusline.rate_limits()}",
    )
    assert rejected["seven_day"]["used_percentage"] == 62

    limit_requests = [r for r in fake_api.messages_requests() if r.status == 429]
    if login == "subscription":
        # A subscription is not retried; it arms Claude's own auto-continue.
        assert len(limit_requests) == 1
        screen = logged.claude.wait_screen(SUBSCRIPTION_WALL)
        at = screen.split(SUBSCRIPTION_WALL, 1)[1].split()[0]
        assert at in clock(sent + RESET_IN)
        assert "Usage limit reached · limit resets" in screen
        notices = wait_until(
            lambda: [
                e
                for e in logged.transcript()
                if e.get("type") == "system" and e.get("subtype") == "informational"
            ],
            describe="the informational transcript entry",
        )
        assert notices[-1]["content"] == SUBSCRIPTION_WALL + at
        assert notices[-1]["level"] == "notice"
    else:
        assert len(limit_requests) == 2  # one retry (CLAUDE_CODE_MAX_RETRIES=1)
        # The weekly wall: the failed prompt and this one reach the fake as one user message.
        seen = len(api_errors(logged))
        failure = logged.turn("LIMIT:7d", event="StopFailure", timeout=60)
        assert str(failure.get("last_assistant_message")).startswith(WALL_7D)
        logged.claude.wait_screen(WALL_7D)
        assert last_api_error(logged, earlier=seen)["quotaLimits"]["rateLimitType"] == "seven_day"


def test_an_api_key_never_gets_rate_limits_and_sees_the_retry_banner(
    start_login: StartLogin, fake_api: FakeAnthropicAPI
) -> None:
    headers_on_every_200(fake_api)
    logged = start_login("apikey", env=RETRY_ENV)
    logged.turn("hello with headers")
    # The statusLine runs again once the answer is in (its cost counts the API time).
    wait_until(
        lambda: any(i["cost"]["total_api_duration_ms"] > 0 for i in logged.statusline.inputs()),
        describe=lambda: f"a statusLine call after the answer; got {logged.statusline.inputs()}",
    )
    assert PLAIN_ANSWER in logged.claude.screen()

    n = len(logged.hooks)
    logged.claude.send_text("LIMIT:5h")
    banner = logged.claude.wait_screen(RETRY_BANNER)
    assert re.search(r"retrying in \d+s \(\d{1,2}:\d{2}[ap]m\) · attempt 1/1", banner), banner
    failure = logged.hooks.wait_for("StopFailure", since=n, timeout=60)
    assert failure.get("error") == "rate_limit"
    assert failure.get("last_assistant_message") == API_KEY_WALL
    screen = logged.claude.wait_screen(API_KEY_WALL)
    assert WALL_5H not in screen and STATUSLINE_OUTPUT in screen
    error = last_api_error(logged)
    assert error["error"] == "rate_limit" and error["apiErrorType"] == "rate_limit_error"
    assert "quotaLimits" not in error and "apiError" not in error
    assert logged.statusline.inputs() and logged.statusline.rate_limits() == []
    assert all("x-api-key" in r.headers for r in fake_api.messages_requests())


AUTO_PROMPT = "Your claude.ai usage limit has reset. Continue the task you were working on"


def test_a_subscription_continues_by_itself_after_a_short_reset(
    start_login: StartLogin, fake_api: FakeAnthropicAPI
) -> None:
    # The reset 5 s out: Claude's own auto-continue fired about a minute later here.
    fake_api.limits = LimitControl(headers=usage_headers(0.42, 0.81), reset_in=5)
    logged = start_login("subscription", env=RETRY_ENV)
    failure = logged.turn("LIMIT:5h then continue", event="StopFailure")
    assert failure.get("error") == "rate_limit"
    logged.claude.wait_screen(SUBSCRIPTION_WALL)
    n = len(logged.hooks)

    fired = logged.hooks.wait_for(
        "Notification",
        lambda c: c.get("notification_type") == "quota_auto_resume_fired",
        since=n,
        timeout=180,
    )
    assert fired.get("message") == "Usage limit reset \u2014 Claude is continuing your task"
    prompt = logged.hooks.wait_for("UserPromptSubmit", since=n)
    assert str(prompt.get("prompt")).startswith(AUTO_PROMPT)
    stop = logged.hooks.wait_for("Stop", since=n)
    assert stop.get("last_assistant_message") == PLAIN_ANSWER
    logged.claude.wait_screen("Usage limit reset · Continuing automatically")

    entries = logged.transcript()
    notices = [e.get("content") for e in entries if e.get("subtype") == "informational"]
    assert notices[-1] == "Usage limit reset · Continuing automatically"
    assert str(notices[-2]).startswith(SUBSCRIPTION_WALL)
    (typed_by_nobody,) = [e for e in entries if e.get("type") == "user" and e.get("isMeta")]
    assert typed_by_nobody["origin"] == {"kind": "auto-continuation"}
    # The resent request is the auto-continue prompt, not the LIMIT one: no ok_after needed.
    assert [r.status for r in fake_api.messages_requests()] == [429, 200]
