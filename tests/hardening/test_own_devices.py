"""A page lists, tests and removes only its own login's devices; the token (the CLI) all of them.

Two browsers signed in by the login link are two logins, each with its cookie and page key. Each
turns notifications on for one device; the token adds a third. Deliveries go through the fake
push service, which verifies VAPID and decrypts: absence is proven by order (a later push
arrives, and nothing before it).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.hardening.test_actor import bearer, bodies, review, send
from tests.notify.fake_push_service import BrowserSubscription, FakePushService
from tests.support import Daemon
from tests.support.logins import Login, http_login

SUBSCRIPTIONS = "/api/push/subscriptions"
TEST = SUBSCRIPTIONS + "/test"


@pytest.fixture
def service() -> Iterator[FakePushService]:
    with FakePushService() as s:
        yield s


def add(d: Daemon, headers: dict[str, str], sub: BrowserSubscription) -> str:
    """Turn notifications on for `sub` as `headers`' holder; the device's id."""
    status, reply = send(d, "POST", SUBSCRIPTIONS, headers, sub.to_json())
    assert status == 201, reply
    return str(reply["id"])


def listed(d: Daemon, headers: dict[str, str]) -> list[str]:
    """The ids of the devices `headers`' holder is shown."""
    status, reply = send(d, "GET", SUBSCRIPTIONS, headers)
    assert status == 200, reply
    return [str(device["id"]) for device in reply["devices"]]


def test_a_page_sees_tests_and_removes_only_its_own_logins_devices(
    daemon: Daemon, service: FakePushService
) -> None:
    a: Login = http_login(daemon.port, daemon.token)
    b: Login = http_login(daemon.port, daemon.token)
    sub_a, sub_b, sub_cli = service.subscribe(), service.subscribe(), service.subscribe()
    id_a, id_b = add(daemon, a.page, sub_a), add(daemon, b.page, sub_b)
    id_cli = add(daemon, bearer(daemon), sub_cli)

    # Each page is shown its own login's device only; the token (the CLI) every device.
    assert listed(daemon, a.page) == [id_a]
    assert listed(daemon, b.page) == [id_b]
    assert listed(daemon, bearer(daemon)) == [id_a, id_b, id_cli]

    # A cannot test or remove B's device (nor the CLI's): 404 with a reason, nothing changes.
    for other in (id_b, id_cli):
        for method, path in (("POST", TEST), ("DELETE", SUBSCRIPTIONS)):
            status, reply = send(daemon, method, path, a.page, {"id": other})
            assert status == 404, (method, reply)
            assert "no such device" in reply["error"]
    assert listed(daemon, b.page) == [id_b]
    assert listed(daemon, bearer(daemon)) == [id_a, id_b, id_cli]

    # A tests its own device: the test notification reaches it.
    status, reply = send(daemon, "POST", TEST, a.page, {"id": id_a})
    assert status == 200 and reply["ok"], reply
    assert bodies(service, sub_a, 1)[0].startswith("Test notification")

    # B's device is still there and still told: the review is the first push it gets (A's
    # refused test never reached it).
    review(daemon, "o1", "every device hears of it")
    assert bodies(service, sub_b, 1) == ["every device hears of it"]
    assert bodies(service, sub_cli, 1) == ["every device hears of it"]

    # The token keeps its meaning: it tests and removes any device.
    status, reply = send(daemon, "POST", TEST, bearer(daemon), {"id": id_b})
    assert status == 200 and reply["ok"], reply
    assert bodies(service, sub_b, 2)[1].startswith("Test notification")
    assert send(daemon, "DELETE", SUBSCRIPTIONS, bearer(daemon), {"id": id_cli})[0] == 200
    # A removes its own device.
    assert send(daemon, "DELETE", SUBSCRIPTIONS, a.page, {"id": id_a})[0] == 200
    assert listed(daemon, a.page) == []
    assert listed(daemon, bearer(daemon)) == [id_b]
    assert not service.errors
