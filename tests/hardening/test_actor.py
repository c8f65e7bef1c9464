"""The login cookie only views; acting needs the login's page key (or the token).

Cookies ignore ports, so every server on 127.0.0.1 the user opens receives the dashboard's login
cookie and can replay it. Here such a server is this test holding only the Cookie header: it
must not read a pane, answer, focus or touch push subscriptions, while the page signed in by the
login link (the cookie and its page key) and the token still can. Push subscriptions belong to
the login that made them and end with it; deliveries go through the fake push service, which
verifies VAPID and decrypts. Absence is proven by order: a later push arrives and nothing else.
"""

from __future__ import annotations

import http.client
import json
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect

from purplemux.io import logins
from purplemux.io.store import MIGRATIONS
from purplemux.server.auth import PAGE_KEY_HEADER
from purplemux.server.notifications import MAX_SUBSCRIPTIONS
from tests.hardening.helpers import client_and_token, spy_compare_digest
from tests.notify.fake_push_service import BrowserSubscription, FakePushService
from tests.support import Daemon, run_hook, wait_for
from tests.support.logins import Login, http_login, subscription_logins
from tests.support.screens import asking, call, capture, dialog_pane, window_active

SUBSCRIPTIONS = "/api/push/subscriptions"


def send(
    d: Daemon, method: str, path: str, headers: dict[str, str], body: Any = None
) -> tuple[int, Any]:
    """One request with exactly these headers: (status, JSON body or None)."""
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=40)
    data = json.dumps(body).encode() if body is not None else None
    sent = {**headers, "Content-Type": "application/json"} if data is not None else headers
    try:
        conn.request(method, path, body=data, headers=sent)
        r = conn.getresponse()
        raw = r.read()
        try:
            return r.status, json.loads(raw)
        except ValueError:
            return r.status, None
    finally:
        conn.close()


def bearer(d: Daemon) -> dict[str, str]:
    return {"Authorization": f"Bearer {d.token}"}


def answers(d: Daemon, sid: str) -> list[dict[str, Any]]:
    events = d.api("GET", f"/api/sessions/{sid}/events")["events"]
    return [e for e in events if e["kind"] == "answer"]


def review(d: Daemon, sid: str, message: str) -> None:
    """A turn that ends: one entry into review, one push."""
    for name, extra in (
        ("UserPromptSubmit", {"prompt": "go"}),
        ("Stop", {"last_assistant_message": message}),
    ):
        payload = {"session_id": sid, "hook_event_name": name, "cwd": "/w/shop-api", **extra}
        run_hook(d.home, payload, pane="%7")


def bodies(service: FakePushService, sub: BrowserSubscription, n: int) -> list[str]:
    """The bodies of `sub`'s pushes once there are at least `n`."""
    got = wait_for(lambda: (lambda x: x if len(x) >= n else None)(service.for_subscription(sub)))
    return [str(d.json["body"]) for d in got]


def stored_logins(d: Daemon) -> list[str]:
    """The login each stored push subscription belongs to (what the daemon still keeps)."""
    return subscription_logins(d.home)


