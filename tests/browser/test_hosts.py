"""Several hosts on one page, in Chromium: another host's rows arrive live under its name, go
grey with "host offline since …" when it stops beating, and the broker badge follows the link."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support import Daemon, wait_for
from tests.support.browser import sign_in
from tests.support.hosts import (
    RedisServer,
    health,
    hook,
    host_daemon,
    post_hook,
    start_all,
    stop_all,
)

pytestmark = pytest.mark.browser


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[RedisServer, Daemon, Daemon]]:
    server = RedisServer(tmp_path / "redis").start()
    alpha = host_daemon(tmp_path, "alpha", server)
    bravo = host_daemon(tmp_path, "bravo", server)
    try:
        start_all([alpha, bravo])
        for d in (alpha, bravo):
            wait_for(lambda d=d: health(d)["broker"]["state"] == "connected", timeout=30)
        yield server, alpha, bravo
    finally:
        stop_all([alpha, bravo])
        server.kill()


def test_other_hosts_rows_live_grouped_by_host_greyed_when_offline(
    page: Page, errors: list[str], cluster: tuple[RedisServer, Daemon, Daemon]
) -> None:
    server, alpha, bravo = cluster
    post_hook(bravo, hook("SessionStart", "b-own", cwd="/src/site"), pane="%1")
    sign_in(page, bravo)
    badge = page.locator("#broker")
    expect(badge).to_have_text("broker connected")
    own = page.locator("#session-b-own")
    expect(own).to_be_visible()

    # Alpha's session arrives without a reload, in a group headed by alpha's name.
    post_hook(alpha, hook("SessionStart", "a-far", cwd="/src/deploy"), pane="%4")
    post_hook(alpha, hook("UserPromptSubmit", "a-far", cwd="/src/deploy", prompt="ship"))
    post_hook(alpha, hook("Stop", "a-far", cwd="/src/deploy", last_assistant_message="Shipped."))
    far = page.locator("#session-a-far")
    expect(far).to_have_attribute("data-state", "review")
    group = page.locator("section.group", has=far)
    expect(group).to_have_attribute("data-host", "alpha")
    expect(group.locator(".group-host")).to_have_text("alpha")
    expect(page.locator("section.group", has=own).locator(".group-host")).to_have_text("bravo")
    expect(far.locator('[data-slot="offline"]')).to_be_hidden()
    expect(far.locator('[data-action="dismiss"]')).to_be_visible()

    # Alpha goes away: its row greys out and says since when; nothing can be asked of it.
    alpha.kill()
    expect(far).to_have_attribute("data-stale", "", timeout=20_000)
    note = far.locator('[data-slot="offline"]')
    expect(note).to_be_visible()
    expect(note).to_contain_text("alpha: host offline since ")
    expect(far.locator('[data-action="dismiss"]')).to_have_count(0)
    expect(own).not_to_have_attribute("data-stale", "")

    # Redis goes away: the badge says so, live.
    server.kill()
    expect(badge).to_contain_text("broker down since", timeout=20_000)
    assert errors == []
