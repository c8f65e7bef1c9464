"""Stop means stop (issue 22), and parts' own tasks never die unseen (issue 23).

Each part ends when cancelled, re-raising its cancellation (it swallows nothing), within a
bound; the tailer's threads heed a stop within a block; the control clients end with their tmux
processes; a crash in a part's own task (history summing, the offset saver, a control client)
or in the engine is logged once and the task comes back. The daemon's own stop, after the
issue's busy spell and while a 150 MB transcript is read, is measured by benchmarks/shutdown.py
(its figure is printed here; the 2 s goal is a benchmark's, the test fails only on a hang).

The bounds asserted below are hang detectors (generous, for a loaded 2-core machine), not speed
goals: the times are printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect as ws_connect

from benchmarks import shutdown
from purplemux.agents.claude.transcript import TranscriptReader
from purplemux.daemon.runtime import Runtime, default_adapters
from purplemux.io.store_thread import AsyncStore
from purplemux.io.tmux_control import ControlClient, TmuxControl
from purplemux.parts import retention, sources
from purplemux.parts.broker import broker
from purplemux.parts.notifier import notifier
from purplemux.parts.pane_marker import pane_marker
from purplemux.parts.spool import spool_sweeper, spool_watcher
from purplemux.parts.supervisor import Supervisor
from purplemux.parts.supervisor import engine as engine_part
from purplemux.server import app as app_module
from purplemux.sources import transcripts as tr
from tests.support import REPO, Daemon, settings_for, wait_for
from tests.support.hosts import RedisServer
from tests.support.transcripts import turns
from tests.test_tmux import Tmux, start_tmux

HANG = 10.0
"""Seconds after which a part that has not ended counts as hung (a failure)."""

Part = Callable[[Runtime], Coroutine[Any, Any, None]]


@pytest.fixture(autouse=True)
def private_tmux_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The default tmux server of these daemons is their own (no one else's is attached to).

    A short folder in /tmp, not under tmp_path: a socket's path holds at most 107 bytes, and
    under pytest-xdist tmp_path is longer (.../popen-gw3/test_.../tmux-tmp/tmux-0/pmx-test-...)."""
    folder = tempfile.mkdtemp(prefix="pmx-tmux-")
    monkeypatch.setenv("TMUX_TMPDIR", folder)
    yield
    shutil.rmtree(folder, ignore_errors=True)


@contextlib.asynccontextmanager
async def runtime(root: Path, engine: bool = True, **settings: Any) -> AsyncIterator[Runtime]:
    """A daemon's runtime as the lifespan builds it (no HTTP), its engine running."""
    rt = await app_module._start(
        settings_for(root, watch_sources=True, **settings), default_adapters
    )
    task = asyncio.create_task(rt.engine.run()) if engine else None
    try:
        yield rt
    finally:
        if task is not None:
            await rt.engine.stop()
            await asyncio.wait([task], timeout=HANG)
            task.cancel()
        rt.engine.feed.close()
        await rt.store.close()


async def until(predicate: Callable[[], object], timeout: float = HANG) -> None:
    """Poll on the loop until predicate() holds (fails at the deadline)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def cancel_and_time(task: asyncio.Task[None]) -> float:
    """Cancel a part's task; it must end cancelled (not finish, not fail) before HANG."""
    began = time.monotonic()
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=HANG)
    took = time.monotonic() - began
    if task not in done:
        where = io.StringIO()
        task.print_stack(file=where)
        for other in asyncio.all_tasks():
            if other is not asyncio.current_task() and other is not task:
                other.print_stack(limit=3, file=where)
        pytest.fail(
            f"{task.get_name()} still running {HANG:.0f}s after its cancel:\n{where.getvalue()}"
        )
    assert task.cancelled(), f"{task.get_name()} swallowed its cancellation: {task!r}"
    return took


# --- every part ends when cancelled --------------------------------------------------------


def _subscribed(rt: Runtime, before: int) -> Callable[[], bool]:
    return lambda: rt.engine.subscribers() > before


def _live(name: str) -> Part:
    """A live-source part as the daemon makes it for its settings (parts/sources.py `parts`:
    each agent's own, the transcripts, the recovery), by its name."""

    def part(rt: Runtime) -> Coroutine[Any, Any, None]:
        made = {p.__name__: p for p in sources.parts(rt.settings)}
        return made[name](rt)

    return part


