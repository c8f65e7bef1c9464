"""The real hook script under dash: delivery to a live HTTP server, and the spool when it fails."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from purplemux.sources.spool import parse_spool
from tests.support import closed_port, fake_command, wait_for
from tests.support.fake_daemon import PAYLOAD, TOKEN, FakeDaemon, make_home

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "hooks" / "status-hook.sh"
DASH = shutil.which("dash") or "/usr/bin/dash"
TMUX = "/tmp/tmux-1000/my \"odd\" 'sock' name,4242,0"
PANE = "%7"


@dataclass
class Run:
    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float
    started_ns: int
    ended_ns: int


def run_hook(home: Path | str, path: str | None = None, **env: str) -> Run:
    """Run the script as Claude does: payload on stdin; wait for exit and for stdout/err EOF."""
    environ = {
        "PATH": path if path is not None else os.environ["PATH"],
        "HOME": str(Path(home).parent),
        "PURPLEMUX_HOME": str(home),
        "TMUX": TMUX,
        "TMUX_PANE": PANE,
        **env,
    }
    started_ns = time.time_ns()
    t0 = time.perf_counter()
    done = subprocess.run(
        [DASH, str(SCRIPT)], input=PAYLOAD, capture_output=True, env=environ, timeout=10
    )
    seconds = time.perf_counter() - t0
    return Run(done.returncode, done.stdout, done.stderr, seconds, started_ns, time.time_ns())


def assert_silent_success(run: Run) -> None:
    assert (run.returncode, run.stdout, run.stderr) == (0, b"", b"")


def spool_files(home: Path) -> list[Path]:
    return sorted((home / "spool").glob("*.spool"))


def tmp_files(home: Path) -> list[Path]:
    return sorted((home / "spool" / ".tmp").glob("*"))


def assert_event_headers(headers: dict[str, str], run: Run) -> None:
    event_id = headers["x-purplemux-event-id"]
    ts = headers["x-purplemux-ts"]
    assert re.fullmatch(r"\d+-\d+", event_id), event_id
    assert event_id.startswith(ts + "-")
    assert run.started_ns <= int(ts) <= run.ended_ns  # taken by the script, in nanoseconds
    assert headers["x-purplemux-pane"] == PANE
    assert headers["x-purplemux-tmux"] == TMUX
    assert headers["x-purplemux-agent"] == "claude"


def test_dash_is_what_runs_the_script() -> None:
    assert Path(DASH).exists(), "dash is needed: apt-get install dash"
    assert os.access(SCRIPT, os.X_OK)
    assert SCRIPT.read_text().startswith("#!/bin/sh\n")


def test_delivers_to_the_daemon(tmp_path: Path, serve: Callable[..., FakeDaemon]) -> None:
    daemon = serve()
    home = make_home(tmp_path, daemon.port)
    run = run_hook(home)
    assert_silent_success(run)
    [request] = wait_for(lambda: daemon.requests, what="the POST")
    assert request.body == PAYLOAD
    assert request.headers["path"] == "/api/hooks"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["content-type"] == "application/json"
    assert_event_headers(request.headers, run)
    # Delivered: the saved body goes, and nothing is spooled.
    wait_for(lambda: not tmp_files(home), what="the saved body to be removed")
    assert spool_files(home) == []
    print(f"\nforeground wall time, daemon up: {run.seconds * 1000:.1f} ms")


def test_outside_tmux_headers_are_empty(tmp_path: Path, serve: Callable[..., FakeDaemon]) -> None:
    daemon = serve()
    home = make_home(tmp_path, daemon.port)
    assert_silent_success(run_hook(home, TMUX="", TMUX_PANE=""))
    [request] = wait_for(lambda: daemon.requests, what="the POST")
    assert request.headers["x-purplemux-pane"] == ""
    assert request.headers["x-purplemux-tmux"] == ""


def test_a_codex_hook_names_its_agent_and_never_a_pane(
    tmp_path: Path, serve: Callable[..., FakeDaemon]
) -> None:
    """Codex runs hooks in its app-server daemon, whose $TMUX_PANE is another pane's."""
    daemon = serve()
    home = make_home(tmp_path, daemon.port)
    assert_silent_success(run_hook(home, PURPLEMUX_AGENT="codex"))
    [request] = wait_for(lambda: daemon.requests, what="the POST")
    assert request.headers["x-purplemux-agent"] == "codex"
    assert (request.headers["x-purplemux-pane"], request.headers["x-purplemux-tmux"]) == ("", "")
    spooled = make_home(tmp_path / "down", closed_port())
    assert_silent_success(run_hook(spooled, PURPLEMUX_AGENT="codex"))
    [path] = wait_for(lambda: spool_files(spooled), what="a spool file")
    headers = parse_spool(path.read_bytes()).headers
    assert (headers["x-purplemux-agent"], headers["x-purplemux-pane"]) == ("codex", "")


