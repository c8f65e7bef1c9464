"""Codex's usage gauge from a real Codex 0.171.0 turn (issue 25): the stand-in Responses API
sends the `x-codex-*` rate-limit headers (`LIMITS:42:17`), Codex writes them into its rollout's
`token_count.rate_limits`, and the daemon shows them as the Codex account's reading (GET
/api/limits, the feed's `limits` message, `purplemux status`)."""

from __future__ import annotations

import pytest

from tests.support import Daemon

from .codex_fixtures import StartCodex
from .conftest import FeedRecorder
from .harness import wait_until
from .test_codex_daemon_e2e import (  # noqa: F401 - fixtures, found by name
    codex_hook_command,
    daemon,
    feed,
    on_pane,
    prompt,
)

pytestmark = pytest.mark.e2e


def test_a_codex_turns_rollout_gives_the_codex_accounts_gauge(
    daemon: Daemon,  # noqa: F811
    feed: FeedRecorder,  # noqa: F811
    start_codex: StartCodex,
) -> None:
    pane = start_codex()
    sid = on_pane(feed, pane).session["id"]
    assert daemon.api("GET", "/api/limits") == []
    mark = feed.mark()
    prompt(pane, "LIMITS:42:17 how much is left?")
    feed.wait_state(sid, "review", since=mark, timeout=30)
    (reading,) = wait_until(
        lambda: daemon.api("GET", "/api/limits"), 30, describe="the Codex account's reading"
    )
    assert (reading["agent"], reading["account"]) == ("codex", "codex")  # HOME/.codex
    assert reading["five_hour"]["used_percent"] == 42 and not reading["five_hour"]["reset"]
    assert reading["seven_day"]["used_percent"] == 17
    assert reading["five_hour"]["resets_at"] and reading["seven_day"]["resets_at"]
    sent = [m.data for m in feed.messages()[mark:] if m.data.get("type") == "limits"]
    assert sent and sent[-1]["limits"] == [reading]
    status = daemon.cli("status")
    assert "limits  codex/codex  5h 42% (resets " in status.stdout, status.stdout