PARTS: dict[str, Part] = {
    "session_files": _live("session_files"),
    "transcripts": sources.transcripts,
    "processes": _live("processes"),
    "recovery": _live("recovery"),
    "spool_watcher": spool_watcher,
    "spool_sweeper": spool_sweeper,
    "notifier": notifier,
    "pane_marker": pane_marker,
    "tmux_clients": sources.tmux_clients,
    "retention": retention.retention,
}
LISTENS = {"transcripts", "processes", "recovery", "notifier", "pane_marker"}
"""Parts that subscribe to the engine first thing: running once they have."""


@pytest.mark.asyncio
@pytest.mark.parametrize("name", sorted(PARTS))
async def test_each_part_ends_when_cancelled_and_swallows_nothing(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    async with runtime(tmp_path) as rt:
        before = rt.engine.subscribers()
        task = asyncio.create_task(PARTS[name](rt), name=name)
        if name in LISTENS:
            await until(_subscribed(rt, before))
        for _ in range(20):  # let it get going (not a wait for a result: nothing depends on it)
            await asyncio.sleep(0.01)
        assert not task.done(), task
        took = await cancel_and_time(task)
        assert rt.engine.subscribers() == before  # it unsubscribed on its way out
    with capsys.disabled():
        print(f"\n{name}: ended {took * 1000:.0f} ms after its cancel")


@pytest.mark.asyncio
async def test_the_engine_part_ends_on_stop_and_on_cancel(tmp_path: Path) -> None:
    async with runtime(tmp_path, engine=False) as rt:
        supervisor = Supervisor(rt)
        supervisor.start(engine_part, name="engine")
        await until(lambda: rt.engine._running)
        await rt.engine.stop()
        assert await supervisor.wait("engine", HANG)  # it finished on its own
        assert supervisor.running() == []
        task = asyncio.create_task(engine_part(rt), name="engine")
        await until(lambda: rt.engine._running)
        await cancel_and_time(task)


@pytest.mark.asyncio
async def test_the_broker_part_ends_when_cancelled(tmp_path: Path) -> None:
    redis = RedisServer(tmp_path / "redis").start()
    try:
        async with runtime(tmp_path, broker=redis.url, host_name="here") as rt:
            task = asyncio.create_task(broker(rt), name="broker")
            await until(lambda: rt.broker is not None and rt.broker.state == "connected")
            await cancel_and_time(task)
            assert rt.broker is None and rt.engine.subscribers() == 0
    finally:
        redis.kill()


# --- the transcript reader's threads ---------------------------------------------------------


def _big_transcript(path: Path, mb: int) -> int:
    """Whole turns, repeated until the file holds `mb` MiB; its size."""
    block, _ = turns(400, seed=7)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        while f.tell() < mb << 20:
            f.write(block)
    return path.stat().st_size


@pytest.mark.asyncio
async def test_a_big_read_in_its_thread_ends_within_a_block_once_stopped(tmp_path: Path) -> None:
    """The tailer's read of a large append (a thread: it cannot be cancelled) stops at the next
    block once the reader stops, rather than reading the file through before the exit."""
    root = tmp_path / "projects"
    path = root / "p" / "s.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    tailer = tr.TranscriptTailer(reader=TranscriptReader, tail_first=True, root=root)
    tailer.watch("s", path)
    batches = tailer.events()
    first = asyncio.ensure_future(batches.__anext__())  # the empty file read first
    await until(lambda: not tailer._watched["s"].fresh)
    size = _big_transcript(path, 60)  # then 60 MB at once: one long read
    await until(lambda: tailer.stats.tail_bytes > 0)
    first.cancel()
    tailer.stop()
    with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
        await first
    await batches.aclose()
    # The thread goes on only to the end of its block: the count settles far short of the file.
    await asyncio.to_thread(wait_for, lambda: _settled(tailer))
    assert tailer.stats.tail_bytes < size // 2


def _settled(tailer: tr.TranscriptTailer) -> bool:
    seen = tailer.stats.tail_bytes
    time.sleep(0.2)  # one block's read and parse, several times over
    return tailer.stats.tail_bytes == seen


@pytest.mark.asyncio
async def test_summing_a_history_ends_when_cancelled_and_stopped(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    path = root / "p" / "s.jsonl"
    size = _big_transcript(path, 40)
    tailer = tr.TranscriptTailer(reader=TranscriptReader, tail_first=True, root=root)
    tailer.watch("s", path)

    async def consume() -> None:
        async for _ in tailer.events(backfill=False):
            pass  # the tail first; its events handed on, the history is summed

    consumer = asyncio.create_task(consume())
    summing = asyncio.create_task(tailer.backfill(), name="transcript-history")
    await until(lambda: tailer.stats.history_bytes > 0)
    tailer.stop()
    await cancel_and_time(summing)
    await cancel_and_time(consumer)
    await asyncio.to_thread(wait_for, lambda: _history_settled(tailer))
    assert tailer.stats.history_bytes < size


def _history_settled(tailer: tr.TranscriptTailer) -> bool:
    seen = tailer.stats.history_bytes
    time.sleep(0.2)
    return tailer.stats.history_bytes == seen


# --- the store thread -----------------------------------------------------------------------


@pytest.mark.asyncio
async def test_the_store_thread_ends_with_close_even_with_a_call_in_flight(
    tmp_path: Path,
) -> None:
    store = AsyncStore(tmp_path / "state.db")
    await store.open()
    started = threading.Event()

    def slow(s: Any) -> None:
        started.set()
        time.sleep(0.3)  # a long commit, in the store's thread

    call = asyncio.ensure_future(store.call(slow))
    await asyncio.to_thread(started.wait, HANG)
    call.cancel()  # its caller stops: the thread finishes that call, and nothing waits on it
    await asyncio.wait_for(store.close(), HANG)
    assert not [t for t in threading.enumerate() if t.name.startswith("purplemux-store")]


# --- the tmux control clients -------------------------------------------------------------


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    server = start_tmux()
    yield server
    server.kill()


def _control_clients(tmux: Tmux) -> list[str]:
    flags = tmux("list-clients", "-F", "#{client_flags}", check=False).splitlines()
    return [f for f in flags if "control-mode" in f]


@pytest.mark.asyncio
async def test_control_clients_end_with_their_tmux_processes(tmux: Tmux) -> None:
    control = TmuxControl()
    client = control.want(tmux.socket)
    task = asyncio.create_task(control.run(), name="tmux_clients")
    await until(lambda: client.connected)
    assert len(await asyncio.to_thread(_control_clients, tmux)) == 1
    await cancel_and_time(task)
    assert not client.connected
    await asyncio.to_thread(wait_for, lambda: _control_clients(tmux) == [])


# --- a part's own tasks crash loudly and come back ------------------------------------------


def crashing_once(
    monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, calls: list[int]
) -> asyncio.Event:
    """Make `owner.name` (a coroutine method or function) raise once, on its first call, when
    the returned event is set; later calls run the original."""
    original = getattr(owner, name)
    go = asyncio.Event()

    async def wrapped(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            await go.wait()
            raise RuntimeError(f"{name} killed by the test")
        return await original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapped)
    return go


def crash_records(caplog: pytest.LogCaptureFixture, name: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if f"{name} killed by the test" in _text(r)]


def _text(record: logging.LogRecord) -> str:
    exc = record.exc_info[1] if record.exc_info else None
    inner = [str(e) for e in getattr(exc, "exceptions", ())] if exc else []
    return " ".join([record.getMessage(), str(exc or ""), *inner])


SUBTASKS = {
    "transcript-history": (tr.TranscriptTailer, "backfill", "transcripts"),
    "transcript-offsets": (sources, "_save_offsets", "transcripts"),
    "tmux-control": (ControlClient, "run", "tmux_clients"),
}


@pytest.mark.asyncio
@pytest.mark.parametrize("subtask", sorted(SUBTASKS))
async def test_a_sub_task_that_crashes_is_logged_once_and_comes_back(
    tmp_path: Path,
    subtask: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    owner, attr, part_name = SUBTASKS[subtask]
    calls: list[int] = []
    go = crashing_once(monkeypatch, owner, attr, calls)
    caplog.set_level(logging.INFO, logger="purplemux")
    async with runtime(tmp_path) as rt:
        supervisor = Supervisor(rt, backoff_start=0.05)
        supervisor.start(PARTS[part_name], name=part_name)
        if part_name == "tmux_clients":
            rt.tmux.want(None)  # a server named: its client's task starts
        await until(lambda: len(calls) >= 1)  # (one per agent's tailer: the first one dies)
        started = len(calls)
        go.set()  # the sub-task dies with an exception
        await until(lambda: len(calls) > started)  # ... and comes back with its part
        assert part_name in supervisor.running()
        await supervisor.stop()
    said = crash_records(caplog, attr)
    assert len(said) == 1, [r.getMessage() for r in said]
    assert said[0].levelno == logging.ERROR and part_name in said[0].getMessage()
    assert f"RuntimeError: {attr} killed by the test" in supervisor.crashes[part_name].last


@pytest.mark.asyncio
async def test_the_engine_comes_back_after_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from purplemux.daemon.engine import Engine

    calls: list[int] = []
    go = crashing_once(monkeypatch, Engine, "run", calls)
    caplog.set_level(logging.INFO, logger="purplemux")
    async with runtime(tmp_path, engine=False) as rt:
        supervisor = Supervisor(rt, backoff_start=0.05)
        supervisor.start(engine_part, name="engine")
        await until(lambda: len(calls) == 1)
        go.set()
        await until(lambda: len(calls) == 2 and rt.engine._running)
        await rt.engine.stop()
        assert await supervisor.wait("engine", HANG)
    assert len(crash_records(caplog, "run")) == 1


# --- the daemon: SIGTERM after a busy spell, while a 150 MB transcript is read ----------------


def test_sigterm_while_a_150_mb_transcript_is_read_exits_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22's scenario, scaled in hook events (the 150 MB transcript kept): the process
    exits (a hang past 10 s fails), and the next start resumes the transcript from the offset
    stored on the way out instead of reading it again."""
    sizes = shutdown.QUICK
    result = shutdown.run(tmp_path, sizes)
    with capsys.disabled():
        print("\n" + shutdown.report(result, sizes))
    assert result.exit_seconds is not None, result.log
    assert result.hooks_sent == sizes.hook_events
    at, after = result.reading_at_sigterm, result.after_restart
    assert at["backfill_pending"] == 1  # it was still being read at SIGTERM
    assert (after["resumed"], after["started_over"]) == (1, 0)
    # What was summed before SIGTERM is not read again (the tail, a few MB, is).
    assert after["bytes_read"] <= result.transcript_bytes - at["history_bytes"] + (8 << 20)
    assert "did not stop" not in result.log and "Traceback" not in result.log


def test_sigterm_does_not_wait_on_a_half_sent_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A client that sent a hook's headers and part of its body, then nothing (a slow or
    hostile local client), with WebSocket viewers connected: SIGTERM still ends the process,
    open requests being given a bounded grace (not the minute a request may take)."""
    d = Daemon.under(tmp_path, PURPLEMUX_REQUEST_TIMEOUT="60").start()
    try:
        viewers = [
            ws_connect(
                f"ws://127.0.0.1:{d.port}/api/stream",
                additional_headers={"Authorization": f"Bearer {d.token}"},
            )
            for _ in range(3)
        ]
        for ws in viewers:
            assert json.loads(ws.recv(timeout=10))["type"] == "snapshot"
        slow = socket.create_connection(("127.0.0.1", d.port), timeout=10)
        head = (
            "POST /api/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {d.token}\r\nContent-Type: application/json\r\n"
            "Content-Length: 1000\r\n\r\n"
        )
        slow.sendall(head.encode() + b'{"session_id": ')  # and nothing more
        assert d.proc is not None
        began = time.monotonic()
        d.proc.send_signal(signal.SIGTERM)
        try:
            d.proc.wait(timeout=HANG)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the daemon did not exit within {HANG:.0f}s of SIGTERM: {d.logs()}")
        took = time.monotonic() - began
        with capsys.disabled():
            print(f"\nSIGTERM with a half-sent request and 3 viewers -> exit: {took:.2f} s")
        slow.close()
        for ws in viewers:
            ws.close()
    finally:
        d.kill()


STUBBORN_DAEMON = """
import asyncio
from purplemux.server import serve
from purplemux.server import app
from purplemux.io.settings import Settings


async def stubborn(rt):
    '''A part that swallows every cancellation (the bug the watchdog is there for).'''
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            pass


app.default_parts = lambda settings: [stubborn]
serve.serve(Settings.from_env(watch_sources=False))
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_task_that_swallows_its_cancellation_cannot_keep_the_process_alive(
    tmp_path: Path, sig: signal.Signals, capsys: pytest.CaptureFixture[str]
) -> None:
    """The last resort: whatever still runs some seconds after the signal, the process ends
    rather than waiting for a SIGKILL. After Ctrl-C (SIGINT) asyncio cancels every task left and
    waits for them all, for ever if one swallows it: the watchdog then ends the process (status
    70, and a line saying why). uvicorn re-raises a SIGTERM once the lifespan is done, which
    ends the process before that wait."""
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude")
    d.start("-c", STUBBORN_DAEMON, cwd=REPO)
    assert d.proc is not None
    began = time.monotonic()
    d.proc.send_signal(sig)
    try:
        code = d.proc.wait(timeout=HANG + 5)
    except subprocess.TimeoutExpired:
        d.kill()
        pytest.fail(f"the daemon did not exit after {sig.name}: {d.logs()}")
    took = time.monotonic() - began
    with capsys.disabled():
        print(f"\n{sig.name} with a part that swallows its cancellation -> exit: {took:.2f} s")
    logs = d.logs()
    assert "stubborn did not stop" in logs  # the supervisor named it
    if sig is signal.SIGINT:
        assert code == 70 and "a task did not end when cancelled" in logs
    else:
        assert code == -signal.SIGTERM
