"""Usage limits through a real daemon: the statusLine wrapper's input in, GET /api/limits, the
feed's `limits` message, `purplemux status` and `tmux-status`, a restart; and Codex's rollout
readings through the engine."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect as ws_connect

from purplemux.core import events as ev
from purplemux.core.model import RateLimits
from purplemux.daemon.engine import Engine
from purplemux.daemon.limit_keeper import LimitKeeper
from purplemux.io.settings import Settings
from purplemux.io.store_thread import AsyncStore
from tests.support import Daemon, wait_for, wait_for_async

RESET_5H = time.time() + 3 * 3600
RESET_7D = time.time() + 4 * 86400


def statusline_input(five: float, seven: float, sid: str = "sess-1", **more: Any) -> bytes:
    return json.dumps(
        {
            "session_id": sid,
            "transcript_path": f"/tmp/proj/{sid}.jsonl",
            "model": {"id": "claude-opus-5-5", "display_name": "Opus 5.5"},
            "rate_limits": {
                "five_hour": {"used_percentage": five, "resets_at": RESET_5H},
                "seven_day": {"used_percentage": seven, "resets_at": RESET_7D},
            },
            **more,
        }
    ).encode()


def through_wrapper(d: Daemon, data: bytes, user_command: str = "printf 'my line'") -> bytes:
    """Claude's statusLine run as install-hooks sets it: the wrapper the daemon put in its home."""
    done = subprocess.run(
        ["/bin/sh", str(d.home / "statusline.sh"), user_command],
        input=data,
        capture_output=True,
        env={**d.env, "TMPDIR": str(d.home.parent)},
        timeout=20,
    )
    assert (done.returncode, done.stderr) == (0, b"")
    return done.stdout


def post(d: Daemon, body: bytes, token: str | None = None) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(d.url + "/api/statusline", data=body, method="POST")
    req.add_header("Authorization", f"Bearer {token if token is not None else d.token}")
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_wrappers_input_becomes_the_accounts_reading(daemon: Daemon) -> None:
    assert daemon.api("GET", "/api/limits") == []
    assert through_wrapper(daemon, statusline_input(42, 81)) == b"my line"
    (reading,) = wait_for(lambda: daemon.api("GET", "/api/limits"))
    assert reading["agent"] == "claude" and reading["account"] == "claude"  # <root>/claude
    assert reading["five_hour"] == {"used_percent": 42, "resets_at": RESET_5H, "reset": False}
    assert reading["seven_day"] == {"used_percent": 81, "resets_at": RESET_7D, "reset": False}
    # The CLI: a line per account under the table; tmux-status fills {limits}.
    status = daemon.cli("status")
    assert status.returncode == 0, status.stderr
    assert "limits  claude/claude  5h 42% (resets " in status.stdout
    assert "7d 81% (resets " in status.stdout
    tmux = daemon.cli("tmux-status", "--format", "{badge}[{limits}]")
    assert tmux.stdout == "[claude 5h42% 7d81%]\n"


def test_an_api_key_input_changes_nothing_and_bad_input_is_refused(daemon: Daemon) -> None:
    no_limits = json.dumps({"session_id": "k", "transcript_path": "/tmp/k.jsonl"}).encode()
    assert post(daemon, no_limits) == (200, {"ok": True, "changed": False, "account": "claude"})
    for body, reason in (
        (b"{not json", "body is not valid JSON"),
        (b"[1]", "must be a JSON object"),
        (statusline_input(140, 1), "used_percentage must be a number from 0 to 100"),
    ):
        code, answer = post(daemon, body)
        assert code in (400, 422) and reason in answer["error"], answer
    assert post(daemon, statusline_input(1, 1), token="wrong")[0] == 401
    assert daemon.api("GET", "/api/limits") == []


def test_the_feed_carries_each_change_and_a_restart_keeps_the_readings(
    tmp_path: Path,
) -> None:
    d = Daemon.under(tmp_path).start()
    try:
        assert post(d, statusline_input(10, 20))[1]["changed"] is True
        url = "ws" + d.url.removeprefix("http") + "/api/stream"
        with ws_connect(url, additional_headers={"Authorization": f"Bearer {d.token}"}) as ws:
            snapshot = json.loads(ws.recv(timeout=10))
            assert [r["five_hour"]["used_percent"] for r in snapshot["limits"]] == [10]
            assert post(d, statusline_input(11, 20))[1]["changed"] is True
            msg = json.loads(ws.recv(timeout=10))
            assert msg["type"] == "limits" and msg["seq"] == snapshot["seq"] + 1
            assert msg["limits"][0]["five_hour"]["used_percent"] == 11
            assert post(d, statusline_input(11, 20))[1]["changed"] is False  # the same use
        d.stop()
        d.start()
        (kept,) = d.api("GET", "/api/limits")
        assert kept["five_hour"]["used_percent"] == 11 and kept["seven_day"]["used_percent"] == 20
    finally:
        d.stop()


