"""What a person reads of a session at a usage limit: the row, the CLI, the notification."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest

from purplemux.cli import main, render_table
from purplemux.core.model import LimitWall, Session, State, TmuxLocation
from purplemux.core.present import present, session_json
from purplemux.core.timefmt import wall_clock
from purplemux.notify.message import push_payload
from purplemux.server.page import render_dashboard
from tests.support import Daemon, cli_sees, hook

HIT = datetime(2026, 12, 1, 20, 32, 48, tzinfo=UTC).timestamp()


@pytest.fixture
def utc_here(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process reads local time as UTC (the surfaces write the viewer's local time)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def walled(limit: LimitWall, **fields: object) -> Session:
    base = Session(
        id="s1",
        state=State.REVIEW,
        cwd="/w/api-server",
        tmux=TmuxLocation("%3", "/tmp/sock", "main", "1"),
        error="You've hit your 5-hour limit · resets 10:32pm (UTC)",
        error_kind="rate_limit",
        snippet="You've hit your 5-hour limit · resets 10:32pm (UTC)",
        limit=limit,
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def test_wall_clock_is_the_time_today_and_the_date_otherwise() -> None:
    assert wall_clock(HIT + 2 * 3600, HIT, UTC) == "22:32"
    assert wall_clock(HIT + 3 * 86400, HIT, UTC) == "Dec 4 20:32"
    # 23:32 there when it was hit: the reset is past that zone's midnight.
    assert wall_clock(HIT + 2 * 3600, HIT, timezone(timedelta(hours=3))) == "Dec 2 01:32"


def test_a_five_hour_wall_says_when_it_resets(utc_here: None) -> None:
    v = present(walled(LimitWall("five_hour", HIT + 7200, None, HIT)))
    assert (v.detail_kind, v.detail) == ("limit", "limit hit · resets 22:32")
    assert (v.wall, v.wall_at, v.wall_window) == ("limit hit · resets", HIT + 7200, "5-hour limit")
    assert v.reason == "limit hit · resets 22:32"
    assert v.headline == "Claude · api-server · limit hit · resets 22:32"


def test_a_weekly_wall_says_the_day(utc_here: None) -> None:
    resets = datetime(2026, 12, 4, 20, 36, 57, tzinfo=UTC).timestamp()
    v = present(walled(LimitWall("seven_day", resets, None, HIT)))
    assert v.detail == "limit hit · resets Dec 4 20:36"
    assert v.wall_window == "weekly limit"


def test_claude_continuing_by_itself_says_when(utc_here: None) -> None:
    v = present(walled(LimitWall("five_hour", HIT + 600, HIT + 600, HIT)))
    assert v.detail == "continues at 20:42"
    assert v.headline == "Claude · api-server · continues at 20:42"
    # Dismissed, it still sits at the wall until its next turn.
    assert present(
        walled(LimitWall("five_hour", HIT + 600, HIT + 600, HIT), state=State.IDLE)
    ).detail == ("continues at 20:42")


def test_a_plain_429_is_a_wall_with_no_time(utc_here: None) -> None:
    v = present(walled(LimitWall(None, None, None, HIT)))
    assert (v.detail, v.wall_at, v.wall_window) == ("limit hit", None, "")


def test_no_wall_no_words() -> None:
    v = present(Session(id="s1", state=State.REVIEW, error="boom", error_kind="server_error"))
    assert (v.wall, v.wall_at, v.detail_kind) == ("", None, "")


def test_the_notification_for_the_stop_says_it(utc_here: None) -> None:
    payload = push_payload(walled(LimitWall("five_hour", HIT + 7200, None, HIT)))
    assert payload["title"] == "Claude · api-server · limit hit · resets 22:32"


def test_the_status_table_writes_the_terminals_local_time(utc_here: None) -> None:
    s = session_json(walled(LimitWall("five_hour", HIT + 7200, None, HIT)))
    assert "limit hit · resets 22:32" in render_table([s], HIT + 60, colour=False)
    # The day after, the reset reads with its date.
    assert "limit hit · resets Dec 1 22:32" in render_table([s], HIT + 86400, colour=False)


def test_the_dashboard_row_says_it(utc_here: None) -> None:
    s = walled(LimitWall("five_hour", HIT + 7200, None, HIT))
    html = render_dashboard([s], now=HIT + 60)
    assert 'data-kind="limit"' in html and "limit hit · resets 22:32" in html


# --- through a real daemon fed by the real hook script -------------------------------------------


def cli(*argv: str) -> str:
    out = io.StringIO()
    assert main(list(argv), out=out) == 0
    return out.getvalue()


def test_status_and_peek_headline_show_the_wall(
    daemon: Daemon, monkeypatch: pytest.MonkeyPatch, utc_here: None
) -> None:
    cli_sees(daemon, monkeypatch)
    now = datetime.now(UTC)
    reset = (now + timedelta(hours=2)).replace(second=0, microsecond=0)
    said = f"{reset.hour % 12 or 12}:{reset.minute:02d}{'pm' if reset.hour >= 12 else 'am'}"
    hook(daemon, "gw-1", "UserPromptSubmit", pane="%1", prompt="LIMIT:5h")
    hook(
        daemon,
        "gw-1",
        "StopFailure",
        pane="%1",
        error="rate_limit",
        last_assistant_message=f"You've hit your 5-hour limit · resets {said} (UTC)",
    )
    (s,) = [x for x in json.loads(cli("status", "--json")) if x["id"] == "gw-1"]
    assert s["state"] == "review"
    assert s["limit"]["window"] == "five_hour" and s["limit"]["resets_at"] == reset.timestamp()
    shown = wall_clock(reset.timestamp(), time.time())
    assert f"limit hit · resets {shown}" in cli("status")
    hook(daemon, "gw-1", "UserPromptSubmit", pane="%1", prompt="go on")
    (s,) = [x for x in json.loads(cli("status", "--json")) if x["id"] == "gw-1"]
    assert s["state"] == "busy" and s["limit"] is None and s["view"]["wall"] == ""
