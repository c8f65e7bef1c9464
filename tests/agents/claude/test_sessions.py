"""Claude's sessions/<pid>.json files: parsing, status events, pid reuse, the watcher."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]  # psutil ships no type hints
import pytest

from purplemux.agents.claude.sessions import (
    SessionFile,
    SessionFileWatcher,
    _alive,
    is_same_process,
    parse_session_file,
    status_event,
)
from purplemux.core.events import Event, Source, StatusBusy, StatusIdle, StatusWaiting
from tests.support import wait_for_async
from tests.support.transcripts import collect

DEAD_PID = 999_999_999  # above any pid_max


def sample_lines(samples: Path) -> list[bytes]:
    return [ln for ln in (samples / "sessions-pid-files.jsonl").read_bytes().splitlines() if ln]


def start_ticks(pid: int) -> str:
    return (Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[19]).decode()


def body(pid: int, status: str = "idle", at_ms: int = 1_700_000_000_000, **extra: Any) -> bytes:
    data = {
        "pid": pid,
        "sessionId": f"s{pid}",
        "cwd": "/p",
        "status": status,
        "statusUpdatedAt": at_ms,
        "startedAt": 1_600_000_000_000,
        **extra,
    }
    return json.dumps(data).encode()


def test_parse_every_sample_line(samples: Path) -> None:
    parsed = [parse_session_file(ln) for ln in sample_lines(samples)]
    assert all(sf is not None for sf in parsed)
    first = parsed[0]
    assert first == SessionFile(
        pid=16015,
        session_id="35479d30-a4a1-45f8-b7d9-f1df057b02b0",
        cwd="/home/dev/proj",
        started_at=1795991984.011,
        proc_start="42339",
        status="idle",
        waiting_for=None,
        status_updated_at=1795991984.011,
        status_updated_ms=1795991984011,
        kind="interactive",
        name="proj-a6",
        version="2.1.197",
    )
    assert [sf.status for sf in parsed if sf] == ["idle", "busy", "waiting", "idle"]
    assert parsed[2] is not None and parsed[2].waiting_for == "permission prompt"


def test_status_events_of_samples(samples: Path) -> None:
    events = [status_event(sf) for ln in sample_lines(samples) if (sf := parse_session_file(ln))]
    assert [type(e) for e in events] == [StatusIdle, StatusBusy, StatusWaiting, StatusIdle]
    busy = events[1]
    assert isinstance(busy, StatusBusy)
    assert busy.at == pytest.approx(1795991989.848)
    assert busy.id == "sf:16015:35479d30-a4a1-45f8-b7d9-f1df057b02b0:1795991989848:busy"
    assert (busy.pid, busy.cwd, busy.source) == (16015, "/home/dev/proj", Source.SESSION_FILE)
    waiting = events[2]
    assert isinstance(waiting, StatusWaiting) and waiting.waiting_for == "permission prompt"
    assert len({e.id for e in events if e}) == 4


def test_clear_gives_a_new_id() -> None:
    # Verified on 2.1.197: /clear rewrites sessionId and leaves status and statusUpdatedAt.
    old = parse_session_file(body(5, sessionId="old"))
    new = parse_session_file(body(5, sessionId="new"))
    assert old and new
    a, b = status_event(old), status_event(new)
    assert a and b and a.id != b.id and b.session_id == "new"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"{",
        b"[]",
        b"null",
        b"\xff\xfe",
        b'{"pid": "12", "sessionId": "a"}',
        b'{"pid": true, "sessionId": "a"}',
        b'{"pid": 12}',
        b'{"pid": -1, "sessionId": "a"}',
        b'{"pid": 12, "sessionId": 7}',
    ],
)
def test_garbage_is_none(data: bytes) -> None:
    assert parse_session_file(data) is None


def test_tolerant_of_missing_and_extra_fields() -> None:
    sf = parse_session_file(b'{"sessionId": "a", "brandNew": {"x": 1}, "status": 3}', pid=42)
    assert sf == SessionFile(pid=42, session_id="a")
    assert status_event(sf) is None  # no known status: nothing to say
    odd = parse_session_file(b'{"pid": 1, "sessionId": "a", "status": "thinking"}')
    assert odd is not None and status_event(odd) is None


@pytest.fixture
def child() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait()


def test_proc_start_is_stat_field_22(child: subprocess.Popen[bytes]) -> None:
    # procStart is clock ticks since boot, as /proc/<pid>/stat field 22 (checked against the
    # real CLI: procStart "45824" == field 22 of its pid). psutil's create_time agrees.
    ticks = int(start_ticks(child.pid))
    p = psutil.Process(child.pid)
    derived = (p.create_time() - psutil.boot_time()) * os.sysconf("SC_CLK_TCK")
    assert abs(derived - ticks) <= 1


def test_same_process_and_pid_reuse(child: subprocess.Popen[bytes]) -> None:
    proc = psutil.Process(child.pid)
    mine = SessionFile(pid=child.pid, session_id="s", proc_start=start_ticks(child.pid))
    assert is_same_process(mine, proc)
    reused = SessionFile(
        pid=child.pid, session_id="s", proc_start=str(int(mine.proc_start or 0) - 500)
    )
    assert not is_same_process(reused, proc)
    other = SessionFile(pid=os.getpid(), session_id="s", proc_start=mine.proc_start)
    assert not is_same_process(other, proc)  # pids differ
    # Without a usable procStart, the file's startedAt is the witness.
    created = proc.create_time()
    before = SessionFile(pid=child.pid, session_id="s", proc_start="?", started_at=created - 60)
    assert not is_same_process(before, proc)  # the file predates the process: reuse
    after = SessionFile(pid=child.pid, session_id="s", started_at=created + 1)
    assert is_same_process(after, proc)
    child.kill()
    child.wait()
    assert not is_same_process(mine, proc)  # gone


def test_alive_says_what_is_same_process_says(child: subprocess.Popen[bytes]) -> None:
    """The watcher's check of a file's writer (one /proc read when procStart is there)."""
    ticks = start_ticks(child.pid)
    created = psutil.Process(child.pid).create_time()
    files = [
        SessionFile(pid=child.pid, session_id="s", proc_start=ticks),
        SessionFile(pid=child.pid, session_id="s", proc_start=str(int(ticks or 0) - 500)),
        SessionFile(pid=child.pid, session_id="s", proc_start="?", started_at=created - 60),
        SessionFile(pid=child.pid, session_id="s", started_at=created + 1),
        SessionFile(pid=child.pid, session_id="s"),
    ]

    def same(sf: SessionFile) -> bool:
        try:
            return is_same_process(sf, psutil.Process(sf.pid))
        except psutil.Error:
            return False

    assert [_alive(sf) for sf in files] == [same(sf) for sf in files]
    assert [_alive(sf) for sf in files] == [True, False, False, True, True]
    child.kill()
    child.wait()
    assert [_alive(sf) for sf in files] == [same(sf) for sf in files] == [False] * 5  # gone


def test_scan(tmp_path: Path, samples: Path) -> None:
    for i, ln in enumerate(sample_lines(samples)[1:3]):
        (tmp_path / f"{json.loads(ln)['pid']}.json").write_bytes(ln)
        (tmp_path / f"junk{i}.json").write_bytes(ln)
    (tmp_path / "77.json").write_bytes(b"{half")
    (tmp_path / "88.json.tmp").write_bytes(body(88))
    assert sorted(SessionFileWatcher(tmp_path).scan()) == [2739, 16015]
    assert SessionFileWatcher(tmp_path / "missing").scan() == {}


def has(event_id: str) -> Callable[[list[Event]], bool]:
    return lambda events: any(e.id == event_id for e in events)


@pytest.mark.asyncio
async def test_watcher_events(tmp_path: Path, child: subprocess.Popen[bytes]) -> None:
    me = os.getpid()
    live = tmp_path / f"{me}.json"
    live.write_bytes(body(me, "idle", 1000, procStart=start_ticks(me)))
    (tmp_path / f"{DEAD_PID}.json").write_bytes(body(DEAD_PID, "busy", 1000))  # left by a crash
    watcher = SessionFileWatcher(tmp_path, rescan_ms=60_000)  # inotify alone must do it
    agen = watcher.events()
    try:
        got = await collect(agen, has(f"sf:{me}:s{me}:1000:idle"))
        assert all(e.session_id != f"s{DEAD_PID}" for e in got)  # stale file: no state
        assert set(watcher.known()) == {me, DEAD_PID}
        live.write_bytes(body(me, "busy", 2000, procStart=start_ticks(me)))
        await collect(agen, has(f"sf:{me}:s{me}:2000:busy"))
        live.write_bytes(b'{"pid": 1')  # caught mid-write: the last good copy stays
        live.write_bytes(
            body(me, "waiting", 3000, procStart=start_ticks(me), waitingFor="permission prompt")
        )
        got = await collect(agen, has(f"sf:{me}:s{me}:3000:waiting"))
        waiting = [e for e in got if isinstance(e, StatusWaiting)]
        assert waiting and waiting[-1].waiting_for == "permission prompt"
        assert watcher.known()[me].status == "waiting"
        live.unlink()
        # A removed file emits nothing; the next change shows known() has let it go.
        other = tmp_path / f"{child.pid}.json"
        other.write_bytes(body(child.pid, "busy", 4000, procStart=start_ticks(child.pid)))
        await collect(agen, has(f"sf:{child.pid}:s{child.pid}:4000:busy"))
        assert me not in watcher.known() and child.pid in watcher.known()
    finally:
        await agen.aclose()


@pytest.mark.asyncio
async def test_watcher_folder_created_later(tmp_path: Path) -> None:
    sessions = tmp_path / "claude" / "sessions"
    watcher = SessionFileWatcher(sessions, check_alive=False, rescan_ms=60_000)
    agen = watcher.events()
    try:
        pending = asyncio.ensure_future(collect(agen, has("sf:7:s7:5:busy")))
        # The watcher runs (it waits for a change) before its folder exists.
        await wait_for_async(lambda: agen.ag_await is not None, what="the watcher to start")
        sessions.mkdir(parents=True)
        (sessions / "7.json").write_bytes(body(7, "busy", 5))
        await pending
    finally:
        await agen.aclose()
