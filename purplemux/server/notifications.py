"""The Web Push endpoints: the VAPID key; adding, listing, testing and removing subscriptions.

Each changes push state or names the user's devices, so each needs an Actor (the token, or a
page with its page key): a login cookie replayed by another local server must not register a
device that then receives the user's notifications. A subscription belongs to the login that
made it and ends with it. A page lists, tests and removes only its own login's devices; the
token (the CLI, whoever holds $PURPLEMUX_HOME/token) every device."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse

from purplemux.io.store import Store
from purplemux.notify.devices import TEST_PAYLOAD, device_name
from purplemux.notify.webpush import WebPushSender
from purplemux.parts.notifier import StoredSubscriptions
from purplemux.server.api import read_json
from purplemux.server.runtime import Actor, Runtime, current_runtime, require_actor, require_auth

log = logging.getLogger(__name__)
router = APIRouter(dependencies=[Depends(require_auth)])

_T = TypeVar("_T")
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
    if not _push_host(endpoint):
        raise HTTPException(422, "subscription.endpoint must name a push service host")
    if not isinstance(keys, dict) or not all(
        isinstance(keys.get(k), str) and 0 < len(keys[k]) <= 256 for k in ("p256dh", "auth")
    ):
        raise HTTPException(422, "subscription.keys must hold p256dh and auth strings")
    if not all(_utf8(text) for text in (endpoint, keys["p256dh"], keys["auth"])):
        raise HTTPException(422, "subscription strings must be valid Unicode text")
    return {"endpoint": endpoint, "keys": {"p256dh": keys["p256dh"], "auth": keys["auth"]}}


def _push_host(endpoint: str) -> str:
    """The endpoint's host, or "" if it has none (a URL urllib cannot split, e.g. "https://[")."""
    try:
        return urlsplit(endpoint).hostname or ""
    except ValueError:
        return ""


async def _of_live_logins(rt: Runtime, fn: Callable[[Store], _T]) -> _T:
    """`fn` on the store once the subscriptions of logins that ended are gone."""
    live = rt.logins.live_ids()

    def call(s: Store) -> _T:
        s.keep_subscriptions_of(live)
        return fn(s)

    return await rt.store.call(call)


@router.post("/api/push/subscriptions")
async def add_subscription(
    request: Request,
    rt: Runtime = Depends(current_runtime),
    actor: Actor = Depends(require_actor),
) -> JSONResponse:
    sub = _subscription(await read_json(request, MAX_SUBSCRIPTION))
    name = device_name(request.headers.get("user-agent"))

    def add(s: Store) -> str | None:
        # (those of ended logins went first: they do not count)
        if not s.has_subscription(sub["endpoint"]) and s.count_subscriptions() >= MAX_SUBSCRIPTIONS:
            return None
        return s.add_subscription(sub, actor.login, name)

    device_id = await _of_live_logins(rt, add)
    if device_id is None:
        return JSONResponse({"error": TOO_MANY}, status_code=409)
    return JSONResponse({"ok": True, "id": device_id, "name": name}, status_code=201)


def _owner(actor: Actor) -> str | None:
    """The login whose devices `actor` may see and change: a page's own; None (every login's)
    for the token."""
    return actor.login if actor.via == "page" else None


@router.get("/api/push/subscriptions")
async def list_devices(
    rt: Runtime = Depends(current_runtime), actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    """The actor's subscriptions as devices (a page's own login's; the token's every one):
    name, added, last delivery; no keys, and of the endpoint only the push service's host
    (those of logins that ended are gone first)."""
    owner = _owner(actor)
    return {"devices": await _of_live_logins(rt, lambda s: s.devices(owner))}


def _device_id(data: Any) -> str:
    device_id = data.get("id") if isinstance(data, dict) else None
    if not isinstance(device_id, str) or not 0 < len(device_id) <= 64:
        raise HTTPException(422, 'send {"id": ...} of a device from GET /api/push/subscriptions')
    return device_id


@router.post("/api/push/subscriptions/test")
async def test_device(
    request: Request,
    rt: Runtime = Depends(current_runtime),
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    """Send a test notification to one device (a page: of its own login) and say what its push
    service answered; a subscription the service reports gone (404/410) is marked so."""
    device_id = _device_id(await read_json(request, MAX_SUBSCRIPTION))
    owner = _owner(actor)
    sub = await _of_live_logins(rt, lambda s: s.subscription(device_id, owner))
    if sub is None:
        raise HTTPException(404, "no such device (or its push service dropped it already)")
    sender = WebPushSender(rt.vapid_keys, StoredSubscriptions(rt), tries=1)
    try:
        report = await sender.send(dict(TEST_PAYLOAD), "normal", to=[sub])
    finally:
        sender.close()
    result = report.results.get(sub["endpoint"], "not sent")
    return {"ok": report.ok and not report.removed, "result": result, "gone": bool(report.removed)}


@router.delete("/api/push/subscriptions")
async def remove_subscription(
    request: Request,
    rt: Runtime = Depends(current_runtime),
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    data = await read_json(request, MAX_SUBSCRIPTION)
    # A page removes its own login's subscriptions; the token any.
    owner = _owner(actor)
    if isinstance(data, dict) and "id" in data:  # the devices view removes by id
        device_id = _device_id(data)
        removed = await rt.store.call(lambda s: s.remove_device(device_id, owner))
        if not removed:
            raise HTTPException(404, "no such device")
        return {"ok": True}
    endpoint = data.get("endpoint") if isinstance(data, dict) else None
    if not isinstance(endpoint, str) or not _utf8(endpoint):
        raise HTTPException(422, 'send {"endpoint": ...} of the subscription to remove')
    removed = await rt.store.call(lambda s: s.remove_subscription(endpoint, owner))
    if not removed:
        raise HTTPException(404, "no such subscription")
    return {"ok": True}
