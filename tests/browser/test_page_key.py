"""In Chromium: the page signed in by the login link acts (answer, jump, notifications, the
notification's Yes); a page of another origin (another local port, which receives the cookie)
and a page holding only the cookie cannot.

The pane is a real tmux pane on a private server showing a captured Claude permission dialog
(tests/support/screens.py), with a second window in front of it, so a jump is visible.
"""

from __future__ import annotations

import http.client
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from purplemux.server.auth import PAGE_KEY_HEADER
from tests.notify.fake_push_service import FakePushService
from tests.support import Daemon, wait_for
from tests.support.browser import new_page, sign_in
from tests.support.logins import cookie_server, subscription_logins
from tests.support.screens import asking, capture, dialog_pane, window_active

pytestmark = pytest.mark.browser


def answers(d: Daemon, sid: str) -> list[tuple[str, str]]:
    events = d.api("GET", f"/api/sessions/{sid}/events")["events"]
    return [(e["by"], e["option"]) for e in events if e["kind"] == "answer"]


@pytest.fixture
def asking_pane(tmp_path: Path, daemon: Daemon) -> Iterator[tuple[str, str]]:
    """Session s1 in needs-input, its dialog in a pane whose window is not the current one."""
    with dialog_pane(tmp_path) as (sock, pane):
        subprocess.run(["tmux", "-S", sock, "new-window", "-t", "w"], check=True)
        asking(daemon, "s1", sock, pane)
        wait_for(lambda: (daemon.session("s1") or {}).get("state") == "needs-input")
        assert not window_active(sock, pane)
        yield sock, pane


@pytest.fixture
def other_server() -> Iterator[tuple[str, list[str]]]:
    """Another server on this host (another port); yields (its origin, the Cookie headers it
    received): what a server replaying the dashboard's cookie holds."""
    with cookie_server() as (port, seen):
        yield f"http://127.0.0.1:{port}", seen


SUBSCRIPTION = {"endpoint": "https://push.example/1", "keys": {"p256dh": "P", "auth": "A"}}


def replay(d: Daemon, method: str, path: str, cookie: str, body: Any) -> tuple[int, Any]:
    """A request as another local server replays it: the Cookie header it got, nothing else."""
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=10)
    headers = {"Cookie": cookie, PAGE_KEY_HEADER: ""}
    data = None if body is None else json.dumps(body).encode()
    if data is not None:
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=data, headers=headers)
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally:
        conn.close()


def fake_subscribe(subscription: dict[str, Any]) -> str:
    """An init script: the browser's push service is out of reach here, so subscribe() hands
    back a subscription of the fake push service (which can decrypt what is sent to it)."""
    return f"""
PushManager.prototype.getSubscription = async function () {{ return null; }};
PushManager.prototype.subscribe = async function (options) {{
  return {{ options, toJSON: () => ({json.dumps(subscription)}) }};
}};
"""


def test_the_signed_in_page_answers_jumps_subscribes_and_its_notification_answers(
    browser: Browser, daemon: Daemon, asking_pane: tuple[str, str]
) -> None:
    sock, pane = asking_pane
    with FakePushService() as service, new_page(browser) as page:
        sub = service.subscribe()
        page.context.grant_permissions(["notifications"], origin=daemon.url)
        page.add_init_script(fake_subscribe(sub.to_json()))
        sign_in(page, daemon)
        row = page.locator("#session-s1")
        panel = row.locator("[data-slot='prompt']")
        expect(panel.locator("[data-slot='prompt-screen']")).to_contain_text(
            "Do you want to proceed?"
        )

        row.locator("[data-action='jump']").click()
        expect(row.locator("[data-action='jump']")).to_have_attribute("data-result", "ok")
        assert window_active(sock, pane)

        panel.locator("[data-action='answer'][data-option='Yes']").click()
        # The pane is not Claude: the key reaches it, the dialog stays, and the page says so.
        expect(panel.locator("[data-slot='prompt-result']")).to_contain_text(
            "still on screen", timeout=30_000
        )
        assert answers(daemon, "s1") == [("page", "Yes")]

        page.locator("[data-action='enable-notifications']").click()
        expect(page.locator("[data-slot='notify-result']")).to_have_text(
            "Notifications are on for this device."
        )
        [owner] = subscription_logins(daemon.home)
        assert owner  # kept under this page's login

        # The notification's Yes, from the service worker (its own copy of the page key).
        [worker] = wait_for(lambda: page.context.service_workers)
        prompt_id = daemon.api("GET", "/api/sessions/s1/screen")["prompt"]["id"]
        note = {"session_id": "s1", "prompt_id": prompt_id, "url": "/#session-s1"}
        worker.evaluate(
            """async (data) => {
                 await self.registration.showNotification("t", {
                   tag: "purplemux-s1", data, actions: [{action: "Yes", title: "Yes"}]});
                 const [n] = await self.registration.getNotifications({tag: "purplemux-s1"});
                 try {
                   self.dispatchEvent(new NotificationEvent("notificationclick",
                                                            {notification: n, action: "Yes"}));
                 } catch (_) {}
               }""",
            note,
        )
        wait_for(lambda: answers(daemon, "s1") == [("page", "Yes"), ("push", "Yes")])