def test_concurrent_hooks_get_distinct_event_ids(
    tmp_path: Path, serve: Callable[..., FakeDaemon]
) -> None:
    daemon = serve()
    home = make_home(tmp_path, daemon.port)
    env = {**os.environ, "PURPLEMUX_HOME": str(home)}
    procs = [
        subprocess.Popen([DASH, str(SCRIPT)], stdin=subprocess.PIPE, env=env) for _ in range(10)
    ]
    for proc in procs:
        proc.communicate(PAYLOAD, timeout=60)
        assert proc.returncode == 0
    # Each delivery runs on in the background until its saved body leaves spool/.tmp: POSTed, or
    # spooled for the daemon to drain (curl gave up: a very loaded machine). Either way the event
    # is the daemon's; what matters here is that no two share an id.
    wait_for(
        lambda: not tmp_files(home),
        timeout=60,
        what="the ten background deliveries to end (every saved body POSTed or spooled)",
    )
    spooled = [parse_spool(path.read_bytes()) for path in spool_files(home)]
    events = [(r.headers["x-purplemux-event-id"], r.body) for r in daemon.requests] + [
        (d.headers["x-purplemux-event-id"], d.body) for d in spooled
    ]
    ids = [event_id for event_id, _ in events]
    assert len(set(ids)) == 10, ids
    assert all(body == PAYLOAD for _, body in events)


def test_a_large_payload_arrives_whole(tmp_path: Path, serve: Callable[..., FakeDaemon]) -> None:
    # A Write tool call carries the whole file: far more than a pipe buffer.
    big = json.dumps({"hook_event_name": "PreToolUse", "content": 'x\\n"' * 200_000}).encode()
    daemon = serve()
    home = make_home(tmp_path, daemon.port)
    environ = {**os.environ, "PURPLEMUX_HOME": str(home)}
    done = subprocess.run([DASH, str(SCRIPT)], input=big, capture_output=True, env=environ)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    [request] = wait_for(lambda: daemon.requests, what="the POST")
    assert request.body == big


def assert_spooled(home: Path, run: Run) -> None:
    """Exactly one spool file, holding the exact payload and headers; nothing left in .tmp."""
    [path] = wait_for(lambda: spool_files(home), what="a spool file")
    delivery = parse_spool(path.read_bytes())
    assert delivery.body == PAYLOAD
    assert set(delivery.headers) == {
        "x-purplemux-event-id",
        "x-purplemux-ts",
        "x-purplemux-pane",
        "x-purplemux-tmux",
        "x-purplemux-agent",
    }
    assert_event_headers(delivery.headers, run)
    assert path.name == delivery.headers["x-purplemux-event-id"] + ".spool"
    assert (path.stat().st_mode & 0o777, (home / "spool").stat().st_mode & 0o777) == (0o600, 0o700)
    wait_for(lambda: not tmp_files(home), what="the saved body to be removed")


def test_spools_when_no_daemon_listens(tmp_path: Path) -> None:
    home = make_home(tmp_path, closed_port())
    run = run_hook(home)
    assert_silent_success(run)
    assert_spooled(home, run)
    print(f"\nforeground wall time, daemon down: {run.seconds * 1000:.1f} ms")


def test_spools_without_a_port_file(tmp_path: Path) -> None:
    home = make_home(tmp_path, None)
    run = run_hook(home)
    assert_silent_success(run)
    assert_spooled(home, run)


def test_spools_when_the_daemon_fails(tmp_path: Path, serve: Callable[..., FakeDaemon]) -> None:
    daemon = serve(status=500)
    home = make_home(tmp_path, daemon.port)
    run = run_hook(home)
    assert_silent_success(run)
    assert_spooled(home, run)
    assert [r.body for r in daemon.requests] == [PAYLOAD]  # it was tried first


