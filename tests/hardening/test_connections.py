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

from purplemux.io.settings import Settings
from tests.support import Daemon, run_hook, wait_for

FD_LIMIT = 160


def limit_fds() -> None:
    """`ulimit -n FD_LIMIT` for the daemon: idle sockets would soon take every descriptor."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))


def limited_daemon(tmp_path: Path, request_timeout: str) -> Iterator[Daemon]:
    """A daemon under FD_LIMIT descriptors with that request timeout (s), stopped at the end."""
    d = Daemon.under(tmp_path, PURPLEMUX_REQUEST_TIMEOUT=request_timeout)
    yield d.start(timeout=20, preexec_fn=limit_fds)
    d.stop()


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    yield from limited_daemon(tmp_path, "1")


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


# --- all clients together (issue 22) ------------------------------------------------------------

ADDRESSES = [f"127.0.0.{n}" for n in range(2, 12)]
"""Ten loopback client addresses: each stays under the per-client cap, together far past the
daemon's descriptors."""


def half_sent(d: Daemon, address: str) -> socket.socket | None:
    """A connection from `address` that sent half a request (None once the port refuses)."""
    sock = socket.socket()
    try:
        sock.bind((address, 0))
        sock.settimeout(2)
        sock.connect(("127.0.0.1", d.port))
        sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    except OSError:
        sock.close()
        return None
    return sock


def flood(d: Daemon, per_address: int) -> list[socket.socket]:
    socks = [half_sent(d, a) for a in ADDRESSES for _ in range(per_address)]
    return [s for s in socks if s is not None]


def still_open(socks: list[socket.socket]) -> int:
    return sum(1 for s in socks if not closed_by_server(s, within=0.01))


@pytest.fixture
def slow_daemon(tmp_path: Path) -> Iterator[Daemon]:
    """Half-sent requests stay (a 60 s request timeout): only the caps close them."""
    yield from limited_daemon(tmp_path, "60")


def test_a_flood_from_many_addresses_leaves_room_for_hooks(slow_daemon: Daemon) -> None:
    d = slow_daemon
    socks = flood(d, per_address=40)  # 400 half-sent requests, 40 per address (cap 64 each)
    try:
        assert len(socks) > FD_LIMIT
        # The daemon holds no more than its total (ulimit -n less what it keeps for itself):
        # it pushed the oldest idle ones out instead of running out of descriptors.
        wait_for(lambda: still_open(socks) <= FD_LIMIT - 64, timeout=10)
        # While the flood holds every slot, the real hook script is answered and stored...
        run_hook(d.home, {"session_id": "during-flood", "hook_event_name": "SessionStart"})
        wait_for(lambda: d.session("during-flood"), timeout=10)
        assert d.api("GET", "/api/health")["status"] == "ok"
    finally:
        for s in socks:
            s.close()
    # ...nothing ran out (every part still works), and after the flood all is served.
    run_hook(d.home, {"session_id": "after-flood", "hook_event_name": "SessionStart"})
    wait_for(lambda: d.session("after-flood"), timeout=10)
    assert d.proc is not None and d.proc.poll() is None
    assert "Too many open files" not in d.logs()
    assert not list((d.home / "spool").glob("*.spool"))


def test_out_of_descriptors_the_daemon_keeps_going_and_recovers(tmp_path: Path) -> None:
    """With the connection cap set past `ulimit -n`, a flood really takes every descriptor:
    hooks meanwhile are spooled by the script, the parts that failed (the spool watcher, the
    store) say so once and carry on, and once the flood goes every hook is stored."""
    d = Daemon(
        home=tmp_path / "home",
        claude_dir=tmp_path / "claude",
        env_extra={"PURPLEMUX_REQUEST_TIMEOUT": "60", "PURPLEMUX_MAX_CONNECTIONS": "100000"},
    ).start(timeout=20, preexec_fn=limit_fds)
    try:
        socks = flood(d, per_address=40)
        try:
            for n in range(3):
                run_hook(d.home, {"session_id": f"starved-{n}", "hook_event_name": "SessionStart"})
            # Each delivery ends (answered, or spooled once curl gave up): none is in flight.
            wait_for(lambda: not list((d.home / "spool" / ".tmp").glob("*.json")), timeout=15)
        finally:
            for s in socks:
                s.close()

        def stored(sid: str) -> bool:
            try:
                return d.session(sid) is not None
            except OSError:  # reset: the daemon has not seen the flood go yet
                return False

        for n in range(3):
            wait_for(lambda n=n: stored(f"starved-{n}"), timeout=15)  # type: ignore[misc]
        run_hook(d.home, {"session_id": "recovered", "hook_event_name": "SessionStart"})
        wait_for(lambda: d.session("recovered"), timeout=10)
        assert d.proc is not None and d.proc.poll() is None
        logs = d.logs()
        assert "Traceback" not in logs and " ERROR " not in logs, logs[-3000:]
        said = [line for line in logs.splitlines() if "out of file descriptors" in line]
        parts = [line.split("purplemux.fds: ")[-1].split(":")[0] for line in said]
        assert len(parts) == len(set(parts)), said  # once per part, not per retry
    finally:
        d.stop()
