"""The browser half: the service worker shows pushes; enablePush fails plainly offline."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from playwright.sync_api import BrowserContext, CDPSession, Page, Playwright

from purplemux.core.model import PendingTool, Session, State, TmuxLocation
from purplemux.notify.message import push_payload
from tests.support.waiting import describe_probe

from .conftest import LAUNCH_ARGS, Site

pytestmark = pytest.mark.browser

T = TypeVar("T")

NOTIFICATIONS = """async () => {
  const registration = await navigator.serviceWorker.getRegistration("/");
  const list = registration ? await registration.getNotifications() : [];
  return list.map((n) => ({title: n.title, body: n.body, tag: n.tag, data: n.data}));
}"""

REGISTER = """async () => {
  await navigator.serviceWorker.register("/static/sw.js", {scope: "/"});
  const registration = await navigator.serviceWorker.ready;
  const worker = registration.active;
  if (worker.state !== "activated") {
    await new Promise((resolve) => worker.addEventListener("statechange", () => {
      if (worker.state === "activated") resolve();
    }));
  }
  return {scope: registration.scope, state: worker.state};
}"""


def poll(page: Page, probe: Callable[[], T | None], timeout: float = 15.0) -> T:
    """Call `probe` until it returns something truthy (letting the browser's events run)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(
                f"condition not met for {describe_probe(probe)} within {timeout} s"
            )
        page.wait_for_timeout(25)


def open_dashboard(page: Page, site: Site) -> None:
    page.context.grant_permissions(["notifications"], origin=site.origin)
    page.goto(site.origin + "/")
    page.wait_for_selector("body[data-ready='1']", state="attached")


def registration_id(page: Page, cdp: CDPSession, site: Site) -> str:
    """The service worker registration id for scope `/`, as the DevTools protocol knows it."""
    found: list[dict[str, Any]] = []
    cdp.on("ServiceWorker.workerRegistrationUpdated", lambda e: found.extend(e["registrations"]))
    cdp.send("ServiceWorker.enable")

    def probe() -> str | None:
        for reg in found:
            if reg["scopeURL"] == site.origin + "/" and not reg["isDeleted"]:
                return str(reg["registrationId"])
        return None

    return poll(page, probe)


def test_push_message_shows_a_notification(web_page: Page, site: Site) -> None:
    open_dashboard(web_page, site)
    assert web_page.evaluate(REGISTER) == {"scope": site.origin + "/", "state": "activated"}
    cdp = web_page.context.new_cdp_session(web_page)
    reg_id = registration_id(web_page, cdp, site)
    session = Session(
        id="sess-9",
        state=State.NEEDS_INPUT,
        cwd="/home/dev/shop",
        tmux=TmuxLocation(pane="%4"),
        waiting_for='Bash: git push --force "origin"',
        pending_tool=PendingTool("Bash", "d"),
    )
    payload = push_payload(session)

    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {"origin": site.origin, "registrationId": reg_id, "data": json.dumps(payload)},
    )

    [shown] = poll(web_page, lambda: web_page.evaluate(NOTIFICATIONS))
    assert shown == {
        "title": 'Claude · shop · needs your approval: Bash git push --force "origin"',
        "body": "pane %4 · /home/dev/shop",
        "tag": "purplemux-sess-9",
        "data": {"url": "/#session-sess-9", "session_id": "sess-9"},
    }

    # A newer message for the same session replaces the notification (same tag).
    payload2 = push_payload(Session(id="sess-9", state=State.REVIEW, snippet="Pushed."))
    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {"origin": site.origin, "registrationId": reg_id, "data": json.dumps(payload2)},
    )
    poll(web_page, lambda: [n for n in web_page.evaluate(NOTIFICATIONS) if n["body"] == "Pushed."])
    assert len(web_page.evaluate(NOTIFICATIONS)) == 1


ACTIONS = """async () => {
  const registration = await navigator.serviceWorker.getRegistration("/");
  const list = registration ? await registration.getNotifications() : [];
  return list.map((n) => (n.actions || []).map((a) => [a.action, a.title]));
}"""


def test_a_codex_approval_shows_yes_and_no_that_post_codex_labels(
    web_page: Page, site: Site
) -> None:
    from purplemux.agents.codex.screen import recognise
    from tests.agents.codex.test_screen import APPROVAL, run_ctx

    open_dashboard(web_page, site)
    web_page.evaluate(REGISTER)
    cdp = web_page.context.new_cdp_session(web_page)
    reg_id = registration_id(web_page, cdp, site)
    prompt = recognise(APPROVAL, run_ctx("sleep 3 && touch approved.txt"))
    assert prompt is not None and prompt.ambiguous is None
    session = Session(
        id="cx",
        agent="codex",
        state=State.NEEDS_INPUT,
        tmux=TmuxLocation(pane="%2"),
        waiting_for="Bash: sleep 3 && touch approved.txt",
        pending_tool=PendingTool("Bash", "d"),
    )
    payload = push_payload(session, prompt)
    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {"origin": site.origin, "registrationId": reg_id, "data": json.dumps(payload)},
    )
    [actions] = poll(web_page, lambda: web_page.evaluate(ACTIONS))
    assert actions == [
        ["Yes, proceed", "Yes"],
        ["No, and tell Codex what to do differently", "No"],
    ]