@pytest.mark.asyncio
async def test_a_codex_rollouts_rate_limits_become_its_accounts_reading(tmp_path: Path) -> None:
    store = AsyncStore(tmp_path / "state.db")
    await store.open()
    engine = Engine(store)
    settings = Settings.from_env({}, home=tmp_path / "pmx", claude_dir=tmp_path / ".claude")
    keeper = LimitKeeper(settings, store, engine)
    await keeper.load()
    task = asyncio.create_task(engine.run())
    try:
        now = time.time()
        limits = RateLimits(
            primary_percent=7.0,
            primary_window_minutes=300,
            primary_resets_at=now + 600,
            secondary_percent=30.0,
            secondary_window_minutes=10080,
            secondary_resets_at=now + 86400,
        )
        await engine.submit(
            ev.TranscriptFacts(
                session_id="thread-1",
                at=now,
                id="t1",
                source=ev.Source.TRANSCRIPT,
                agent="codex",
                account="work-codex",
                rate_limits=limits,
            )
        )
        found = await wait_for_async(keeper.to_json)
        assert found == [
            {
                "agent": "codex",
                "account": "work-codex",
                "five_hour": {"used_percent": 7.0, "resets_at": now + 600, "reset": False},
                "seven_day": {"used_percent": 30.0, "resets_at": now + 86400, "reset": False},
                "at": now,
            }
        ]
        stored = await wait_for_async(lambda: keeper._tasks == set())
        assert stored and await store.call(lambda s: s.load_limits())
    finally:
        await engine.stop()
        await task
        keeper.stop()
        await store.close()


FAR = 1e18
"""A reset no clock shows (year 31 billion): Claude never sends it; `status` once failed on it."""


def bad_statusline(five_resets: Any) -> bytes:
    data = json.loads(statusline_input(42, 81))
    data["rate_limits"]["five_hour"]["resets_at"] = five_resets
    return json.dumps(data).encode()


def test_a_reset_no_clock_shows_is_refused_and_status_still_works(daemon: Daemon) -> None:
    for resets in (FAR, 10**400, -5, 1e11):
        code, answer = post(daemon, bad_statusline(resets))
        assert code == 422 and "five_hour.resets_at must be unix seconds" in answer["error"]
    assert daemon.api("GET", "/api/limits") == []  # nothing taken
    status = daemon.cli("status")
    assert status.returncode == 0, status.stderr
    assert "limits" not in status.stdout
    # A good reading after: shown, with its real reset; the bad one after it changes nothing.
    assert post(daemon, statusline_input(42, 81))[0] == 200
    assert post(daemon, bad_statusline(FAR))[0] == 422
    (kept,) = daemon.api("GET", "/api/limits")
    assert kept["five_hour"]["resets_at"] == RESET_5H
    status = daemon.cli("status")
    assert status.returncode == 0, status.stderr
    assert "limits  claude/claude  5h 42% (resets " in status.stdout


def test_a_bad_reading_stored_by_an_older_version_is_skipped_after_a_restart(
    tmp_path: Path,
) -> None:
    """Readings an older version stored (written here straight into SQLite): the ones no clock
    or page can show are skipped on load; `status` works and the good one still shows."""
    import sqlite3

    d = Daemon.under(tmp_path).start()
    try:
        assert post(d, statusline_input(10, 20))[0] == 200
        d.stop()
        now = time.time()

        def reading(agent: str, account: str, five: Any, seven: Any = None) -> str:
            data = {"agent": agent, "account": account, "five_hour": five, "seven_day": seven}
            return json.dumps({**data, "at": now})

        bad = {
            ("claude", "claude"): reading(
                "claude", "claude", {"used_percent": 42, "resets_at": FAR}
            ),
            ("claude", "huge"): reading(
                "claude", "huge", {"used_percent": 1, "resets_at": 10**400}
            ),
            ("claude", "nan"): reading("claude", "nan", {"used_percent": float("nan")}),
            ("codex", "inf"): reading(
                "codex", "inf", None, {"used_percent": 5, "resets_at": 1e400}
            ),
        }
        good = reading("codex", "codex", {"used_percent": 7, "resets_at": RESET_5H})
        with sqlite3.connect(d.home / "state.db") as db:
            for (agent, account), text in [*bad.items(), (("codex", "codex"), good)]:
                db.execute(
                    "INSERT OR REPLACE INTO limits (agent, account, reading, at) VALUES (?,?,?,?)",
                    (agent, account, text, now),
                )
        d.start()
        status = d.cli("status")
        assert status.returncode == 0, status.stderr
        assert "codex/codex  5h 7% (resets " in status.stdout
        assert "claude/" not in status.stdout and "inf" not in status.stdout
        assert [(r["agent"], r["account"]) for r in d.api("GET", "/api/limits")] == [
            ("codex", "codex")
        ]
        tmux = d.cli("tmux-status", "--format", "[{limits}]")
        assert (tmux.returncode, tmux.stdout) == (0, "[codex 5h7%]\n"), tmux.stderr
        # The next good reading of the account replaces the skipped one.
        assert post(d, statusline_input(11, 20))[1]["changed"] is True
        assert "limits  claude/claude  5h 11% (resets " in d.cli("status").stdout
    finally:
        d.stop()
