"""The app through TestClient (lifespan runs): auth, hooks, sessions, dismiss, events, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from purplemux.server.app import create_app
from tests.support import post_hook, settings_for
from tests.support.samples import load_hooks


def test_health_needs_no_token(tmp_path: Path) -> None:
    with TestClient(create_app(settings_for(tmp_path))) as c:
        r = c.get("/api/health")
        assert r.status_code == 200
        assert r.json()["status"] == "ok"


def test_home_and_token_are_private(tmp_path: Path) -> None:
    with TestClient(create_app(settings_for(tmp_path))):
        home = tmp_path / "home"
        assert home.stat().st_mode & 0o777 == 0o700
        assert (home / "token").stat().st_mode & 0o777 == 0o600
        assert (home / "auth-header").stat().st_mode & 0o777 == 0o600
        token = (home / "token").read_text().strip()
        assert len(token) >= 32
        assert (home / "auth-header").read_text() == f"Authorization: Bearer {token}\n"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/sessions"),
        ("GET", "/api/sessions/x"),
        ("POST", "/api/sessions/x/dismiss"),
        ("GET", "/api/sessions/x/events"),
        ("POST", "/api/hooks"),
    ],
)
def test_endpoints_need_the_token(tmp_path: Path, method: str, path: str) -> None:
    with TestClient(create_app(settings_for(tmp_path))) as c:
        r = c.request(method, path, json={})
        assert r.status_code == 401
        assert "token" in r.json()["error"]
        r = c.request(method, path, json={}, headers={"Authorization": "Bearer wrong"})
        assert r.status_code == 401


def test_login_link_sets_cookie_and_hands_the_page_its_key(tmp_path: Path) -> None:
    with TestClient(create_app(settings_for(tmp_path))) as c:
        token = (tmp_path / "home" / "token").read_text().strip()
        assert c.get("/api/sessions").status_code == 401
        r = c.get(f"/?token={token}", follow_redirects=False)
        assert r.status_code == 200
        assert 'src="/static/signin.js"' in r.text and 'name="purplemux-page-key"' in r.text
        cookie = r.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
        assert c.get("/api/sessions").status_code == 200
        assert c.get("/?token=nope", follow_redirects=False).status_code == 401


def test_real_scenario_through_the_api(client: TestClient) -> None:
    for n, line in enumerate(load_hooks()):
        r = post_hook(client, line["payload"], n, line["ts"], line["tmux_pane"])
        assert r.status_code == 202, r.text
    live = client.get("/api/sessions").json()["sessions"]
    assert live == []
    everything = client.get("/api/sessions?all=1").json()["sessions"]
    # The second session is the first one /clear'ed in the same pane: its row replaced the first.
    assert {s["id"][:4] for s in everything} == {"d609"}
    assert all(s["ended"] and s["alive"] is False for s in everything)
    first = client.get("/api/sessions/054cd48c-887f-45cb-8bc0-ebcb7e4963ae").json()
    assert first["ended"] and first["superseded"]
    assert first["project"] == "proj"
    assert first["tmux"]["pane"] == "%0"
    assert first["tmux"]["socket"] == "/tmp/tmux-1000/default"
    events = client.get("/api/sessions/054cd48c-887f-45cb-8bc0-ebcb7e4963ae/events").json()
    names = [e["name"] for e in events["events"]]
    assert names[:3] == ["SessionStart", "UserPromptSubmit", "Stop"]
    assert len(names) == 19 and names[-1] == "superseded"  # 18 hooks, then the daemon's note
    assert all({"name", "at", "source"} <= set(e) for e in events["events"])


def test_duplicate_event_changes_nothing(client: TestClient) -> None:
    base = {"session_id": "dup", "cwd": "/w/p", "transcript_path": "/w/t.jsonl"}
    post_hook(client, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "x"}, 1, 100.0)
    post_hook(client, {**base, "hook_event_name": "Stop"}, 2, 101.0)
    before = client.get("/api/sessions/dup").json()
    r = post_hook(client, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "x"}, 1, 100.0)
    assert r.status_code == 202
    after = client.get("/api/sessions/dup").json()
    assert after == before
    assert after["state"] == "review"
    assert len(client.get("/api/sessions/dup/events").json()["events"]) == 2


def test_out_of_order_arrival_is_put_in_place(client: TestClient) -> None:
    base = {"session_id": "ooo", "cwd": "/w/p"}
    post_hook(client, {**base, "hook_event_name": "Stop"}, 2, 101.0)
    post_hook(client, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "x"}, 1, 100.0)
    assert client.get("/api/sessions/ooo").json()["state"] == "review"


def test_dismiss(client: TestClient) -> None:
    base = {"session_id": "d1", "cwd": "/w/p"}
    post_hook(client, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "x"}, 1, 100.0)
    r = client.post("/api/sessions/d1/dismiss")
    assert r.status_code == 409
    assert "busy" in r.json()["error"]
    post_hook(client, {**base, "hook_event_name": "Stop"}, 2, 101.0)
    r = client.post("/api/sessions/d1/dismiss")
    assert r.status_code == 200
    assert r.json()["state"] == "idle"
    assert client.get("/api/sessions/d1").json()["state"] == "idle"
    assert client.post("/api/sessions/nope/dismiss").status_code == 404


def test_unknown_session_is_404(client: TestClient) -> None:
    r = client.get("/api/sessions/nope")
    assert r.status_code == 404
    assert "nope" in r.json()["error"]
    assert client.get("/api/sessions/nope/events").status_code == 404


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"not json", 400),
        (b"[1, 2]", 422),
        (b'{"hook_event_name": "Stop"}', 422),
        (b'{"session_id": 5, "hook_event_name": "Stop"}', 422),
        (b'{"session_id": "a"}', 422),
        (b'{"session_id": "", "hook_event_name": "Stop"}', 422),
        (b"\xff\xfe\x00garbage", 400),
        (b"[" * 100000 + b"]" * 100000, 400),
    ],
)
def test_bad_hook_bodies_get_a_reason_and_change_nothing(
    client: TestClient, body: bytes, status: int
) -> None:
    r = client.post("/api/hooks", content=body)
    assert r.status_code == status
    assert r.json()["error"]
    assert client.get("/api/sessions?all=1").json()["sessions"] == []


def test_body_over_one_megabyte_is_413(client: TestClient) -> None:
    # Short strings (no long one to cut, see purplemux/sources/trim.py): past 1 MiB still.
    payload = {"session_id": "big", "hook_event_name": "Stop", "x": ["a"] * (1024 * 1024 // 2)}
    r = client.post("/api/hooks", content=json.dumps(payload))
    assert r.status_code == 413
    assert "larger" in r.json()["error"]
    assert client.get("/api/sessions?all=1").json()["sessions"] == []


def test_hook_without_headers_still_counts(client: TestClient) -> None:
    r = client.post(
        "/api/hooks", json={"session_id": "plain", "hook_event_name": "UserPromptSubmit"}
    )
    assert r.status_code == 202
    assert client.get("/api/sessions/plain").json()["state"] == "busy"


def test_long_fields_are_capped(client: TestClient) -> None:
    payload = {
        "session_id": "cap",
        "hook_event_name": "Stop",
        "last_assistant_message": "x" * 500_000,
        "cwd": "/" + "d" * 100_000,
    }
    post_hook(client, {**payload, "hook_event_name": "UserPromptSubmit"}, 0, 1.0)
    assert post_hook(client, payload, 1, 2.0).status_code == 202
    s = client.get("/api/sessions/cap").json()
    assert len(s["snippet"]) == 200
    assert len(s["cwd"]) <= 4096


PROMPT = b'{"session_id": "a", "hook_event_name": "UserPromptSubmit"}'
HOOK_CASES: list[tuple[str, dict[str, str], bytes]] = [
    ("no token", {}, b'{"session_id": "a", "hook_event_name": "Stop"}'),
    ("wrong token", {"Authorization": "Bearer wrong"}, b"{}"),
    ("not JSON", {}, b"\xff\xfe\x00garbage"),
    ("too deep", {}, b"[" * 100000 + b"]" * 100000),
    ("too large", {}, b'{"x": [' + b"1," * (1024 * 1024) + b"1]}"),  # nothing long to cut
    ("not an object", {}, b"[1, 2]"),
    ("no session id", {}, b'{"hook_event_name": "Stop"}'),
    ("stored", {"X-Purplemux-Event-Id": "same-id"}, PROMPT),
    ("a replay", {"X-Purplemux-Event-Id": "same-id"}, PROMPT),
    ("cross-origin", {"Origin": "http://evil.example"}, b"{}"),
]


class _Counted:
    """An ASGI app in front of another, counting the requests that reach it."""

    def __init__(self, app: Any, seen: list[str]) -> None:
        self.app, self.seen, self.state = app, seen, app.state

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.seen.append(scope["path"])
        await self.app(scope, receive, send)


def test_the_hook_path_in_front_answers_as_the_route_does(tmp_path: Path) -> None:
    """The usual hook call is answered in front of the daemon's app (server/hookpath.py, what
    `serve` runs: Starting): every answer, refusals included, is the one the app's route gives
    on its own, and so are the sessions it leaves; only the usual calls skip the app."""
    from purplemux.server.starting import Starting

    answers = []
    for front in (True, False):
        settings = settings_for(tmp_path / ("front" if front else "route"))
        served = Starting(settings) if front else create_app(settings)
        through_app: list[str] = []
        seen = []
        with TestClient(served) as c:
            if isinstance(served, Starting):
                assert c.get("/api/sessions").status_code == 401  # answered once it has loaded
                assert served.hooks is not None and served.app is not None
                app = served.app
                served.hooks.app = _Counted(app, through_app)
            else:
                app = served
            token = app.state.runtime.token  # type: ignore[attr-defined]
            for name, headers, body in HOOK_CASES:
                wrong = name in ("no token", "wrong token")
                auth = {} if wrong else {"Authorization": f"Bearer {token}"}
                before = len(through_app)
                r = c.post("/api/hooks", content=body, headers={**auth, **headers})
                kept = {k: v for k, v in r.headers.items() if k != "date"}
                seen.append((name, r.status_code, r.content, kept))
                if front:  # the usual calls (stored, and its replay) never reach the app
                    assert (len(through_app) > before) is (name not in ("stored", "a replay"))
            sessions = c.get("/api/sessions?all=1", headers={"Authorization": f"Bearer {token}"})
            states = [(s["id"], s["state"], s["seq"]) for s in sessions.json()["sessions"]]
        answers.append((seen, states))
    assert answers[0] == answers[1]
    codes = [code for _, code, _, _ in answers[0][0]]
    assert codes == [401, 401, 400, 400, 413, 422, 422, 202, 202, 403]
    assert answers[0][1] == [("a", "busy", 1)]
