"""Web Push and desktop notifications: the push API endpoints and the notifier component."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse

from purplemux.answer import AnswerError
from purplemux.machine import Notify
from purplemux.model import Session, State
from purplemux.notify.desktop import DesktopNotifier
from purplemux.notify.message import body, push_payload, title, urgency_for
from purplemux.notify.policy import PushPolicy
from purplemux.notify.vapid import VapidKeys, load_or_create_keys
from purplemux.notify.webpush import WebPushSender
from purplemux.prompts import Prompt
from purplemux.server.api import read_json
from purplemux.server.runtime import Runtime, current_runtime, require_auth
from purplemux.store import AsyncStore

log = logging.getLogger(__name__)
router = APIRouter(dependencies=[Depends(require_auth)])
MAX_SUBSCRIPTION = 8 * 1024


async def vapid_keys(rt: Runtime) -> VapidKeys:
    """The daemon's VAPID keys, made on first use (0600 under $PURPLEMUX_HOME)."""
    keys = rt.extras.get("vapid")
    if keys is None:
        keys = await asyncio.to_thread(load_or_create_keys, rt.settings.home)
        rt.extras["vapid"] = keys
    assert isinstance(keys, VapidKeys)
    return keys


@router.get("/api/push/key")
async def push_key(rt: Runtime = Depends(current_runtime)) -> dict[str, str]:
    key = (await vapid_keys(rt)).application_server_key
    return {"key": key, "applicationServerKey": key}


def _utf8(text: str) -> bool:
    """False for a string holding a lone surrogate (JSON can carry one; SQLite cannot store it)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _subscription(data: Any) -> dict[str, Any]:
    """A browser PushSubscription JSON, checked: endpoint URL and the two keys."""
    if not isinstance(data, dict):
        raise HTTPException(422, "a subscription is a JSON object")
    endpoint = data.get("endpoint")
    keys = data.get("keys")
    if not isinstance(endpoint, str) or not endpoint.startswith(("https://", "http://")):
        raise HTTPException(422, "subscription.endpoint must be an http(s) URL")
    if len(endpoint) > 2048:
        raise HTTPException(422, "subscription.endpoint is too long")
    if not isinstance(keys, dict) or not all(
        isinstance(keys.get(k), str) and 0 < len(keys[k]) <= 256 for k in ("p256dh", "auth")
    ):
        raise HTTPException(422, "subscription.keys must hold p256dh and auth strings")
    if not all(_utf8(text) for text in (endpoint, keys["p256dh"], keys["auth"])):
        raise HTTPException(422, "subscription strings must be valid Unicode text")
    return {"endpoint": endpoint, "keys": {"p256dh": keys["p256dh"], "auth": keys["auth"]}}


@router.post("/api/push/subscriptions")
async def add_subscription(
    request: Request, rt: Runtime = Depends(current_runtime)
) -> JSONResponse:
    sub = _subscription(await read_json(request, MAX_SUBSCRIPTION))
    await rt.store.call(lambda s: s.add_subscription(sub))
    return JSONResponse({"ok": True}, status_code=201)


@router.delete("/api/push/subscriptions")
async def remove_subscription(
    request: Request, rt: Runtime = Depends(current_runtime)
) -> dict[str, Any]:
    data = await read_json(request, MAX_SUBSCRIPTION)
    endpoint = data.get("endpoint") if isinstance(data, dict) else None
    if not isinstance(endpoint, str) or not _utf8(endpoint):
        raise HTTPException(422, 'send {"endpoint": ...} of the subscription to remove')
    removed = await rt.store.call(lambda s: s.remove_subscription(endpoint))
    if not removed:
        raise HTTPException(404, "no such subscription")
    return {"ok": True}


PROMPT_WAIT = 5.0
"""Seconds a needs-input push may wait for the prompt to be drawn on the pane (it carries its
id); the PermissionRequest hook comes just before the dialog is drawn."""


async def prompt_on_screen(rt: Runtime, session: Session) -> Prompt | None:
    """The prompt the session's pane shows, waiting briefly for it to be drawn; None without a
    pane, or when answering is off (the notification then only opens the page)."""
    from purplemux.server.act import desk

    if session.state is not State.NEEDS_INPUT or session.tmux is None:
        return None
    if not rt.settings.input_allowed:
        return None
    deadline = time.monotonic() + PROMPT_WAIT
    while True:
        current = rt.engine.sessions.get(session.id, session)
        try:
            prompt = (await desk(rt).read(current)).prompt
        except AnswerError:
            return None
        if prompt is not None or time.monotonic() >= deadline:
            return prompt
        await asyncio.sleep(0.1)


async def _push(rt: Runtime, sender: WebPushSender, session: Session, urgency: str) -> None:
    try:
        prompt = await prompt_on_screen(rt, session)
    except Exception:
        log.warning("could not read the prompt of %s", session.id, exc_info=True)
        prompt = None
    if prompt is None and session.state is State.NEEDS_INPUT:
        log.info("push for %s goes without a prompt (none recognised on its pane)", session.id)
    await sender.send(push_payload(session, prompt), urgency)


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
    sender = WebPushSender(await vapid_keys(rt), _Subscriptions(rt.store))
    policy = PushPolicy(cooldown=rt.settings.push_cooldown)
    desktop = DesktopNotifier(rt.settings.desktop_notifications)
    pending: set[asyncio.Task[Any]] = set()
    rt.extras["push_sender"] = sender

    def on_notify(session: Session, notify: Notify) -> None:
        focused = rt.engine.feed.focused_pages()
        if not policy.should_push(session, notify, now=time.time(), focused_pages=focused):
            return
        urgency = urgency_for(notify.state)
        for job in (
            _push(rt, sender, session, urgency),
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
