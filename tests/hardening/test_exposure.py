"""Exposure: loopback only, the token on everything, same-origin writes, no CORS, no leaks."""

from __future__ import annotations

import http.client
import os
import pty
import re
import select
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import uvicorn
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from purplemux import cli
from purplemux.io import logins
from purplemux.io.settings import Settings
from purplemux.server.app import create_app
from purplemux.server.serve import is_loopback
from tests.hardening.helpers import (
    Endpoint,
    client_and_token,
    concrete,
    endpoints,
    spy_compare_digest,
)
from tests.support import Daemon, free_port, settings_for
from tests.support.logins import http_login

PUBLIC = {
    Endpoint("http", "GET", "/api/health"),
    Endpoint("mount", "MOUNT", "/static"),
    # The installable app's files, like the static ones: no session data in any of them
    # (tests/browser/test_app.py checks the shell holds none).
    Endpoint("http", "GET", "/manifest.webmanifest"),
    Endpoint("http", "GET", "/app-shell"),
    Endpoint("http", "GET", "/static/sw.js"),
}
EVIL = "http://evil.example"


@pytest.fixture
def app_client(tmp_path: Path) -> Iterator[tuple[TestClient, str]]:
    """A client with no credentials, and the token it could use."""
    with client_and_token(tmp_path) as (c, token):
        yield c, token


def login(c: TestClient, token: str) -> dict[str, str]:
    """Sign in as a browser would; the Cookie header that browser then sends."""
    r = c.get(f"/?token={token}", follow_redirects=False)
    assert r.status_code == 200  # the page that keeps the page key, then opens the dashboard
    secret = SimpleCookie(r.headers["set-cookie"])[logins.COOKIE].value
    c.cookies.clear()  # each test sends the header it means to, nothing kept by the client
    return {"Cookie": f"{logins.COOKIE}={secret}"}


def app_endpoints(tmp_path: Path) -> list[Endpoint]:
    return endpoints(create_app(settings_for(tmp_path)))


# --- loopback by default ------------------------------------------------------------------------


def test_loopback_is_the_default() -> None:
    assert Settings.from_env({}).host == "127.0.0.1"
    for host in ("127.0.0.1", "127.8.9.1", "::1", "localhost"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "::", "192.0.2.7", "example.com", "127.0.0.1.nip.io", ""):
        assert not is_loopback(host), host


