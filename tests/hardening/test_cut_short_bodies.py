"""A hook or statusLine body cut short (the client closed before sending all it declared) is an
expected event: a few short log lines, no traceback, nothing stored, and the next good call is
answered."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.support import Daemon, wait_for
from tests.support.hooks import send_hook

CUT = 50
MOST_LINES = 5
"""Log lines about 50 cut-short bodies (one per key and interval, purplemux.io.log_once)."""


def cut_short(d: Daemon, path: str, body: bytes) -> None:
    """POST `path` declaring `body` whole, send half of it, and close."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{d.port}\r\n"
        f"Authorization: Bearer {d.token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", d.port), timeout=10) as s:
        s.sendall(head + body[: len(body) // 2])
        s.shutdown(socket.SHUT_WR)
        while s.recv(4096):  # the server closes its side once it has seen the end
            pass


@pytest.mark.parametrize("path", ["/api/hooks", "/api/statusline"])
def test_cut_short_bodies_log_a_few_short_lines(tmp_path: Path, path: str) -> None:
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude").start(timeout=20)
    try:
        body = json.dumps(
            {"session_id": "cut", "hook_event_name": "SessionStart", "cwd": "/w" * 2000}
        ).encode()
        for _ in range(CUT):
            cut_short(d, path, body)
        after = {"session_id": "after", "hook_event_name": "SessionStart"}
        assert send_hook(d.url, d.token, after, "ev-after") == 202
        wait_for(lambda: d.session("after"), timeout=10)
        assert d.session("cut") is None
        # The server has handled all 50 (each closed connection ends its request): wait for the
        # line about them, which a fixed daemon writes once.
        wait_for(lambda: "cut short" in d.logs(), timeout=10)
    finally:
        d.stop()
    logs = d.logs()
    assert "Traceback" not in logs, logs[-3000:]
    about = [line for line in logs.splitlines() if "cut short" in line]
    assert 1 <= len(about) <= MOST_LINES, about
    assert all(len(line) < 300 for line in about), about
