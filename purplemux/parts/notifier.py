"""The notifier part: Web Push and desktop notifications of each live entry into attention."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from purplemux.answer import AnswerError
from purplemux.machine import Notify
from purplemux.model import Session
from purplemux.notify.desktop import DesktopNotifier
from purplemux.notify.message import body, context_payload, push_payload, title, urgency_for
from purplemux.notify.policy import ContextAlerts, PushPolicy
from purplemux.notify.webpush import WebPushSender
from purplemux.present import ANSWER, allows, present
from purplemux.prompts import Prompt
from purplemux.runtime import Runtime
from purplemux.store import AsyncStore

log = logging.getLogger(__name__)

PROMPT_WAIT = 5.0
"""Seconds a needs-input push may wait for the prompt to be drawn on the pane (it carries its
id); the PermissionRequest hook comes just before the dialog is drawn."""


class _Subscriptions:
    """The sender's view of the store: async calls on the store's own thread; the list is kept
    until the store's subscriptions change (each entry into review or needs-input asks)."""

    def __init__(self, store: AsyncStore) -> None:
        self.store = store
        self._kept: tuple[int, list[dict[str, Any]]] | None = None

    async def list_subscriptions(self) -> list[dict[str, Any]]:
        kept = self._kept
        if kept is None or kept[0] != self.store.sync.subscriptions_version:
            kept = self._kept = await self.store.call(lambda s: s.versioned_subscriptions())
        return [dict(sub) for sub in kept[1]]

    async def remove_subscription(self, endpoint: str) -> bool:
        return await self.store.call(lambda s: s.remove_subscription(endpoint))


async def prompt_on_screen(rt: Runtime, session: Session) -> Prompt | None:
    """The prompt the session's pane shows, waiting briefly for it to be drawn; None when the
    session's view allows no answer (no pane, not asking) or answering is off (the notification
    then only opens the page)."""
    if not allows(session, ANSWER) or not rt.settings.input_allowed:
        return None
    if session.id not in rt.engine.sessions:  # another host's: its pane is not ours to read
        return None
    deadline = time.monotonic() + PROMPT_WAIT
    while True:
        current = rt.engine.sessions.get(session.id, session)
        try:
            prompt = (await rt.desk.read(current)).prompt
        except AnswerError:
            return None
        if prompt is not None or time.monotonic() >= deadline:
            return prompt
        await asyncio.sleep(0.1)


async def _push(rt: Runtime, sender: WebPushSender, session: Session, urgency: str) -> None:
    """Send the push, with the prompt on screen when the session asks (its actions answer it)."""
    try:
        prompt = await prompt_on_screen(rt, session)
    except Exception:
        log.warning("could not read the prompt of %s", session.id, exc_info=True)
        prompt = None
    if prompt is None and allows(session, ANSWER):
        log.info("push for %s goes without a prompt (none recognised on its pane)", session.id)
    await sender.send(push_payload(session, prompt, rt.engine.origin_of(session.id)), urgency)


async def notifier(rt: Runtime) -> None:
    """Push and desktop-notify each live entry into needs-input or review, once."""
    sender = WebPushSender(rt.vapid_keys, _Subscriptions(rt.store))
    policy = PushPolicy(cooldown=rt.settings.push_cooldown)
    desktop = DesktopNotifier(rt.settings.desktop_notifications)
    pending: set[asyncio.Task[Any]] = set()
    alerts = ContextAlerts() if rt.settings.notify_context else None

    def send(*jobs: Any) -> None:
        for job in jobs:
            task = asyncio.create_task(job)  # sends never hold up the engine
            pending.add(task)
            task.add_done_callback(pending.discard)

    def on_change(session: Session) -> None:
        """Opt-in (PURPLEMUX_NOTIFY_CONTEXT): one push per entry into the critical band."""
        if alerts is None:
            return
        if session.ended:
            alerts.forget(session.id)
            return
        if not alerts.entered_critical(session.id, present(session).context_band):
            return
        if rt.engine.feed.focused_pages():
            return  # the user is looking at the dashboard, which shows the bar
        payload = context_payload(session)
        send(
            sender.send(payload, "normal"),
            desktop.notify(payload["title"], payload["body"], urgent=False),
        )

    def on_notify(session: Session, notify: Notify) -> None:
        focused = rt.engine.feed.focused_pages()
        if not policy.should_push(session, notify, now=time.time(), focused_pages=focused):
            return
        urgency = urgency_for(notify.state)
        origin = rt.engine.origin_of(session.id)
        for job in (
            _push(rt, sender, session, urgency),
            desktop.notify(title(session, origin), body(session, origin), urgent=urgency == "high"),
        ):
            task = asyncio.create_task(job)  # sends never hold up the engine
            pending.add(task)
            task.add_done_callback(pending.discard)

    if alerts is not None:
        for known in rt.engine.sessions.values():
            alerts.seed(known.id, present(known).context_band)  # already critical: no push
    unsubscribe = rt.engine.subscribe(notify=on_notify, change=on_change)
    try:
        await asyncio.Event().wait()
    finally:
        unsubscribe()
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        await asyncio.to_thread(sender.close)
