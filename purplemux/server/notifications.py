"""The Web Push endpoints: the VAPID key, adding and removing subscriptions."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse

from purplemux.server.api import read_json
from purplemux.server.runtime import Runtime, current_runtime, require_auth

log = logging.getLogger(__name__)
router = APIRouter(dependencies=[Depends(require_auth)])
MAX_SUBSCRIPTION = 8 * 1024


@router.get("/api/push/key")
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
