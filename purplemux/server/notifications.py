"""The Web Push endpoints: the VAPID key, adding, listing, testing and removing subscriptions."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse

from purplemux.notify.devices import TEST_PAYLOAD, device_name
from purplemux.notify.webpush import WebPushSender
from purplemux.parts.notifier import StoredSubscriptions
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
    name = device_name(request.headers.get("user-agent"))
    device_id = await rt.store.call(lambda s: s.add_subscription(sub, name))
    return JSONResponse({"ok": True, "id": device_id, "name": name}, status_code=201)


@router.get("/api/push/subscriptions")
async def list_devices(rt: Runtime = Depends(current_runtime)) -> dict[str, Any]:
    """This daemon's subscriptions as devices: name, added, last delivery; no keys, and of the
    endpoint only the push service's host."""
    return {"devices": await rt.store.call(lambda s: s.devices())}


def _device_id(data: Any) -> str:
    device_id = data.get("id") if isinstance(data, dict) else None
    if not isinstance(device_id, str) or not 0 < len(device_id) <= 64:
        raise HTTPException(422, 'send {"id": ...} of a device from GET /api/push/subscriptions')
    return device_id


@router.post("/api/push/subscriptions/test")
async def test_device(request: Request, rt: Runtime = Depends(current_runtime)) -> dict[str, Any]:
    """Send a test notification to one device and say what its push service answered; a
    subscription the service reports gone (404/410) is marked so."""
    device_id = _device_id(await read_json(request, MAX_SUBSCRIPTION))
    sub = await rt.store.call(lambda s: s.subscription(device_id))
    if sub is None:
        raise HTTPException(404, "no such device (or its push service dropped it already)")
    sender = WebPushSender(rt.vapid_keys, StoredSubscriptions(rt.store), tries=1)
    try:
        report = await sender.send(dict(TEST_PAYLOAD), "normal", to=[sub])
    finally:
        sender.close()
    result = report.results.get(sub["endpoint"], "not sent")
    return {"ok": report.ok and not report.removed, "result": result, "gone": bool(report.removed)}


@router.delete("/api/push/subscriptions")
async def remove_subscription(
    request: Request, rt: Runtime = Depends(current_runtime)
) -> dict[str, Any]:
    data = await read_json(request, MAX_SUBSCRIPTION)
    if isinstance(data, dict) and "id" in data:  # the devices view removes by id
        device_id = _device_id(data)
        removed = await rt.store.call(lambda s: s.remove_device(device_id))
        if not removed:
            raise HTTPException(404, "no such device")
        return {"ok": True}
    endpoint = data.get("endpoint") if isinstance(data, dict) else None
    if not isinstance(endpoint, str) or not _utf8(endpoint):
        raise HTTPException(
            422, 'send {"endpoint": ...} or {"id": ...} of the subscription to remove'
        )
    removed = await rt.store.call(lambda s: s.remove_subscription(endpoint))
    if not removed:
        raise HTTPException(404, "no such subscription")
    return {"ok": True}
