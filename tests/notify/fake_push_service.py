"""A stand-in for a browser vendor's push service, and subscriptions made as a browser would."""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece  # type: ignore[import-untyped]  # no type information shipped
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

MAX_EXP = 24 * 3600  # RFC 8292: a JWT may not live longer than 24 hours


def b64url(data: bytes) -> str:
    """Base64url without padding, as browsers write keys."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    """Inverse of b64url (padding optional)."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class BrowserSubscription:
    """What a browser keeps for one subscription: its ECDH key pair and auth secret."""

    id: str
    endpoint: str
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes

    def to_json(self) -> dict[str, Any]:
        """The `PushSubscription.toJSON()` a page would POST to the daemon."""
        public = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {
            "endpoint": self.endpoint,
            "expirationTime": None,
            "keys": {"p256dh": b64url(public), "auth": b64url(self.auth)},
        }


@dataclass
class Delivery:
    """One accepted, verified and decrypted push message."""

    subscription_id: str
    headers: dict[str, str]
    claims: dict[str, Any]
    json: Any


@dataclass
class _Rule:
    status: int
    times: int | None  # None: every time


@dataclass
class FakePushService:
    """Threaded HTTP server on 127.0.0.1 taking POST /push/<id>; use as a context manager."""

    delay: float = 0.0
    received: list[Delivery] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    attempts: dict[str, int] = field(default_factory=dict)
    arrivals: list[float] = field(default_factory=list)
    delays_over: list[float] = field(default_factory=list)  # when each delayed answer went out
    _subs: dict[str, BrowserSubscription] = field(default_factory=dict)
    _rules: dict[str, _Rule] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    def __enter__(self) -> FakePushService:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    @property
    def origin(self) -> str:
        """`http://127.0.0.1:<port>`: what the JWT's `aud` must be."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def subscribe(self) -> BrowserSubscription:
        """A new subscription as a browser makes one: P-256 key pair, 16-byte auth secret."""
        sub_id = os.urandom(8).hex()
        sub = BrowserSubscription(
            id=sub_id,
            endpoint=f"{self.origin}/push/{sub_id}",
            private_key=ec.generate_private_key(ec.SECP256R1()),
            auth=os.urandom(16),
        )
        with self._lock:
            self._subs[sub_id] = sub
        return sub

    def answer(self, sub: BrowserSubscription, status: int, times: int | None = None) -> None:
        """Answer `status` to this subscription's pushes (`times` times, or always)."""
        with self._lock:
            self._rules[sub.id] = _Rule(status, times)

    def for_subscription(self, sub: BrowserSubscription) -> list[Delivery]:
        """The messages delivered to one subscription."""
        with self._lock:
            return [d for d in self.received if d.subscription_id == sub.id]

    # --- request handling (server threads) ------------------------------------------------

    def _handle(self, path: str, headers: dict[str, str], body: bytes) -> int:
        with self._lock:
            self.arrivals.append(time.monotonic())
        if self.delay:
            time.sleep(self.delay)
            with self._lock:
                self.delays_over.append(time.monotonic())
        prefix = "/push/"
        sub_id = path[len(prefix) :] if path.startswith(prefix) else ""
        with self._lock:
            self.attempts[sub_id] = self.attempts.get(sub_id, 0) + 1
            sub = self._subs.get(sub_id)
            rule = self._rules.get(sub_id)
            if rule is not None and rule.times is not None:
                rule.times -= 1
                if rule.times < 0:
                    del self._rules[sub_id]
                    rule = None
        if sub is None:
            return 404
        if rule is not None:
            return rule.status
        try:
            claims = self._verify_vapid(headers.get("authorization", ""))
            if headers.get("content-encoding") != "aes128gcm":
                raise ValueError(f"content-encoding {headers.get('content-encoding')!r}")
            if "ttl" not in headers:
                raise ValueError("no TTL header")
            plain = http_ece.decrypt(
                body, private_key=sub.private_key, auth_secret=sub.auth, version="aes128gcm"
            )
            message = json.loads(plain)
        except Exception as exc:
            with self._lock:
                self.errors.append(f"{type(exc).__name__}: {exc}")
            return 400
        with self._lock:
            self.received.append(Delivery(sub_id, headers, claims, message))
        return 201

    def _verify_vapid(self, authorization: str) -> dict[str, Any]:
        """Check `vapid t=<jwt>, k=<key>`: ES256 signature by k, aud, exp, sub."""
        scheme, _, params = authorization.partition(" ")
        if scheme.lower() != "vapid":
            raise ValueError(f"authorization scheme {scheme!r}")
        parts = dict(p.strip().split("=", 1) for p in params.split(","))
        token, key = parts["t"], parts["k"]
        public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(key))
        head_b64, claims_b64, sig_b64 = token.split(".")
        header = json.loads(unb64url(head_b64))
        if header.get("alg") != "ES256":
            raise ValueError(f"JWT alg {header.get('alg')!r}")
        sig = unb64url(sig_b64)
        if len(sig) != 64:
            raise ValueError("ES256 signature is not 64 bytes")
        der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
        try:
            public.verify(der, f"{head_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            raise ValueError("bad JWT signature") from None
        claims: dict[str, Any] = json.loads(unb64url(claims_b64))
        if claims.get("aud") != self.origin:
            raise ValueError(f"aud {claims.get('aud')!r} != {self.origin!r}")
        now = time.time()
        exp = claims.get("exp")
        if not isinstance(exp, int) or not now < exp <= now + MAX_EXP + 5:
            raise ValueError(f"exp {exp!r} not within 24 h from now")
        if not claims.get("sub"):
            raise ValueError("no sub claim")
        return claims


def _handler_for(service: FakePushService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            status = service._handle(self.path, headers, body)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output quiet

    return Handler


class MemoryStore:
    """The SubscriptionStore protocol over a list, for tests."""

    def __init__(self, subscriptions: list[dict[str, Any]] | None = None) -> None:
        self.subscriptions = list(subscriptions or [])
        self.results: dict[str, str] = {}

    def list_subscriptions(self) -> list[dict[str, Any]]:
        return list(self.subscriptions)

    def remove_subscription(self, endpoint: str) -> bool:
        before = len(self.subscriptions)
        self.subscriptions = [s for s in self.subscriptions if s.get("endpoint") != endpoint]
        return len(self.subscriptions) < before

    def record_deliveries(self, results: dict[str, str]) -> None:
        self.results.update(results)

    def endpoints(self) -> list[str]:
        return [str(s["endpoint"]) for s in self.subscriptions]
