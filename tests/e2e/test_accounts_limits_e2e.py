"""Two Claude accounts, one daemon, a gauge each (issue 25): the real Claude 2.1.332 in two
throw-away HOMEs, both gateway logins (their statusLine input carries `rate_limits`), each
against its own Messages API stand-in that reports its own use on every answer (work: 5 h 42 %,
7 d 81 %; personal: 5 h 93 %, 7 d 40 %). One `purplemux serve` watches both config dirs
(PURPLEMUX_CLAUDE_DIRS), and one `purplemux install-hooks` puts the hooks and the statusLine
wrapper into each. A turn in each gives two rows and two gauges, each with its own account.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support import Daemon
from tests.support.browser import sign_in

from .fake_api import PLAIN_ANSWER, FakeAnthropicAPI
from .fake_limits import LimitControl, usage_headers
from .harness import ClaudeHome, TmuxClaude, make_claude_home, wait_until
from .statusline import STATUSLINE_OUTPUT, StatusLineLog
from .versions import CURRENT

pytestmark = [pytest.mark.e2e, pytest.mark.claude_versions(CURRENT)]

USE = {"work": (42, 81), "personal": (93, 40)}
"""Each account's 5-hour and weekly use, as its stand-in's headers say it."""


@pytest.fixture
def world(tmp_path: Path, claude_bin: Path) -> Iterator[tuple[Daemon, dict[str, TmuxClaude]]]:
    homes: dict[str, ClaudeHome] = {}
    for label in USE:
        log = StatusLineLog(tmp_path / f"statusline-{label}.jsonl")
        homes[label] = make_claude_home(
            tmp_path / label, None, login="gateway", statusline_command=log.command
        )
    dirs = ",".join(f"{label}={home.config_dir}" for label, home in homes.items())
    daemon = Daemon(
        home=tmp_path / "pmx",
        claude_dir=homes["work"].config_dir,
        env_extra={"PURPLEMUX_CLAUDE_DIRS": dirs},
    )
    daemon.start()
    apis: list[FakeAnthropicAPI] = []
    claudes: dict[str, TmuxClaude] = {}
    try:
        installed = daemon.cli("install-hooks", "--agent", "claude")
        assert installed.returncode == 0, installed.stderr
        for label, home in homes.items():
            line: dict[str, Any] = json.loads(home.settings_path.read_text())["statusLine"]
            assert "statusline.sh" in line["command"], (label, line)
            api = FakeAnthropicAPI().__enter__()
            apis.append(api)
            five, seven = USE[label]
            api.limits = LimitControl(headers=usage_headers(five / 100, seven / 100))
            claude = TmuxClaude(claude_bin, home, api.base_url, login="gateway")
            claudes[label] = claude
            claude.start()
            claude.wait_ready(timeout=60)
            claude.wait_started(timeout=60)
        yield daemon, claudes
    finally:
        for claude in claudes.values():
            claude.kill()
        for api in apis:
            api.__exit__(None, None, None)
        daemon.stop()


def test_two_config_dirs_give_their_own_rows_and_gauges(
    world: tuple[Daemon, dict[str, TmuxClaude]], page: Page
) -> None:
    daemon, claudes = world
    for claude in claudes.values():
        claude.send_text("hello from my account")
    for claude in claudes.values():
        claude.wait_screen(PLAIN_ANSWER, timeout=60)
        assert STATUSLINE_OUTPUT in claude.screen()  # each user's own line still shows

    # Two readings, one per account, each with its own stand-in's numbers.
    def readings() -> dict[str, dict[str, Any]] | None:
        found = {r["account"]: r for r in daemon.api("GET", "/api/limits")}
        return found if set(found) == set(USE) else None

    got = wait_until(readings, timeout=60, describe=lambda: daemon.api("GET", "/api/limits"))
    for label, (five, seven) in USE.items():
        assert got[label]["agent"] == "claude"
        assert got[label]["five_hour"]["used_percent"] == five
        assert got[label]["seven_day"]["used_percent"] == seven

    # Two rows, each named by its account.
    rows = wait_until(
        lambda: (lambda live: live if {s["account"] for s in live} == set(USE) else None)(
            [s for s in daemon.sessions(all=False) if s["state"] == "review"]
        ),
        timeout=60,
        describe=lambda: [(s["account"], s["state"]) for s in daemon.sessions()],
    )
    assert len(rows) == 2 and all(r["snippet"] == PLAIN_ANSWER for r in rows)

    # The header: a gauge per account, its own use on it.
    sign_in(page, daemon)
    for label, (five, seven) in USE.items():
        gauge = page.locator(f'[data-slot="limits"] .limit[data-account="{label}"]')
        expect(gauge.locator('[data-window="5h"] .limit-text')).to_contain_text(f"5h {five}%")
        expect(gauge.locator('[data-window="7d"] .limit-text')).to_contain_text(f"7d {seven}%")
    for label in USE:
        chip = page.locator(f'[data-slot="account"]:text-is("{label}")')
        expect(chip).to_have_count(1)
