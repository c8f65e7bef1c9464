"""The dashboard login: a secret of its own in the cookie (never the token), revocable."""

from __future__ import annotations

import http.client
import stat
from pathlib import Path
from urllib.parse import quote

import pytest

from purplemux.io import logins
from tests.hardening.helpers import client_and_token, spy_compare_digest
from tests.support import Daemon
from tests.support.logins import http_login


def get(d: Daemon, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=5)
    conn.request("GET", path, headers=headers or {})
    r = conn.getresponse()
    r.read()
    conn.close()
    return r


def sign_in(d: Daemon) -> dict[str, str]:
    login = http_login(d.port, d.token)
    assert d.token not in login.cookie
    return login.cookie_only


def test_the_token_as_a_cookie_opens_nothing(daemon: Daemon) -> None:
    """A cookie that holds the token (what older versions set) is no credential any more."""
    old = {"Cookie": f"{logins.LEGACY_COOKIE}={daemon.token}"}
    assert get(daemon, "/api/sessions", old).status == 401
    assert get(daemon, "/", old).status == 401  # the login page, not the dashboard
    jar = sign_in(daemon)
    assert get(daemon, "/api/sessions", jar).status == 200
    assert get(daemon, "/", jar).status == 200


def test_login_replaces_the_old_token_cookie(daemon: Daemon) -> None:
    r = get(daemon, f"/?token={quote(daemon.token)}")
    cleared = [c for c in r.headers.get_all("set-cookie") or [] if c.startswith("purplemux_token=")]
    assert len(cleared) == 1 and "Max-Age=0" in cleared[0]


def test_a_login_cookie_cannot_post_hook_events(daemon: Daemon) -> None:
    jar = sign_in(daemon)
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=5)
    conn.request("POST", "/api/hooks", b'{"session_id": "x", "hook_event_name": "Stop"}', jar)
    assert conn.getresponse().status == 401
    conn.close()
    assert daemon.sessions() == []


def test_logout_all_signs_every_browser_out(daemon: Daemon) -> None:
    first, second = sign_in(daemon), sign_in(daemon)
    assert get(daemon, "/api/sessions", first).status == 200
    assert get(daemon, "/api/sessions", second).status == 200
    assert "signed out 2" in daemon.cli("logout-all", check=True).stdout
    assert get(daemon, "/api/sessions", first).status == 401
    assert get(daemon, "/api/sessions", second).status == 401
    third = sign_in(daemon)  # the link still works
    assert get(daemon, "/api/sessions", third).status == 200
    assert get(daemon, "/api/sessions", {"Authorization": f"Bearer {daemon.token}"}).status == 200
    mode = stat.S_IMODE((daemon.home / logins.FILE).stat().st_mode)
    assert mode == 0o600


def test_a_new_token_voids_every_login(daemon: Daemon) -> None:
    jar = sign_in(daemon)
    daemon.stop()
    (daemon.home / "token").unlink()
    again = Daemon(home=daemon.home, claude_dir=daemon.claude_dir, port=daemon.port).start()
    try:
        assert get(again, "/api/sessions", jar).status == 401
        assert get(again, "/api/sessions", sign_in(again)).status == 200
    finally:
        again.stop()


def test_the_login_cookie_is_compared_in_constant_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = spy_compare_digest(monkeypatch, "purplemux.io.logins")
    with client_and_token(tmp_path) as (c, token):
        assert c.get(f"/?token={token}", follow_redirects=False).status_code == 200
        secret = c.cookies[logins.COOKIE]
        c.cookies.clear()
        calls.clear()
        assert (
            c.get(
                "/api/sessions", headers={"Cookie": f"{logins.COOKIE}={secret[:-1]}x"}
            ).status_code
            == 401
        )
        assert calls, "the cookie was not compared with compare_digest"
        calls.clear()
        assert (
            c.get("/api/sessions", headers={"Cookie": f"{logins.COOKIE}={secret}"}).status_code
            == 200
        )
        assert calls