def test_another_origin_and_a_cookie_only_page_cannot_act(
    browser: Browser,
    daemon: Daemon,
    asking_pane: tuple[str, str],
    other_server: tuple[str, list[str]],
) -> None:
    sock, pane = asking_pane
    before = capture(sock, pane)
    with new_page(browser) as page:
        page.context.grant_permissions(["notifications"], origin=daemon.url)
        sign_in(page, daemon)
        expect(page.locator("#session-s1 [data-slot='prompt-screen']")).to_be_visible()

        # The browser sends the cookie to the other port; its page has no way to the key.
        origin, seen = other_server
        page.goto(origin + "/")
        expect(page).to_have_title("another local server")
        cookie = next(h for h in seen if "purplemux_login=" in h)
        databases = page.evaluate("async () => (await indexedDB.databases()).map((d) => d.name)")
        assert databases == [] and page.evaluate("() => localStorage.length") == 0
        # From that page the browser refuses to send the write (another origin)...
        status = page.evaluate(
            """async (url) => {
                 try {
                   const r = await fetch(url, {method: "POST", credentials: "include",
                                                mode: "no-cors", body: "{}"});
                   return r.type;
                 } catch (_) { return "refused"; }
               }""",
            daemon.url + "/api/sessions/s1/focus",
        )
        assert status in ("opaque", "refused")
        # ...and the server replaying the cookie it received gets a reason, nothing done.
        prompt_id = daemon.api("GET", "/api/sessions/s1/screen")["prompt"]["id"]
        for method, path, body in (
            ("GET", "/api/sessions/s1/screen", None),
            ("POST", "/api/sessions/s1/focus", {}),
            ("POST", "/api/sessions/s1/answer", {"prompt_id": prompt_id, "option": "Yes"}),
            ("POST", "/api/push/subscriptions", SUBSCRIPTION),
        ):
            status, reply = replay(daemon, method, path, cookie, body)
            assert status == 403, (path, status)
            assert "purplemux open" in reply["error"]

        # A page of the daemon's own origin that holds only the cookie (no key kept: another
        # browser profile given the cookie) still views, and says how to act.
        with new_page(browser) as bare:
            bare.context.add_cookies(page.context.cookies(daemon.url))
            bare.context.grant_permissions(["notifications"], origin=daemon.url)
            bare.goto(daemon.url + "/")
            expect(bare.locator("#connection")).to_have_attribute("data-connection", "live")
            panel = bare.locator("#session-s1 [data-slot='prompt']")
            expect(panel).to_contain_text("purplemux open")
            expect(panel.locator("[data-action='answer']")).to_have_count(0)
            jump = bare.locator("#session-s1 [data-action='jump']")
            jump.click()
            expect(jump).to_have_attribute("data-result", "failed")
            expect(jump).to_have_attribute("title", re.compile("purplemux open"))
            bare.locator("[data-action='enable-notifications']").click()
            expect(bare.locator("[data-slot='notify-result']")).to_contain_text("purplemux open")
    assert capture(sock, pane) == before
    assert answers(daemon, "s1") == []
    assert not window_active(sock, pane)
    assert subscription_logins(daemon.home) == []
