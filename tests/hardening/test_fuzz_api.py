"""Hostile input to the HTTP API, in process: no 5xx, no uncapped or unencodable field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from purplemux.io.settings import MAX_BODY
from tests.hardening.helpers import (
    ErrorLog,
    any_char,
    assert_event_capped,
    assert_session_capped,
    header_text,
    hook_payloads,
    json_value,
)

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,  # no_errors wraps the whole test, on purpose
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
HOOK_STATUSES = {202, 400, 413, 422}


def assert_healthy(api: TestClient) -> list[dict[str, Any]]:
    """The daemon still answers, and everything it holds is within its caps."""
    assert api.get("/api/health").json()["status"] == "ok"
    r = api.get("/api/sessions", params={"all": "1"})
    assert r.status_code == 200, r.text
    sessions: list[dict[str, Any]] = r.json()["sessions"]
    for session in sessions:
        assert_session_capped(session)
    return sessions


def assert_error_body(r: Any) -> None:
    """Every refusal says why, as JSON."""
    body = r.json()
    assert isinstance(body.get("error"), str) and body["error"], body


@FUZZ
@given(body=st.binary(max_size=4096))
def test_random_bytes_are_refused_cleanly(
    api: TestClient, no_errors: ErrorLog, body: bytes
) -> None:
    r = api.post("/api/hooks", content=body)
    assert r.status_code in HOOK_STATUSES, r.text
    if r.status_code != 202:
        assert_error_body(r)


@FUZZ
@given(value=json_value)
def test_any_json_value_is_refused_or_taken(
    api: TestClient, no_errors: ErrorLog, value: Any
) -> None:
    r = api.post("/api/hooks", content=json.dumps(value))
    assert r.status_code in (202, 422), r.text


@FUZZ
@given(
    payload=hook_payloads(),
    headers=st.dictionaries(
        st.sampled_from(
            ["X-Purplemux-Event-Id", "X-Purplemux-Ts", "X-Purplemux-Pane", "X-Purplemux-Tmux"]
        ),
        st.one_of(header_text, st.sampled_from(["1\u00b2", "\u0661\u0662", "99" * 12, "-1"])),
    ),
)
def test_hook_shaped_payloads_never_5xx_and_stay_capped(
    api: TestClient, no_errors: ErrorLog, payload: dict[str, Any], headers: dict[str, str]
) -> None:
    # Headers go as UTF-8 bytes, as the hook script sends a tmux socket path.
    raw_headers = {k.encode(): v.encode("utf-8") for k, v in headers.items()}
    r = api.post("/api/hooks", content=json.dumps(payload), headers=raw_headers)
    assert r.status_code in (202, 422), r.text
    if r.status_code != 202:
        assert_error_body(r)
    for session in assert_healthy(api):
        if session["id"] == payload["session_id"]:
            events = api.get(f"/api/sessions/{quote(session['id'], safe='')}/events")
            assert events.status_code in (200, 404), events.text
            for event in events.json().get("events", []):
                assert_event_capped(event)


@pytest.mark.parametrize("field", ["tool_input", "prompt", "last_assistant_message", "message"])
def test_nesting_at_every_depth_near_the_parser_limit(
    api: TestClient, no_errors: ErrorLog, field: str
) -> None:
    """The deepest JSON the parser takes must not break what reads it next (digest, _text)."""
    for depth in range(850, 1100):
        name = "PreToolUse" if field == "tool_input" else "StopFailure"
        head = f'{{"session_id": "deep", "hook_event_name": "{name}", "tool_name": "Bash", '
        body = f'{head}"{field}": ' + "[" * depth + "]" * depth + "}"
        r = api.post("/api/hooks", content=body)
        assert r.status_code in (202, 400), (depth, r.status_code, r.text)
    assert_healthy(api)


@pytest.mark.parametrize("depth", [10_000, 200_000])
def test_absurd_nesting_is_400(api: TestClient, no_errors: ErrorLog, depth: int) -> None:
    r = api.post("/api/hooks", content=b'{"a": ' + b"[" * depth + b"]" * depth + b"}")
    assert r.status_code == 400
    assert_error_body(r)


@pytest.mark.parametrize(
    "body",
    [
        b'{"session_id": "\xff\xfe", "hook_event_name": "Stop"}',
        b'{"session_id": "s", "hook_event_name": "Stop", "cwd": "\xed\xa0\x80"}',  # CESU surrogate
        b'{"session_id": "s", "hook_event_name": "Stop"}\x00',
    ],
)
def test_invalid_utf8_is_refused_or_cleaned(
    api: TestClient, no_errors: ErrorLog, body: bytes
) -> None:
    r = api.post("/api/hooks", content=body)
    assert r.status_code in (202, 400, 422), r.text
    if r.status_code != 202:
        assert_error_body(r)
    assert_healthy(api)


@pytest.mark.parametrize(
    "escape",
    ["\\ud800", "\\udfff", "\\ud83d", "a\\ud83d\\ude00b\\ude00"],  # lone halves; a pair is fine
)
def test_lone_surrogates_from_json_escapes_do_not_poison_the_daemon(
    api: TestClient, no_errors: ErrorLog, escape: str
) -> None:
    """JSON.stringify of a string cut through an emoji writes a lone \\udXXX escape."""
    sid = f"sur{len(escape)}{escape[-4:]}"
    e = escape  # written into the JSON text as is: the escapes reach json.loads
    body = (
        f'{{"session_id": "{sid}{e}", "hook_event_name": "StopFailure", "cwd": "/w/{e}",'
        f' "last_assistant_message": "x{e}", "error": "{e}", "transcript_path": "/t/{e}"}}'
    )
    r = api.post("/api/hooks", content=body)
    assert r.status_code == 202, r.text
    sessions = assert_healthy(api)
    [session] = [s for s in sessions if s["id"].startswith(sid)]
    assert api.get(f"/api/sessions/{quote(session['id'], safe='')}").status_code == 200
    assert api.get(f"/api/sessions/{quote(session['id'], safe='')}/events").status_code == 200
    assert api.get("/").status_code == 200
    with api.websocket_connect("/api/stream") as ws:
        snapshot = ws.receive_json()
    assert any(s["id"] == session["id"] for s in snapshot["sessions"])


def test_non_ascii_digits_in_the_time_header_are_ignored(
    api: TestClient, no_errors: ErrorLog
) -> None:
    """str.isdigit() is true for superscripts and non-Latin digits, int() then fails: the time
    must fall back to the arrival time, not raise."""
    for ts in ("1\u00b2", "\u0661\u0662\u0663", "\uff11"):
        r = api.post(
            "/api/hooks",
            content=b'{"session_id": "ts-odd", "hook_event_name": "Stop"}',
            headers={b"X-Purplemux-Ts": ts.encode("utf-8")},
        )
        assert r.status_code == 202, (ts, r.text)


def test_exactly_the_limit_is_taken_one_more_byte_is_413(
    api: TestClient, no_errors: ErrorLog
) -> None:
    head = b'{"session_id": "big-ok", "hook_event_name": "Stop", "last_assistant_message": "'
    tail = b'"}'
    fill = MAX_BODY - len(head) - len(tail)
    body = head + b"y" * fill + tail
    assert len(body) == MAX_BODY
    assert api.post("/api/hooks", content=body).status_code == 202
    # One more byte, in short strings (a long one is cut to fit: purplemux/sources/trim.py).
    short = b'{"session_id": "big-no", "hook_event_name": "Stop", "x": ['
    pad = MAX_BODY + 1 - len(short) - len(b"1]}")
    r = api.post("/api/hooks", content=short + b"1," * (pad // 2) + b" " * (pad % 2) + b"1]}")
    assert r.status_code == 413
    assert_error_body(r)
    big = next(s for s in assert_healthy(api) if s["id"] == "big-ok")
    assert len(big["snippet"]) == 200


def test_multi_megabyte_bodies_are_413_whatever_the_framing(
    api: TestClient, no_errors: ErrorLog
) -> None:
    """Declared length, streamed without a length (chunked), and a lying Content-Length."""
    payload = json.dumps(
        {"session_id": "huge", "hook_event_name": "Stop", "x": ["z"] * (2 * MAX_BODY)}
    ).encode()
    assert api.post("/api/hooks", content=payload).status_code == 413

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(payload), 64 * 1024):
            yield payload[i : i + 64 * 1024]

    assert api.post("/api/hooks", content=chunks()).status_code == 413
    r = api.post("/api/hooks", content=payload[:100], headers={"Content-Length": "99999999999"})
    assert r.status_code == 413
    assert not any(s["id"] == "huge" for s in assert_healthy(api))


@FUZZ
@given(
    sid=st.text(any_char, min_size=1, max_size=300),
    method_path=st.sampled_from(
        [
            ("GET", "/api/sessions/{}"),
            ("GET", "/api/sessions/{}/events"),
            ("POST", "/api/sessions/{}/dismiss"),
        ]
    ),
)
def test_any_session_id_in_a_path(
    api: TestClient, no_errors: ErrorLog, sid: str, method_path: tuple[str, str]
) -> None:
    method, template = method_path
    path = template.format(quote(sid.encode("utf-8", "surrogatepass"), safe=""))
    r = api.request(method, path)
    # 405: an id with a "/" can make the path another route's (".../x/events" to dismiss).
    assert r.status_code in (200, 404, 405, 409), r.text


@FUZZ
@given(value=st.one_of(st.text(any_char), json_value))
def test_any_value_of_the_all_flag(api: TestClient, no_errors: ErrorLog, value: Any) -> None:
    r = api.get("/api/sessions", params={"all": json.dumps(value)})
    assert r.status_code == 200


@FUZZ
@given(
    body=st.one_of(
        json_value,
        st.fixed_dictionaries(
            {
                "endpoint": st.one_of(
                    json_value,
                    st.text(any_char).map(lambda t: "https://push.example/" + t),
                    st.integers(2000, 3000).map(lambda n: "https://" + "e" * n),
                ),
                "keys": st.one_of(
                    json_value,
                    st.fixed_dictionaries({"p256dh": json_value, "auth": json_value}),
                    st.fixed_dictionaries(
                        {
                            "p256dh": st.text(any_char, min_size=1, max_size=60),
                            "auth": st.text(any_char, min_size=1, max_size=60),
                        }
                    ),
                ),
            }
        ),
    ),
    method=st.sampled_from(["POST", "DELETE"]),
)
def test_push_subscriptions_take_any_body(
    api: TestClient, no_errors: ErrorLog, body: Any, method: str
) -> None:
    r = api.request(method, "/api/push/subscriptions", content=json.dumps(body))
    assert r.status_code in (200, 201, 404, 413, 422), r.text
    if r.status_code >= 400:
        assert_error_body(r)
    assert api.get("/api/push/key").status_code == 200


def test_push_subscription_body_over_its_limit_is_413(api: TestClient, no_errors: ErrorLog) -> None:
    body = json.dumps({"endpoint": "https://e.example/" + "a" * 10_000, "keys": {}})
    assert api.post("/api/push/subscriptions", content=body).status_code == 413
    assert api.request("DELETE", "/api/push/subscriptions", content=body).status_code == 413


@pytest.mark.parametrize("where", ["endpoint", "p256dh", "auth"])
def test_push_subscription_with_a_lone_surrogate_is_422(
    api: TestClient, no_errors: ErrorLog, where: str
) -> None:
    keys = {"p256dh": "k", "auth": "a"}
    endpoint = "https://push.example/x"
    if where == "endpoint":
        endpoint += "\ud800"
    else:
        keys[where] += "\udfff"
    sub = {"endpoint": endpoint, "keys": keys}
    for method in ("POST", "DELETE"):
        r = api.request(method, "/api/push/subscriptions", content=json.dumps(sub))
        assert r.status_code in (404, 422), (method, r.text)


@pytest.mark.parametrize("endpoint", ["https://[", "https://", "https://[::1/x", "http:///x"])
def test_push_subscription_without_a_host_is_422_and_the_devices_list_still_answers(
    api: TestClient, no_errors: ErrorLog, endpoint: str
) -> None:
    # Found by schemathesis: "https://[" was stored, then GET /api/push/subscriptions raised
    # "Invalid IPv6 URL" splitting it for the devices view.
    sub = {"endpoint": endpoint, "keys": {"p256dh": "k", "auth": "a"}}
    r = api.post("/api/push/subscriptions", content=json.dumps(sub))
    assert r.status_code == 422, r.text
    assert r.json()["error"] == "subscription.endpoint must name a push service host"
    devices = api.get("/api/push/subscriptions")
    assert devices.status_code == 200, devices.text
    assert all(d["push_service"] for d in devices.json()["devices"])
