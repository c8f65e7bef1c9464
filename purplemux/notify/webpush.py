"""Web Push delivery: one encrypted, VAPID-signed POST per subscription, off the event loop."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from urllib.parse import urlsplit

from purplemux.notify.vapid import VapidKeys

# pywebpush and requests (with aiohttp, urllib3, …: about 25 MB) are imported by the first send:
# a daemon with no push subscriber never loads them.
if TYPE_CHECKING:
    import requests

log = logging.getLogger(__name__)

T = TypeVar("T")

URGENCIES = frozenset({"very-low", "low", "normal", "high"})
CLAIM_LIFETIME = 12 * 3600
"""Seconds a VAPID JWT is valid; RFC 8292 allows at most 24 h."""


class SubscriptionStore(Protocol):
    """Where PushSubscription JSON dicts live; called on the event loop: quick, or async."""

    def list_subscriptions(self) -> list[dict[str, Any]] | Awaitable[list[dict[str, Any]]]:
        """Every subscription, as `PushSubscription.toJSON()` gave it."""
        ...

    def remove_subscription(self, endpoint: str) -> bool | Awaitable[bool]:
        """Forget one subscription; True if it was there."""
        ...


async def _resolve(value: T | Awaitable[T]) -> T:
    """A store may answer directly or with an awaitable (one running on its own thread)."""
    if inspect.isawaitable(value):
        return await value
    return value


@dataclass(frozen=True, slots=True)
class SendReport:
    """What happened to one payload, by endpoint."""

    delivered: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Nothing failed (gone subscriptions are not failures)."""
        return not self.failed


class _Outcome(Enum):
    DELIVERED = "delivered"
    GONE = "gone"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class _Failure:
    """One failed POST: a kind to log once, whether trying again may help, and the detail."""

    kind: str
    retry: bool
    detail: str = ""


