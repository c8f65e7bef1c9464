"""tmux: the `tmux-status` badge, and `@purplemux_state` on real panes of a private tmux server."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from fastapi.testclient import TestClient

from purplemux.cli import main
from purplemux.cli import tmux_status as ts
from purplemux.core import termtext
from purplemux.core.model import Session, State, TmuxLocation
from purplemux.core.present import present
from purplemux.io import tmux as tmux_run
from purplemux.io.tmux_control import TmuxControl
from purplemux.parts import pane_marker as pm
from purplemux.server.app import create_app
from tests.support import (
    REPO,
    Daemon,
    cli_sees,
    fake_command,
    free_port,
    hook,
    post_hook,
    run_hook,
    settings_for,
    wait_for,
    wait_for_async,
)

# --- the badge --------------------------------------------------------------------------------


def sessions(*states: str, ended: str | None = None) -> list[dict[str, Any]]:
    live = [{"id": f"s{n}", "state": st, "ended": False} for n, st in enumerate(states)]
    return live + ([{"id": "gone", "state": ended, "ended": True}] if ended else [])


def test_counts_leave_ended_sessions_out() -> None:
    counts = ts.count(sessions("busy", "busy", "review", "idle", "weird", ended="needs-input"))
    assert counts == {
        "needs_input": 0,
        "review": 1,
        "busy": 2,
        "idle": 1,
        "unknown": 1,
        "total": 5,
    }


def test_badge_omits_zero_counts_and_is_empty_when_nothing_needs_showing() -> None:
    assert ts.render(ts.count(sessions("needs-input", "needs-input", "review", "busy"))) == (
        "⚠2 ●1 ◐1"
    )
    assert ts.render(ts.count(sessions("busy", "idle"))) == "◐1"
    assert ts.render(ts.count(sessions("idle", "idle"))) == ""
    assert ts.render(ts.count([])) == ""


def test_tmux_colours_and_formats() -> None:
    counts = ts.count(sessions("needs-input", "busy", "idle"))
    assert ts.render(counts, tmux_colours=True) == (
        "#[fg=yellow]⚠1#[default] #[fg=cyan]◐1#[default]"
    )
    assert ts.render(counts, "{needs_input}/{total} [{badge}]") == "1/3 [⚠1 ◐1]"
    with pytest.raises(ValueError, match=r"placeholders: \{needs_input\}"):
        ts.render(counts, "{needs}")
    with pytest.raises(ValueError):
        ts.render(counts, "{0}")


def test_needs_names_lists_who_needs_you_sanitised() -> None:
    rows = [
        {"id": "r1", "state": "review", "ended": False, "view": {"name": "web"}},
        {"id": "b1", "state": "busy", "ended": False, "view": {"name": "busy-one"}},
        {"id": "n1", "state": "needs-input", "view": {"name": "api\x1b]0;x\x07-server"}},
        {"id": "n2", "state": "needs-input", "ended": True, "view": {"name": "gone"}},
        {"id": "n3", "state": "needs-input", "ended": False, "name": "evil#[fg=red]\x9b\r\nname"},
    ]
    # `#` doubled: tmux draws `##[fg=red]` as the text `#[fg=red]`, never as a style.
    assert ts.needs_names(rows) == "api-server, evil##[fg=red] name, web"
    many = [{"id": f"s{n}", "state": "review", "name": f"p{n}"} for n in range(7)]
    assert ts.needs_names(many) == "p0, p1, p2, p3, p4 +2"
    assert ts.needs_names([]) == ""
    assert termtext.tmux_name("x" * 100) == "x" * 39 + "…"
    counts = ts.count(rows)
    assert ts.render(counts, "{needs_input} {needs_names}", names="a, b") == "2 a, b"


def test_http_body_parsing() -> None:
    ok = b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nbody"
    assert ts._body(ok) == b"body"
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nbo\r\n2\r\ndy\r\n0\r\n\r\n"
    )
    assert ts._body(chunked) == b"body"
    for bad in (
        b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\nbody",
        b"HTTP/1.1 200 OK\r\n",
    ):
        with pytest.raises(OSError):
            ts._body(bad)


# --- tmux-status against a real daemon --------------------------------------------------------


@pytest.fixture
def daemon(daemon: Daemon, monkeypatch: pytest.MonkeyPatch) -> Daemon:
    """The real daemon (tests/support/plugin.py), which the CLI in this process sees."""
    return cli_sees(daemon, monkeypatch)


def tmux_status(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["tmux-status", *argv], out=out), out.getvalue()


def test_tmux_status_counts_live_sessions(daemon: Daemon) -> None:
    assert tmux_status() == (0, "")  # a daemon with no sessions: nothing to show
    hook(daemon, "ni", "UserPromptSubmit", pane="%1", prompt="go")
    hook(daemon, "ni", "PermissionRequest", pane="%1", tool_name="Bash", tool_input={})
    for sid in ("b1", "b2", "rv"):
        hook(daemon, sid, "UserPromptSubmit", pane=f"%{sid}", prompt="go")
    hook(daemon, "rv", "Stop", pane="%rv")
    hook(daemon, "idle", "SessionStart", pane="%9", source="startup")
    hook(daemon, "gone", "UserPromptSubmit", pane="%8", prompt="go")
    hook(daemon, "gone", "SessionEnd", pane="%8", reason="exit")

    assert tmux_status() == (0, "⚠1 ●1 ◐2\n")
    assert tmux_status("--tmux-colours") == (
        0,
        "#[fg=yellow]⚠1#[default] #[fg=magenta]●1#[default] #[fg=cyan]◐2#[default]\n",
    )
    fmt = "{needs_input} {review} {busy} {idle} {unknown} {total}"
    assert tmux_status("--format", fmt) == (0, "1 1 2 1 0 5\n")
    # The names of the sessions that need you: needs-input first, then review.
    assert tmux_status("--format", "{badge} {needs_names}") == (0, "⚠1 ●1 ◐2 ni, rv\n")


def test_tmux_status_is_empty_and_exits_0_when_the_daemon_is_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("PURPLEMUX_HOME", str(home))
    monkeypatch.setenv("PURPLEMUX_PORT", str(free_port()))
    assert tmux_status() == (0, "")  # no home, no token
    home.mkdir()
    (home / "token").write_text("tok\n")
    assert tmux_status("--tmux-colours") == (0, "")  # a token, but nobody listens
    assert capsys.readouterr().err == ""
    assert tmux_status("--format", "{bogus}")[0] == 2  # a bad format is said, daemon or not


def test_tmux_status_gives_up_on_a_silent_daemon_within_its_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "token").write_text("tok\n")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()  # accepts connections (the kernel does) but never answers
        (home / "port").write_text(f"{server.getsockname()[1]}\n")
        monkeypatch.setenv("PURPLEMUX_HOME", str(home))
        # It returns (an empty badge, exit 0) instead of waiting for the answer that never
        # comes; how long its budget is, is measured in benchmarks/tmux_status.py.
        assert tmux_status() == (0, "")


def test_tmux_status_process_imports_no_server_code(daemon: Daemon) -> None:
    hook(daemon, "b1", "UserPromptSubmit", prompt="go")
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "purplemux", "tmux-status"],
        env=daemon.env,
        capture_output=True,
        timeout=10,
    )
    assert out.returncode == 0
    assert out.stdout.decode() == "◐1\n"
    imported = {line.split("|")[-1].strip() for line in out.stderr.decode().splitlines()}
    heavy = {"fastapi", "uvicorn", "starlette", "websockets", "urllib.request", "asyncio"}
    assert not imported & heavy, imported & heavy

    daemon.stop()
    out = subprocess.run(
        [sys.executable, "-m", "purplemux", "tmux-status"],
        env=daemon.env,
        capture_output=True,
        timeout=10,
    )
    assert (out.returncode, out.stdout, out.stderr) == (0, b"", b"")


# --- the pane marker, with a scripted tmux ----------------------------------------------------


def session(sid: str, state: State, pane: str = "%1", ended: bool = False) -> Session:
    tmux = TmuxLocation(pane=pane, socket="/tmp/sock")
    return Session(id=sid, state=state, tmux=tmux, ended=ended)


class FakeTmux:
    """Records tmux command lines; can be slowed or broken."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.commands: list[list[list[str]]] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.fail = False

    async def __call__(self, socket: str | None, commands: list[list[str]]) -> bool:
        await self.gate.wait()
        self.calls.append([*(["tmux", "-S", socket] if socket else ["tmux"]), *commands[0]])
        self.commands.append(commands)
        if self.fail:
            raise RuntimeError("tmux exploded")
        return True

    def _writes(self, option: str) -> list[list[str]]:
        return [c for call in self.commands for c in call if option in c]

    def marks(self) -> list[tuple[str, str | None]]:
        """(pane, state) per write of the state option (None: unset)."""
        return [
            (a[a.index("-t") + 1], None if "-u" in a else a[-1]) for a in self._writes(pm.OPTION)
        ]

    def names(self) -> list[str | None]:
        """The name each write of the name option gave the pane (None: unset)."""
        return [None if "-u" in a else a[-1] for a in self._writes(pm.NAME_OPTION)]


