"""Fast checks (no Codex) of the fake Responses API's usage limits (fake_codex_limits.py):
the LIMIT answers, the window headers on every answer, ``reject`` and ``ok_after``. Not
marked e2e."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from .fake_codex_limits import REACHED_TYPE, USAGE_LIMIT_MESSAGE, CodexLimitControl
from .fake_responses import TITLE_PREFIX, FakeResponsesAPI
from .test_fake_responses import ALL_TOOLS, body, call_output, post, user


@pytest.fixture
def api() -> Iterator[FakeResponsesAPI]:
    with FakeResponsesAPI() as fake:
        yield fake


def test_limit_5h_is_a_usage_limit_429_with_the_5_hour_window_full(api: FakeResponsesAPI) -> None:
    before = int(time.time())
    response = post(api, body(user("LIMIT:5h wall")))
    assert response.status_code == 429
    error = response.json()["error"]
    assert (error["type"], error["message"], error["plan_type"]) == (
        "usage_limit_reached",
        USAGE_LIMIT_MESSAGE,
        "pro",
    )
    assert error["resets_in_seconds"] == 300 * 60
    assert before + 300 * 60 <= error["resets_at"] <= int(time.time()) + 300 * 60
    h = response.headers
    assert (h["x-codex-primary-used-percent"], h["x-codex-primary-window-minutes"]) == (
        "100",
        "300",
    )
    assert int(h["x-codex-primary-reset-at"]) == error["resets_at"]
    assert (h["x-codex-secondary-used-percent"], h["x-codex-secondary-window-minutes"]) == (
        "62",
        "10080",
    )
    assert h["x-codex-rate-limit-reached-type"] == REACHED_TYPE
    assert api.turn_requests()[0].status == 429


def test_limit_7d_fills_the_week_and_plain_has_no_headers(api: FakeResponsesAPI) -> None:
    week = post(api, body(user("LIMIT:7d")))
    assert week.headers["x-codex-secondary-used-percent"] == "100"
    assert week.headers["x-codex-primary-used-percent"] == "35"
    assert week.json()["error"]["resets_in_seconds"] == 10080 * 60
    plain = post(api, body(user("LIMIT:plain")))
    assert plain.status_code == 429
    assert plain.json()["error"]["type"] == "rate_limit_exceeded"
    assert not [k for k in plain.headers if k.startswith("x-codex-")]


def test_window_headers_go_on_every_answer_and_reject_until_ok_after(
    api: FakeResponsesAPI,
) -> None:
    api.limits = CodexLimitControl(primary=42, secondary=None, reject="5h", reached_type=None)
    rejected = post(api, body(user("hello")))
    assert rejected.status_code == 429
    assert "x-codex-rate-limit-reached-type" not in rejected.headers
    # Never the title request, never a follow-up after a tool output.
    title = post(api, body(user(f"{TITLE_PREFIX}.\n\nUser prompt:\nhello"), tools=[ALL_TOOLS[2]]))
    assert title.status_code == 200 and title.headers["x-codex-primary-used-percent"] == "42"
    assert post(api, body(user("hello"), call_output())).status_code == 200
    api.limits.allow_from_now()
    ok = post(api, body(user("LIMIT:5h")))
    assert ok.status_code == 200
    assert ok.headers["x-codex-primary-used-percent"] == "42"
    assert "x-codex-secondary-used-percent" not in ok.headers
    assert abs(int(ok.headers["x-codex-primary-reset-at"]) - (time.time() + 300 * 60)) <= 2