def bin_dir_with(tmp_path: Path, *tools: str) -> str:
    """A PATH holding only these tools (those that exist here)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in tools:
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


def test_spools_without_curl(tmp_path: Path, serve: Callable[..., FakeDaemon]) -> None:
    daemon = serve()
    home = make_home(tmp_path, daemon.port)
    tools = ("date", "cat", "mv", "rm", "mkdir", "printf", "tr", "setsid", "sh")
    path = bin_dir_with(tmp_path, *tools)
    assert shutil.which("curl", path=path) is None
    run = run_hook(home, path=path)
    assert_silent_success(run)
    assert_spooled(home, run)
    assert daemon.requests == []


def test_delivers_without_setsid(tmp_path: Path, serve: Callable[..., FakeDaemon]) -> None:
    daemon = serve()
    home = make_home(tmp_path, daemon.port)
    path = bin_dir_with(tmp_path, "date", "cat", "mv", "rm", "mkdir", "printf", "tr", "curl")
    assert shutil.which("setsid", path=path) is None
    run = run_hook(home, path=path)
    assert_silent_success(run)
    [request] = wait_for(lambda: daemon.requests, what="the POST")
    assert request.body == PAYLOAD
    assert_event_headers(request.headers, run)
    wait_for(lambda: not tmp_files(home), what="the saved body to be removed")
    assert spool_files(home) == []


def test_seconds_only_date_still_gives_nanoseconds(tmp_path: Path) -> None:
    """macOS date has no %N: it prints a literal N, and the script falls back to whole seconds."""
    home = make_home(tmp_path, None)
    path = fake_command(
        tmp_path / "bin",
        "date",
        "case $1 in +%s%N) echo 1700000000N ;; *) echo 1700000000 ;; esac\n",
    )
    run = run_hook(home, path=path)
    assert_silent_success(run)
    [path] = wait_for(lambda: spool_files(home), what="a spool file")
    headers = parse_spool(path.read_bytes()).headers
    assert headers["x-purplemux-ts"] == "1700000000000000000"
    assert headers["x-purplemux-event-id"].startswith("1700000000000000000-")


@pytest.mark.parametrize("how", ["spool-blocked", "home-unwritable"])
def test_unwritable_spool_still_exits_silently_at_once(
    tmp_path: Path, serve: Callable[..., FakeDaemon], how: str
) -> None:
    daemon = serve(delay=5.0)  # answers late: the script must not wait for it
    if how == "spool-blocked":
        # The daemon's files are readable but no spool folder can be made (a read-only or full
        # disk behaves the same for the script; chmod would not stop root, who runs these tests).
        home = make_home(tmp_path, daemon.port)
        (home / "spool").write_text("in the way")
    else:
        home = Path("/proc/purplemux-test-home")  # nobody, not even root, can create this
    run = run_hook(home)
    assert_silent_success(run)
    assert not daemon.answered.is_set()
    if how == "spool-blocked":
        # Without a spool the payload still goes to the daemon, straight from stdin.
        [request] = wait_for(lambda: daemon.requests, what="the POST")
        assert request.body == PAYLOAD
        assert_event_headers(request.headers, run)
        daemon.answered.set()
        assert (home / "spool").read_text() == "in the way"


def test_token_never_on_a_command_line(tmp_path: Path, serve: Callable[..., FakeDaemon]) -> None:
    daemon = serve(delay=5.0)
    home = make_home(tmp_path, daemon.port)
    run = run_hook(home)
    assert_silent_success(run)
    wait_for(daemon.received.is_set, what="the request to arrive")

    def command_lines() -> list[bytes]:
        lines = []
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit():
                with contextlib.suppress(OSError):  # the process ended while we looked
                    lines.append((proc / "cmdline").read_bytes())
        return lines

    # While the request is in flight, curl is running: its command line must not hold the token.
    lines = command_lines()
    assert not daemon.answered.is_set()
    curl = [c for c in lines if b"curl" in c and f":{daemon.port}/api/hooks".encode() in c]
    assert curl, "the in-flight curl was not found: the scan proves nothing"
    assert not [c for c in lines if TOKEN.encode() in c]
    daemon.answered.set()
    wait_for(lambda: not tmp_files(home), what="the delivery to finish")
    assert spool_files(home) == []


def test_foreground_wall_time(tmp_path: Path, serve: Callable[..., FakeDaemon]) -> None:
    """Measure, not judge: how long Claude waits for the script (print only)."""
    up = make_home(tmp_path / "up", serve().port)
    down = make_home(tmp_path / "down", closed_port())
    for name, home in (("daemon up", up), ("daemon down", down)):
        times = []
        for _ in range(30):
            run = run_hook(home)
            assert run.returncode == 0
            times.append(run.seconds * 1000)
        print(
            f"\n{name}: min {min(times):.2f} ms, median {statistics.median(times):.2f} ms, "
            f"max {max(times):.2f} ms"
        )
    wait_for(lambda: not tmp_files(up) and not tmp_files(down), 20, what="deliveries to finish")