class WebPushSender:
    """Sends a payload to every subscription in parallel; never raises to the caller."""

    def __init__(
        self,
        keys: VapidKeys | Callable[[], Awaitable[VapidKeys]],
        store: SubscriptionStore,
        *,
        subject: str = "mailto:purplemux@localhost",
        timeout: float = 10.0,
        ttl: int = 300,
        tries: int = 3,
        backoff: float = 0.5,
        workers: int = 8,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._keys = keys
        self._keys_lock = asyncio.Lock()
        self._in_order: dict[str, asyncio.Lock] = {}
        self.store = store
        self.subject = subject
        self.timeout = timeout
        self.ttl = ttl
        self.tries = max(1, tries)
        self.backoff = backoff
        self._clock = clock
        self._workers = workers
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="webpush")
        self._http: requests.Session | None = None
        self._http_lock = threading.Lock()
        self._failing: set[str] = set()

    async def send(
        self,
        payload: dict[str, Any],
        urgency: str = "normal",
        to: list[dict[str, Any]] | None = None,
    ) -> SendReport:
        """Deliver `payload` to all subscriptions (or to those in `to`); 404/410 answers remove
        the subscription."""
        try:
            subscriptions = (
                to if to is not None else await _resolve(self.store.list_subscriptions())
            )
            if not subscriptions:
                return SendReport()
            keys = await self.keys()
            data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
            headers = {"Urgency": urgency if urgency in URGENCIES else "normal"}
            # return_exceptions: one broken delivery must not abandon the others mid-flight.
            outcomes = await asyncio.gather(
                *(self._deliver(keys, sub, data, headers) for sub in subscriptions),
                return_exceptions=True,
            )
        except Exception:
            log.exception("web push send failed")
            return SendReport()
        delivered, removed, failed = [], [], []
        for sub, outcome in zip(subscriptions, outcomes, strict=True):
            endpoint = str(sub.get("endpoint", ""))
            if outcome is _Outcome.DELIVERED:
                delivered.append(endpoint)
            elif outcome is _Outcome.GONE:
                removed.append(endpoint)
            elif outcome is _Outcome.FAILED or isinstance(outcome, asyncio.CancelledError):
                failed.append(endpoint)  # a CancelledError here: close() dropped a queued POST
            elif isinstance(outcome, Exception):
                log.error("web push to %s broke: %r", _short(endpoint), outcome)
                failed.append(endpoint)
            else:
                raise outcome  # KeyboardInterrupt and the like are not ours to swallow
        return SendReport(tuple(delivered), tuple(removed), tuple(failed))

    async def keys(self) -> VapidKeys:
        """The signing keys; a getter given instead is called by the first send to someone (so
        a daemon nobody subscribes to never loads the crypto)."""
        async with self._keys_lock:  # first come, first served: sends keep their order
            if not isinstance(self._keys, VapidKeys):
                self._keys = await self._keys()
                await asyncio.to_thread(self._session)  # and the HTTP side, before any POST
            return self._keys

    def close(self) -> None:
        """Stop the worker threads (sends in flight end at their timeout) and the HTTP pool."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        if self._http is not None:
            self._http.close()

    def _session(self) -> requests.Session:
        """The pooled HTTP session, made by the first POST (in a worker thread)."""
        with self._http_lock:
            if self._http is None:
                import pywebpush  # type: ignore[import-untyped]  # noqa: F401  (loaded here, once)
                import requests
                from requests.adapters import HTTPAdapter

                http = requests.Session()
                # One pooled connection per worker thread, so parallel sends to one push
                # service reuse connections instead of discarding them.
                adapter = HTTPAdapter(pool_connections=4, pool_maxsize=self._workers)
                http.mount("https://", adapter)
                http.mount("http://", adapter)
                self._http = http
            return self._http

    async def _deliver(
        self, keys: VapidKeys, sub: dict[str, Any], data: str, headers: dict[str, str]
    ) -> _Outcome:
        """One subscription, in the order sends were made (a phone shows the newest on top)."""
        endpoint = str(sub.get("endpoint", ""))
        lock = self._in_order.setdefault(endpoint, asyncio.Lock())  # FIFO: first come, first sent
        async with lock:
            outcome = await self._try(keys, sub, data, headers)
        if outcome is _Outcome.GONE:
            self._in_order.pop(endpoint, None)
        return outcome

    async def _try(
        self, keys: VapidKeys, sub: dict[str, Any], data: str, headers: dict[str, str]
    ) -> _Outcome:
        """One subscription: try up to `tries` times with exponential backoff between tries."""
        endpoint = str(sub.get("endpoint", ""))
        loop = asyncio.get_running_loop()
        for attempt in range(self.tries):
            post = self._post
            failure = await loop.run_in_executor(self._executor, post, keys, sub, data, headers)
            if failure is None:
                self._recovered()
                return _Outcome.DELIVERED
            if failure.kind in ("http 404", "http 410"):
                # The browser unsubscribed or the subscription expired: it never comes back.
                try:
                    await _resolve(self.store.remove_subscription(endpoint))
                except Exception:
                    log.exception("could not remove push subscription %s", _short(endpoint))
                    return _Outcome.FAILED
                log.info(
                    "removed expired push subscription %s (%s)", _short(endpoint), failure.kind
                )
                return _Outcome.GONE
            self._report(failure, endpoint)
            if not failure.retry or attempt + 1 == self.tries:
                break
            await asyncio.sleep(self.backoff * 2**attempt)
        return _Outcome.FAILED

    def _post(
        self, keys: VapidKeys, sub: dict[str, Any], data: str, headers: dict[str, str]
    ) -> _Failure | None:
        """One blocking POST (runs in a worker thread); None on success."""
        import requests

        # pywebpush ships no type information (no py.typed marker).
        from pywebpush import WebPushException, webpush

        http = self._session()
        endpoint = str(sub.get("endpoint", ""))
        parts = urlsplit(endpoint)
        # pywebpush writes into the claims dict it is given: a fresh one per call.
        claims: dict[str, str | int] = {
            "sub": self.subject,
            "aud": f"{parts.scheme}://{parts.netloc}",
            "exp": int(self._clock()) + CLAIM_LIFETIME,
        }
        try:
            webpush(
                subscription_info=sub,
                data=data,
                vapid_private_key=keys.vapid,
                vapid_claims=claims,
                content_encoding="aes128gcm",
                timeout=self.timeout,
                ttl=self.ttl,
                headers=dict(headers),
                requests_session=http,
            )
        except WebPushException as exc:
            status = exc.status_code
            if status is None:
                return _Failure("bad subscription", retry=False, detail=exc.message)
            retry = status >= 500 or status == 429
            return _Failure(f"http {status}", retry=retry, detail=exc.message.splitlines()[0])
        except requests.Timeout as exc:
            return _Failure("timeout", retry=True, detail=str(exc))
        except requests.ConnectionError as exc:
            return _Failure("connection error", retry=True, detail=str(exc))
        except requests.RequestException as exc:
            return _Failure(type(exc).__name__, retry=True, detail=str(exc))
        except Exception as exc:  # bad keys in a stored subscription, and the like
            return _Failure(type(exc).__name__, retry=False, detail=str(exc))
        return None

    def _report(self, failure: _Failure, endpoint: str) -> None:
        """Log a failure kind once while it lasts; repeats go to debug."""
        if failure.kind in self._failing:
            log.debug("web push to %s: %s: %s", _short(endpoint), failure.kind, failure.detail)
            return
        self._failing.add(failure.kind)
        log.warning("web push to %s failed: %s: %s", _short(endpoint), failure.kind, failure.detail)

    def _recovered(self) -> None:
        if self._failing:
            log.info("web push delivers again (after: %s)", ", ".join(sorted(self._failing)))
            self._failing.clear()


def _short(endpoint: str) -> str:
    """An endpoint for logs: the origin and the start of the path (the rest is a secret-ish id)."""
    parts = urlsplit(endpoint)
    return f"{parts.scheme}://{parts.netloc}{parts.path[:16]}…"
