"""Hostile WebSocket traffic on /api/stream: the connection may close, the daemon stays healthy."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.websockets import WebSocketDisconnect

from tests.hardening.helpers import ErrorLog, json_value
from tests.support import REPO, Daemon

Message = tuple[str, Any]

messages = st.one_of(
    st.tuples(st.just("text"), st.text(max_size=200)),
    st.tuples(st.just("bytes"), st.binary(max_size=200)),
    st.tuples(st.just("json"), json_value),
    st.tuples(
        st.just("json"),
        st.fixed_dictionaries(
            {"type": st.just("visibility")}, optional={"visible": json_value, "focused": json_value}
        ),
    ),
    st.tuples(st.just("text"), st.integers(1, 3000).map(lambda d: "[" * d + "]" * d)),
)


def send(ws: Any, message: Message) -> None:
    kind, value = message
    if kind == "text":
        ws.send_text(value)
    elif kind == "bytes":
        ws.send_bytes(value)
    else:
        ws.send_text(json.dumps(value))


def assert_feed_works(api: TestClient) -> None:
    assert api.get("/api/health").json()["status"] == "ok"
    with api.websocket_connect("/api/stream") as ws:
        assert ws.receive_json()["type"] == "snapshot"


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batch=st.lists(messages, min_size=1, max_size=5))
def test_random_messages_after_auth(
    api: TestClient, no_errors: ErrorLog, batch: list[Message]
) -> None:
    try:
        with api.websocket_connect("/api/stream") as ws:
            assert ws.receive_json()["type"] == "snapshot"
            for message in batch:
                send(ws, message)
    except WebSocketDisconnect:
        pass  # the server may hang up on nonsense
    assert_feed_works(api)


def test_a_multi_megabyte_message(api: TestClient, no_errors: ErrorLog) -> None:
    with api.websocket_connect("/api/stream") as ws:
        ws.receive_json()
        ws.send_text(json.dumps({"type": "visibility", "visible": "v" * (4 << 20)}))
        ws.send_bytes(os.urandom(3 << 20))
    assert_feed_works(api)


# --- raw frames against a real uvicorn ----------------------------------------------------------


def frame(opcode: int, payload: bytes, *, fin: bool = True, length: int | None = None) -> bytes:
    """One client frame (masked, as RFC 6455 requires of clients); `length` may lie."""
    n = len(payload) if length is None else length
    head = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 1 << 16:
        head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
    key = os.urandom(4)
    repeated = (key * (len(payload) // 4 + 1))[: len(payload)]
    masked = (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(
        len(payload), "big"
    )
    return head + key + masked


def upgrade(daemon: Daemon, headers: dict[str, str] | None = None) -> tuple[socket.socket, bytes]:
    """Open /api/stream by hand; return the socket and the server's response head."""
    sock = socket.create_connection(("127.0.0.1", daemon.port), timeout=5)
    lines = [
        "GET /api/stream HTTP/1.1",
        f"Host: 127.0.0.1:{daemon.port}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}",
        "Sec-WebSocket-Version: 13",
        f"Authorization: Bearer {daemon.token}",
        *(f"{k}: {v}" for k, v in (headers or {}).items()),
    ]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    return sock, head


def server_closed(data: bytes) -> bool:
    """True once the (unmasked) server frames in data include a close frame."""
    pos = 0
    while pos + 2 <= len(data):
        opcode, n = data[pos] & 0x0F, data[pos + 1] & 0x7F
        pos += 2
        if n == 126:
            n, pos = int.from_bytes(data[pos : pos + 2], "big"), pos + 2
        elif n == 127:
            n, pos = int.from_bytes(data[pos : pos + 8], "big"), pos + 8
        if opcode == 0x8:
            return True
        pos += n
    return False


def drain_until_closed(sock: socket.socket, head: bytes, timeout: float = 10.0) -> bytes:
    """Read until the server ends the connection: EOF, or its close frame (which we answer, as
    a client must, rather than wait out the server's close timeout). Returns what came."""
    got = head.partition(b"\r\n\r\n")[2]  # frames that came with the handshake answer
    deadline = time.monotonic() + timeout
    sock.settimeout(0.2)
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            break
        if not chunk:
            break
        got += chunk
        if server_closed(got):
            with contextlib.suppress(OSError):
                sock.sendall(frame(0x8, (1000).to_bytes(2, "big")))
            break
    return got


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    root = tmp_path_factory.mktemp("ws-daemon")
    d = Daemon(home=root / "home", claude_dir=root / "claude").start()
    yield d
    d.stop()
    assert_no_app_errors(d.logs())


def assert_no_app_errors(logs: str) -> None:
    """No exception went through our code or out of the app (uvicorn's own protocol errors,
    e.g. its traceback for a client's invalid UTF-8 text frame, are uvicorn's to log)."""
    assert "Exception in ASGI application" not in logs, logs
    assert f'File "{REPO / "purplemux"}' not in logs, logs


BAD_FRAMES = {
    "invalid-utf8-text": frame(0x1, b'{"type": "visibility", "x": "\xff\xfe\xed\xa0\x80"}'),
    "unmasked": bytes([0x81, 0x05]) + b"hello",
    "reserved-opcode": frame(0x3, b"?"),
    "rsv-bits": bytes([0xF1]) + frame(0x1, b"x")[1:],
    "continuation-first": frame(0x0, b"orphan"),
    "huge-declared": frame(0x2, b"\x00" * 1024, length=64 << 20),
    "fragmented-ping": frame(0x9, b"p", fin=False),
    "close-bad-code": frame(0x8, (999).to_bytes(2, "big")),
    "binary-garbage": frame(0x2, os.urandom(70_000)),
}


@pytest.mark.parametrize("name", sorted(BAD_FRAMES))
def test_malformed_frames_close_the_connection_not_the_daemon(daemon: Daemon, name: str) -> None:
    sock, head = upgrade(daemon)
    with sock:
        assert head.startswith(b"HTTP/1.1 101"), head
        sock.sendall(BAD_FRAMES[name])
        drain_until_closed(sock, head)
    assert daemon.api("GET", "/api/health")["status"] == "ok"
    sock, head = upgrade(daemon)
    with sock:
        assert head.startswith(b"HTTP/1.1 101"), head
        sock.sendall(frame(0x8, (1000).to_bytes(2, "big")))
        got = drain_until_closed(sock, head)
    assert b'"snapshot"' in head + got


def test_foreign_origin_upgrade_is_refused_on_a_real_server(daemon: Daemon) -> None:
    sock, head = upgrade(daemon, {"Origin": "http://evil.example"})
    with sock:
        assert not head.startswith(b"HTTP/1.1 101"), head
        assert head.split(b" ", 2)[1] == b"403", head


def test_hostile_json_from_an_authenticated_client_leaves_sessions_alone(daemon: Daemon) -> None:
    """Only "visibility" is read from clients: nothing sent on the feed can change a session."""
    before = daemon.sessions()
    sock, head = upgrade(daemon)
    with sock:
        assert head.startswith(b"HTTP/1.1 101")
        for payload in (
            {"type": "dismiss", "id": "x"},
            {"type": "session", "session": {"id": "injected", "state": "review"}},
            {"type": "sessions", "sessions": [{"id": "injected", "state": "review"}]},
            {"session_id": "injected", "hook_event_name": "Stop"},
        ):
            sock.sendall(frame(0x1, json.dumps(payload).encode()))
        sock.sendall(frame(0x8, (1000).to_bytes(2, "big")))
        drain_until_closed(sock, head)
    assert daemon.sessions() == before
