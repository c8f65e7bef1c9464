"""Usage limits from the real Claude Code 2.1.332 through the real daemon (issue 25).

For each login (tests/e2e/logins.py): a user's own statusLine command (it records its input and
prints `SL-OK`) and the daemon's hooks; then `purplemux install-hooks` as the user runs it,
which wraps that statusLine. The stand-in API adds the unified rate-limit headers to every 200
(5 h 42 %, 7 d 81 %). The gateway and subscription logins then show a gauge for the account
(GET /api/limits, the dashboard's header) while the user's own line still shows on Claude's
screen and still gets Claude's input, and a 5-hour wall (`LIMIT:5h`) turns the open page's gauge
to 100 % live; the API key, whose input never has `rate_limits`, shows none. `uninstall-hooks`
gives the user's statusLine back.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support import Daemon
from tests.support.browser import sign_in

from .fake_api import PLAIN_ANSWER, FakeAnthropicAPI
from .fake_limits import LimitControl, usage_headers
from .harness import TmuxClaude, make_claude_home, wait_until
from .statusline import STATUSLINE_OUTPUT, StatusLineLog
from .versions import CURRENT

pytestmark = [pytest.mark.e2e, pytest.mark.claude_versions(CURRENT)]


@dataclass
class Setup:
    daemon: Daemon
    claude: TmuxClaude
    statusline: StatusLineLog
    settings: Path
    user_settings: dict[str, Any]


@pytest.fixture
def started(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    claude_bin: Path,
    fake_api: FakeAnthropicAPI,
) -> Iterator[Setup]:
    login: str = request.param
    daemon = Daemon(home=tmp_path / "pmx", claude_dir=tmp_path / "home" / ".claude")
    statusline = StatusLineLog(tmp_path / "statusline.jsonl")
    home = make_claude_home(tmp_path, None, login=login, statusline_command=statusline.command)
    settings = home.config_dir / "settings.json"
    user_settings = json.loads(settings.read_text())
    daemon.start()
    claude: TmuxClaude | None = None
    try:
        installed = daemon.cli("install-hooks", "--agent", "claude")
        assert installed.returncode == 0, installed.stderr
        line = json.loads(settings.read_text())["statusLine"]
        assert "statusline.sh" in line["command"] and statusline.command != line["command"]
        fake_api.limits = LimitControl(headers=usage_headers(0.42, 0.81), retry_after=2.0)
        fake_api.limits.reset_in = 2 * 3600
        # One retry of a 429 (the gateway retries; 2.1.332's default is ten, ~3 minutes).
        env = {"CLAUDE_CODE_MAX_RETRIES": "1"}
        claude = TmuxClaude(claude_bin, home, fake_api.base_url, env=env, login=login)
        claude.start()
        claude.wait_ready(timeout=60)
        claude.wait_started(timeout=60)
        yield Setup(daemon, claude, statusline, settings, user_settings)
    finally:
        if claude is not None:
            claude.kill()
        daemon.stop()


def one_turn(s: Setup) -> float:
    """A plain turn; when it was sent."""
    sent = time.time()
    s.claude.send_text("hello with headers")
    s.claude.wait_screen(PLAIN_ANSWER, timeout=60)
    return sent


def uninstall_gives_the_users_line_back(s: Setup) -> None:
    done = s.daemon.cli("uninstall-hooks", "--agent", "claude")
    assert done.returncode == 0, done.stderr
    after = json.loads(s.settings.read_text())
    # Claude itself may add keys while it runs (skipDangerousModePermissionPrompt): ours are gone.
    assert after["statusLine"] == s.user_settings["statusLine"] and "hooks" not in after


@pytest.mark.parametrize("started", ["gateway", "subscription"], indirect=True)
def test_a_subscription_like_login_gets_its_gauge_and_keeps_the_users_line(
    started: Setup, page: Page
) -> None:
    s = started
    sent = one_turn(s)
    reading = wait_until(
        lambda: next(iter(s.daemon.api("GET", "/api/limits")), None),
        timeout=30,
        describe=lambda: f"a reading; the user's line got {s.statusline.rate_limits()}",
    )
    assert (reading["agent"], reading["account"]) == ("claude", "claude")  # HOME/.claude
    assert reading["five_hour"]["used_percent"] == 42 and not reading["five_hour"]["reset"]
    assert reading["seven_day"]["used_percent"] == 81
    assert abs(reading["five_hour"]["resets_at"] - (sent + 7200)) < 60
    assert abs(reading["seven_day"]["resets_at"] - (sent + 3 * 86400)) < 60
    # The user's own command still runs with Claude's input, and its line is on the screen.
    assert s.statusline.wait_for_rate_limits("seven_day")["five_hour"]["used_percentage"] == 42
    assert STATUSLINE_OUTPUT in s.claude.screen()
    # The dashboard's header shows the account's gauge.
    sign_in(page, s.daemon)
    gauge = page.locator('[data-slot="limits"] .limit[data-account="claude"]')
    expect(gauge.locator('[data-window="5h"] .limit-text')).to_contain_text("5h 42%")
    expect(gauge.locator('[data-window="7d"] .limit-text')).to_contain_text("7d 81%")
    status = s.daemon.cli("status")
    assert "limits  claude/claude  5h 42% (resets " in status.stdout, status.stdout
    # The 5-hour wall: Claude's next input says 100 %, and the open page follows the feed.
    s.claude.send_text("LIMIT:5h")
    expect(gauge.locator('[data-window="5h"] .limit-text')).to_contain_text(
        "5h 100%", timeout=60_000
    )
    assert STATUSLINE_OUTPUT in s.claude.screen()
    uninstall_gives_the_users_line_back(s)


@pytest.mark.parametrize("started", ["apikey"], indirect=True)
def test_an_api_key_login_shows_no_gauge_and_keeps_the_users_line(
    started: Setup, page: Page
) -> None:
    s = started
    one_turn(s)
    # Claude runs the statusLine again once the answer is in: that input, too, has no limits.
    wait_until(
        lambda: any(i["cost"]["total_api_duration_ms"] > 0 for i in s.statusline.inputs()),
        timeout=30,
        describe=lambda: f"a statusLine call after the answer; got {s.statusline.inputs()}",
    )
    assert s.statusline.rate_limits() == []
    assert STATUSLINE_OUTPUT in s.claude.screen()
    assert s.daemon.api("GET", "/api/limits") == []
    sign_in(page, s.daemon)
    expect(page.locator('[data-slot="limits"]')).to_be_hidden()
    uninstall_gives_the_users_line_back(s)
