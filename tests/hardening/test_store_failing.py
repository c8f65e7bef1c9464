"""A database that fails under the running daemon: hooks are not acknowledged, they are spooled,
and stored once the database works again (here: at the next start, after the recovery
SECURITY.md gives)."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support import Daemon, hook, run_hook, wait_for


def post_hook_status(d: Daemon, sid: str) -> tuple[int, dict[str, object]]:
    body = json.dumps({"session_id": sid, "hook_event_name": "SessionStart"}).encode()
    req = urllib.request.Request(d.url + "/api/hooks", data=body, method="POST")
    req.add_header("Authorization", f"Bearer {d.token}")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def break_database(db: Path, how: str) -> None:
    if how == "truncated":  # the header page stays: SQLite itself does not notice
        os.truncate(db, 4096)
    elif how == "emptied":
        os.truncate(db, 0)
    elif how == "removed":
        db.unlink()
    elif how == "wal-truncated":
        os.truncate(f"{db}-wal", 0)


@pytest.mark.parametrize("how", ["truncated", "emptied", "removed", "wal-truncated"])
def test_a_database_broken_under_the_daemon_loses_no_hook(tmp_path: Path, how: str) -> None:
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude").start(timeout=20)
    try:
        hook(d, "before", "SessionStart")
        hook(d, "before", "UserPromptSubmit", prompt="fill the log a little")
        db = d.home / "state.db"
        break_database(db, how)
        status, body = post_hook_status(d, "direct")
        assert status == 503, (status, body)  # never 202 for an event that was not stored
        assert "not stored" in str(body["error"])
        # The real hook script spools what the daemon could not store; it stays there.
        run_hook(d.home, {"session_id": "during", "hook_event_name": "SessionStart"})
        wait_for(lambda: list((d.home / "spool").glob("*.spool")), timeout=10)
        assert d.session("during") is None
    finally:
        d.stop()
    assert list((d.home / "spool").glob("*.spool")), "the spooled hook is gone"
    # The recovery SECURITY.md gives: move the database aside with its -wal and -shm, start.
    for name in ("state.db", "state.db-wal", "state.db-shm"):
        if (d.home / name).exists():
            (d.home / name).rename(d.home / f"{name}.broken")
    again = Daemon(home=d.home, claude_dir=d.claude_dir).start(timeout=20)
    try:
        assert again.session("during") is not None
        assert not list((again.home / "spool").glob("*.spool"))
    finally:
        again.stop()