async def settle(marker_task: asyncio.Task[None]) -> None:
    for _ in range(20):
        await asyncio.sleep(0)


@asynccontextmanager
async def marking(tmux: FakeTmux) -> AsyncIterator[tuple[pm.PaneMarker, asyncio.Task[None]]]:
    """A PaneMarker on TMUX with its worker running; the worker is cancelled at the end."""
    marker = pm.PaneMarker(tmux)
    task = asyncio.create_task(marker.run())
    try:
        yield marker, task
    finally:
        task.cancel()


@pytest.mark.asyncio
async def test_marker_sets_unsets_and_skips_repeats() -> None:
    tmux = FakeTmux()
    async with marking(tmux) as (marker, task):
        marker.on_change(session("a", State.BUSY))
        await settle(task)
        marker.on_change(session("a", State.BUSY))  # a tool update: same state
        await settle(task)
        marker.on_change(session("a", State.REVIEW))
        await settle(task)
        marker.on_change(session("a", State.REVIEW, ended=True))
        await settle(task)
        marker.on_change(Session(id="no-tmux", state=State.BUSY))
        await settle(task)
    assert tmux.marks() == [("%1", "busy"), ("%1", "review"), ("%1", None)]
    assert tmux.names() == ["session a", None]  # no name or folder: the id; written once
    assert tmux.commands[0] == pm.mark_commands("%1", "busy", "session a", "claude")
    # A change of state alone is one command: the name and agent the pane shows stay.
    assert tmux.commands[1] == [["set-option", "-p", "-t", "%1", pm.OPTION, "review"]]
    assert tmux.calls[0][:3] == ["tmux", "-S", "/tmp/sock"]
    unset = ["set-option", "-p", "-u", "-t", "%2"]
    assert pm.tmux_args(None, "%2", None) == [
        "tmux",
        *unset,
        "@purplemux_state",
        ";",
        *unset,
        "@purplemux_name",
        ";",
        *unset,
        "@purplemux_agent",
    ]


