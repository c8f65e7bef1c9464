"""Nothing ticks while nothing happens: each change is noticed from the system's own signal.

The process poll's timer is set to a day (PURPLEMUX_POLL_INTERVAL), so a change seen below was
seen without a poll tick: a session file appearing (inotify), a Claude process exiting (its
pidfd), a pane closing and a pane mark written (the tmux server's control client).
"""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from purplemux.io.tmux_control import TmuxControl
from tests.support import Daemon, run_hook, wait_for, wait_for_async
from tests.support.fake_claude import CWD, FakeClaude

A_DAY = "86400"


@pytest.fixture
def claude(tmp_path: Path) -> Iterator[FakeClaude]:
    fake = FakeClaude(tmp_path, tmp_path / "claude", f"ev-{uuid.uuid4().hex[:8]}")
    yield fake
    fake.kill()


def quiet_daemon(tmp_path: Path, claude_dir: Path) -> Daemon:
    return Daemon(
        home=tmp_path / "home",
        claude_dir=claude_dir,
        env_extra={"PURPLEMUX_POLL_INTERVAL": A_DAY},
    ).start()


def test_a_new_session_file_and_its_process_exit_are_seen_without_a_poll(
    tmp_path: Path, claude: FakeClaude
) -> None:
    # A Claude outside tmux: its exit is told by nothing but the process itself.
    proc = subprocess.Popen([str(tmp_path / "bin" / "claude"), "600"])
    claude.pid = proc.pid
    d = quiet_daemon(tmp_path, claude.claude_dir)
    try:
        # The daemon has made its first look; only then does Claude's file appear.
        wait_for(lambda: d.api("GET", "/api/health") is not None)
        claude.status("idle")
        s = wait_for(
            lambda: (lambda x: x if x and x["alive"] is True else None)(d.session(claude.sid))
        )
        assert s["pid"] == proc.pid and s["cwd"] == CWD and s["tmux"] is None
        proc.kill()
        proc.wait()
        s = wait_for(lambda: (lambda x: x if x and x["ended"] else None)(d.session(claude.sid)))
        assert s["alive"] is False
        assert all(x["id"] != claude.sid for x in d.sessions(all=False))
    finally:
        d.stop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_pane_closed_and_the_pane_mark_go_through_the_control_client(
    tmp_path: Path, claude: FakeClaude
) -> None:
    claude.status("idle")
    d = quiet_daemon(tmp_path, claude.claude_dir)
    try:
        hook = {"session_id": claude.sid, "cwd": CWD}
        run_hook(
            d.home,
            {**hook, "hook_event_name": "UserPromptSubmit", "prompt": "go"},
            pane=claude.pane,
            tmux=f"{claude.socket},1,0",
        )
        s = wait_for(
            lambda: (lambda x: x if x and (x["tmux"] or {}).get("session") else None)(
                d.session(claude.sid)
            )
        )
        assert s["tmux"]["pane"] == claude.pane and s["state"] == "busy"
        # The daemon holds one control client on that server, and marks the pane through it.
        clients = wait_for(
            lambda: [
                c
                for c in claude.tmux("list-clients", "-F", "#{client_flags}").split("\n")
                if "control-mode" in c
            ]
        )
        assert len(clients) == 1
        wait_for(
            lambda: (
                claude.tmux("show-options", "-p", "-v", "-t", claude.pane, "@purplemux_state")
                == "busy"
            )
        )
        # The pane is closed: its Claude goes with it, and the session ends.
        claude.tmux("kill-pane", "-t", claude.pane)
        s = wait_for(lambda: (lambda x: x if x and x["ended"] else None)(d.session(claude.sid)))
        assert s["alive"] is False
    finally:
        d.stop()
    # Stopping the daemon ends its control client (the fake's second window keeps the server).


@pytest.mark.asyncio
async def test_control_client_reports_pane_changes_and_runs_commands(claude: FakeClaude) -> None:
    claude.tmux("new-window", "-d", "-t", "work", "sleep 600")
    claude.tmux("split-window", "-d", "-t", "work:1", "sleep 600")
    control = TmuxControl()
    heard: list[str] = []
    got = asyncio.Event()

    def listen(socket: str, line: str) -> None:
        heard.append(line)
        got.set()

    control.listen(listen)
    client = control.want(claude.socket)
    runner = asyncio.create_task(control.run())
    try:
        await wait_for_async(lambda: client.connected, what="the control client to connect")
        # A write over the client's stdin, answered in order; a bad one says so.
        assert (
            await control.command(
                claude.socket,
                ["set-option", "-p", "-t", claude.pane, "@purplemux_state", "needs-input"],
            )
            is True
        )
        assert (
            claude.tmux("show-options", "-p", "-v", "-t", claude.pane, "@purplemux_state")
            == "needs-input"
        )
        assert (
            await control.command(
                claude.socket, ["set-option", "-p", "-t", "%999", "@purplemux_state", "x"]
            )
            is False
        )
        # A pane closes: tmux tells the client.
        got.clear()
        panes = claude.tmux("list-panes", "-t", "work:1", "-F", "#{pane_id}").split()
        claude.tmux("kill-pane", "-t", panes[-1])
        await asyncio.wait_for(got.wait(), 5)
        assert any(
            line.split(" ", 1)[0] in ("%layout-change", "%unlinked-window-close", "%window-close")
            for line in heard
        )
        # The server goes away: no client, and commands fall back to the caller.
        claude.kill()
        await wait_for_async(lambda: not client.connected, what="the control client to drop")
        assert await control.command(claude.socket, ["list-panes"]) is None
    finally:
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
