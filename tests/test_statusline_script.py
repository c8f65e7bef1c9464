"""The real statusLine wrapper under dash: Claude sees exactly what the user's own statusLine
command prints, with its exit code, whether the daemon takes the input, is down or is slow; and
the daemon gets the input as Claude gave it."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import closed_port, fake_command, wait_for
from tests.support.fake_daemon import TOKEN, FakeDaemon, make_home

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "hooks" / "statusline.sh"
DASH = shutil.which("dash") or "/usr/bin/dash"
CAPTURE = REPO / "tests" / "samples" / "claude-code-2.1.332" / "statusline"


def claude_input() -> bytes:
    """A real gateway login's statusLine input (with rate_limits), plus text no shell may touch."""
    lines = (CAPTURE / "statusline-gateway-jwt.jsonl").read_text().splitlines()
    data = next(json.loads(x)["input"] for x in lines if "rate_limits" in x)
    data["session_name"] = "quotes \" ' $HOME `id` \\n, ünïcødé, 🚀"
    return json.dumps(data, ensure_ascii=False).encode()


INPUT = claude_input()
# A user's statusLine as people write them: reads the JSON, colours, no final newline, stderr.
USER_COMMAND = (
    "input=$(cat); printf '\\033[35m%s\\033[0m | %s' "
    '"$(printf "%s" "$input" | head -c 40)" "$PWD"; echo "warn: ünï" >&2; exit 3'
)


@dataclass
class Run:
    returncode: int
    stdout: bytes
    stderr: bytes


def run(home: Path, *args: str, cwd: Path | None = None, path: str | None = None) -> Run:
    """The wrapper as Claude runs the settings' command: input on stdin, wait for exit and EOF."""
    env = {
        "PATH": path if path is not None else os.environ["PATH"],
        "HOME": str(home.parent),
        "PURPLEMUX_HOME": str(home),
        "TMPDIR": str(home.parent / "tmp"),
    }
    (home.parent / "tmp").mkdir(exist_ok=True)
    done = subprocess.run(
        [DASH, str(SCRIPT), *args], input=INPUT, capture_output=True, env=env, timeout=20, cwd=cwd
    )
    return Run(done.returncode, done.stdout, done.stderr)


def direct(command: str, cwd: Path) -> Run:
    """The user's command run as Claude would run it without purplemux."""
    done = subprocess.run(
        ["/bin/sh", "-c", command], input=INPUT, capture_output=True, timeout=20, cwd=cwd
    )
    return Run(done.returncode, done.stdout, done.stderr)


def left_behind(home: Path) -> list[Path]:
    return sorted((home.parent / "tmp").iterdir())


def test_the_users_line_is_byte_identical_and_the_daemon_gets_the_input(
    tmp_path: Path, serve: type[FakeDaemon]
) -> None:
    daemon = serve()
    home = make_home(tmp_path, daemon.port)
    wrapped = run(home, USER_COMMAND, cwd=tmp_path)
    assert wrapped == direct(USER_COMMAND, tmp_path)
    assert wrapped.returncode == 3 and wrapped.stdout.startswith(b"\033[35m{")
    wait_for(daemon.received.is_set)
    (request,) = daemon.requests
    assert request.headers["path"] == "/api/statusline"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["x-purplemux-agent"] == "claude"
    assert request.body == INPUT
    wait_for(lambda: not left_behind(home), what="the input's copy is removed")


def test_a_command_that_reads_its_stdin_gets_all_of_it(
    tmp_path: Path, serve: type[FakeDaemon]
) -> None:
    daemon = serve()
    home = make_home(tmp_path, daemon.port)
    assert run(home, "cat") == Run(0, INPUT, b"")
    wait_for(daemon.received.is_set)
    assert daemon.requests[0].body == INPUT


@pytest.mark.parametrize("state", ["down", "no port file", "no curl"])
def test_with_no_daemon_to_take_it_the_line_is_unchanged(tmp_path: Path, state: str) -> None:
    home = make_home(tmp_path, None if state == "no port file" else closed_port())
    path = None
    if state == "no curl":  # a PATH with sh's tools and no curl
        bin_dir = tmp_path / "bin"
        for tool in ("cat", "mktemp", "rm", "head", "printf"):
            found = shutil.which(tool)
            if found:
                fake_command(bin_dir, tool, f'exec {shlex.quote(found)} "$@"\n')
        path = str(bin_dir)
    wrapped = run(home, USER_COMMAND, cwd=tmp_path, path=path)
    assert wrapped == direct(USER_COMMAND, tmp_path)
    wait_for(lambda: not left_behind(home), what="the input's copy is removed")


def test_a_slow_daemon_never_holds_the_line_back(tmp_path: Path, serve: type[FakeDaemon]) -> None:
    daemon = serve(delay=60)  # holds each request until the test lets it go
    home = make_home(tmp_path, daemon.port)
    try:
        wrapped = run(home, "echo 'ctx 12%'; exit 0", cwd=tmp_path)
        assert wrapped == Run(0, b"ctx 12%\n", b"")
        wait_for(daemon.received.is_set)
        assert not daemon.answered.is_set()  # the wrapper was done before the daemon answered
    finally:
        daemon.answered.set()


def test_no_user_statusline_prints_nothing_and_still_hands_the_input_on(
    tmp_path: Path, serve: type[FakeDaemon]
) -> None:
    daemon = serve()
    home = make_home(tmp_path, daemon.port)
    assert run(home) == Run(0, b"", b"")
    wait_for(daemon.received.is_set)
    assert daemon.requests[0].body == INPUT


def test_with_no_temporary_folder_the_line_still_runs(tmp_path: Path) -> None:
    home = make_home(tmp_path, closed_port())
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PURPLEMUX_HOME": str(home)}
    env["TMPDIR"] = str(tmp_path / "missing")
    done = subprocess.run(
        [DASH, str(SCRIPT), "cat"], input=INPUT, capture_output=True, env=env, timeout=20
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, INPUT, b"")
