"""Fixtures for the dashboard in a real browser: system Chromium, a real daemon, a signed-in tab."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserType, Page, Playwright, sync_playwright

from tests.chromium import LAUNCH_ARGS, require
from tests.support import Daemon
from tests.support.browser import sign_in


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """The system Chromium (TESTING.md: never `playwright install`)."""
    return {**browser_type_launch_args, "executable_path": require(), "args": LAUNCH_ARGS}


# pytest-playwright starts Playwright once per session. The sync API leaves an event loop marked
# as running in this thread until it stops, which breaks every asyncio test collected after this
# folder; so here it lives for this package only (the plugin's context/page fixtures still work).
@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    pw = sync_playwright().start()
    yield pw
    pw.stop()


@pytest.fixture(scope="package")
def browser_type(playwright: Playwright, browser_name: str) -> BrowserType:
    chosen: BrowserType = getattr(playwright, browser_name)
    return chosen


@pytest.fixture(scope="package")
def browser(
    browser_type: BrowserType, browser_type_launch_args: dict[str, Any]
) -> Iterator[Browser]:
    browser = browser_type.launch(**browser_type_launch_args)
    yield browser
    browser.close()


@pytest.fixture(scope="package")
def browser_context_args() -> dict[str, Any]:
    """Plain contexts (the plugin's version needs the session-wide Playwright for --device)."""
    return {}


@pytest.fixture(scope="session")
def base_url() -> str | None:
    """No base URL; replaces pytest-playwright's, whose definition pytest 9 warns about."""
    return None


@pytest.fixture
def errors(page: Page) -> list[str]:
    """Uncaught page errors and CSP violations: a test that takes this fixture asserts it empty."""
    seen: list[str] = []
    page.on("pageerror", lambda exc: seen.append(f"pageerror: {exc}"))
    page.on(
        "console",
        lambda msg: (
            seen.append(f"console: {msg.text}") if "Content Security Policy" in msg.text else None
        ),
    )
    return seen


@pytest.fixture
def dashboard(page: Page, daemon: Daemon, errors: list[str]) -> Iterator[Page]:
    yield sign_in(page, daemon)
    assert errors == []
