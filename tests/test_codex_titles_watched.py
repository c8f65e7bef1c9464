"""An idle Codex pane costs no timer: tmux tells the daemon when its title changes.

The daemon's control client is subscribed to the titles of the Codex panes of each tmux server
(`refresh-client -B`, a format looping over every session, so a pane in a session the client is
not attached to is seen too). The safety nets are set to a day (PURPLEMUX_POLL_INTERVAL, which
the Codex panes' quiet look follows), so a change seen below was told by tmux, not found by a
timer. The Codex TUI is a copy of `sleep` named codex in a real tmux pane, with the thread
reference file a real TUI writes at its start (codex.md); its title is set as Codex sets it.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents.codex.pane_watch import TITLES, title_watch
from purplemux.agents.codex.threads import OPENED_DIR
from purplemux.io.tmux_control import SUBSCRIPTION, TmuxControl
from tests.support import Daemon, wait_for, wait_for_async

A_DAY = "86400"


class Server:
    """A private tmux server (`-L name`, no config)."""

    def __init__(self) -> None:
        self.name = f"pmx-cxt-{uuid.uuid4().hex[:8]}"

    def tmux(self, *args: str) -> str:
        cmd = ["tmux", "-L", self.name, "-f", "/dev/null", *args]
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.name, "kill-server"], capture_output=True)


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.kill()


def _uuid7() -> str:
    ms = int(time.time() * 1000)
    raw = (ms << 80) | (0x7 << 76) | (uuid.uuid4().int & ((1 << 76) - 1))
    raw = (raw & ~(0x3 << 62)) | (0x2 << 62)
    return str(uuid.UUID(int=raw))


def test_the_title_watch_format_names_only_the_panes_asked_for() -> None:
    fmt = title_watch({"%7", "%3"})
    assert fmt.startswith("#{S:#{W:#{P:") and "|%3|%7|" in fmt


@pytest.mark.asyncio
async def test_a_subscription_reports_a_title_change_in_a_session_not_attached(
    server: Server,
) -> None:
    server.tmux("new-session", "-d", "-s", "codex", "sleep 600")
    watched = server.tmux("display", "-p", "-t", "codex", "#{pane_id}")
    server.tmux("new-session", "-d", "-s", "other", "sleep 600")
    other = server.tmux("display", "-p", "-t", "other", "#{pane_id}")
    socket = server.tmux("display", "-p", "#{socket_path}")
    control = TmuxControl()
    heard: list[str] = []
    got = asyncio.Event()

    def listen(_socket: str, line: str) -> None:
        if line.startswith(SUBSCRIPTION):
            heard.append(line)
            got.set()

    control.listen(listen)
    control.subscribe(socket, TITLES, title_watch({watched}))
    runner = asyncio.create_task(control.run())
    try:
        await wait_for_async(lambda: control.subscribed(socket, TITLES), what="tmux to take it")
        # The client sits in the newest session ("other"), the watched pane is in "codex".
        clients = server.tmux("list-clients", "-F", "#{client_control_mode} #{session_name}")
        assert "1 other" in clients.splitlines()
        await asyncio.wait_for(got.wait(), 5)  # the first value
        got.clear()
        heard.clear()
        server.tmux("select-pane", "-t", watched, "-T", "⠸ hello | proj")
        await asyncio.wait_for(got.wait(), 5)
        assert any(f"{watched}=⠸ hello | proj|" in line for line in heard), heard
        # A pane not asked for changes nothing that is reported.
        heard.clear()
        server.tmux("select-pane", "-t", other, "-T", "not watched")
        await asyncio.sleep(2.5)  # tmux expands subscriptions once a second
        assert not any("not watched" in line for line in heard), heard
        # Dropped: no more reports.
        control.subscribe(socket, TITLES, None)
        assert not control.subscribed(socket, TITLES)
    finally:
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)


def _session(d: Daemon, sid: str) -> dict[str, Any] | None:
    return d.session(sid)


def test_an_idle_codex_panes_title_change_is_seen_without_a_timer(
    tmp_path: Path, server: Server
) -> None:
    codex_home = tmp_path / "codex"
    (codex_home / OPENED_DIR).mkdir(parents=True)
    proj = tmp_path / "proj"
    proj.mkdir()
    binary = tmp_path / "bin" / "codex"
    binary.parent.mkdir()
    shutil.copy(shutil.which("sleep") or "/bin/sleep", binary)
    server.tmux("new-session", "-d", "-s", "codex", "-c", str(proj), "-e",
                f"CODEX_HOME={codex_home}", f"exec {binary} 600")  # fmt: skip
    pane = server.tmux("display", "-p", "-t", "codex", "#{pane_id}")
    server.tmux("select-pane", "-t", pane, "-T", "proj")  # a fresh TUI's title: the project
    server.tmux("new-session", "-d", "-s", "shell", "sleep 600")  # where the client sits
    d = Daemon(
        home=tmp_path / "home",
        claude_dir=tmp_path / "claude",
        env_extra={"PURPLEMUX_POLL_INTERVAL": A_DAY, "PURPLEMUX_CODEX_HOMES": str(codex_home)},
    ).start()
    try:
        wait_for(lambda: d.api("GET", "/api/health") is not None)
        # The TUI opens its thread (what a real one does at its start): the daemon finds it.
        thread = _uuid7()
        (codex_home / OPENED_DIR / thread).write_text("")
        s = wait_for(
            lambda: (lambda x: x if x and x["tmux"] and x["state"] == "idle" else None)(
                _session(d, thread)
            )
        )
        assert s["agent"] == "codex" and s["tmux"]["pane"] == pane
        time.sleep(1.5)  # the looks that followed the change are over
        # Only the title says the TUI works (its start-up spinner: no hook, no rollout line).
        server.tmux("select-pane", "-t", pane, "-T", "⠸ proj")
        s = wait_for(lambda: (lambda x: x if x and x["state"] == "busy" else None)(
            _session(d, thread)))  # fmt: skip
        assert s["tmux"]["pane"] == pane
        server.tmux("select-pane", "-t", pane, "-T", "[ . ] Action Required | proj")
        wait_for(lambda: (lambda x: x if x and x["state"] == "needs-input" else None)(
            _session(d, thread)))  # fmt: skip
    finally:
        d.stop()
