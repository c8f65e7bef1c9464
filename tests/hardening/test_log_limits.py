"""The log stays bounded: the rate limiter past its key memory, rejected WebSocket handshakes
(each line once held the whole URL), and a full disk failing every write."""

from __future__ import annotations

import http.client
import json
import logging
import resource
import urllib.parse
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from purplemux.io.log_once import KEYS, RateLimitedLog
from tests.support import Daemon

BUDGET = 100
"""Lines one rate-limited log writes per interval in all (SECURITY.md, Limits)."""


def test_the_rate_limiter_keeps_limiting_past_the_keys_it_remembers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """5,000 unreadable files looked at every 2 s for ten minutes: at most BUDGET lines, then
    one line saying how many were held back."""
    now = [0.0]
    warn = RateLimitedLog(logging.getLogger("t.budget"), interval=600, clock=lambda: now[0])
    paths = [f"/w/{n}.jsonl" for n in range(5 * KEYS)]
    with caplog.at_level(logging.WARNING, "t.budget"):
        for _ in range(300):
            for path in paths:
                warn.warning(("read", path), "cannot read transcript %s", path)
            now[0] += 2
        written = [r.getMessage() for r in caplog.records]
        assert len(written) <= BUDGET
        caplog.clear()
        warn.warning(("read", paths[0]), "cannot read transcript %s", paths[0])
    said = [r.getMessage() for r in caplog.records]
    assert any("more lines like the ones above were not written" in line for line in said), said
    assert len(said) <= 2


@pytest.fixture
def daemon(tmp_path: Path) -> Daemon:
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude").start(timeout=20)
    yield d  # type: ignore[misc]
    d.stop()


def test_rejected_handshakes_write_few_short_lines(daemon: Daemon) -> None:
    long_query = urllib.parse.urlencode({"x": "A" * 7_000, "token": "wrong"})
    for _ in range(150):
        with pytest.raises(InvalidStatus):
            connect(f"ws://127.0.0.1:{daemon.port}/api/stream?{long_query}", proxy=None)
    daemon.stop()
    lines = daemon.logs().splitlines()
    handshakes = [line for line in lines if "WebSocket /api/stream" in line]
    assert 1 <= len(handshakes) <= 31, len(handshakes)
    assert max(len(line) for line in lines) < 2200
    assert "wrong" not in daemon.logs()


def test_a_full_disk_writes_a_few_lines_not_one_per_event(tmp_path: Path) -> None:
    """Every file the daemon writes may grow to 1 MiB (RLIMIT_FSIZE, no root needed): the
    database soon cannot grow. Hooks then get 503 (the script would spool them), and the log
    says so a few times, not with a traceback per event."""

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude").start(
        timeout=20, preexec_fn=small_files
    )
    try:
        conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=10)
        statuses = []
        for n in range(400):
            body = json.dumps(
                {"session_id": f"s{n}", "hook_event_name": "UserPromptSubmit", "prompt": "p" * 2000}
            )
            conn.request("POST", "/api/hooks", body, {"Authorization": f"Bearer {d.token}"})
            r = conn.getresponse()
            statuses.append(r.status)
            answer = json.loads(r.read())
            if r.status != 202:
                assert r.status == 503 and "not stored" in answer["error"], answer
        conn.close()
        assert 503 in statuses  # the disk did fill
        assert d.api("GET", "/api/health")["status"] == "ok"
    finally:
        d.stop()
    logs = d.logs()
    assert logs.count("Traceback") <= 2, logs[-3000:]
    assert len(logs.splitlines()) < 150, logs[-3000:]
