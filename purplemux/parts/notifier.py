"""The notifier part: Web Push and desktop notifications of each live entry into attention."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection
from typing import Any

from purplemux.core.machine import Notify
from purplemux.core.model import Session
from purplemux.core.present import ANSWER, allows, present
from purplemux.core.prompts import Prompt
from purplemux.daemon.answer import AnswerError
from purplemux.daemon.runtime import Runtime
from purplemux.io.store_thread import AsyncStore
from purplemux.notify.desktop import DesktopNotifier
from purplemux.notify.message import (
    body,
    context_payload,
    push_payload,
    resume_payload,
    title,
    urgency_for,
)
from purplemux.notify.policy import ContextAlerts, PushPolicy
from purplemux.notify.webpush import WebPushSender

log = logging.getLogger(__name__)

PROMPT_WAIT = 5.0
"""Seconds a needs-input push may wait for the prompt to be drawn on the pane (it carries its
id); the PermissionRequest hook comes just before the dialog is drawn."""


class StoredSubscriptions:
    """The sender's view of the store: async calls on the store's own thread; the list is kept
    until the store's subscriptions change (each entry into review or needs-input asks). Only
    live logins' subscriptions are ever sent to: those of a login that ended (logout-all, a new
    token) are deleted when the next push is due, before anything is sent."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.store: AsyncStore = rt.store
        self._kept: tuple[int, list[tuple[str, dict[str, Any]]]] | None = None

    async def _owned(self) -> list[tuple[str, dict[str, Any]]]:
        kept = self._kept
        if kept is None or kept[0] != self.store.sync.subscriptions_version:
            kept = self._kept = await self.store.call(lambda s: s.versioned_subscriptions())
        return kept[1]

    def none(self) -> bool:
        """No subscription is stored (as the store's version says now): no push to make."""
        kept = self._kept
        return kept is not None and kept[0] == self.store.sync.subscriptions_version and not kept[1]

    async def for_push(self, muted: Collection[str] = ()) -> list[dict[str, Any]]:
        """The subscriptions to send to: of live logins, but not of the `muted` ones (a focused
        page of theirs already shows it)."""
        live = self.rt.logins.live_ids()  # rereads the logins file when it changed
        owned = await self._owned()
        if any(login not in live for login, _ in owned):
            gone = await self.store.call(lambda s: s.keep_subscriptions_of(live))
            log.info("dropped %d push subscriptions of logins that ended", gone)
            owned = await self._owned()
        return [dict(sub) for login, sub in owned if login in live and login not in muted]

    async def list_subscriptions(self) -> list[dict[str, Any]]:
        return await self.for_push()

    async def remove_subscription(self, endpoint: str) -> bool:
        """Gone at the push service: marked, so the devices list can say so."""
        return await self.store.call(lambda s: s.mark_gone(endpoint, "gone"))

    async def record_deliveries(self, results: dict[str, str]) -> None:
        if results:
            at = time.time()
            await self.store.call(lambda s: s.record_deliveries(results, at))


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


async def _push(
    rt: Runtime,
    sender: WebPushSender,
    subs: StoredSubscriptions,
    session: Session,
    urgency: str,
    muted: Collection[str],
) -> None:
    """Send the push, with the prompt on screen when the session asks (its actions answer it),
    to every live login's subscriptions but the `muted` logins'."""
    if not await subs.for_push(muted):
        return  # nobody to send to: the pane is not even read
    try:
        prompt = await prompt_on_screen(rt, session)
    except Exception:
        log.warning("could not read the prompt of %s", session.id, exc_info=True)
        prompt = None
    if prompt is None and allows(session, ANSWER):
        log.info("push for %s goes without a prompt (none recognised on its pane)", session.id)
    # Asked again after the wait for the prompt: a login that ended meanwhile gets nothing.
    to = await subs.for_push(muted)
    origin = rt.engine.origin_of(session.id)
    payload = push_payload(session, prompt, origin, rt.engine.named_accounts)
    await sender.send(payload, urgency, to)


async def notifier(rt: Runtime) -> None:
    """Push and desktop-notify each live entry into needs-input or review, once."""
    subs = StoredSubscriptions(rt)
    sender = WebPushSender(rt.vapid_keys, subs)
    policy = PushPolicy(cooldown=rt.settings.push_cooldown)
    desktop = DesktopNotifier(rt.settings.desktop_notifications)
    pending: set[asyncio.Task[Any]] = set()
    alerts = ContextAlerts() if rt.settings.notify_context else None
    window = rt.settings.context_window

    def band(session: Session) -> str:
        return present(session, context_window=window).context_band

    def send(*jobs: Any) -> None:
        for job in jobs:
            task = asyncio.create_task(job)  # sends never hold up the engine
            pending.add(task)
            task.add_done_callback(pending.discard)

    def resumed(session: Session) -> None:
        """Resume at the reset typed or skipped: one push (and desktop note) per outcome."""
        r = session.resume
        if r is None or (session.id, r.at) in told:
            return
        payload = resume_payload(session, rt.engine.origin_of(session.id), rt.engine.named_accounts)
        if payload is None:
            return
        told.add((session.id, r.at))

        async def to_devices() -> None:
            if to := await subs.for_push():
                await sender.send(payload, "normal", to)

        send(to_devices())
        send(desktop.notify(payload["title"], payload["body"], urgent=False))

    def on_change(session: Session) -> None:
        """Resume outcomes; opt-in (PURPLEMUX_NOTIFY_CONTEXT): one push per entry into the
        critical band."""
        resumed(session)
        if alerts is None:
            return
        if session.ended:
            alerts.forget(session.id)
            return
        if not alerts.entered_critical(session.id, band(session)):
            return
        # A signed-in page the user is looking at shows the bar: not to its own login's devices.
        muted = rt.engine.feed.focused_logins()
        payload = context_payload(session, window)

        async def to_devices() -> None:
            if to := await subs.for_push(muted):
                await sender.send(payload, "normal", to)

        send(to_devices())
        if not muted:
            send(desktop.notify(payload["title"], payload["body"], urgent=False))

    def on_notify(session: Session, notify: Notify) -> None:
        # Per page: a focused page that proved its login holds back only that login's pushes
        # (it shows the change itself); the user's other devices still get theirs.
        muted = rt.engine.feed.focused_logins()
        if not policy.should_push(session, notify, now=time.time()):
            return
        urgency = urgency_for(notify.state)
        origin = rt.engine.origin_of(session.id)
        if not subs.none():
            send(_push(rt, sender, subs, session, urgency, muted))
        # On this machine's desktop: held back while a signed-in page is looked at.
        if not muted and desktop.may_show():
            send(
                desktop.notify(
                    title(session, origin, rt.engine.named_accounts),
                    body(session, origin),
                    urgent=urgency == "high",
                )
            )

    told = {(s.id, s.resume.at) for s in rt.engine.sessions.values() if s.resume is not None}
    """Resume outcomes already told (those from before a restart are not told again)."""
    if alerts is not None:
        for known in rt.engine.sessions.values():
            alerts.seed(known.id, band(known))  # already critical: no push
    unsubscribe = rt.engine.subscribe(notify=on_notify, change=on_change)
    try:
        await asyncio.Event().wait()
    finally:
        unsubscribe()
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        await asyncio.to_thread(sender.close)
