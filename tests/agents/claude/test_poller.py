"""tmux panes and the process tree, against a real private tmux server and a fake `claude`."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from purplemux.agents.claude import poller as claude_poller
from purplemux.agents.claude.poller import Known, ProcessPoller, find_claude_under
from purplemux.agents.claude.process import is_claude
from purplemux.core.events import ProcessGone, ProcessSeen, Source
from purplemux.io import proctable as processes
from purplemux.io.proctable import (
    ProcessTable,
    ProcInfo,
    list_panes,
    snapshot,
    socket_from_tmux_env,
    tmux_env,
)
from tests.support import wait_for


@pytest.fixture(autouse=True)
def _needs_tmux() -> None:
    """Fails (never skips) without tmux, as the Chromium and Claude tiers do."""
    if shutil.which("tmux") is None:
        pytest.fail("tmux is not installed: `make test-deps` (scripts/install-test-deps.sh)")


@dataclass
class Server:
    name: str
    socket: str

    def tmux(self, *args: str) -> str:
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        done = subprocess.run(
            ["tmux", "-L", self.name, *args], capture_output=True, text=True, env=env, check=False
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()


@pytest.fixture
def fake_claude(tmp_path: Path) -> Path:
    sleep = shutil.which("sleep")
    assert sleep
    path = tmp_path / "bin" / "claude"
    path.parent.mkdir()
    shutil.copy(sleep, path)
    return path


@pytest.fixture
def server(fake_claude: Path) -> Iterator[Server]:
    srv = Server(f"pmx-test-{uuid.uuid4().hex[:8]}", "")
    # Pane %0: the pane's own process is claude (exec). Pane %1: claude is a shell's child.
    srv.tmux("new-session", "-d", "-s", "t", "-x", "120", "-y", "40", f"exec {fake_claude} 60")
    srv.tmux("new-window", "-t", "t:", f"{fake_claude} 60; echo done")
    srv.socket = srv.tmux("display-message", "-p", "#{socket_path}")
    try:
        yield srv
    finally:
        subprocess.run(["tmux", "-L", srv.name, "kill-server"], capture_output=True, check=False)
        if srv.socket:
            Path(srv.socket).unlink(missing_ok=True)  # tmux leaves the socket file behind


def test_socket_from_tmux_env() -> None:
    assert socket_from_tmux_env("/tmp/tmux-1000/default,4242,0") == "/tmp/tmux-1000/default"
    assert socket_from_tmux_env("/tmp/s") == "/tmp/s"
    assert socket_from_tmux_env("") is None and socket_from_tmux_env(None) is None


def test_list_panes_and_find_claude(server: Server, fake_claude: Path) -> None:
    panes = list_panes(server.socket)
    assert [(p.pane_id, p.session, p.window, p.socket) for p in panes] == [
        ("%0", "t", "0", server.socket),
        ("%1", "t", "1", server.socket),
    ]
    own, shell = panes

    def both() -> tuple[int, int] | None:
        table = snapshot()
        a, b = find_claude_under(own.pid, table), find_claude_under(shell.pid, table)
        return (a, b) if a and b else None

    found = wait_for(both)
    assert isinstance(found, tuple)
    assert found[0] == own.pid  # exec: the pane's process is claude itself
    assert found[1] != shell.pid  # a child of the pane's shell
    assert snapshot().procs[found[1]].ppid == shell.pid
    assert own.location().pane == "%0" and own.location().socket == server.socket


def test_tmux_absent_or_no_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert list_panes(str(tmp_path / "no-such-socket")) == []
    assert list_panes(tmux=str(tmp_path / "no-tmux")) == []
    monkeypatch.setenv("PATH", str(tmp_path))
    assert list_panes() == []
    assert list_panes("/tmp/whatever") == []


def test_is_claude() -> None:
    def info(name: str, *argv: str) -> ProcInfo:
        return ProcInfo(1, 0, name, argv, 0.0)

    npm = "/usr/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
    assert is_claude(info("claude.exe", npm))
    assert is_claude(info("claude", "claude"))
    assert is_claude(info("MainThread", "/home/u/.local/bin/claude", "--resume"))
    assert is_claude(info("node", "node", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"))
    assert not is_claude(info("node", "node", "server.js"))
    assert not is_claude(info("vim", "vim", "claude.md"))
    assert not is_claude(info("bash", "bash", "-c", "claude-code"))


def test_find_claude_prefers_the_outermost() -> None:
    table = ProcessTable()
    for pid, ppid, name in [(1, 0, "bash"), (2, 1, "claude"), (3, 2, "claude"), (4, 1, "vim")]:
        table.procs[pid] = ProcInfo(pid, ppid, name, (name,), 0.0)
        table.children.setdefault(ppid, []).append(pid)
    assert find_claude_under(1, table) == 2
    assert find_claude_under(4, table) is None
    assert find_claude_under(99, table) is None


@dataclass(frozen=True)
class Claim:
    pid: int
    session_id: str
    ok: bool = True
    cwd: str | None = None

    def started_as(self, create_time: float) -> bool:
        return self.ok


def claude_pids(server: Server) -> tuple[int, int]:
    panes = list_panes(server.socket)

    def both() -> tuple[int, int] | None:
        table = snapshot()
        a, b = (find_claude_under(p.pid, table) for p in panes)
        return (a, b) if a and b else None

    found = wait_for(both)
    assert isinstance(found, tuple)
    return found


@pytest.mark.asyncio
async def test_poller_seen_then_gone(server: Server) -> None:
    own, child = claude_pids(server)
    claims = [Claim(own, "sess-a", cwd="/home/dev/proj")]
    poller = ProcessPoller(lambda: claims, default_socket=False, clock=lambda: 123.0)
    poller.add_socket(server.socket)
    # sess-b is known only by the pane its hooks reported.
    known = {"sess-a": Known(), "sess-b": Known(pane="%1", socket=server.socket)}
    events = await poller.poll(known)
    seen = {e.session_id: e for e in events if isinstance(e, ProcessSeen)}
    assert set(seen) == {"sess-a", "sess-b"} and len(events) == 2
    a, b = seen["sess-a"], seen["sess-b"]
    assert (a.pid, a.at, a.source) == (own, 123.0, Source.PROCESS)
    assert a.tmux is not None and (a.tmux.pane, a.tmux.session, a.tmux.window) == ("%0", "t", "0")
    assert a.tmux.socket == server.socket
    # The folder the session file names comes along (2.1.332 writes the file before its status).
    assert (a.cwd, b.cwd) == ("/home/dev/proj", None)
    assert b.pid == child and b.tmux is not None and b.tmux.pane == "%1"
    assert await poller.poll(known) == []  # nothing changed
    again = ProcessPoller(
        lambda: claims, sockets=[server.socket], default_socket=False, clock=lambda: 999.0
    )
    assert [e.id for e in await again.poll(known)] == [e.id for e in events]  # deterministic

    os.kill(child, 9)
    wait_for(lambda: child not in snapshot().procs)
    events = await poller.poll(known)
    got = [(type(e), e.session_id, getattr(e, "pid", None)) for e in events]
    assert got == [(ProcessGone, "sess-b", child)]


@pytest.mark.asyncio
async def test_poller_pid_reuse_and_clear(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    own, _ = claude_pids(server)
    claims = [Claim(own, "sess-a")]
    poller = ProcessPoller(lambda: claims, sockets=[server.socket], default_socket=False)
    assert [type(e) for e in await poller.poll({})] == [ProcessSeen]

    # /clear: the process's session file now names another session.
    claims[0] = Claim(own, "sess-new")
    events = await poller.poll({})
    assert [(type(e), e.session_id) for e in events] == [
        (ProcessGone, "sess-a"),
        (ProcessSeen, "sess-new"),
    ]

    # The pid now belongs to a process started later: the old one is gone.
    real = snapshot

    def reused(known: processes.Cmdlines | None = None) -> ProcessTable:
        table = real(known)
        table.procs[own] = replace(table.procs[own], create_time=table.procs[own].create_time + 50)
        return table

    monkeypatch.setattr(claude_poller, "snapshot", reused)  # the table the poller walks
    claims[0] = Claim(own, "sess-new", ok=False)  # its file's procStart no longer matches
    events = await poller.poll({})
    assert [(type(e), e.session_id) for e in events] == [(ProcessGone, "sess-new")]


@pytest.mark.asyncio
async def test_poller_restored_session_whose_process_is_gone() -> None:
    poller = ProcessPoller(default_socket=False)
    known = {"old": Known(pid=999_999_999, alive=True), "never": Known(pid=999_999_998)}
    events = await poller.poll(known)
    assert [(type(e), e.session_id) for e in events] == [(ProcessGone, "old")]


@pytest.mark.asyncio
async def test_polls_never_overlap() -> None:
    poller = ProcessPoller(default_socket=False)
    known = {"x": Known(pid=999_999_999, alive=True)}
    first, second = await asyncio.gather(poller.poll(known), poller.poll(known))
    assert len(first) == 1 and second == []


@pytest.mark.asyncio
async def test_poller_without_tmux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    me = os.getpid()
    poller = ProcessPoller(lambda: [Claim(me, "s")])
    events = await poller.poll({"s": Known(pane="%3")})
    assert [(type(e), getattr(e, "pid", None)) for e in events] == [(ProcessSeen, me)]
    assert isinstance(events[0], ProcessSeen) and events[0].tmux is None


@pytest.mark.asyncio
async def test_poller_learns_a_hookless_claudes_tmux_server_from_its_environment(
    server: Server,
) -> None:
    # Claude started without our hooks: only its session file (the claim) names it. The
    # poller has not been told about this tmux server; the process's own $TMUX tells it.
    own, _ = claude_pids(server)
    claims = [Claim(own, "hookless")]
    poller = ProcessPoller(lambda: claims, default_socket=False)
    events = await poller.poll({})
    (seen,) = [e for e in events if isinstance(e, ProcessSeen)]
    assert seen.tmux is not None
    assert (seen.tmux.socket, seen.tmux.pane, seen.tmux.session) == (server.socket, "%0", "t")


@pytest.mark.asyncio
async def test_a_background_worker_with_no_pane_lives_while_its_process_does(
    fake_claude: Path,
) -> None:
    # A `claude --bg` worker runs in a pty of Claude's own daemon: no tmux pane, ever. Its
    # session file names its pid (the spare's file is no claim: parts/sources.py).
    worker = subprocess.Popen([str(fake_claude), "600"], start_new_session=True)
    try:
        claims = [Claim(worker.pid, "bg-1", cwd="/w/proj")]
        poller = ProcessPoller(lambda: claims, default_socket=False, clock=lambda: 5.0)
        events = await poller.poll({"bg-1": Known()})
        assert [(type(e), e.session_id) for e in events] == [(ProcessSeen, "bg-1")]
        assert isinstance(events[0], ProcessSeen) and events[0].tmux is None
        # Polled again with no pane anywhere: nothing ends it.
        assert await poller.poll({"bg-1": Known(pid=worker.pid, alive=True)}) == []
    finally:
        worker.kill()
        worker.wait()
    events = await poller.poll({"bg-1": Known(pid=worker.pid, alive=True)})
    assert [(type(e), e.session_id) for e in events] == [(ProcessGone, "bg-1")]


def test_a_walk_reuses_a_settled_argv_and_reads_it_again_after_an_exec(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(processes, "SETTLED_ARGV", 0.0)  # (else only after 10 s of its life)
    proc = subprocess.Popen(["sh", "-c", "read line; exec sleep 30"], stdin=subprocess.PIPE)
    try:
        known = processes.Cmdlines()
        first = wait_for(lambda: processes.snapshot(known).procs.get(proc.pid))
        assert first.name == "sh" and first.cmdline[:2] == ("sh", "-c")
        assert known.by_pid[proc.pid][2] == first.cmdline  # kept for the next walk
        assert processes.snapshot(known).procs[proc.pid].cmdline == first.cmdline
        # The same pid and start time, another program: its command name tells, argv is re-read.
        assert proc.stdin is not None
        proc.stdin.write(b"go\n")
        proc.stdin.flush()
        now = wait_for(
            lambda: (lambda p: p if p and p.name == "sleep" else None)(
                processes.snapshot(known).procs.get(proc.pid)
            )
        )
        assert now.cmdline == ("sleep", "30") and now.create_time == first.create_time
    finally:
        proc.kill()
        proc.wait()
        if proc.stdin is not None:
            proc.stdin.close()


def test_tmux_env_is_read_from_a_real_process_wherever_it_sits() -> None:
    """$TMUX first, after an environment longer than one read (past 4 KiB), absent, or only as
    the end of another name (NOT_TMUX=): each read from a live process's /proc environ."""
    long = "x" * 6000
    cases = {
        "first": (["TMUX=/tmp/t1/default,1,0", f"LONG={long}"], "/tmp/t1/default,1,0"),
        "after": ([f"LONG={long}", "NOT_TMUX=no", "TMUX=/tmp/t2/s,2,1"], "/tmp/t2/s,2,1"),
        "absent": ([f"LONG={long}", "NOT_TMUX=/tmp/t3/s,3,0"], None),
        "empty": (["TMUX="], ""),
    }
    procs = {
        name: subprocess.Popen(["env", "-i", *env, "sleep", "30"])
        for name, (env, _) in cases.items()
    }
    try:
        for name, proc in procs.items():
            want = cases[name][1]
            # (env execs sleep: the environment is the one given once sleep sleeps; its name
            # changes a moment before the kernel sets where the new environment lies)
            wait_for(
                lambda p=proc: _proc_name(p.pid) == "sleep" and _proc_state(p.pid) == "S",
                what=f"{name} to exec and sleep",
            )
            assert tmux_env(proc.pid) == want, name
        assert tmux_env(2**22 + 1) is None  # no such process
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait()


def _proc_state(pid: int) -> str:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rpartition(b")")[2].split()[0].decode()


def _proc_name(pid: int) -> str:
    with open(f"/proc/{pid}/comm") as f:
        return f.read().strip()
