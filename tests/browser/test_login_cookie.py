"""In Chromium: after the login, another server on this host never receives the token.

Cookies ignore ports: whatever the daemon's cookie holds, the browser also sends to any other
server on 127.0.0.1 the user opens. Here that server is a tiny HTTP server on another free port
that records the Cookie header of each request it gets.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.support import Daemon
from tests.support.browser import new_page, sign_in
from tests.support.logins import cookie_server

pytestmark = pytest.mark.browser


@pytest.fixture
def other_server() -> Iterator[tuple[int, list[str]]]:
    """A server on another local port; yields (port, the Cookie headers it received)."""
    with cookie_server() as (port, seen):
        yield port, seen


def test_no_cookie_holding_the_token_reaches_another_local_port(
    browser: Browser, daemon: Daemon, other_server: tuple[int, list[str]]
) -> None:
    port, seen = other_server
    with new_page(browser) as page:
        sign_in(page, daemon)
        own = {c["name"]: c["value"] for c in page.context.cookies(daemon.url)}
        assert own, "the login set no cookie"
        assert daemon.token not in own.values()
        page.goto(f"http://127.0.0.1:{port}/")
        expect(page).to_have_title("another local server")
        page.goto(f"http://127.0.0.1:{port}/again")  # a second, same-site request too
        assert len(seen) >= 2  # the pages (and the favicon the browser asks for)
        for header in seen:
            values = [part.split("=", 1)[-1].strip() for part in header.split(";") if part]
            assert daemon.token not in values, header
            assert daemon.token not in header, header
        # The dashboard still works with its own cookie after the detour.
        page.goto(daemon.url + "/")
        expect(page.locator("#connection")).to_have_attribute("data-connection", "live")
