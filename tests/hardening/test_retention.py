"""Nothing kept forever: ended sessions and their events go after PURPLEMUX_RETENTION; modes."""

from __future__ import annotations

import sqlite3
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from purplemux.core import events as ev
from purplemux.core.events import Source
from purplemux.core.model import Session, State
from purplemux.io.settings import Settings, duration
from purplemux.io.store import Store
from purplemux.parts import retention
from purplemux.server.app import create_app
from tests.support import REPO, Daemon, run_hook, settings_for, wait_for

DAY = 86400.0


def prompt(sid: str, n: int, at: float) -> ev.Event:
    return ev.Prompt(session_id=sid, at=at, id=f"{sid}:{n}", source=Source.HOOK, prompt="x" * 200)


def fill(db: Path, now: float) -> None:
    """20,000 ended sessions last seen 8 days ago with events, and three that must stay."""
    store = Store(db)
    try:
        old = now - 8 * DAY
        for start in range(0, 20_000, 2000):
            sessions = [
                Session(id=f"old-{i}", ended=True, updated_at=old, state_since=old, cwd="/w/p")
                for i in range(start, start + 2000)
            ]
            events = [prompt(s.id, n, old) for s in sessions for n in range(2)]
            store.commit(events, sessions)
        keep = [
            Session(id="recent-ended", ended=True, updated_at=now - DAY, state_since=now - DAY),
            Session(id="old-but-live", state=State.IDLE, updated_at=now - 30 * DAY),
        ]
        store.commit([prompt("recent-ended", 0, now - DAY)], keep)
    finally:
        store.close()


