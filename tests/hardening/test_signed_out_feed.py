"""The live feed tells a page whose login ended that it is signed out, and nothing else.

`purplemux logout-all` closes the open feeds of the logins it ended, and a page that comes back
with such a cookie gets its WebSocket accepted and closed with 4401 ("signed out"): the close a
page can see (a handshake refused with HTTP 403 reaches it as a bare 1006), so it deletes the rows
it saved for offline use. A cookie that was never a login gets the very same close, and no
message before it; a foreign origin, or no credential at all, is still refused at the handshake.
"""

from __future__ import annotations

import json

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from purplemux.io import logins
from tests.support import Daemon
from tests.support.logins import http_login

SIGNED_OUT = 4401


def feed(d: Daemon, headers: dict[str, str]) -> ClientConnection:
    """WS /api/stream as the dashboard opens it (its own origin), with these headers."""
    return connect(
        f"ws://127.0.0.1:{d.port}/api/stream", additional_headers={"Origin": d.url, **headers}
    )


def closed_with(ws: ClientConnection) -> tuple[int, str, list[str]]:
    """Read until the server closes: (its close code, its reason, the messages before it)."""
    messages: list[str] = []
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            messages.append(str(ws.recv(timeout=60)))
    frame = closed.value.rcvd
    assert frame is not None, "the server sent no close frame"
    return frame.code, frame.reason, messages


def test_logout_all_closes_the_open_feed_as_signed_out(daemon: Daemon) -> None:
    login = http_login(daemon.port, daemon.token)
    token_feed = feed(daemon, {"Authorization": f"Bearer {daemon.token}"})
    with feed(daemon, {"Cookie": login.cookie}) as ws, token_feed:
        assert json.loads(ws.recv(timeout=10))["type"] == "snapshot"
        assert json.loads(token_feed.recv(timeout=10))["type"] == "snapshot"
        assert "signed out 1" in daemon.cli("logout-all", check=True).stdout
        code, reason, _ = closed_with(ws)
        assert (code, reason) == (SIGNED_OUT, "signed out")
        # The CLI's feed (the token) is no login: it stays.
        token_feed.ping().wait(10)
        assert token_feed.close_code is None


def test_an_ended_or_never_valid_cookie_gets_the_same_close_and_nothing_else(
    daemon: Daemon,
) -> None:
    login = http_login(daemon.port, daemon.token)
    daemon.cli("logout-all", check=True)
    never = f"{logins.COOKIE}=not-a-login-of-this-daemon"
    seen = []
    for cookie in (login.cookie, never):
        with feed(daemon, {"Cookie": cookie}) as ws:
            seen.append(closed_with(ws))
    assert seen == [(SIGNED_OUT, "signed out", [])] * 2

    # Refused at the handshake as before: a foreign page, and a client with no credential.
    for headers in (
        {"Cookie": login.cookie, "Origin": "http://evil.example"},
        {"Origin": daemon.url},
    ):
        with pytest.raises(InvalidStatus) as refused:
            connect(f"ws://127.0.0.1:{daemon.port}/api/stream", additional_headers=headers)
        assert refused.value.response.status_code == 403
