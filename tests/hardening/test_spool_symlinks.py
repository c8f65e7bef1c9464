"""Symbolic links in the spool are never followed: a linked `.tmp` or spool file is neither
read nor changed (its target keeps its mode and content), and hooks still arrive."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

from tests.support import Daemon, run_hook, wait_for


def spooled(sid: str, ts: int) -> bytes:
    head = f"X-Purplemux-Event-Id: {ts}-1\nX-Purplemux-Ts: {ts}\n"
    body = json.dumps({"session_id": sid, "hook_event_name": "SessionStart"})
    return f"{head}\n{body}".encode()


def test_symlinks_in_the_spool_are_never_followed(tmp_path: Path) -> None:
    home, outside = tmp_path / "home", tmp_path / "elsewhere"
    outside.mkdir()
    old = time.time_ns() - 60 * 10**9
    # What a link in the spool points at: a folder of someone's files, and a file elsewhere.
    body = outside / f"{old}-7.json"  # named like an orphaned hook body, old enough to take
    body.write_text(
        json.dumps({"session_id": "from-linked-tmp", "hook_event_name": "SessionStart"})
    )
    other = outside / "private.txt"
    other.write_text("not the daemon's")
    target = outside / "target.spool"
    target.write_bytes(spooled("from-linked-file", old))
    for f in (body, other, target):
        f.chmod(0o644)
    before = {f: (f.read_bytes(), stat.S_IMODE(f.stat().st_mode)) for f in (body, other, target)}
    (home / "spool").mkdir(parents=True)
    (home / "spool" / ".tmp").symlink_to(outside)
    (home / "spool" / f"{old + 1}-8.spool").symlink_to(target)

    d = Daemon(home=home, claude_dir=tmp_path / "claude").start(timeout=20)
    try:
        # Hooks still arrive (the script sends straight, writing nothing through the link).
        run_hook(home, {"session_id": "live", "hook_event_name": "SessionStart"})
        wait_for(lambda: d.session("live"), timeout=10)
        d.stop()
        d.start(timeout=20)  # a second start: still nothing changed through the links
        assert d.session("from-linked-tmp") is None
        assert d.session("from-linked-file") is None
        logs = d.logs()
        assert "is a symbolic link" in logs
    finally:
        d.stop()
    after = {f: (f.read_bytes(), stat.S_IMODE(f.stat().st_mode)) for f in (body, other, target)}
    assert after == before
    assert sorted(os.listdir(outside)) == sorted(f.name for f in before)
