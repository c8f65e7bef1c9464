"""The Web Push endpoints: the VAPID key, adding and removing subscriptions.

Each changes push state, so each needs an Actor (the token, or a page with its page key): a
login cookie replayed by another local server must not register a device that then receives
the user's notifications. A subscription belongs to the login that made it and ends with it."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse

from purplemux.server.api import read_json
from purplemux.server.runtime import Actor, Runtime, current_runtime, require_actor, require_auth
from purplemux.store import Store

log = logging.getLogger(__name__)
router = APIRouter(dependencies=[Depends(require_auth)])
MAX_SUBSCRIPTION = 8 * 1024
MAX_SUBSCRIPTIONS = 20
"""Push subscriptions a daemon keeps (of live logins); one more is refused with a reason."""
TOO_MANY = (
    f"this daemon already sends to {MAX_SUBSCRIPTIONS} devices, the most it keeps: run "
    "`purplemux logout-all` to end every login and its notifications, then turn "
    "notifications on again where you want them"
)


@router.get("/api/push/key", dependencies=[Depends(require_actor)])  # it may make the key
async def push_key(rt: Runtime = Depends(current_runtime)) -> dict[str, str]:
    key = (await rt.vapid_keys()).application_server_key
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
    request: Request,
    rt: Runtime = Depends(current_runtime),
    actor: Actor = Depends(require_actor),
) -> JSONResponse:
    sub = _subscription(await read_json(request, MAX_SUBSCRIPTION))
    live = rt.logins.live_ids()

    def add(s: Store) -> bool:
        s.keep_subscriptions_of(live)  # those of ended logins go first: they do not count
        if not s.has_subscription(sub["endpoint"]) and s.count_subscriptions() >= MAX_SUBSCRIPTIONS:
            return False
        s.add_subscription(sub, actor.login)
        return True

    if not await rt.store.call(add):
        return JSONResponse({"error": TOO_MANY}, status_code=409)
    return JSONResponse({"ok": True}, status_code=201)


@router.delete("/api/push/subscriptions")
async def remove_subscription(
    request: Request,
    rt: Runtime = Depends(current_runtime),
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    data = await read_json(request, MAX_SUBSCRIPTION)
    endpoint = data.get("endpoint") if isinstance(data, dict) else None
    if not isinstance(endpoint, str) or not _utf8(endpoint):
        raise HTTPException(422, 'send {"endpoint": ...} of the subscription to remove')
    # A page removes its own login's subscriptions; the token any.
    owner = actor.login if actor.via == "page" else None
    removed = await rt.store.call(lambda s: s.remove_subscription(endpoint, owner))
    if not removed:
        raise HTTPException(404, "no such subscription")
    return {"ok": True}
