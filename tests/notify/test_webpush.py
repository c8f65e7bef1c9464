"""WebPushSender against a fake push service that checks VAPID and decrypts like a browser."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from purplemux.core.model import PendingTool, Session, State, TmuxLocation
from purplemux.notify.message import push_payload, urgency_for
from purplemux.notify.vapid import VapidKeys, load_or_create_keys
from purplemux.notify.webpush import WebPushSender
from tests.support import closed_port

from .fake_push_service import BrowserSubscription, FakePushService, MemoryStore

SUBJECT = "mailto:purplemux@localhost"


@pytest.fixture
def keys(tmp_path: Path) -> VapidKeys:
    return load_or_create_keys(tmp_path / "home")


@pytest.fixture
def service() -> Iterator[FakePushService]:
    with FakePushService() as svc:
        yield svc


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def sub(service: FakePushService, store: MemoryStore) -> BrowserSubscription:
    """One browser subscribed to `service`, kept in `store`."""
    sub = service.subscribe()
    store.subscriptions.append(sub.to_json())
    return sub


@pytest_asyncio.fixture
async def sender(keys: VapidKeys, store: MemoryStore) -> AsyncIterator[WebPushSender]:
    s = WebPushSender(keys, store, subject=SUBJECT, timeout=2.0, backoff=0.01)
    yield s
    s.close()


def waiting_session() -> Session:
    return Session(
        id="sess-1",
        state=State.NEEDS_INPUT,
        cwd="/home/dev/projects/shop",
        tmux=TmuxLocation(pane="%3", session="work", window="1"),
        waiting_for="Bash: npm run deploy --prod",
        pending_tool=PendingTool("Bash", "d"),
    )


@pytest.mark.asyncio
async def test_needs_input_decrypts_to_the_payload_with_high_urgency(
    sender: WebPushSender, service: FakePushService, sub: BrowserSubscription
) -> None:
    session = waiting_session()

    report = await sender.send(push_payload(session), urgency_for(session.state))

    assert service.errors == []
    assert report.delivered == (sub.endpoint,) and report.ok
    [delivery] = service.for_subscription(sub)
    wants = "Claude · shop · needs your approval: Bash npm run deploy --prod"
    assert delivery.json["title"] == wants
    assert delivery.json["body"] == "tmux session work · pane %3 · /home/dev/projects/shop"
    assert delivery.json["session_id"] == "sess-1"
    assert delivery.json["tag"] == "purplemux-sess-1"
    assert delivery.json["url"] == "/#session-sess-1"
    assert delivery.headers["urgency"] == "high"
    assert delivery.headers["ttl"] == "300"
    assert delivery.claims["sub"] == SUBJECT
    assert delivery.claims["aud"] == service.origin


@pytest.mark.asyncio
async def test_review_is_normal_urgency(
    sender: WebPushSender, service: FakePushService, sub: BrowserSubscription
) -> None:
    session = Session(id="s2", state=State.REVIEW, cwd="/w/api", snippet="All 42 tests pass.")

    await sender.send(push_payload(session), urgency_for(session.state))

    [delivery] = service.for_subscription(sub)
    assert delivery.headers["urgency"] == "normal"
    assert delivery.json["body"] == "All 42 tests pass."


@pytest.mark.asyncio
async def test_each_endpoint_gets_its_own_audience(
    sender: WebPushSender, store: MemoryStore
) -> None:
    # pywebpush writes `aud` into the claims it is given: a shared dict would sign the second
    # service's JWT for the first one's origin.
    with FakePushService() as one, FakePushService() as two:
        subs = [one.subscribe(), two.subscribe(), one.subscribe()]
        store.subscriptions.extend(s.to_json() for s in subs)
        for _ in range(2):
            report = await sender.send({"title": "t", "body": "b"}, "normal")
            assert len(report.delivered) == 3
        assert one.errors == two.errors == []
        assert {d.claims["aud"] for d in two.received} == {two.origin}


@pytest.mark.asyncio
@pytest.mark.parametrize("status", [404, 410])
async def test_gone_subscription_is_removed(
    status: int, sender: WebPushSender, service: FakePushService, store: MemoryStore
) -> None:
    gone, kept = service.subscribe(), service.subscribe()
    store.subscriptions.extend([gone.to_json(), kept.to_json()])
    service.answer(gone, status)

    report = await sender.send({"title": "t", "body": "b"}, "normal")

    assert report.removed == (gone.endpoint,)
    assert report.delivered == (kept.endpoint,)
    assert report.ok
    assert store.endpoints() == [kept.endpoint]
    assert service.attempts[gone.id] == 1


@pytest.mark.asyncio
async def test_server_error_is_retried_then_given_up_and_logged_once(
    sender: WebPushSender,
    service: FakePushService,
    store: MemoryStore,
    sub: BrowserSubscription,
    caplog: pytest.LogCaptureFixture,
) -> None:
    service.answer(sub, 500)

    with caplog.at_level(logging.DEBUG, logger="purplemux.notify.webpush"):
        report = await sender.send({"title": "t", "body": "b"}, "high")

    assert report.failed == (sub.endpoint,) and not report.ok
    assert service.attempts[sub.id] == 3
    assert store.endpoints() == [sub.endpoint]  # a 500 is not a reason to forget the device
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "http 500" in warnings[0].getMessage()


@pytest.mark.asyncio
async def test_transient_server_error_then_delivered(
    sender: WebPushSender, service: FakePushService, sub: BrowserSubscription
) -> None:
    service.answer(sub, 503, times=1)

    report = await sender.send({"title": "t", "body": "b"}, "normal")

    assert report.delivered == (sub.endpoint,)
    assert service.attempts[sub.id] == 2


@pytest.mark.asyncio
async def test_client_error_is_not_retried(
    sender: WebPushSender, service: FakePushService, store: MemoryStore, sub: BrowserSubscription
) -> None:
    service.answer(sub, 403)  # e.g. the VAPID key does not match the subscription

    report = await sender.send({"title": "t", "body": "b"}, "normal")

    assert report.failed == (sub.endpoint,)
    assert service.attempts[sub.id] == 1
    assert store.endpoints() == [sub.endpoint]


@pytest.mark.asyncio
async def test_refused_connection_does_not_raise(
    sender: WebPushSender, service: FakePushService, store: MemoryStore
) -> None:
    sub = service.subscribe()
    dead = dict(sub.to_json(), endpoint=f"http://127.0.0.1:{closed_port()}/push/x")
    store.subscriptions.append(dead)

    report = await sender.send({"title": "t", "body": "b"}, "normal")

    assert report.failed == (dead["endpoint"],)
    assert store.endpoints() == [dead["endpoint"]]


@pytest.mark.asyncio
async def test_timeout_does_not_raise(keys: VapidKeys, store: MemoryStore) -> None:
    with FakePushService(delay=5.0) as slow:
        sub = slow.subscribe()
        store.subscriptions.append(sub.to_json())
        sender = WebPushSender(keys, store, timeout=0.2, tries=2, backoff=0.01)
        try:
            report = await sender.send({"title": "t", "body": "b"}, "normal")
            # The sender gave up: the service has not answered any of its tries yet.
            answered_before_return = len(slow.delays_over)
        finally:
            sender.close()
    assert report.failed == (sub.endpoint,)
    assert len(slow.arrivals) == 2  # both tries reached the service
    assert answered_before_return == 0


@pytest.mark.asyncio
async def test_broken_subscription_or_store_does_not_raise(
    sender: WebPushSender, service: FakePushService, store: MemoryStore
) -> None:
    good = service.subscribe()
    store.subscriptions.extend([{"endpoint": f"{service.origin}/push/nokeys"}, good.to_json()])

    report = await sender.send({"title": "t", "body": "b"}, "normal")

    assert report.delivered == (good.endpoint,)
    assert report.failed == (f"{service.origin}/push/nokeys",)

    class BrokenStore(MemoryStore):
        def list_subscriptions(self) -> list[dict[str, Any]]:
            raise RuntimeError("database is locked")

    sender.store = BrokenStore()
    assert await sender.send({"title": "t"}, "normal") == type(report)()


@pytest.mark.asyncio
async def test_sends_run_in_parallel_off_the_loop(keys: VapidKeys, store: MemoryStore) -> None:
    with FakePushService(delay=0.4) as slow:
        subs = [slow.subscribe() for _ in range(6)]
        store.subscriptions.extend(s.to_json() for s in subs)
        sender = WebPushSender(keys, store, timeout=30.0)
        try:
            task = asyncio.create_task(sender.send({"title": "t", "body": "b"}, "high"))
            # The loop stays free while the POSTs wait on the network.
            ticks_while_waiting = 0
            while not task.done():
                await asyncio.sleep(0.01)
                if slow.arrivals and not slow.delays_over:
                    ticks_while_waiting += 1
            report = task.result()
        finally:
            sender.close()
    assert len(report.delivered) == 6
    # In parallel: every POST reached the service before the first one was answered (one after
    # another, each would arrive only after the previous answer). Speed: benchmarks/webpush.py.
    assert len(slow.arrivals) == 6
    assert max(slow.arrivals) < min(slow.delays_over)
    assert ticks_while_waiting >= 1


@pytest.mark.asyncio
async def test_no_subscriptions_is_a_quiet_no_op(sender: WebPushSender) -> None:
    report = await sender.send({"title": "t"}, "normal")
    assert report.delivered == report.failed == report.removed == ()


@pytest.mark.asyncio
async def test_a_store_that_cannot_remove_does_not_stop_other_deliveries(
    sender: WebPushSender, service: FakePushService
) -> None:
    class StuckStore(MemoryStore):
        def remove_subscription(self, endpoint: str) -> bool:
            raise RuntimeError("read-only database")

    gone, kept = service.subscribe(), service.subscribe()
    sender.store = StuckStore([gone.to_json(), kept.to_json()])
    service.answer(gone, 410)

    report = await sender.send({"title": "t", "body": "b"}, "normal")

    assert report.failed == (gone.endpoint,)
    assert report.delivered == (kept.endpoint,)


@pytest.mark.asyncio
async def test_send_after_close_does_not_raise(
    keys: VapidKeys, service: FakePushService, store: MemoryStore
) -> None:
    store.subscriptions.append(service.subscribe().to_json())
    sender = WebPushSender(keys, store)
    sender.close()
    report = await sender.send({"title": "t"}, "normal")
    assert report.delivered == ()


@pytest.mark.asyncio
async def test_an_async_store_works_too(sender: WebPushSender, service: FakePushService) -> None:
    gone, kept = service.subscribe(), service.subscribe()
    inner = MemoryStore([gone.to_json(), kept.to_json()])

    class AsyncStore:
        async def list_subscriptions(self) -> list[dict[str, Any]]:
            return inner.list_subscriptions()

        async def remove_subscription(self, endpoint: str) -> bool:
            return inner.remove_subscription(endpoint)

        async def record_deliveries(self, results: dict[str, str]) -> None:
            inner.record_deliveries(results)

    sender.store = AsyncStore()
    service.answer(gone, 410)

    report = await sender.send({"title": "t", "body": "b"}, "normal")

    assert report.delivered == (kept.endpoint,)
    assert inner.endpoints() == [kept.endpoint]