@pytest.fixture
def no_uvicorn(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """uvicorn never really starts; records the hosts it would have listened on."""
    started: list[str] = []

    def run(self: uvicorn.Server, *args: Any, **kwargs: Any) -> None:
        started.append(self.config.host)

    monkeypatch.setattr(uvicorn.Server, "run", run)
    monkeypatch.setattr("logging.basicConfig", lambda **kwargs: None)
    monkeypatch.setenv("PURPLEMUX_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.delenv("PURPLEMUX_HOST", raising=False)
    monkeypatch.setenv("PURPLEMUX_PORT", str(free_port()))
    return started


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7", "example.com"])
def test_another_address_is_refused_without_allow_remote(
    no_uvicorn: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path, host: str
) -> None:
    assert cli.main(["serve", "--host", host]) == 2
    err = capsys.readouterr().err
    assert host in err and "--allow-remote" in err and "SECURITY.md" in err
    assert no_uvicorn == []
    assert not (tmp_path / "home").exists()  # refused before making a token


def test_the_host_from_the_environment_is_refused_too(
    no_uvicorn: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PURPLEMUX_HOST", "0.0.0.0")
    assert cli.main(["serve"]) == 2
    assert no_uvicorn == []


def test_allow_remote_warns_and_starts(
    no_uvicorn: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert cli.main(["serve", "--host", "0.0.0.0", "--allow-remote"]) == 0
    out = capsys.readouterr()
    assert "WARNING" in out.err and "0.0.0.0" in out.err
    assert no_uvicorn == ["0.0.0.0"]
    token = (tmp_path / "home" / "token").read_text().strip()
    assert token not in out.out + out.err  # stdout is not a terminal here


# --- the token on every endpoint ----------------------------------------------------------------


def test_the_route_table_is_what_we_think(tmp_path: Path) -> None:
    found = app_endpoints(tmp_path)
    assert len(found) >= 12, found
    assert Endpoint("websocket", "WS", "/api/stream") in found
    assert set(found) >= PUBLIC
    paths = {e.path for e in found}
    assert not paths & {"/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect"}


def test_every_endpoint_but_health_static_and_the_app_shell_needs_the_token(
    tmp_path: Path, app_client: tuple[TestClient, str]
) -> None:
    c, token = app_client
    checked = 0
    for e in app_endpoints(tmp_path):
        path = concrete(e.path)
        if e in PUBLIC:
            probe = "/static/app.js" if e.kind == "mount" else path
            assert c.get(probe).status_code == 200, e
            continue
        if e.kind == "websocket":
            for headers in (
                {},
                {"Authorization": "Bearer wrong"},
                {"Cookie": "purplemux_token=no"},
            ):
                with (
                    pytest.raises(WebSocketDisconnect) as refused,
                    c.websocket_connect(path, headers=headers),
                ):
                    pass
                assert refused.value.code == 4401, (e, headers)
            with c.websocket_connect(path, headers={"Authorization": f"Bearer {token}"}) as ws:
                assert ws.receive_json()["type"] == "snapshot"
            checked += 1
            continue
        for headers in (
            {},
            {"Authorization": "Bearer wrong"},
            {"Authorization": f"Bearer {token}x"},
            {"Authorization": f"Basic {token}"},
            {"Cookie": "purplemux_token=wrong"},
            {"Cookie": f"other={token}"},
        ):
            r = c.request(e.method, path, headers=headers, content=b"{}")
            assert r.status_code == 401, (e, headers, r.status_code)
        r = c.request(e.method, path, headers={"Authorization": f"Bearer {token}"}, content=b"{}")
        assert r.status_code != 401, e
        checked += 1
    assert checked >= 10
    for path in ("/docs", "/redoc", "/openapi.json"):
        assert c.get(path).status_code == 404, path


def test_login_cookie_is_httponly_samesite_strict(app_client: tuple[TestClient, str]) -> None:
    c, token = app_client
    r = c.get(f"/?token={token}", follow_redirects=False)
    assert r.status_code == 200  # its script keeps the page key, then replaces it with "/"
    assert "location" not in r.headers
    assert token not in r.text  # the page holds the page key, never the token
    assert _tokens(r.headers, "referrer-policy") == {"no-referrer"}
    assert "no-store" in r.headers["cache-control"]
    raw = [v for v in r.headers.get_list("set-cookie") if v.startswith(logins.COOKIE + "=")]
    assert len(raw) == 1
    cookie = SimpleCookie()
    cookie.load(raw[0])
    morsel = cookie[logins.COOKIE]
    assert token not in morsel.value and len(morsel.value) >= 40  # a secret of its own
    for value in r.headers.get_list("set-cookie"):  # the token is in no cookie at all
        assert token not in value
    assert morsel["httponly"] is True
    assert morsel["samesite"].lower() == "strict"
    assert morsel["path"] == "/"
    assert not morsel["domain"]  # host-only
    bad = c.get(f"/?token={token}x", follow_redirects=False)
    assert bad.status_code == 401
    assert "set-cookie" not in bad.headers


# --- browsers: same-origin writes, no CORS, headers ---------------------------------------------


def state_changing(tmp_path: Path) -> list[Endpoint]:
    return [e for e in app_endpoints(tmp_path) if e.method in {"POST", "PUT", "PATCH", "DELETE"}]


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": EVIL},
        {"Origin": "null"},
        {"Origin": "http://testserver.evil.example"},
        {"Origin": "https://testserver:443"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_cross_origin_writes_are_403_even_with_credentials(
    tmp_path: Path, app_client: tuple[TestClient, str], headers: dict[str, str]
) -> None:
    c, token = app_client
    writes = state_changing(tmp_path)
    assert len(writes) >= 4
    for creds in ({"Authorization": f"Bearer {token}"}, login(c, token)):
        for e in writes:
            body = b'{"session_id": "csrf", "hook_event_name": "UserPromptSubmit"}'
            r = c.request(e.method, concrete(e.path), headers={**creds, **headers}, content=body)
            assert r.status_code == 403, (e, headers, r.status_code)
    sessions = c.get("/api/sessions?all=1", headers={"Authorization": f"Bearer {token}"})
    assert sessions.json()["sessions"] == []  # nothing got through


def test_same_origin_and_non_browser_writes_pass(app_client: tuple[TestClient, str]) -> None:
    c, token = app_client
    body = b'{"session_id": "ok", "hook_event_name": "UserPromptSubmit"}'
    for extra in ({}, {"Origin": "http://testserver"}, {"Sec-Fetch-Site": "same-origin"}):
        r = c.post(
            "/api/hooks", content=body, headers={"Authorization": f"Bearer {token}", **extra}
        )
        assert r.status_code == 202, extra


@pytest.mark.parametrize("origin", [EVIL, "null", "http://testserver.evil.example"])
def test_websocket_upgrade_from_a_foreign_origin_is_refused(
    app_client: tuple[TestClient, str], origin: str
) -> None:
    c, token = app_client
    for creds in ({"Authorization": f"Bearer {token}"}, login(c, token)):
        with (
            pytest.raises(WebSocketDisconnect) as refused,
            c.websocket_connect("/api/stream", headers={**creds, "Origin": origin}),
        ):
            pass
        assert refused.value.code == 4403


def test_dns_rebinding_gets_nothing(app_client: tuple[TestClient, str]) -> None:
    """A rebound name makes Origin and Host agree; its Host is not ours, so: 400, even health."""
    c, token = app_client
    rebound = {"Host": "evil.example:8022", "Origin": "http://evil.example:8022"}
    bearer = {"Authorization": f"Bearer {token}"}
    assert c.get("/api/sessions", headers=rebound).status_code == 400
    assert c.get("/api/health", headers=rebound).status_code == 400
    assert c.post("/api/hooks", headers={**rebound, **bearer}, content=b"{}").status_code == 400


def test_no_cors_grants_anywhere(tmp_path: Path, app_client: tuple[TestClient, str]) -> None:
    c, token = app_client
    for e in app_endpoints(tmp_path):
        if e.kind == "websocket":
            continue
        path = "/static/app.js" if e.kind == "mount" else concrete(e.path)
        preflight = c.options(
            path,
            headers={
                "Origin": EVIL,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        assert not 200 <= preflight.status_code < 300 or not _cors(preflight.headers), e
        assert _cors(preflight.headers) == {}, (e, preflight.headers)
        for creds in ({}, {"Authorization": f"Bearer {token}"}):
            r = c.request(
                e.method if e.kind == "http" else "GET", path, headers={"Origin": EVIL, **creds}
            )
            assert _cors(r.headers) == {}, (e, r.headers)


def _tokens(headers: Any, name: str) -> set[str]:
    """The comma-separated values of every copy of a header."""
    return {t.strip() for v in headers.get_list(name) for t in v.split(",")}


def _cors(headers: Any) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower().startswith("access-control-")}


def test_security_headers_on_pages_api_and_errors(app_client: tuple[TestClient, str]) -> None:
    c, token = app_client
    bearer = {"Authorization": f"Bearer {token}"}
    responses = {
        "login page": c.get("/"),
        "dashboard": c.get("/", headers=login(c, token)),
        "api": c.get("/api/sessions", headers=bearer),
        "health": c.get("/api/health"),
        "static": c.get("/static/app.js"),
        "404": c.get("/api/sessions/none", headers=bearer),
        "401": c.get("/api/sessions"),
        "403": c.post("/api/hooks", headers={**bearer, "Origin": EVIL}, content=b"{}"),
        "422": c.post("/api/hooks", headers=bearer, content=b"[]"),
    }
    assert responses["dashboard"].status_code == 200
    for name, r in responses.items():
        policies = r.headers.get_list("content-security-policy")
        assert policies, name
        for policy in policies:
            directives = {d.split()[0]: d.split()[1:] for d in policy.split(";") if d.strip()}
            script = directives.get("script-src", directives.get("default-src"))
            assert script is not None, (name, policy)
            assert "'unsafe-inline'" not in script and "'unsafe-eval'" not in script, name
            assert "*" not in script, name
        framing = r.headers.get("x-frame-options", "").upper() == "DENY" or any(
            "frame-ancestors 'none'" in p for p in policies
        )
        assert framing, name
        # Set by the page and by the middleware alike: repeated, but never anything else.
        assert _tokens(r.headers, "x-content-type-options") == {"nosniff"}, name


def test_the_dashboard_needs_no_inline_script(app_client: tuple[TestClient, str]) -> None:
    """What the CSP forbids, the page must not rely on: no inline <script>, no on*= handlers."""
    c, token = app_client
    html = c.get("/", headers=login(c, token)).text
    for tag in re.findall(r"<script\b[^>]*>", html, flags=re.I):
        assert "src=" in tag, tag
    assert not re.search(r"<[^>]+\son[a-z]+\s*=", html, flags=re.I)


def test_the_token_is_compared_in_constant_time(
    monkeypatch: pytest.MonkeyPatch, app_client: tuple[TestClient, str]
) -> None:
    c, token = app_client
    calls = spy_compare_digest(monkeypatch, "purplemux.server.auth")
    attempts: list[Callable[[], Any]] = [
        lambda: c.get("/api/sessions", headers={"Authorization": f"Bearer {token}"}),
        lambda: c.get("/api/sessions", headers={"Authorization": "Bearer x"}),
        lambda: c.get("/api/sessions", headers={"Authorization": f"Bearer {token[:-1]}"}),
        lambda: c.get(f"/?token={token}z", follow_redirects=False),
    ]
    for attempt in attempts:
        before = len(calls)
        attempt()
        assert len(calls) > before
        assert token.encode() in calls[-1]
    with c.websocket_connect("/api/stream", headers={"Authorization": f"Bearer {token}"}) as ws:
        ws.receive_json()
    assert token.encode() in calls[-1]


# --- the token never reaches a log; printed only to a terminal ----------------------------------


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude").start()
    yield d
    d.stop()


def request(
    d: Daemon,
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=5)
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    r.read()
    conn.close()
    return r


def test_token_and_cookie_never_reach_the_log(daemon: Daemon) -> None:
    token = daemon.token
    signed_in = http_login(daemon.port, token)
    cookie = signed_in.cookie
    assert token not in cookie
    jar = signed_in.cookie_only
    assert request(daemon, "GET", "/", jar).status == 200
    assert request(daemon, "GET", "/api/sessions", jar).status == 200
    assert request(daemon, "GET", "/api/sessions/nope", jar).status == 404
    assert request(daemon, "GET", "/api/push/key", jar).status == 403  # acting: the key too
    assert request(daemon, "GET", "/api/push/key", signed_in.page).status == 200
    hook = b'{"session_id": "logged", "hook_event_name": "UserPromptSubmit"}'
    assert request(daemon, "POST", "/api/hooks", jar, hook).status == 401  # hooks: the token
    bearer = {"Authorization": f"Bearer {token}"}
    assert request(daemon, "POST", "/api/hooks", bearer, hook).status == 202
    assert request(daemon, "POST", "/api/hooks", {**jar, "Origin": EVIL}, hook).status == 403
    assert request(daemon, "GET", f"/?token={quote(token)}extra").status == 401  # a stale link
    assert (
        request(daemon, "GET", "/api/sessions", {"Authorization": f"Bearer {token}!"}).status == 401
    )
    with connect(f"ws://127.0.0.1:{daemon.port}/api/stream", additional_headers=jar) as ws:
        assert '"snapshot"' in str(ws.recv(timeout=5))
    # A client that puts the token in a WebSocket URL (the daemon never asks for that).
    with pytest.raises(InvalidStatus):
        connect(f"ws://127.0.0.1:{daemon.port}/api/stream?token={token}").close()
    with pytest.raises(InvalidStatus):
        connect(f"ws://127.0.0.1:{daemon.port}/?token={token}").close()
    daemon.stop()
    logs = daemon.logs()
    assert "purplemux listening on" in logs and "purplemux open" in logs  # not a terminal
    secrets = {token, quote(token), quote(token, safe=""), cookie.split("=", 1)[1], signed_in.key}
    for secret in secrets:
        assert secret not in logs, logs
    assert "Bearer" not in logs


def test_the_login_link_is_printed_to_a_terminal_only(tmp_path: Path) -> None:
    """The positive control for the test above: on a pty, serve prints the link."""
    daemon = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude")  # not started
    port, env = daemon.port, daemon.env
    main, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "purplemux", "serve"],
        stdin=subprocess.DEVNULL,
        stdout=child,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    os.close(child)
    seen = b""
    try:
        deadline = time.monotonic() + 20
        while b"?token=" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.2)
            if ready:
                try:
                    seen += os.read(main, 4096)
                except OSError:
                    break
        token = (tmp_path / "home" / "token").read_text().strip()
        assert f"http://127.0.0.1:{port}/?token={token}".encode() in seen, seen
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        os.close(main)


# --- file modes ---------------------------------------------------------------------------------


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_home_0700_and_secrets_0600(daemon: Daemon) -> None:
    home = daemon.home
    assert daemon.api("GET", "/api/push/key")["key"]  # the push key is made when first asked for
    assert mode(home) == 0o700
    for name in ("token", "auth-header", "vapid_private.pem", "port"):
        assert mode(home / name) == 0o600, name


def test_loose_modes_left_by_hand_are_tightened_at_start(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    home.chmod(0o755)
    (home / "token").write_text("a-token-someone-copied-in-" + "x" * 20 + "\n")
    (home / "token").chmod(0o644)
    (home / "auth-header").write_text("Authorization: Bearer something-else\n")
    (home / "auth-header").chmod(0o666)
    with TestClient(create_app(settings_for(tmp_path))):
        assert mode(home) == 0o700
        assert mode(home / "token") == 0o600
        assert mode(home / "auth-header") == 0o600
