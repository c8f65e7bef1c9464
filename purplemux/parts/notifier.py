"""The notifier part: Web Push and desktop notifications of each live entry into attention."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from purplemux.machine import Notify
from purplemux.model import Session
from purplemux.notify.desktop import DesktopNotifier
from purplemux.notify.message import body, push_payload, title, urgency_for
from purplemux.notify.policy import PushPolicy
from purplemux.notify.webpush import WebPushSender
from purplemux.runtime import Runtime
from purplemux.store import AsyncStore


class _Subscriptions:
    """The sender's view of the store: async calls on the store's own thread."""

    def __init__(self, store: AsyncStore) -> None:
        self.store = store

    async def list_subscriptions(self) -> list[dict[str, Any]]:
        return await self.store.call(lambda s: s.list_subscriptions())

    async def remove_subscription(self, endpoint: str) -> bool:
        return await self.store.call(lambda s: s.remove_subscription(endpoint))


async def notifier(rt: Runtime) -> None:
    """Push and desktop-notify each live entry into needs-input or review, once."""
    sender = WebPushSender(await rt.vapid_keys(), _Subscriptions(rt.store))
    policy = PushPolicy(cooldown=rt.settings.push_cooldown)
    desktop = DesktopNotifier(rt.settings.desktop_notifications)
    pending: set[asyncio.Task[Any]] = set()

    def on_notify(session: Session, notify: Notify) -> None:
        focused = rt.engine.feed.focused_pages()
        if not policy.should_push(session, notify, now=time.time(), focused_pages=focused):
            return
        urgency = urgency_for(notify.state)
        for job in (
            sender.send(push_payload(session), urgency),
            desktop.notify(title(session), body(session), urgent=urgency == "high"),
        ):
            task = asyncio.create_task(job)  # sends never hold up the engine
            pending.add(task)
            task.add_done_callback(pending.discard)

    rt.engine.on_notify.append(on_notify)
    try:
        await asyncio.Event().wait()
    finally:
        rt.engine.on_notify.remove(on_notify)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        await asyncio.to_thread(sender.close)