def test_twenty_thousand_ended_sessions_are_pruned_at_start(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    db = home / "state.db"
    fill(db, time.time())
    before = db.stat().st_size  # closed: the WAL is checkpointed into it
    d = Daemon(home=home, claude_dir=tmp_path / "claude").start()
    try:
        ids = {s["id"] for s in d.sessions(all=True)}
        assert ids == {"recent-ended", "old-but-live"}
        assert len(d.api("GET", "/api/sessions/recent-ended/events")["events"]) == 1
    finally:
        d.stop()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 2
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 1
        assert conn.execute("PRAGMA freelist_count").fetchone()[0] == 0  # pages given back
    after = db.stat().st_size
    print(f"\nstate.db with 20k old sessions: {before / 1e6:.1f} MB -> {after / 1e6:.2f} MB")
    assert after < before / 10


def test_a_live_session_event_log_is_capped(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.db")
    try:
        n = retention.MAX_EVENTS + 250
        store.commit([prompt("busy", i, 1000.0 + i) for i in range(n)], [Session(id="busy")])
        ids, deleted = store.prune(cutoff=0.0, max_events=retention.MAX_EVENTS)
        assert ids == [] and deleted == 250
        kept = store.events_for("busy", limit=n)
        assert len(kept) == retention.MAX_EVENTS
        assert kept[-1]["id"] == f"busy:{n - 1}"  # the newest stay
        assert kept[0]["id"] == "busy:250"
    finally:
        store.close()


def test_the_hourly_prune_removes_what_ends_while_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(retention, "EVERY", 0.2)
    settings = settings_for(tmp_path, retention=1.0)
    with TestClient(create_app(settings, components=[retention.retention])) as c:
        token = (settings.home / "token").read_text().strip()
        c.headers["Authorization"] = f"Bearer {token}"
        for name in ("SessionStart", "SessionEnd"):
            body = {"session_id": "brief", "hook_event_name": name, "cwd": "/w/p"}
            assert c.post("/api/hooks", json=body).status_code == 202
        c.post("/api/hooks", json={"session_id": "stays", "hook_event_name": "SessionStart"})
        wait_for(lambda: c.get("/api/sessions/brief").status_code == 404, timeout=20)
        assert [s["id"] for s in c.get("/api/sessions?all=1").json()["sessions"]] == ["stays"]


@pytest.mark.parametrize(
    ("raw", "seconds"), [("7d", 7 * DAY), ("12h", 43200), ("30m", 1800), ("90s", 90), ("45", 45)]
)
def test_retention_accepts_s_m_h_d(raw: str, seconds: float) -> None:
    assert duration(raw, 1.0) == seconds
    assert Settings.from_env({"PURPLEMUX_RETENTION": raw}).retention == seconds


def test_retention_defaults_to_seven_days() -> None:
    assert Settings.from_env({}).retention == 7 * DAY


@pytest.mark.parametrize("raw", ["7x", "d", "-1d", "0", "1e999d", "seven days"])
def test_a_bad_retention_is_refused_with_the_fix(tmp_path: Path, raw: str) -> None:
    env = {
        "PURPLEMUX_HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "PURPLEMUX_RETENTION": raw,
        "PYTHONPATH": str(REPO),
        "PATH": "/usr/bin:/bin",
    }
    out = subprocess.run(
        [sys.executable, "-m", "purplemux", "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2
    assert "PURPLEMUX_RETENTION" in out.stderr and "7d" in out.stderr
    assert repr(raw) in out.stderr
    assert not (tmp_path / "home" / "state.db").exists()


# --- file modes ---------------------------------------------------------------------------------


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def loose_home(tmp_path: Path) -> Iterator[Path]:
    """A home whose database, WAL and spool were left readable by everyone."""
    home = tmp_path / "home"
    home.mkdir()
    Store(home / "state.db").close()
    (home / "state.db").chmod(0o644)
    spool = home / "spool"
    (spool / ".tmp").mkdir(parents=True)
    spool.chmod(0o755)
    (spool / ".tmp").chmod(0o755)
    left = spool / ".tmp" / "1-2.json"
    left.write_text("{}")
    left.chmod(0o644)
    yield home


def test_the_database_wal_and_spool_are_private(loose_home: Path, tmp_path: Path) -> None:
    d = Daemon(home=loose_home, claude_dir=tmp_path / "claude").start()
    try:
        run_hook(loose_home, {"session_id": "m", "hook_event_name": "SessionStart"})
        wait_for(lambda: d.session("m"))
        assert (loose_home / "state.db-wal").exists()
        for name in ("state.db", "state.db-wal", "state.db-shm"):
            assert mode(loose_home / name) == 0o600, name
        assert mode(loose_home / "spool") == 0o700
        assert mode(loose_home / "spool" / ".tmp") == 0o700
        assert mode(loose_home / "spool" / ".tmp" / "1-2.json") == 0o600
    finally:
        d.stop()


def test_a_fresh_home_is_private_from_the_first_byte(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    d = Daemon(home=home, claude_dir=tmp_path / "claude").start()
    try:
        run_hook(home, {"session_id": "f", "hook_event_name": "SessionStart"})
        wait_for(lambda: d.session("f"))
        for path in home.rglob("*"):
            # The hook script and the statusLine wrapper: programs, no secret.
            if path.is_symlink() or path.name in ("status-hook.sh", "statusline.sh"):
                continue
            assert mode(path) & 0o077 == 0, (path, oct(mode(path)))
        assert mode(home) == 0o700
    finally:
        d.stop()


def test_ended_sessions_are_capped_by_count_too(tmp_path: Path) -> None:
    """10,000 ended sessions inside the retention period: the newest 500 (PURPLEMUX_KEEP_ENDED)
    stay with their events, the rest go; a live session, however old, stays."""
    now = time.time()
    store = Store(tmp_path / "state.db")
    try:
        for start in range(0, 10_000, 2000):
            sessions = [
                Session(id=f"e{i:05d}", ended=True, updated_at=now - i, state_since=now - i)
                for i in range(start, start + 2000)
            ]
            store.commit([prompt(s.id, 0, s.updated_at) for s in sessions], sessions)
        store.commit([], [Session(id="live", state=State.IDLE, updated_at=now - 30 * DAY)])
        ids, events = store.prune(cutoff=now - 7 * DAY, max_events=100, keep_ended=500)
        assert sorted(ids) == [f"e{i:05d}" for i in range(500, 10_000)]
        assert events == 9_500
        kept = {s.id for s in store.load_sessions()}
        assert kept == {f"e{i:05d}" for i in range(500)} | {"live"}
    finally:
        store.close()


def test_the_ended_cap_is_a_setting(tmp_path: Path) -> None:
    assert Settings.from_env({"PURPLEMUX_HOME": str(tmp_path)}).keep_ended == 500
    env = {"PURPLEMUX_HOME": str(tmp_path), "PURPLEMUX_KEEP_ENDED": "20"}
    assert Settings.from_env(env).keep_ended == 20
    for bad in ("-1", "many"):
        with pytest.raises(ValueError, match="PURPLEMUX_KEEP_ENDED"):
            Settings.from_env({**env, "PURPLEMUX_KEEP_ENDED": bad})