@pytest.mark.asyncio
async def test_marker_names_the_pane_and_renames_it() -> None:
    tmux = FakeTmux()
    async with marking(tmux) as (marker, task):
        s = Session(id="a", state=State.BUSY, tmux=TmuxLocation("%1"), cwd="/w/api-server")
        marker.on_change(s)
        await settle(task)
        marker.on_change(replace(s, title="fix\x1b[31m-the\x07-build\n"))  # Claude renamed it
        await settle(task)
        marker.on_change(replace(s, title="fix-the-build", state=State.REVIEW))
        await settle(task)
    assert tmux.marks() == [("%1", "busy"), ("%1", "review")]
    assert tmux.names() == ["api-server", "fix-the-build"]
    assert [len(call) for call in tmux.commands] == [3, 1, 1]  # each change only its option


@pytest.mark.asyncio
async def test_a_pane_shows_the_state_name_and_agent_of_the_sessions_view() -> None:
    where = TmuxLocation("%1")
    rows = [
        Session(id="a", state=State.BUSY, tmux=where, title="fix the build", cwd="/w/api"),
        Session(id="b", state=State.NEEDS_INPUT, tmux=where, cwd="/w/api-server"),
        Session(id="c", state=State.REVIEW, tmux=where, agent="codex", cwd="/w/web"),
        Session(id="d-7f3e", state=State.UNKNOWN, tmux=where),
    ]
    for row in rows:
        tmux = FakeTmux()
        async with marking(tmux) as (marker, task):
            marker.on_change(row)
            await settle(task)
        view = present(row)
        assert tmux.commands == [pm.mark_commands("%1", view.state, view.name, view.agent)]


