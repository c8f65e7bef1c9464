"""Idle and half-sent connections are closed; a flood of idle sockets does not stop hooks."""

from __future__ import annotations

import http.client
import json
import resource
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from purplemux.settings import Settings
from tests.support import Daemon, run_hook, wait_for

FD_LIMIT = 160


def limit_fds() -> None:
    """`ulimit -n FD_LIMIT` for the daemon: idle sockets would soon take every descriptor."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    d = Daemon(
        home=tmp_path / "home",
        claude_dir=tmp_path / "claude",
        env_extra={"PURPLEMUX_REQUEST_TIMEOUT": "1"},
    ).start(timeout=20, preexec_fn=limit_fds)
    yield d
    d.stop()


def closed_by_server(sock: socket.socket, within: float = 8.0) -> bool:
    """True once the server has closed the socket (recv sees EOF or a reset)."""
    sock.settimeout(within)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True


def connect(d: Daemon) -> socket.socket:
    return socket.create_connection(("127.0.0.1", d.port), timeout=5)


def test_a_silent_connection_is_closed(daemon: Daemon) -> None:
    with connect(daemon) as sock:
        assert closed_by_server(sock)


def test_a_half_sent_request_is_closed(daemon: Daemon) -> None:
    with connect(daemon) as sock:
        sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        assert closed_by_server(sock)
    with connect(daemon) as sock:  # headers whole, the body never comes
        sock.sendall(
            b"POST /api/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n"
            b"Authorization: Bearer " + daemon.token.encode() + b"\r\n\r\n{"
        )
        assert closed_by_server(sock)


def test_an_idle_keep_alive_connection_is_closed(daemon: Daemon) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=5)
    conn.request("GET", "/api/health")
    r = conn.getresponse()
    assert r.status == 200 and r.getheader("connection", "keep-alive") != "close"
    r.read()
    assert conn.sock is not None
    assert closed_by_server(conn.sock)
    conn.close()


def test_a_request_that_keeps_coming_is_not_cut(daemon: Daemon) -> None:
    """The timeout is for the whole request: a quick client with several requests is fine."""
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=5)
    for _ in range(5):
        conn.request("GET", "/api/health")
        assert conn.getresponse().read()
        time.sleep(0.3)
    conn.close()


def test_hooks_get_through_a_flood_of_idle_sockets(daemon: Daemon) -> None:
    flood = [connect(daemon) for _ in range(3 * FD_LIMIT)]  # far past the daemon's descriptors
    try:
        # While the flood is still open: a hook POST is answered at once...
        conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=5)
        body = json.dumps({"session_id": "direct", "hook_event_name": "SessionStart"})
        conn.request("POST", "/api/hooks", body, {"Authorization": f"Bearer {daemon.token}"})
        assert conn.getresponse().status == 202
        conn.close()
        # ...and the real hook script delivers too.
        run_hook(daemon.home, {"session_id": "via-script", "hook_event_name": "SessionStart"})
        wait_for(lambda: daemon.session("via-script"), timeout=10)
        open_flood = sum(1 for s in flood if not closed_by_server(s, within=0.01))
        assert open_flood < FD_LIMIT  # the daemon made room instead of running out
    finally:
        for s in flood:
            s.close()
    assert daemon.proc is not None and daemon.proc.poll() is None


def test_the_request_timeout_setting() -> None:
    assert Settings.from_env({}).request_timeout == 10.0
    assert Settings.from_env({"PURPLEMUX_REQUEST_TIMEOUT": "30s"}).request_timeout == 30.0
    with pytest.raises(ValueError, match="PURPLEMUX_REQUEST_TIMEOUT"):
        Settings.from_env({"PURPLEMUX_REQUEST_TIMEOUT": "soon"})
