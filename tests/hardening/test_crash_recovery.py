"""Crashes and broken disks: nothing lost, a clear way out, never a traceback."""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from purplemux.server.app import create_app
from tests.support import REPO, Daemon, free_port, settings_for, wait_for
from tests.support.fake_daemon import PAYLOAD, FakeDaemon, make_home

HOOK = REPO / "hooks" / "status-hook.sh"


def run_serve(home: Path, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    """`python -m purplemux serve` as a user runs it, stdout and stderr captured."""
    env = {
        **os.environ,
        "PURPLEMUX_HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home.parent / "claude"),
        "PURPLEMUX_PORT": str(free_port()),
        "PYTHONPATH": str(REPO),
    }
    return subprocess.run(
        [sys.executable, "-m", "purplemux", "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def assert_clear_refusal(done: subprocess.CompletedProcess[str], db: Path, *words: str) -> str:
    """Non-zero, one paragraph on stderr naming the file and the words given, no traceback."""
    assert done.returncode not in (0, None), (done.returncode, done.stdout, done.stderr)
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out
    message = done.stderr.strip()
    assert message.startswith("purplemux: "), message
    assert "\n" not in message, message  # one paragraph
    assert str(db) in message
    for word in words:
        assert word in message, (word, message)
    assert "Uvicorn running" not in out  # it never started serving
    return message


def hook_event(home: Path, payload: dict[str, Any]) -> None:
    """Run the real hook script as Claude does (it must exit 0 silently)."""
    assert hook_in_child(home, payload=json.dumps(payload).encode()) == (0, b"")


# --- a corrupt or locked database -------------------------------------------------------------


@pytest.mark.parametrize("how", ["random-bytes", "header-overwritten", "pages-overwritten"])
def test_corrupt_database_exits_with_the_recovery_not_a_traceback(tmp_path: Path, how: str) -> None:
    home = tmp_path / "home"
    db = home / "state.db"
    if how == "random-bytes":
        home.mkdir(mode=0o700)
        db.write_bytes(os.urandom(64 * 1024))
    else:
        # A real database with sessions in it, then garbage over part of it.
        with TestClient(create_app(settings_for(tmp_path))) as c:
            token = (home / "token").read_text().strip()
            for n in range(50):
                r = c.post(
                    "/api/hooks",
                    json={"session_id": f"s{n}", "hook_event_name": "Stop", "cwd": "/w" * 300},
                    headers={"Authorization": f"Bearer {token}"},
                )
                assert r.status_code == 202
        size = db.stat().st_size
        assert size > 16 * 1024
        with db.open("r+b") as f:
            if how == "header-overwritten":
                f.write(b"garbage!" * 64)
            else:
                f.seek(4096)
                f.write(os.urandom(size - 4096))
    # Events arrive while the daemon cannot start: the hook spools them.
    hook_event(home, {"session_id": "while-broken", "hook_event_name": "UserPromptSubmit"})
    message = assert_clear_refusal(run_serve(home), db, "mv ", "rebuilt")
    print(f"\n{message}")

    # The documented recovery: move the database (and its -wal/-shm) aside, start again.
    for suffix in ("", "-wal", "-shm"):
        old = Path(f"{db}{suffix}")
        if old.exists():
            old.rename(f"{old}.broken")
    d = Daemon(home=home, claude_dir=tmp_path / "claude").start()
    try:
        session = wait_for(lambda: d.session("while-broken"))
        assert session is not None
        assert session["state"] == "busy"  # nothing the hook sent meanwhile was lost
    finally:
        d.stop()


@pytest.fixture
def locked_db(tmp_path: Path) -> Iterator[Path]:
    """A state.db another program holds an exclusive lock on."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    db = home / "state.db"
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("CREATE TABLE other (x)")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO other VALUES (1)")
    yield db
    holder.execute("ROLLBACK")
    holder.close()


def test_locked_database_exits_with_a_clear_message(locked_db: Path) -> None:
    done = run_serve(locked_db.parent)  # returns (no hang on the lock: run_serve has a timeout)
    message = assert_clear_refusal(done, locked_db, "locked", "another")
    assert "mv " not in message  # a locked file is fine: moving it would lose everything
    print(f"\n{message}")


def test_database_locked_while_running_loses_nothing(tmp_path: Path) -> None:
    """Another program (a backup, an sqlite3 shell) holds a write lock for a while: the hook gets
    an error and spools, and once the lock is gone every event is in the log, in order."""
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude").start()
    try:
        base = {"session_id": "locked", "cwd": "/w/locked"}
        hook_event(d.home, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "one"})
        wait_for(lambda: d.session("locked"))
        holder = sqlite3.connect(d.home / "state.db", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # a writer's lock, held
        try:
            hook_event(d.home, {**base, "hook_event_name": "Stop", "last_assistant_message": "2"})
            spool = d.home / "spool"
            wait_for(lambda: list(spool.glob("*.spool")), timeout=20)  # refused, so spooled
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        hook_event(d.home, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "three"})

        def names() -> list[str] | None:
            got = [e["name"] for e in d.api("GET", "/api/sessions/locked/events")["events"]]
            return got if len(got) >= 3 else None

        assert wait_for(names, timeout=30) == ["UserPromptSubmit", "Stop", "UserPromptSubmit"]
        wait_for(lambda: not list((d.home / "spool").glob("*.spool")))
    finally:
        d.stop()
    d2 = Daemon(home=d.home, claude_dir=d.claude_dir, port=d.port).start()
    try:  # what was kept in memory is what was stored
        events = d2.api("GET", "/api/sessions/locked/events")["events"]
        hooks = [e["name"] for e in events if e["source"] == "hook"]
        assert hooks == ["UserPromptSubmit", "Stop", "UserPromptSubmit"]
    finally:
        d2.stop()


# --- SIGKILL while hooks arrive concurrently ----------------------------------------------------


def test_sigkill_during_a_concurrent_burst_loses_nothing(tmp_path: Path) -> None:
    """Many hook scripts at once (parallel tool calls, several sessions), daemon killed midway."""
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude").start()
    sessions, per_session = 6, 12
    markers: dict[str, list[str]] = {f"conc-{s}": [] for s in range(sessions)}
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PURPLEMUX_HOME": str(d.home)}
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for i in range(per_session):
            if i == per_session // 2:
                d.kill()  # SIGKILL with a wave of deliveries in flight
            for sid, sent in markers.items():
                marker = f"{sid}-p{i}"
                sent.append(marker)
                payload = {
                    "session_id": sid,
                    "hook_event_name": "UserPromptSubmit",
                    "prompt": marker,
                    "cwd": "/w/conc",
                }
                body = tmp_path / f"{marker}.json"
                body.write_text(json.dumps(payload))
                with body.open("rb") as stdin:
                    proc = subprocess.Popen(
                        ["/bin/sh", str(HOOK)],
                        stdin=stdin,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        env=env,
                    )
                procs.append(proc)
        for proc in procs:
            out, err = proc.communicate(timeout=10)
            assert (proc.returncode, out, err) == (0, b"", b"")
        d2 = Daemon(home=d.home, claude_dir=d.claude_dir, port=d.port).start()
        try:

            def logged() -> dict[str, list[str]] | None:
                got = {
                    sid: [
                        e.get("prompt")
                        for e in d2.api("GET", f"/api/sessions/{sid}/events")["events"]
                        if e["name"] == "UserPromptSubmit"
                    ]
                    if d2.session(sid)
                    else []
                    for sid in markers
                }
                done = all(len(v) >= per_session for v in got.values())
                return got if done else None

            got = wait_for(logged, timeout=30)
            assert got is not None
            for sid, sent in markers.items():
                assert sorted(got[sid]) == sorted(sent), sid  # each exactly once
            wait_for(lambda: not list((d.home / "spool").glob("*.spool")))
        finally:
            d2.stop()
    finally:
        d.kill()
        for proc in procs:
            if proc.poll() is None:
                proc.kill()


# --- the spool cannot be written ----------------------------------------------------------------


def hook_in_child(
    home: Path, preexec: Callable[[], None] | None = None, payload: bytes = PAYLOAD
) -> tuple[int, bytes]:
    """Run the installed hook as Claude would, outside tmux, in a child set up by `preexec`:
    (exit status, stdout and stderr)."""
    env = {"PATH": os.environ["PATH"], "HOME": str(home.parent), "PURPLEMUX_HOME": str(home)}
    done = subprocess.run(
        ["/bin/sh", str(HOOK)],
        input=payload,
        env=env,
        capture_output=True,
        timeout=10,
        preexec_fn=preexec,
    )
    return done.returncode, done.stdout + done.stderr


def test_disk_filling_during_the_copy_still_exits_silently_at_once(
    tmp_path: Path, serve: Callable[..., FakeDaemon]
) -> None:
    """The disk fills half-way through the payload copy: an RLIMIT_FSIZE-limited child (no root,
    no mount) gets EFBIG after half the payload exactly as a full disk gives ENOSPC (SIGXFSZ
    ignored, as a full disk sends no signal). The rest of stdin is gone: the script drops the
    half file and exits 0 at once, silent; it neither waits for nor bothers the daemon."""
    daemon = serve(delay=5.0)  # answers late: the script must not wait for it
    home = make_home(tmp_path, daemon.port)
    (home / "spool" / ".tmp").mkdir(parents=True)
    limit = len(PAYLOAD) // 2

    def disk_full_mid_copy() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    assert hook_in_child(home, disk_full_mid_copy) == (0, b"")
    assert not daemon.answered.is_set()
    assert list((home / "spool" / ".tmp").iterdir()) == []  # no half-written copy left
    assert list((home / "spool").glob("*.spool")) == []
    assert daemon.requests == []  # the event is lost, knowingly: half a payload is no payload


def test_spool_folder_that_takes_no_files_sends_stdin_straight(
    tmp_path: Path, serve: Callable[..., FakeDaemon]
) -> None:
    """A spool where no file can be created, even by root and with no mount: its .tmp is a
    folder of /proc (open(O_CREAT) fails there as on a read-only disk). Nothing could be saved,
    so the payload goes to the daemon straight from stdin, and the script does not wait."""
    daemon = serve(delay=5.0)
    home = make_home(tmp_path, daemon.port)
    (home / "spool").mkdir()
    (home / "spool" / ".tmp").symlink_to("/proc/self")
    with pytest.raises(OSError):
        (home / "spool" / ".tmp" / "probe.json").write_bytes(b"x")

    assert hook_in_child(home) == (0, b"")
    assert not daemon.answered.is_set()
    [request] = wait_for(lambda: daemon.requests)
    assert request.body == PAYLOAD
    daemon.answered.set()


def test_spool_writes_failing_without_root(tmp_path: Path) -> None:
    """Where no tmpfs can be mounted: every file write of the hook fails (RLIMIT_FSIZE 0, with
    SIGXFSZ ignored so a write returns EFBIG as a full disk returns ENOSPC). A /dev/full symlink
    cannot stand in: the script's spool file names are made at run time, and a symlinked spool
    folder only stops mkdir, which test_hook_script's spool-blocked case already covers."""
    home = make_home(tmp_path, None)

    def no_file_writes() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    assert hook_in_child(home, no_file_writes) == (0, b"")  # nothing on stdout or stderr
    wait_for(lambda: not any((home / "spool" / ".tmp").iterdir()))  # no half-written leftovers


# --- a poisoned spool cannot stop the daemon ---------------------------------------------------


def test_a_spool_file_nested_past_the_parser_limit_is_set_aside(tmp_path: Path) -> None:
    """The hook spools whatever the daemon refused (a 400 too): such a file must not stop a start
    (json.loads raises RecursionError, not ValueError, on deep nesting)."""
    settings = settings_for(tmp_path)
    spool = settings.spool_dir
    spool.mkdir(parents=True)
    head = b"X-Purplemux-Event-Id: 1-1\nX-Purplemux-Ts: 1000000000\n\n"
    (spool / "1-1.spool").write_bytes(head + b"[" * 100_000 + b"]" * 100_000)
    ok = b"X-Purplemux-Event-Id: 2-2\nX-Purplemux-Ts: 2000000000\n\n"
    (spool / "2-2.spool").write_bytes(ok + b'{"session_id": "fine", "hook_event_name": "Stop"}')
    with TestClient(create_app(settings)) as c:
        c.headers["Authorization"] = "Bearer " + settings.token_path.read_text().strip()
        assert c.get("/api/sessions/fine").status_code == 200
        assert (spool / "1-1.spool.bad").exists()
        assert not list(spool.glob("*.spool"))
