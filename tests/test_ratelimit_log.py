"""A warning that repeats (an unreadable file looked at every 2 s) is written once per interval."""

from __future__ import annotations

import logging

import pytest

from purplemux.io.log_once import RateLimitedLog


def test_a_repeated_warning_is_written_once_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    warn = RateLimitedLog(logging.getLogger("t.ratelimit"), interval=600, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, "t.ratelimit"):
        for _ in range(300):  # ten minutes of a look every 2 s
            warn.warning("file-a", "cannot read %s", "a")
            now[0] += 2
        warn.warning("file-b", "cannot read %s", "b")  # another key is not held back
        warn.warning("file-a", "cannot read %s", "a")
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "cannot read a",
        "cannot read b",
        "cannot read a (299 more like it since the last report)",
    ]


def test_forget_lets_the_next_warning_through(caplog: pytest.LogCaptureFixture) -> None:
    warn = RateLimitedLog(logging.getLogger("t.ratelimit2"), interval=600, clock=lambda: 0.0)
    with caplog.at_level(logging.WARNING, "t.ratelimit2"):
        assert warn.warning("k", "x")
        assert not warn.warning("k", "x")
        warn.forget("k")
        assert warn.warning("k", "x")
    assert len(caplog.records) == 2
