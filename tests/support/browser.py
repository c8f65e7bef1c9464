"""For tests in a real browser: sessions made through the real hook script in the state a test
needs, and a signed-in page."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from playwright.sync_api import Browser, Page, expect

from tests.support.daemon import Daemon, wait_for
from tests.support.hooks import run_hook
from tests.support.waiting import describe_probe

PROMPT_TOOL = {"command": "rm -rf build && make deploy"}


def hook(
    daemon: Daemon,
    sid: str,
    name: str,
    pane: str = "%0",
    cwd: str = "/w/proj",
    agent: str | None = None,
    **extra: Any,
) -> float:
    """One hook call as Claude (or `agent`: "codex") makes it; returns the script's wall time."""
    payload = {
        "session_id": sid,
        "hook_event_name": name,
        "cwd": cwd,
        "transcript_path": f"/w/.claude/{sid}.jsonl",
        **extra,
    }
    return run_hook(daemon.home, payload, pane, agent=agent)


def wait_state(daemon: Daemon, sid: str, state: str, **fields: Any) -> dict[str, Any]:
    """Until the API shows the session in `state` (and with these field values)."""

    def ready() -> dict[str, Any]:
        s = daemon.session(sid) or {}
        if s.get("state") == state and all(s.get(k) == v for k, v in fields.items()):
            return s
        return {}

    return wait_for(ready, timeout=10)


def make(daemon: Daemon, sid: str, state: str, pane: str = "%0", cwd: str = "/w/proj") -> None:
    """Drive a new session into idle, busy, needs-input or review; wait until the daemon has it."""
    hook(daemon, sid, "SessionStart", pane, cwd, source="startup")
    wait_state(daemon, sid, "idle")
    if state == "idle":
        return
    hook(daemon, sid, "UserPromptSubmit", pane, cwd, prompt="do the thing")
    if state == "needs-input":
        tool = {"tool_name": "Bash", "tool_input": PROMPT_TOOL}
        hook(daemon, sid, "PreToolUse", pane, cwd, tool_use_id=f"tu-{sid}", **tool)
        wait_state(daemon, sid, "busy", current_tool="Bash: " + PROMPT_TOOL["command"])
        hook(daemon, sid, "PermissionRequest", pane, cwd, **tool)
    elif state == "review":
        wait_state(daemon, sid, "busy")
        hook(
            daemon, sid, "Stop", pane, cwd, last_assistant_message="All tests pass; the fix is in."
        )
    wait_state(daemon, sid, state)


def sign_in(page: Page, daemon: Daemon) -> Page:
    """Open the login link as `purplemux open` would, and wait until the page is live (the
    link's page keeps the page key, then replaces itself with the dashboard)."""
    page.goto(f"{daemon.url}/?token={daemon.token}")
    page.wait_for_url(daemon.url + "/")
    expect(page.locator("#connection")).to_have_attribute("data-connection", "live")
    return page


@contextmanager
def new_page(browser: Browser, **options: Any) -> Iterator[Page]:
    """A page in a browser context of its own (`options`: new_context's), closed afterwards."""
    context = browser.new_context(**options)
    try:
        yield context.new_page()
    finally:
        context.close()


def poll(page: Page, probe: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait until `probe()` holds, letting Playwright deliver the page's events meanwhile."""
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise AssertionError(
                f"condition not met for {describe_probe(probe)} within {timeout} s"
            )
        page.wait_for_timeout(20)
