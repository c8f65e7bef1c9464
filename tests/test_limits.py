"""Usage limits per account (purplemux.core.limits): what a reading is made of, which one an account
shows, and how it reads once its reset has passed."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents.claude.statusline import from_statusline
from purplemux.cli.tmux_status import count, render
from purplemux.core.limits import (
    Board,
    Reading,
    ReadingError,
    Window,
    dir_label,
    from_rate_limits,
    line,
    merge,
    short,
)
from purplemux.core.model import RateLimits

SAMPLES = Path(__file__).parent / "samples" / "claude-code-2.1.332" / "statusline"
NOW = 1796157700.0
GATEWAY_INPUT: dict[str, Any] = {
    "session_id": "b286962e-c5e9-4dfe-b005-a189125af5b2",
    "transcript_path": "/home/user/.claude/projects/-home-user-proj/b286962e.jsonl",
    "cwd": "/home/user/proj",
    "model": {"id": "claude-opus-5-5", "display_name": "Opus 5.5"},
    "rate_limits": {
        "five_hour": {"used_percentage": 42, "resets_at": 1796164173},
        "seven_day": {"used_percentage": 81, "resets_at": 1796416173},
    },
}


def reading(at: float, five: Window | None, seven: Window | None = None) -> Reading:
    return Reading("claude", "claude", five, seven, at)


def test_the_statusline_input_of_a_gateway_login_is_a_reading_of_both_windows() -> None:
    sid, r = from_statusline(GATEWAY_INPUT, "claude", "work", NOW)
    assert sid == "b286962e-c5e9-4dfe-b005-a189125af5b2"
    assert r == Reading(
        "claude", "work", Window(42.0, 1796164173.0), Window(81.0, 1796416173.0), NOW
    )
    assert r.to_json(NOW) == {
        "agent": "claude",
        "account": "work",
        "five_hour": {"used_percent": 42.0, "resets_at": 1796164173.0, "reset": False},
        "seven_day": {"used_percent": 81.0, "resets_at": 1796416173.0, "reset": False},
        "at": NOW,
    }


def test_an_input_without_rate_limits_is_no_reading() -> None:
    # The API-key login never has the key; no login has it before the session's first answer.
    data = {k: v for k, v in GATEWAY_INPUT.items() if k != "rate_limits"}
    assert from_statusline(data, "claude", "claude", NOW) == (GATEWAY_INPUT["session_id"], None)
    assert from_statusline({**data, "rate_limits": {}}, "claude", "claude", NOW)[1] is None


@pytest.mark.parametrize(
    ("capture", "with_limits"),
    [("apikey", False), ("gateway-jwt", True), ("fake-oauth-max", True)],
)
def test_the_real_captures_read_as_their_login_says(capture: str, with_limits: bool) -> None:
    lines = (SAMPLES / f"statusline-{capture}.jsonl").read_text().splitlines()
    readings = [from_statusline(json.loads(x)["input"], "claude", "c", NOW)[1] for x in lines]
    assert any(r is not None for r in readings) is with_limits
    for r in readings:
        if r is not None:
            assert r.five_hour is not None and r.seven_day is not None


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([1, 2], "must be a JSON object"),
        ({"session_id": 7}, "session_id must be a string"),
        ({"transcript_path": ["x"]}, "transcript_path must be a string"),
        ({"rate_limits": "full"}, "rate_limits must be an object"),
        ({"rate_limits": {"five_hour": 42}}, "rate_limits.five_hour must be an object"),
        (
            {"rate_limits": {"five_hour": {"used_percentage": "42"}}},
            "used_percentage must be a number from 0 to 100",
        ),
        (
            {"rate_limits": {"seven_day": {"used_percentage": 140}}},
            "used_percentage must be a number from 0 to 100",
        ),
        (
            {"rate_limits": {"seven_day": {"used_percentage": 4, "resets_at": "soon"}}},
            "resets_at must be unix seconds",
        ),
    ],
)
def test_an_input_claude_never_sends_is_refused_with_the_reason(data: Any, reason: str) -> None:
    with pytest.raises(ReadingError, match=reason):
        from_statusline(data, "claude", "claude", NOW)


def test_codex_windows_go_where_their_length_says() -> None:
    limits = RateLimits(
        primary_percent=12.5,
        primary_window_minutes=300,
        primary_resets_at=NOW + 3600,
        secondary_percent=40.0,
        secondary_window_minutes=10080,
        secondary_resets_at=NOW + 86400,
    )
    r = from_rate_limits(limits, "codex", "codex", NOW)
    assert r == Reading("codex", "codex", Window(12.5, NOW + 3600), Window(40.0, NOW + 86400), NOW)
    # Swapped slots still land by their length; another length is not a gauge's window.
    swapped = RateLimits(
        primary_percent=40.0,
        primary_window_minutes=10080,
        secondary_percent=7.0,
        secondary_window_minutes=60,
    )
    r = from_rate_limits(swapped, "codex", "codex", NOW)
    assert r is not None and r.five_hour is None and r.seven_day == Window(40.0, None)
    assert from_rate_limits(RateLimits(reached_type="x"), "codex", "codex", NOW) is None


def test_the_newest_reading_wins_per_account() -> None:
    board = Board()
    first = reading(NOW, Window(10, NOW + 100))
    assert board.offer(first) == first
    assert board.offer(reading(NOW - 5, Window(99, NOW + 100))) is None  # older: ignored
    assert board.offer(reading(NOW + 1, Window(10, NOW + 100))) is None  # the same use
    newer = reading(NOW + 2, Window(20, NOW + 100))
    assert board.offer(newer) == newer
    other = Reading("codex", "codex", Window(3, None), None, NOW)
    board.offer(other)
    assert [r.key for r in board.readings()] == [("claude", "claude"), ("codex", "codex")]
    assert board.readings()[0].five_hour == Window(20, NOW + 100)


def test_a_passed_reset_reads_as_reset_not_as_the_stale_use() -> None:
    r = reading(NOW, Window(97, NOW + 60), Window(81, NOW + 86400))
    later = r.to_json(NOW + 61)
    assert later["five_hour"] == {"used_percent": 0, "resets_at": NOW + 60, "reset": True}
    assert later["seven_day"]["used_percent"] == 81
    assert line(later, NOW + 61).startswith("claude/claude  5h reset  7d 81% (resets ")
    assert short([later]) == "claude 5h0% 7d81%"


def test_a_window_claude_drops_after_its_reset_is_kept_as_reset() -> None:
    # Claude leaves a window out of its input once the window's reset has passed.
    old = reading(NOW, Window(97, NOW + 60), Window(81, NOW + 86400))
    new = reading(NOW + 90, None, Window(82, NOW + 86400))
    merged = merge(old, new)
    assert merged is not None and merged.five_hour == Window(97, NOW + 60)
    assert merged.to_json(NOW + 90)["five_hour"]["reset"] is True
    # A window dropped before its reset is not made up: the new reading says it is gone.
    early = reading(NOW + 10, None, Window(82, NOW + 86400))
    assert merge(old, early) == early


def test_a_reading_survives_its_record() -> None:
    r = reading(NOW, Window(42, NOW + 1), None)
    assert Reading.from_record(json.loads(json.dumps(r.to_record()))) == r


def test_the_default_account_label_is_the_config_dir_without_its_dot() -> None:
    assert dir_label(Path("/home/u/.claude")) == "claude"
    assert dir_label(Path("/home/u/.codex")) == "codex"
    assert dir_label(Path("/home/u/work-claude")) == "work-claude"


def test_the_cli_line_names_the_account_and_the_local_reset_time() -> None:
    resets = time.mktime((2026, 12, 4, 20, 33, 0, 0, 0, -1))
    now = time.mktime((2026, 12, 2, 10, 0, 0, 0, 0, -1))
    r = Reading("claude", "work", Window(42, now + 3600), Window(81, resets), now).to_json(now)
    assert line(r, now) == (
        f"claude/work  5h 42% (resets {time.strftime('%H:%M', time.localtime(now + 3600))})"
        "  7d 81% (resets Dec 4 20:33)"
    )


def test_tmux_status_fills_limits_in_its_format() -> None:
    text = short([Reading("codex", "codex", Window(3.4, None), None, NOW).to_json(NOW)])
    assert render(count([]), "{badge}|{limits}", limits=text) == "|codex 5h3%"


def test_an_idle_session_repeating_an_old_reading_does_not_hide_a_newer_one() -> None:
    # Claude keeps readings per session: an idle one redraws its line with what it heard last.
    board = Board()
    old_news = reading(NOW, Window(30, NOW + 3600))
    assert board.offer(old_news, source="idle-session") == old_news
    fresh = reading(NOW + 60, Window(60, NOW + 3600))
    assert board.offer(fresh, source="busy-session") == fresh
    assert board.offer(reading(NOW + 90, Window(30, NOW + 3600)), source="idle-session") is None
    assert board.readings()[0].five_hour == Window(60, NOW + 3600)
    # What that session hears next is news again.
    later = reading(NOW + 120, Window(64, NOW + 3600))
    assert board.offer(later, source="idle-session") == later


def test_a_readings_account_is_its_sessions_else_its_config_dirs(tmp_path: Path) -> None:
    from purplemux.core.model import Session
    from purplemux.daemon.limit_keeper import account_for
    from purplemux.io.settings import Settings

    settings = Settings.from_env(
        {"CODEX_HOME": str(tmp_path / ".codex")},
        home=tmp_path / "pmx",
        claude_dir=tmp_path / ".claude",
    )
    assert account_for(settings, Session(id="s", account="work"), "claude") == "work"
    assert account_for(settings, Session(id="s"), "claude") == "claude"
    assert account_for(settings, None, "codex") == "codex"


def test_status_watch_follows_the_feeds_limits() -> None:
    from purplemux.cli.follow import Follower, Step
    from purplemux.cli.render import render_limits

    shown = reading(NOW, Window(42, None)).to_json(NOW)
    follower = Follower()
    assert (
        follower.take({"type": "snapshot", "seq": 4, "sessions": [], "limits": []}) is Step.CHANGED
    )
    assert render_limits(follower.limits, NOW) == ""  # no readings: no lines
    message = {"type": "limits", "seq": 5, "limits": [shown]}
    assert follower.take(message) is Step.CHANGED
    assert render_limits(follower.limits, NOW) == "\nlimits  claude/claude  5h 42%\n"
    assert follower.take({"type": "limits", "seq": 7, "limits": []}) is Step.RESYNC  # a gap


@pytest.mark.parametrize("resets", [1e18, 10**400, 1e11, 999_999_999, float("inf"), -1])
def test_a_reset_no_clock_shows_is_refused_from_claude_and_dropped_from_codex(
    resets: float,
) -> None:
    data = {"rate_limits": {"five_hour": {"used_percentage": 4, "resets_at": resets}}}
    with pytest.raises(ReadingError, match=r"five_hour\.resets_at must be unix seconds"):
        from_statusline(data, "claude", "claude", NOW)
    limits = RateLimits(primary_percent=4, primary_window_minutes=300, primary_resets_at=resets)
    r = from_rate_limits(limits, "codex", "codex", NOW)
    assert r is not None and r.five_hour == Window(4.0, None)


@pytest.mark.parametrize(
    "record",
    [
        {"used_percent": 42, "resets_at": 1e18},
        {"used_percent": 42, "resets_at": 10**400},
        {"used_percent": float("nan"), "resets_at": None},
        {"used_percent": float("inf")},
        {"used_percent": 420},
        {"used_percent": "42"},
    ],
)
def test_a_stored_reading_no_clock_or_page_can_show_is_not_read_back(record: Any) -> None:
    stored = {"agent": "claude", "account": "claude", "five_hour": record, "at": NOW}
    with pytest.raises(ValueError):
        Reading.from_record(json.loads(json.dumps(stored)))


def test_the_cli_line_and_tmux_text_never_fail_on_a_reading_they_cannot_show() -> None:
    """What a daemon of another version may serve: the line leaves out what it cannot show."""
    odd = {
        "agent": "claude",
        "account": "claude",
        "five_hour": {"used_percent": 42, "resets_at": 1e18, "reset": False},
        "seven_day": {"used_percent": float("nan"), "resets_at": NOW + 60, "reset": False},
    }
    assert line(odd, NOW) == "claude/claude  5h 42%"
    assert short([odd]) == "claude 5h42%"


@pytest.mark.parametrize("at", [float("nan"), 10**400, 1e18, "soon"])
def test_a_stored_reading_at_no_time_is_not_read_back(at: Any) -> None:
    stored = {"agent": "claude", "account": "claude", "five_hour": None, "at": at}
    with pytest.raises(ValueError):
        Reading.from_record(json.loads(json.dumps(stored)))