@pytest.mark.asyncio
async def test_marker_coalesces_a_burst_to_the_latest_state_per_pane() -> None:
    tmux = FakeTmux()
    tmux.gate.clear()  # tmux is slow: changes pile up meanwhile
    async with marking(tmux) as (marker, task):
        marker.on_change(session("a", State.BUSY))
        await settle(task)  # the worker is now inside the first (slow) call
        for state in (State.NEEDS_INPUT, State.BUSY, State.NEEDS_INPUT, State.REVIEW):
            marker.on_change(session("a", state))
        marker.on_change(session("b", State.BUSY, pane="%2"))
        tmux.gate.set()
        await settle(task)
    assert tmux.marks() == [("%1", "busy"), ("%1", "review"), ("%2", "busy")]


@pytest.mark.asyncio
async def test_an_old_session_ending_does_not_wipe_its_successor_on_the_pane() -> None:
    tmux = FakeTmux()
    async with marking(tmux) as (marker, task):
        marker.on_change(session("old", State.IDLE))
        marker.on_change(session("new", State.IDLE))  # /clear: a new id in the same pane
        await settle(task)
        marker.on_change(session("old", State.IDLE, ended=True))  # its end arrives late
        marker.on_change(session("new", State.BUSY))
        await settle(task)
    assert tmux.marks() == [("%1", "idle"), ("%1", "busy")]


@pytest.mark.asyncio
async def test_marker_survives_a_failing_tmux() -> None:
    tmux = FakeTmux()
    tmux.fail = True
    async with marking(tmux) as (marker, task):
        marker.on_change(session("a", State.BUSY))
        await settle(task)
        tmux.fail = False
        marker.on_change(session("a", State.BUSY))  # not marked before: tried again
        await settle(task)
        assert not task.done()
    assert tmux.marks() == [("%1", "busy"), ("%1", "busy")]


