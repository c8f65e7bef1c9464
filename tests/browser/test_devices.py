"""Your devices: push subscriptions listed, tested and removed, through the fake push service."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from purplemux.io import logins
from tests.notify.fake_push_service import BrowserSubscription, FakePushService
from tests.support import Daemon, wait_for
from tests.support.logins import Login

pytestmark = pytest.mark.browser

ANDROID = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Mobile Safari/537.36"
)
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"
)


@pytest.fixture
def service() -> Iterator[FakePushService]:
    with FakePushService() as s:
        yield s


def call(
    d: Daemon,
    method: str,
    path: str,
    body: Any = None,
    as_page: Login | None = None,
    **headers: str,
) -> Any:
    """One request with the token (or, with `as_page`, as that signed-in page: cookie and key)."""
    auth = as_page.page if as_page else {"Authorization": f"Bearer {d.token}"}
    req = urllib.request.Request(
        d.url + path,
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers=auth | {"Content-Type": "application/json"} | headers,
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def subscribe(
    d: Daemon, sub: BrowserSubscription, user_agent: str, as_page: Login | None = None
) -> str:
    status, body = call(
        d, "POST", "/api/push/subscriptions", sub.to_json(), as_page, **{"User-Agent": user_agent}
    )
    assert status == 201
    return str(body["id"])


def signed_in(page: Page) -> Login:
    """The login of a page signed in by the login link: its cookie and the key it keeps."""
    [cookie] = [c for c in page.context.cookies() if c.get("name") == logins.COOKIE]
    key = page.evaluate("async () => (await import('/static/pagekey.js')).pageKey()")
    assert key
    return Login(f"{logins.COOKIE}={cookie.get('value')}", str(key))


def test_the_list_names_each_device_and_hides_its_secrets(
    daemon: Daemon, service: FakePushService
) -> None:
    phone, laptop = service.subscribe(), service.subscribe()
    subscribe(daemon, phone, ANDROID)
    subscribe(daemon, laptop, IPHONE)
    status, body = call(daemon, "GET", "/api/push/subscriptions")
    assert status == 200
    devices = body["devices"]
    assert [d["name"] for d in devices] == ["Chrome on Android", "Safari on iPhone"]
    text = json.dumps(body)
    for sub in (phone, laptop):
        secret_path = sub.endpoint.split("/", 3)[3]
        assert secret_path not in text
        assert sub.to_json()["keys"]["auth"] not in text
        assert sub.to_json()["keys"]["p256dh"] not in text
    assert {d["push_service"] for d in devices} == {"127.0.0.1"}
    assert all(d["last"] is None and d["gone_at"] is None for d in devices)
    # Bad input: a clear reason, nothing changed.
    assert call(daemon, "POST", "/api/push/subscriptions/test", {"id": 7})[0] == 422
    assert call(daemon, "POST", "/api/push/subscriptions/test", {"id": "nope"})[0] == 404
    assert call(daemon, "DELETE", "/api/push/subscriptions", {"id": "nope"})[0] == 404
    assert len(call(daemon, "GET", "/api/push/subscriptions")[1]["devices"]) == 2


def test_the_devices_view_tests_marks_gone_and_removes(
    page: Page, daemon: Daemon, service: FakePushService
) -> None:
    phone, old, elsewhere = service.subscribe(), service.subscribe(), service.subscribe()
    page.goto(f"{daemon.url}/?token={daemon.token}")
    expect(page.locator("#connection")).to_have_attribute("data-connection", "live")
    login = signed_in(page)
    subscribe(daemon, phone, ANDROID, login)
    subscribe(daemon, old, IPHONE, login)
    service.answer(old, 410)  # its browser unsubscribed long ago
    other = subscribe(daemon, elsewhere, ANDROID)  # the CLI's: not this page's login
    page.locator(".settings-button").click()
    items = page.locator(".device")
    expect(items).to_have_count(2)
    expect(items.nth(0).locator(".device-name")).to_have_text("Chrome on Android")
    expect(items.nth(0).locator(".device-last")).to_have_text("No notification sent yet")

    items.nth(0).locator('[data-device-action="test"]').click()
    result = page.locator('[data-slot="devices-result"]')
    expect(result).to_have_text("Test sent to Chrome on Android.")
    delivered = wait_for(lambda: service.for_subscription(phone))
    assert delivered[0].json["body"].startswith("Test notification")
    expect(items.nth(0).locator(".device-last")).to_contain_text(": delivered")

    items.nth(1).locator('[data-device-action="test"]').click()
    expect(result).to_contain_text("its push service says it is gone")
    gone = page.locator(".device[data-gone]")
    expect(gone).to_have_count(1)
    expect(gone.locator(".device-last")).to_contain_text("Removed by its push service")
    expect(gone.locator('[data-device-action="test"]')).to_have_count(0)

    gone.locator('[data-device-action="remove"]').click()
    expect(page.locator(".device")).to_have_count(1)
    devices = call(daemon, "GET", "/api/push/subscriptions", as_page=login)[1]["devices"]
    assert [d["name"] for d in devices] == ["Chrome on Android"]
    items.nth(0).locator('[data-device-action="remove"]').click()
    expect(result).to_have_text("Chrome on Android removed: it gets no more notifications.")
    expect(page.locator(".device")).to_have_count(0)
    expect(page.locator('[data-slot="devices-empty"]')).to_be_visible()
    assert call(daemon, "GET", "/api/push/subscriptions", as_page=login)[1]["devices"] == []
    # The CLI's device was never shown to the page, and is still there.
    assert [d["id"] for d in call(daemon, "GET", "/api/push/subscriptions")[1]["devices"]] == [
        other
    ]
