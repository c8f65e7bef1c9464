"""The WS feed (snapshot + gap-free seq), restart (busy -> unknown) and spool replay, in-process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from purplemux.server.app import create_app
from tests.support import post_hook, settings_for


def auth(c: TestClient, tmp_path: Path) -> None:
    c.headers["Authorization"] = "Bearer " + (tmp_path / "home" / "token").read_text().strip()


def test_stream_snapshot_then_gap_free_changes(tmp_path: Path) -> None:
    with TestClient(create_app(settings_for(tmp_path))) as c:
        auth(c, tmp_path)
        base = {"session_id": "w1", "cwd": "/w/proj"}
        post_hook(c, {**base, "hook_event_name": "SessionStart", "source": "startup"}, 0, 1.0)
        with c.websocket_connect("/api/stream") as ws:
            snap = ws.receive_json()
            assert snap["type"] == "snapshot"
            assert [s["id"] for s in snap["sessions"]] == ["w1"]
            seq = snap["seq"]
            post_hook(c, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "go"}, 1, 2.0)
            post_hook(c, {**base, "hook_event_name": "Stop"}, 2, 3.0)
            states = []
            for _ in range(2):
                msg = ws.receive_json()
                assert msg["type"] == "sessions" and msg["removed"] == []
                assert msg["seq"] == seq + 1
                seq = msg["seq"]
                (session,) = msg["sessions"]  # one POST at a time: one change per message
                states.append(session["state"])
            assert states == ["busy", "review"]


def test_stream_refuses_without_token_or_foreign_origin(tmp_path: Path) -> None:
    with TestClient(create_app(settings_for(tmp_path))) as c:
        with pytest.raises(WebSocketDisconnect) as refused, c.websocket_connect("/api/stream"):
            pass
        assert refused.value.code == 4401
        auth(c, tmp_path)
        evil = {"Origin": "http://evil.example"}
        with (
            pytest.raises(WebSocketDisconnect) as foreign,
            c.websocket_connect("/api/stream", headers=evil),
        ):
            pass
        assert foreign.value.code == 4403


def test_restart_turns_busy_into_unknown(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    with TestClient(create_app(settings)) as c:
        auth(c, tmp_path)
        base = {"session_id": "r1", "cwd": "/w/proj"}
        post_hook(c, {**base, "hook_event_name": "UserPromptSubmit"}, 1, 1.0)
        post_hook(c, {"session_id": "r2", "hook_event_name": "Stop"}, 2, 1.0)
        assert c.get("/api/sessions/r1").json()["state"] == "busy"
    with TestClient(create_app(settings)) as c:
        auth(c, tmp_path)
        r1 = _wait_state(c, "r1", "unknown")
        assert r1["last_event"]["name"] == "restart"
        assert c.get("/api/sessions/r2").json()["state"] == "idle"
        names = [e["name"] for e in c.get("/api/sessions/r1/events").json()["events"]]
        assert names == ["UserPromptSubmit", "restart"]


def _wait_state(c: TestClient, sid: str, state: str) -> dict[str, Any]:
    for _ in range(200):
        s: dict[str, Any] = c.get(f"/api/sessions/{sid}").json()
        if s.get("state") == state:
            return s
    raise AssertionError(f"{sid} never became {state}: {s}")


def write_spool(spool: Path, event_id: str, ts_ns: int, payload: dict[str, Any]) -> Path:
    spool.mkdir(parents=True, exist_ok=True)
    path = spool / f"{event_id}.spool"
    head = (
        f"X-Purplemux-Event-Id: {event_id}\nX-Purplemux-Ts: {ts_ns}\n"
        "X-Purplemux-Pane: %3\nX-Purplemux-Tmux: /tmp/tmux-0/default,1,0\n\n"
    )
    path.write_bytes(head.encode() + json.dumps(payload).encode())
    return path


def test_spool_is_drained_in_source_time_order_at_start(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    spool = settings.spool_dir
    base = {"session_id": "sp", "cwd": "/w/proj"}
    # Written out of order: names sort differently from the times inside.
    write_spool(spool, "b", 3_000_000_000, {**base, "hook_event_name": "Stop"})
    write_spool(spool, "a", 2_000_000_000, {**base, "hook_event_name": "UserPromptSubmit"})
    write_spool(spool, "c", 1_000_000_000, {**base, "hook_event_name": "SessionStart"})
    (spool / "junk.spool").write_bytes(b"garbage without headers")
    with TestClient(create_app(settings)) as c:
        auth(c, tmp_path)
        s = c.get("/api/sessions/sp").json()
        assert s["state"] == "review"
        assert s["tmux"]["pane"] == "%3"
        names = [e["name"] for e in c.get("/api/sessions/sp/events").json()["events"]]
        assert names == ["SessionStart", "UserPromptSubmit", "Stop"]
        assert sorted(p.name for p in spool.glob("*.spool")) == []
        assert (spool / "junk.spool.bad").exists()
        # A replayed duplicate changes nothing.
        write_spool(spool, "a", 2_000_000_000, {**base, "hook_event_name": "UserPromptSubmit"})
    with TestClient(create_app(settings)) as c:
        auth(c, tmp_path)
        assert c.get("/api/sessions/sp").json()["state"] == "review"
        assert len(c.get("/api/sessions/sp/events").json()["events"]) == 3


@pytest.mark.parametrize("end_first", [True, False])
def test_after_clear_a_live_client_and_a_fresh_snapshot_agree(
    tmp_path: Path, end_first: bool
) -> None:
    # /clear: SessionEnd for the old id and SessionStart for the new one on the same pane,
    # in either order (hooks race). The old row goes: live, on reload, in the API and the page.
    with TestClient(create_app(settings_for(tmp_path))) as c:
        auth(c, tmp_path)
        old = {"session_id": "old-id", "cwd": "/w/proj"}
        new = {"session_id": "new-id", "cwd": "/w/proj"}
        post_hook(c, {**old, "hook_event_name": "SessionStart", "source": "startup"}, 0, 1.0, "%4")
        with c.websocket_connect("/api/stream") as ws:
            live = {s["id"]: s for s in ws.receive_json()["sessions"]}
            end = {**old, "hook_event_name": "SessionEnd", "reason": "clear"}
            start = {**new, "hook_event_name": "SessionStart", "source": "clear"}
            for n, payload in enumerate((end, start) if end_first else (start, end)):
                post_hook(c, payload, n + 1, 2.0 + n / 10, "%4")
            while "old-id" in live or "new-id" not in live:
                msg = ws.receive_json()
                if msg["type"] == "sessions":
                    live.update((s["id"], s) for s in msg["sessions"])
                    for sid in msg["removed"]:
                        live.pop(sid, None)
        with c.websocket_connect("/api/stream") as fresh:
            snapshot = {s["id"]: s for s in fresh.receive_json()["sessions"]}
        assert set(snapshot) == set(live) == {"new-id"}
        assert snapshot["new-id"]["view"] == live["new-id"]["view"]
        assert [s["id"] for s in c.get("/api/sessions?all=1").json()["sessions"]] == ["new-id"]
        page = c.get("/").text
        assert 'data-session-id="new-id"' in page and "old-id" not in page
        assert c.get("/api/sessions/old-id").json()["superseded"] is True