@pytest.mark.asyncio
async def test_the_tmux_runner_never_leaves_a_process_behind(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """tmux.run (every caller's runner): a missing tmux, a refusal, a hang and a cancel each
    end with the process gone; the marker's process runner turns them into False, said once."""
    bin_dir = tmp_path / "bin"
    fake_command(bin_dir, "refuses", "echo 'no such pane' >&2; exit 1\n")
    fake_command(bin_dir, "fine", "exit 0\n")
    pidfile = tmp_path / "pid"
    fake_command(bin_dir, "hangs", f"echo $$ > {pidfile}; exec sleep 30\n")
    with pytest.raises(tmux_run.TmuxError, match="cannot run tmux"):
        await tmux_run.run(None, "-V", tmux=str(tmp_path / "no-tmux"))
    with pytest.raises(tmux_run.TmuxError, match="no such pane"):
        await tmux_run.run(None, "set-option", tmux=str(bin_dir / "refuses"))
    assert await tmux_run.run(None, "-V", tmux=str(bin_dir / "fine")) == ""

    marks = [["set-option", "-p", "-t", "%1", pm.OPTION, "busy"]]
    with caplog.at_level(logging.INFO, logger="purplemux.parts.pane_marker"):
        refused = pm.ProcessRunner(tmux=str(bin_dir / "refuses"))
        assert await refused("/tmp/sock", marks) is False
        assert await refused("/tmp/sock", marks) is False
    said = [r for r in caplog.records if "no such pane" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno > logging.DEBUG  # once, and above debug

    hanging = pm.ProcessRunner(timeout=0.2, tmux=str(bin_dir / "hangs"))
    assert await hanging(None, marks) is False  # a wedged tmux is killed
    wait_for(lambda: pidfile.exists() and pidfile.read_text().strip())
    assert not Path(f"/proc/{pidfile.read_text().strip()}").exists()

    pidfile.unlink()
    task = asyncio.create_task(tmux_run.run(None, "-V", timeout=30, tmux=str(bin_dir / "hangs")))
    await wait_for_async(lambda: pidfile.exists() and pidfile.read_text().strip())
    task.cancel()  # the daemon shuts down mid-call
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not Path(f"/proc/{pidfile.read_text().strip()}").exists()


def test_a_value_is_never_read_as_a_command_separator(tmux: Tmux) -> None:
    """A name ending in `;` (or only `;`) is the pane's name, not tmux's separator, whether the
    marks go through a tmux process or the control client."""
    pane = tmux.pane()
    for name in ("a;", ";", "x ; y"):
        argv = pm.tmux_args(tmux.socket, pane, "busy", name)
        subprocess.run(argv, check=True, capture_output=True, timeout=10)
        assert (tmux.state(pane), tmux.pane_name(pane)) == ("busy", name)


# --- the pane marker on a real tmux server ----------------------------------------------------


@dataclass
class Tmux:
    """A private tmux server: `tmux -L name -f /dev/null`."""

    name: str
    env: dict[str, str]

    def __call__(self, *args: str, check: bool = True) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.name, "-f", "/dev/null", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=10,
        )
        if check and out.returncode != 0:
            raise AssertionError(f"tmux {args}: {out.stderr}")
        return out.stdout.rstrip("\n")

    @property
    def socket(self) -> str:
        return self("display", "-p", "#{socket_path}")

    @property
    def pid(self) -> str:
        return self("display", "-p", "#{pid}")

    def pane(self, target: str = "t") -> str:
        return self("display", "-p", "-t", target, "#{pane_id}")

    def state(self, pane: str) -> str:
        return self("show-options", "-p", "-q", "-v", "-t", pane, pm.OPTION)

    def pane_name(self, pane: str) -> str:
        return self("show-options", "-p", "-q", "-v", "-t", pane, pm.NAME_OPTION)

    def pane_options(self, pane: str) -> str:
        return self("show-options", "-p", "-t", pane)

    def kill(self) -> None:
        socket_path = self("display", "-p", "#{socket_path}", check=False)
        self("kill-server", check=False)
        if socket_path:
            Path(socket_path).unlink(missing_ok=True)


def start_tmux(env: dict[str, str] | None = None, command: str = "sleep 600") -> Tmux:
    server = Tmux(f"pmx-test-{uuid.uuid4().hex[:10]}", {**os.environ, **(env or {})})
    server.env.pop("TMUX", None)
    server("new-session", "-d", "-s", "t", "-x", "160", "-y", "40", command)
    return server


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    server = start_tmux()
    yield server
    server.kill()


def test_pane_option_follows_the_session_on_a_real_tmux_server(tmp_path: Path, tmux: Tmux) -> None:
    settings = settings_for(tmp_path)
    pane = tmux.pane()
    where = f"{tmux.socket},{tmux.pid},0"
    n = 0

    def post(c: TestClient, name: str, **extra: Any) -> None:
        nonlocal n
        n += 1
        payload = {"session_id": "real-1", "hook_event_name": name, "cwd": "/w/p", **extra}
        r = post_hook(c, payload, n, time.time(), pane, tmux=where)
        assert r.status_code < 300, r.text

    with TestClient(create_app(settings, components=[pm.pane_marker])) as c:
        c.headers["Authorization"] = f"Bearer {(settings.home / 'token').read_text().strip()}"
        assert tmux.state(pane) == ""
        post(c, "SessionStart", source="startup")
        wait_for(lambda: tmux.state(pane) == "idle")
        assert tmux.pane_name(pane) == "p"  # no name from Claude yet: the project
        border = tmux("display", "-p", "-t", pane, " #{@purplemux_state} #{@purplemux_name}")
        assert border == " idle p"
        post(c, "UserPromptSubmit", prompt="go")
        wait_for(lambda: tmux.state(pane) == "busy")
        post(c, "PermissionRequest", tool_name="Bash", tool_input={"command": "ls"})
        wait_for(lambda: tmux.state(pane) == "needs-input")
        post(c, "PostToolUse", tool_name="Bash", tool_input={"command": "ls"})
        wait_for(lambda: tmux.state(pane) == "busy")
        post(c, "Stop")
        wait_for(lambda: tmux.state(pane) == "review")
        assert tmux.pane_name(pane) == "p"  # set once, kept through every change of state
        assert f"{pm.AGENT_OPTION} claude" in tmux.pane_options(pane)
        post(c, "SessionEnd", reason="exit")
        wait_for(lambda: pm.OPTION not in tmux.pane_options(pane))
        assert pm.NAME_OPTION not in tmux.pane_options(pane)


def test_pane_marker_marks_live_sessions_at_start_and_unhooks_at_stop(
    tmp_path: Path, tmux: Tmux
) -> None:
    """A daemon restart re-marks live panes from the store; shutdown leaves no listener."""
    settings = settings_for(tmp_path)
    pane = tmux.pane()
    with TestClient(create_app(settings, components=[])) as c:  # first run: no marker
        c.headers["Authorization"] = f"Bearer {(settings.home / 'token').read_text().strip()}"
        for n, name in enumerate(("SessionStart", "UserPromptSubmit", "Stop")):
            payload = {"session_id": "r", "hook_event_name": name, "cwd": "/w"}
            post_hook(c, payload, n, time.time(), pane, tmux=f"{tmux.socket},1,0")
    assert tmux.state(pane) == ""
    app = create_app(settings, components=[pm.pane_marker])
    with TestClient(app):
        wait_for(lambda: tmux.state(pane) == "review")
        engine = app.state.runtime.engine
        assert engine.subscribers() == 1
    assert engine.subscribers() == 0


@pytest.mark.asyncio
async def test_marks_go_through_the_attached_control_client(
    tmux: Tmux, caplog: pytest.LogCaptureFixture
) -> None:
    """Once the control client is attached, each mark is a line on its stdin and the pane
    option really changes (read back with show-options -p); nothing falls back to a process.
    A write tmux refuses (`%error`) is logged above debug, once per reason."""
    pane, socket = tmux.pane(), tmux.socket
    control = TmuxControl()
    fallback: list[list[list[str]]] = []

    async def no_process(sock: str | None, commands: list[list[str]]) -> bool:
        fallback.append(commands)
        return False

    marker = pm.PaneMarker(pm.control_runner(cast(Any, SimpleNamespace(tmux=control)), no_process))
    client = control.want(socket)
    tasks = [asyncio.create_task(control.run()), asyncio.create_task(marker.run())]
    try:
        await asyncio.to_thread(wait_for, lambda: client.connected)
        where = TmuxLocation(pane=pane, socket=socket)
        s = Session(id="s1", state=State.BUSY, tmux=where, cwd="/w/api-server")
        marker.on_change(s)
        await asyncio.to_thread(wait_for, lambda: tmux.state(pane) == "busy")
        assert tmux.pane_name(pane) == "api-server"
        marker.on_change(replace(s, state=State.NEEDS_INPUT, title="fix; the build;"))
        await asyncio.to_thread(wait_for, lambda: tmux.state(pane) == "needs-input")
        assert tmux.pane_name(pane) == "fix; the build;"  # a `;` in a value stays a value
        marker.on_change(replace(s, ended=True))
        await asyncio.to_thread(wait_for, lambda: pm.OPTION not in tmux.pane_options(pane))
        assert pm.NAME_OPTION not in tmux.pane_options(pane)
        assert fallback == []  # every write went through the control client

        bad = [["set-option", "-p", "-t", "%999", pm.OPTION, "x"]]
        with caplog.at_level(logging.DEBUG, logger="purplemux.io.tmux_control"):
            assert await control.commands(socket, bad) is False
            assert await control.commands(socket, bad) is False
            assert await control.commands(socket, [["display-message", "-p", "ok"]]) is True
        refused = [r for r in caplog.records if "refused" in r.getMessage()]
        assert len(refused) == 1 and refused[0].levelno == logging.WARNING
        assert "set-option" in refused[0].getMessage()
        assert "%999" in refused[0].getMessage() or "find pane" in refused[0].getMessage()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


# --- the tmux.conf snippet, rendered by a real tmux client ------------------------------------

MARKER_DAEMON = textwrap.dedent(
    """
    import uvicorn
    from purplemux.parts.pane_marker import pane_marker
    from purplemux.server.app import create_app
    from purplemux.io.settings import Settings

    settings = Settings.from_env(watch_sources=False)
    app = create_app(settings, components=[pane_marker])
    uvicorn.run(app, host="127.0.0.1", port=settings.port, log_level="warning")
    """
)


def status_line(outer: Tmux, escapes: bool = False) -> str:
    args = ["capture-pane", "-p", "-t", "t"] + (["-e"] if escapes else [])
    lines = outer(*args).splitlines()
    return lines[-1] if lines else ""


def test_the_tmux_conf_snippet_shows_counts_and_marks(tmp_path: Path) -> None:
    """The documented snippet, sourced into tmux 3.x, drawn by an attached client."""
    # A real uvicorn daemon whose app also runs the pane marker.
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude")
    d.start("-c", MARKER_DAEMON, timeout=20, cwd=REPO)
    path = fake_command(tmp_path / "bin", "purplemux", f'exec {sys.executable} -m purplemux "$@"\n')
    conf = tmp_path / "tmux.conf"
    conf.write_text(pm.TMUX_CONF)
    env = {**d.env, "PATH": path}
    inner = start_tmux(env)
    outer: Tmux | None = None
    try:
        inner("source-file", str(conf))
        inner("set", "-g", "status-interval", "1")  # the test need not wait 2 s per refresh
        inner("rename-window", "-t", "t", "work")
        pane = inner.pane()
        where = f"{inner.socket},{inner.pid},0"
        payload = {"session_id": "conf-1", "cwd": "/w/conf"}
        run_hook(d.home, {**payload, "hook_event_name": "UserPromptSubmit"}, pane, where)
        ask = {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {}}
        run_hook(d.home, {**payload, **ask}, pane, where)
        wait_for(lambda: inner.state(pane) == "needs-input")

        outer = start_tmux(env, f"env -u TMUX tmux -L {inner.name} attach -t t")
        outer("set", "-g", "status", "off")
        wait_for(lambda: "0:work⚠" in status_line(outer) and "⚠1" in status_line(outer))
        coloured = status_line(outer, escapes=True)
        assert "\033[33m⚠" in coloured  # #[fg=yellow] became a colour, not text
        assert "#[" not in status_line(outer)
        # The pane border: the state, the agent and the session's name (the project: Claude
        # named none).
        assert "[needs-input] claude: conf" in outer("capture-pane", "-p", "-t", "t")

        run_hook(d.home, {**payload, "hook_event_name": "Stop"}, pane, where)
        wait_for(lambda: "0:work●" in status_line(outer) and "●1" in status_line(outer))
        assert "⚠" not in status_line(outer)
    finally:
        if outer is not None:
            outer.kill()
        inner.kill()
        d.stop()


def test_one_module_runs_tmux() -> None:
    """Every tmux process (calls, control clients) is spawned, timed out and reaped by
    purplemux/io/tmux.py; the only other processes the package starts are not tmux."""
    package = REPO / "purplemux"
    spawns = ("create_subprocess_exec", "create_subprocess_shell", "subprocess.run(")
    spawns += ("subprocess.Popen", "subprocess.check_output", "os.system(")
    found = {
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if any(s in path.read_text() for s in spawns)
    }
    # cli/service.py: systemctl/launchctl; notify/desktop.py: notify-send/osascript.
    assert found == {"io/tmux.py", "cli/service.py", "notify/desktop.py"}


def test_a_session_name_never_sets_a_tmux_style_in_the_status_line(tmp_path: Path) -> None:
    """Names drawn by a real tmux client: `tmux-status`'s {needs_names} (a `#()` output) and the
    pane's @purplemux_name (shown with `#{}`) come out as the literal text, never a style."""
    hostile = "a##[fg=red]b#[bg=blue]c#{pane_id}d"
    line = ts.needs_names([{"id": "h1", "state": "needs-input", "view": {"name": hostile}}])
    shown = tmp_path / "line"
    shown.write_text(line)
    inner = start_tmux()
    outer: Tmux | None = None
    try:
        pane = inner.pane()
        inner("set-option", "-p", "-t", pane, pm.NAME_OPTION, termtext.tmux_name(hostile))
        inner("set", "-g", "status-interval", "1")
        inner("set", "-g", "status-style", "default")
        inner("set", "-g", "status-right-length", "150")
        inner("set", "-g", "status-right", f"<#(cat {shown})|#{{{pm.NAME_OPTION}}}>")
        outer = start_tmux(command=f"env -u TMUX tmux -L {inner.name} attach -t t")
        outer("set", "-g", "status", "off")
        want = f"<{hostile}|{hostile}>"  # drawn as written: `##` made `#` by us, once by tmux
        wait_for(lambda: want in status_line(outer), timeout=20)
        coloured = status_line(outer, escapes=True)
        assert "\x1b[31m" not in coloured and "\x1b[44m" not in coloured, repr(coloured)
        assert pane not in status_line(outer)  # #{pane_id} was not expanded either
    finally:
        if outer is not None:
            outer.kill()
        inner.kill()
