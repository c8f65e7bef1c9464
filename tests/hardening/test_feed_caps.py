"""Live feeds (WebSockets) count against caps per address and in all: past one, a clear close."""

from __future__ import annotations

import json
import resource
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.support import Daemon, run_hook, wait_for

FD_LIMIT = 160
"""`ulimit -n` of the daemon: 96 connections in all, so 24 feeds, 12 per address."""
FEEDS, PER_ADDRESS = 24, 12
TRY_AGAIN = 1013


def limit_fds() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude").start(
        timeout=20, preexec_fn=limit_fds
    )
    yield d
    d.stop()


def feed(d: Daemon, address: str) -> ClientConnection:
    """A live feed from `address`, authenticated with the token."""
    sock = socket.socket()
    sock.bind((address, 0))
    sock.connect(("127.0.0.1", d.port))
    return connect(
        f"ws://127.0.0.1:{d.port}/api/stream",
        sock=sock,
        additional_headers={"Authorization": f"Bearer {d.token}"},
        proxy=None,
        open_timeout=10,
    )


def first_message(ws: ClientConnection) -> dict[str, object] | ConnectionClosed:
    """The feed's snapshot, or how the daemon closed it."""
    try:
        return dict(json.loads(ws.recv(timeout=10)))
    except ConnectionClosed as closed:
        return closed


def snapshot(ws: ClientConnection) -> bool:
    """The feed was served: its first message is the snapshot."""
    got = first_message(ws)
    return isinstance(got, dict) and got.get("type") == "snapshot"


def refusal(d: Daemon, address: str) -> tuple[int, str]:
    ws = feed(d, address)
    got = first_message(ws)
    ws.close()
    assert isinstance(got, ConnectionClosed), f"a feed past the cap was served: {got}"
    assert got.rcvd is not None
    return got.rcvd.code, got.rcvd.reason


def test_feeds_are_capped_per_address_and_in_all(daemon: Daemon) -> None:
    opened: list[ClientConnection] = []
    try:
        for _ in range(PER_ADDRESS):
            opened.append(feed(daemon, "127.0.0.2"))
            assert snapshot(opened[-1])
        code, reason = refusal(daemon, "127.0.0.2")
        assert code == TRY_AGAIN and "too many live feeds from 127.0.0.2" in reason
        for _ in range(FEEDS - PER_ADDRESS):
            opened.append(feed(daemon, "127.0.0.3"))
            assert snapshot(opened[-1])
        code, reason = refusal(daemon, "127.0.0.4")  # a new address: the total is reached
        assert code == TRY_AGAIN and f"too many live feeds ({FEEDS})" in reason
        # Feeds at their cap leave room for requests: a hook through the real script is stored.
        run_hook(daemon.home, {"session_id": "feeds-full", "hook_event_name": "SessionStart"})
        wait_for(lambda: daemon.session("feeds-full"), timeout=10)
        opened.pop().close()  # one tab closed: a feed from anywhere is served again

        def served() -> bool:
            ws = feed(daemon, "127.0.0.4")
            opened.append(ws)
            return snapshot(ws)

        wait_for(served, timeout=10, interval=0.2)
    finally:
        for ws in opened:
            ws.close()