def test_notification_click_tells_the_open_dashboard(web_page: Page, site: Site) -> None:
    open_dashboard(web_page, site)
    web_page.evaluate(REGISTER)
    web_page.evaluate(
        """() => navigator.serviceWorker.ready.then((r) => r.showNotification("t", {
             body: "b", tag: "purplemux-s1", data: {url: "/#session-s1", session_id: "s1"}}))"""
    )
    poll(web_page, lambda: web_page.context.service_workers)
    [worker] = web_page.context.service_workers
    # A synthetic click: no real notification UI to click in a headless browser. Its
    # waitUntil() throws (untrusted event), but the handler's work has started by then.
    worker.evaluate(
        """async () => {
             const [n] = await self.registration.getNotifications({tag: "purplemux-s1"});
             try {
               self.dispatchEvent(new NotificationEvent("notificationclick", {notification: n}));
             } catch (_) {}
           }"""
    )
    [message] = poll(web_page, lambda: web_page.evaluate("() => window.swMessages"))
    assert message["type"] == "purplemux:open-session"
    assert message["session_id"] == "s1"
    assert message["url"] == site.origin + "/#session-s1"


def test_show_local_notification(web_page: Page, site: Site) -> None:
    open_dashboard(web_page, site)
    web_page.evaluate(REGISTER)
    shown = web_page.evaluate(
        "() => window.purplemuxPush.showLocalNotification('api · %1', 'Finished', 'purplemux-x')"
    )
    assert shown is True
    [n] = poll(web_page, lambda: web_page.evaluate(NOTIFICATIONS))
    assert (n["title"], n["body"], n["tag"]) == ("api · %1", "Finished", "purplemux-x")


# enablePush settles on its own (its timeoutMs); the race only keeps a hang from blocking the run
# forever and is ten times longer than that budget: a guard, not a speed measure.
ENABLE = """(ms) => Promise.race([
  window.purplemuxPush.enablePush({timeoutMs: ms}),
  new Promise((resolve) => setTimeout(() => resolve({ok: null, reason: "never settled"}), 10 * ms)),
])"""


def enable_push(page: Page, timeout_ms: int) -> dict[str, Any]:
    result: dict[str, Any] = page.evaluate(ENABLE, timeout_ms)
    return result


def test_enable_push_fails_plainly_offline(web_page: Page, site: Site) -> None:
    open_dashboard(web_page, site)
    saved = len(site.subscriptions)
    result = enable_push(web_page, 2000)
    assert result["ok"] is False
    assert result["reason"].endswith(".") and "push service" in result["reason"]
    assert len(site.subscriptions) == saved


def test_enable_push_does_not_hang_in_a_persistent_profile(
    sync_pw: Playwright, site: Site, tmp_path: Path
) -> None:
    # In a persistent profile PushManager.subscribe() never settles offline (TESTING.md).
    context: BrowserContext = sync_pw.chromium.launch_persistent_context(
        str(tmp_path / "profile"), **LAUNCH_ARGS
    )
    try:
        page = context.pages[0] if context.pages else context.new_page()
        open_dashboard(page, site)
        result = enable_push(page, 1500)
    finally:
        context.close()
    assert result["ok"] is False
    assert "push service" in result["reason"]


def test_enable_push_reports_blocked_permission(web_page: Page, site: Site) -> None:
    web_page.goto(site.origin + "/")
    web_page.wait_for_selector("body[data-ready='1']", state="attached")
    result = enable_push(web_page, 1500)
    assert result == {"ok": False, "reason": result["reason"]}
    assert "blocked" in result["reason"]


FAKE_SUBSCRIBE = """
PushManager.prototype.getSubscription = async function () { return null; };
PushManager.prototype.subscribe = async function (options) {
  window.subscribeOptions = {
    userVisibleOnly: options.userVisibleOnly,
    key: Array.from(new Uint8Array(options.applicationServerKey)),
  };
  return {
    options,
    toJSON: () => ({endpoint: "https://push.example/abc", expirationTime: null,
                    keys: {p256dh: "BKEY", auth: "AUTH"}}),
  };
};
"""


def test_enable_push_posts_the_subscription(web_page: Page, site: Site) -> None:
    # The browser's push service is out of reach here: stand in for subscribe() itself.
    web_page.add_init_script(FAKE_SUBSCRIBE)
    open_dashboard(web_page, site)

    result = enable_push(web_page, 3000)

    assert result == {"ok": True}
    options = web_page.evaluate("() => window.subscribeOptions")
    assert options["userVisibleOnly"] is True
    key = site.application_server_key
    assert bytes(options["key"]) == base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))
    assert site.subscriptions[-1] == {
        "endpoint": "https://push.example/abc",
        "expirationTime": None,
        "keys": {"p256dh": "BKEY", "auth": "AUTH"},
    }
    assert site.page_keys[-1] == "test-page-key"  # the cookie alone may not subscribe
