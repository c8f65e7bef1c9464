"""DNS rebinding: a request whose Host is not this daemon's gets a 4xx, WebSocket included."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from purplemux.server.host_check import host_name
from tests.support import Daemon


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    tmp_path = tmp_path_factory.mktemp("hosts")
    d = Daemon(
        home=tmp_path / "home",
        claude_dir=tmp_path / "claude",
        env_extra={"PURPLEMUX_ALLOWED_HOSTS": "pmx.example.test, other.test"},
    ).start()
    yield d
    d.stop()


def get(d: Daemon, path: str, host: str, token: bool = False) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=5)
    conn.putrequest("GET", path, skip_host=True)
    conn.putheader("Host", host)
    if token:
        conn.putheader("Authorization", f"Bearer {d.token}")
    conn.endheaders()
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, body


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:{port}", "127.0.0.1.nip.io:{port}", "[::2]:{port}", ""]
)
def test_a_foreign_host_gets_400_with_a_reason(daemon: Daemon, host: str) -> None:
    host = host.format(port=daemon.port)
    for path in ("/api/health", "/static/app.js", "/", "/api/sessions"):
        status, body = get(daemon, path, host, token=True)
        assert status == 400, (path, host, status)
        assert "PURPLEMUX_ALLOWED_HOSTS" in json.loads(body)["error"]


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST", "[::1]:{port}", "pmx.example.test"],
)
def test_our_own_names_are_served(daemon: Daemon, host: str) -> None:
    status, body = get(daemon, "/api/health", host.format(port=daemon.port))
    assert status == 200 and json.loads(body)["status"] == "ok"
    assert get(daemon, "/api/sessions", host.format(port=daemon.port), token=True)[0] == 200


def test_a_websocket_handshake_with_a_foreign_host_is_refused(daemon: Daemon) -> None:
    bearer = {"Authorization": f"Bearer {daemon.token}"}
    with pytest.raises(InvalidStatus) as refused:
        connect(
            f"ws://127.0.0.1:{daemon.port}/api/stream",
            additional_headers={**bearer, "Host": f"evil.example:{daemon.port}"},
        )
    assert 400 <= refused.value.response.status_code < 500
    with connect(f"ws://127.0.0.1:{daemon.port}/api/stream", additional_headers=bearer) as ws:
        assert '"snapshot"' in str(ws.recv(timeout=5))


def test_host_name() -> None:
    assert host_name("LocalHost:8022") == "localhost"
    assert host_name("[::1]:8022") == "::1"
    assert host_name("::1") == "::1"
    assert host_name("example.com.") == "example.com"