@pytest.fixture
def service() -> Iterator[FakePushService]:
    with FakePushService() as s:
        yield s


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A tmux pane showing a Claude permission dialog, and a second window in front of it."""
    with dialog_pane(tmp_path) as (sock, pane_id):
        subprocess.run(["tmux", "-S", sock, "new-window", "-t", "w"], check=True)
        assert not window_active(sock, pane_id)
        yield sock, pane_id


def test_a_replayed_cookie_can_view_but_not_act(
    daemon: Daemon, pane: tuple[str, str], service: FakePushService
) -> None:
    sock, pane_id = pane
    asking(daemon, "s1", sock, pane_id)
    wait_for(lambda: (daemon.session("s1") or {}).get("state") == "needs-input")
    login = http_login(daemon.port, daemon.token)
    replay = login.cookie_only
    # What the cookie grants: the dashboard and its data.
    assert send(daemon, "GET", "/", replay)[0] == 200
    assert send(daemon, "GET", "/api/sessions", replay)[0] == 200

    # The right prompt id (as the user's own page would have it) does not help the replay.
    status, shown = call(daemon, "GET", "/api/sessions/s1/screen")
    assert status == 200 and shown["prompt"]["kind"] == "permission"
    prompt_id = shown["prompt"]["id"]
    before = capture(sock, pane_id)
    refused = [
        send(daemon, "GET", "/api/sessions/s1/screen", replay),
        send(
            daemon,
            "POST",
            "/api/sessions/s1/answer",
            replay,
            {"prompt_id": prompt_id, "option": "Yes"},
        ),
        send(daemon, "POST", "/api/sessions/s1/focus", replay, {}),
        send(daemon, "GET", "/api/push/key", replay),
        send(daemon, "POST", SUBSCRIPTIONS, replay, service.subscribe().to_json()),
        send(daemon, "DELETE", SUBSCRIPTIONS, replay, {"endpoint": "https://push.example/x"}),
    ]
    for status, reply in refused:
        assert status == 403, reply
        assert "purplemux open" in reply["error"] and "Bearer" in reply["error"]
    # A wrong key, or the key of another login, is no better than none.
    other = http_login(daemon.port, daemon.token)
    for key in (login.key[:-1] + ("A" if login.key[-1] != "A" else "B"), other.key, ""):
        headers = {**replay, PAGE_KEY_HEADER: key}
        assert send(daemon, "GET", "/api/sessions/s1/screen", headers)[0] == 403
        assert send(daemon, "POST", "/api/sessions/s1/focus", headers, {})[0] == 403
    assert capture(sock, pane_id) == before  # nothing was typed
    assert answers(daemon, "s1") == []
    assert not window_active(sock, pane_id)  # nothing was focused
    assert stored_logins(daemon) == []  # nothing was registered

    # The page signed in by the login link holds the key: it acts.
    status, shown = send(daemon, "GET", "/api/sessions/s1/screen", login.page)
    assert status == 200 and shown["prompt"]["id"] == prompt_id
    status, reply = send(daemon, "POST", "/api/sessions/s1/focus", login.page, {})
    assert status == 200, reply
    assert window_active(sock, pane_id)
    # (The pane only shows a dialog: the digit reaches it, the dialog stays: 504; but it was typed)
    body = {"prompt_id": prompt_id, "option": "Yes", "by": "page"}
    status, reply = send(daemon, "POST", "/api/sessions/s1/answer", login.page, body)
    assert status == 504 and reply["keys"] == ["1"], reply
    assert [(e["by"], e["option"]) for e in answers(daemon, "s1")] == [("page", "Yes")]
    assert send(daemon, "GET", "/api/push/key", login.page)[0] == 200
    sub = service.subscribe()
    assert send(daemon, "POST", SUBSCRIPTIONS, login.page, sub.to_json())[0] == 201
    assert len(stored_logins(daemon)) == 1
    review(daemon, "r1", "the page's own device hears of it")
    assert bodies(service, sub, 1) == ["the page's own device hears of it"]


def page_and_cli_subscriptions(
    daemon: Daemon, service: FakePushService, login: Login
) -> tuple[BrowserSubscription, BrowserSubscription]:
    """Two devices subscribed: one by the page (its login's key), one with the CLI's token."""
    page_sub, cli_sub = service.subscribe(), service.subscribe()
    assert send(daemon, "POST", SUBSCRIPTIONS, login.page, page_sub.to_json())[0] == 201
    assert send(daemon, "POST", SUBSCRIPTIONS, bearer(daemon), cli_sub.to_json())[0] == 201
    return page_sub, cli_sub


def test_logout_all_ends_the_key_and_the_logins_subscriptions(
    daemon: Daemon, service: FakePushService
) -> None:
    login = http_login(daemon.port, daemon.token)
    page_sub, cli_sub = page_and_cli_subscriptions(daemon, service, login)
    review(daemon, "a1", "before")
    assert bodies(service, page_sub, 1) == ["before"]
    assert bodies(service, cli_sub, 1) == ["before"]

    assert "signed out 1" in daemon.cli("logout-all", check=True).stdout
    # The key died with its login.
    assert send(daemon, "GET", "/api/push/key", login.page)[0] == 401
    assert send(daemon, "POST", SUBSCRIPTIONS, login.page, service.subscribe().to_json())[0] == 401
    review(daemon, "a2", "after")
    # The token's subscription hears of it; the ended login's does not (it was deleted).
    assert bodies(service, cli_sub, 2) == ["before", "after"]
    assert bodies(service, page_sub, 1) == ["before"]
    assert len(stored_logins(daemon)) == 1
    assert not service.errors


def test_a_new_token_ends_every_subscription(tmp_path: Path, service: FakePushService) -> None:
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude").start()
    login = http_login(d.port, d.token)
    old_page, old_cli = service.subscribe(), service.subscribe()
    assert send(d, "POST", SUBSCRIPTIONS, login.page, old_page.to_json())[0] == 201
    assert send(d, "POST", SUBSCRIPTIONS, bearer(d), old_cli.to_json())[0] == 201
    d.stop()
    (d.home / "token").unlink()
    again = Daemon(home=d.home, claude_dir=d.claude_dir, port=d.port).start()
    try:
        assert send(again, "GET", "/api/push/key", login.page)[0] == 401
        new = service.subscribe()
        assert send(again, "POST", SUBSCRIPTIONS, bearer(again), new.to_json())[0] == 201
        review(again, "t1", "with the new token")
        assert bodies(service, new, 1) == ["with the new token"]
        assert service.for_subscription(old_page) == []
        assert service.for_subscription(old_cli) == []
        assert len(stored_logins(again)) == 1
    finally:
        again.stop()


def fake_subscription(n: int) -> dict[str, Any]:
    return {"endpoint": f"https://push.example/{n}", "keys": {"p256dh": f"P{n}", "auth": f"A{n}"}}


def test_push_subscriptions_are_capped(daemon: Daemon) -> None:
    login = http_login(daemon.port, daemon.token)
    for n in range(MAX_SUBSCRIPTIONS):
        headers = login.page if n % 2 else bearer(daemon)
        assert send(daemon, "POST", SUBSCRIPTIONS, headers, fake_subscription(n))[0] == 201
    status, reply = send(daemon, "POST", SUBSCRIPTIONS, login.page, fake_subscription(99))
    assert status == 409
    assert str(MAX_SUBSCRIPTIONS) in reply["error"] and "logout-all" in reply["error"]
    assert len(stored_logins(daemon)) == MAX_SUBSCRIPTIONS
    # A device already kept may renew its subscription; removing one makes room.
    assert send(daemon, "POST", SUBSCRIPTIONS, login.page, fake_subscription(1))[0] == 201
    # A page removes only its own login's subscriptions (0 is the token's).
    gone = {"endpoint": fake_subscription(0)["endpoint"]}
    assert send(daemon, "DELETE", SUBSCRIPTIONS, login.page, gone)[0] == 404
    gone = {"endpoint": fake_subscription(1)["endpoint"]}
    assert send(daemon, "DELETE", SUBSCRIPTIONS, login.page, gone)[0] == 200
    assert send(daemon, "POST", SUBSCRIPTIONS, login.page, fake_subscription(99))[0] == 201
    # Ended logins' subscriptions do not count: after logout-all there is room again.
    daemon.cli("logout-all", check=True)
    assert send(daemon, "POST", SUBSCRIPTIONS, bearer(daemon), fake_subscription(100))[0] == 201
    assert len(stored_logins(daemon)) == MAX_SUBSCRIPTIONS // 2 + 1


def feed(d: Daemon, login: Login) -> Any:
    """The dashboard's WebSocket as a browser opens it: the cookie, the page's own origin."""
    return connect(
        f"ws://127.0.0.1:{d.port}/api/stream",
        additional_headers={"Cookie": login.cookie, "Origin": d.url},
    )


def focused(ws: Any, key: str | None) -> None:
    """Report the page visible and focused (with its key, if given), and read the snapshot."""
    assert json.loads(ws.recv(timeout=5))["type"] == "snapshot"
    message: dict[str, Any] = {"type": "visibility", "visible": True, "focused": True}
    if key is not None:
        message["key"] = key
    ws.send(json.dumps(message))


def changed_to(ws: Any, d: Daemon, sid: str, state: str) -> None:
    """Run a change through the daemon after what the page sent, and wait until the feed
    shows it: the daemon has read the page's report by then."""
    run_hook(d.home, {"session_id": sid, "hook_event_name": "UserPromptSubmit", "cwd": "/w"})

    def seen() -> bool:
        msg = json.loads(ws.recv(timeout=5))
        return any(s["id"] == sid and s["state"] == state for s in msg.get("sessions", []))

    wait_for(seen)


def stop(d: Daemon, sid: str, message: str) -> None:
    payload = {"session_id": sid, "hook_event_name": "Stop", "last_assistant_message": message}
    run_hook(d.home, {**payload, "cwd": "/w"})


def test_a_focused_page_holds_back_its_own_pushes_only_while_connected(
    daemon: Daemon, service: FakePushService
) -> None:
    login = http_login(daemon.port, daemon.token)
    own, phone = page_and_cli_subscriptions(daemon, service, login)
    with feed(daemon, login) as ws:
        focused(ws, login.key)
        changed_to(ws, daemon, "f1", "busy")
        stop(daemon, "f1", "seen")
        # The other device (another login) is told; the page showing it is not.
        assert bodies(service, phone, 1) == ["seen"]
    # The page is gone: pushes to its login resume (the daemon may take a moment to see the
    # socket close: a turn ends again until one reaches the page's device), and the held-back
    # one never comes.
    for n in range(1, 6):
        review(daemon, f"f{n + 1}", f"nobody looking {n}")
        assert bodies(service, phone, n + 1)[-1] == f"nobody looking {n}"
        if service.for_subscription(own):
            break
    heard = bodies(service, own, 1)
    assert heard and all(b.startswith("nobody looking") for b in heard), heard


def test_a_cookie_only_feed_cannot_silence_pushes(daemon: Daemon, service: FakePushService) -> None:
    login = http_login(daemon.port, daemon.token)
    sub = service.subscribe()
    assert send(daemon, "POST", SUBSCRIPTIONS, login.page, sub.to_json())[0] == 201
    other = http_login(daemon.port, daemon.token)  # a key, but not this cookie's login's
    for n, key in enumerate((None, "", "not-the-key", other.key)):
        with feed(daemon, login) as ws:
            focused(ws, key)
            changed_to(ws, daemon, f"c{n}", "busy")
            stop(daemon, f"c{n}", f"heard {n}")
            assert bodies(service, sub, n + 1)[-1] == f"heard {n}"


def test_the_page_key_is_compared_in_constant_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = spy_compare_digest(monkeypatch, "purplemux.server.auth")
    with client_and_token(tmp_path) as (c, token):
        r = c.get(f"/?token={token}")
        secret = c.cookies[logins.COOKIE]
        key = r.text.split('name="purplemux-page-key" content="', 1)[1].split('"', 1)[0]
        c.cookies.clear()
        cookie = {"Cookie": f"{logins.COOKIE}={secret}"}
        calls.clear()
        wrong = {**cookie, PAGE_KEY_HEADER: key[:-1] + ("x" if key[-1] != "x" else "y")}
        assert c.get("/api/push/key", headers=wrong).status_code == 403
        assert calls, "the page key was not compared with compare_digest"
        calls.clear()
        assert c.get("/api/push/key", headers={**cookie, PAGE_KEY_HEADER: key}).status_code == 200
        assert calls


def test_subscriptions_from_before_logins_owned_them_get_nothing(
    tmp_path: Path, service: FakePushService
) -> None:
    """Schema 5 gives each subscription its login; older ones (which a replayed cookie may have
    made) have none, so they are dropped instead of being pushed to."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    old = service.subscribe()
    db = sqlite3.connect(home / "state.db")
    for version in range(1, 5):
        db.executescript(f"BEGIN; {MIGRATIONS[version]} PRAGMA user_version={version}; COMMIT;")
    db.execute(
        "INSERT INTO push_subscriptions (endpoint, data, created_at) VALUES (?, ?, 0)",
        (old.endpoint, json.dumps(old.to_json())),
    )
    db.commit()
    db.close()
    os.chmod(home / "state.db", 0o600)
    d = Daemon(home=home, claude_dir=tmp_path / "claude").start()
    try:
        new = service.subscribe()
        assert send(d, "POST", SUBSCRIPTIONS, bearer(d), new.to_json())[0] == 201
        review(d, "m1", "after the upgrade")
        assert bodies(service, new, 1) == ["after the upgrade"]
        assert service.for_subscription(old) == []
        [login] = stored_logins(d)  # the token's, now the only one
        assert login
    finally:
        d.stop()
