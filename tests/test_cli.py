"""The command line against a real daemon fed by the real hook script."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from purplemux.cli import main, render_table
from tests.support import Daemon, cli_sees, free_port, hook, wait_for


class Tty(io.StringIO):
    """An output that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def daemon(daemon: Daemon, monkeypatch: pytest.MonkeyPatch) -> Daemon:
    """The real daemon (tests/support/plugin.py), which the CLI in this process sees."""
    return cli_sees(daemon, monkeypatch)


@pytest.fixture
def no_daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An environment whose daemon is not running (a home with a token, a closed port)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "token").write_text("tok\n")
    (home / "port").write_text(f"{free_port()}\n")
    monkeypatch.setenv("PURPLEMUX_HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    return home


def cli(*argv: str, tty: bool = False) -> tuple[int, str]:
    out = Tty() if tty else io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for name in ("status", "dismiss", "open", "tmux-status", "doctor", "service", "states"):
        assert name in text


def test_status_table_and_json_show_hook_sessions(daemon: Daemon) -> None:
    hook(daemon, "alpha-1", "UserPromptSubmit", pane="%1", prompt="go")
    hook(daemon, "beta-2", "UserPromptSubmit", pane="%2", prompt="go")
    hook(daemon, "beta-2", "Stop", pane="%2")

    code, text = cli("status")
    assert code == 0
    lines = text.splitlines()
    assert lines[0].split() == ["STATE", "NAME", "AGENT", "PANE", "FOR", "DETAIL", "FACTS", "ID"]
    rows = {line.split()[1]: line.split() for line in lines[1:]}
    assert rows["alpha-1"][0] == "busy" and rows["alpha-1"][2:4] == ["Claude", "%1"]
    assert rows["beta-2"][0] == "review" and rows["beta-2"][2:4] == ["Claude", "%2"]
    assert "\033[" not in text  # piped: plain

    code, coloured = cli("status", tty=True)
    assert code == 0
    assert "\033[35;1mreview" in coloured and "\033[36mbusy" in coloured

    code, raw = cli("status", "--json")
    assert code == 0
    by_id = {s["id"]: s for s in json.loads(raw)}
    assert by_id["alpha-1"]["state"] == "busy"
    assert by_id["beta-2"]["state"] == "review"
    assert by_id["beta-2"]["tmux"]["pane"] == "%2"

    hook(daemon, "alpha-1", "SessionEnd", reason="exit")
    assert {s["id"] for s in json.loads(cli("status", "--json")[1])} == {"beta-2"}
    assert {s["id"] for s in json.loads(cli("status", "--json", "--all")[1])} == {
        "alpha-1",
        "beta-2",
    }


def test_render_table_without_sessions() -> None:
    assert render_table([], time.time(), colour=False) == "no sessions\n"


def test_status_says_how_to_start_a_stopped_daemon(
    no_daemon: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["status"], ["status", "--watch"], ["dismiss", "--all"]):
        assert main(argv, out=io.StringIO()) == 1
        assert "purplemux serve" in capsys.readouterr().err


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Watch:
    """`purplemux status --watch` in its own process, its output collected by a thread."""

    def __init__(self, d: Daemon) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "purplemux", "status", "--watch"],
            env=d.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # Ctrl-C's default, as a terminal gives it: a test runner's worker (pytest-xdist's)
            # may ignore SIGINT, and a child inherits an ignored signal.
            preexec_fn=_default_sigint,
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def frames(self) -> list[list[str]]:
        """The redraws so far: each starts with a `-- HH:MM:SS` line."""
        frames: list[list[str]] = []
        for line in list(self.lines):
            if line.startswith("-- "):
                frames.append([])
            elif frames:
                frames[-1].append(line)
        return frames

    def state_of(self, frame: list[str], project: str) -> str | None:
        for line in frame[1:]:
            cells = line.split()
            if len(cells) > 1 and cells[1] == project:
                return cells[0]
        return None

    def exit_code(self, after: str, timeout: float = 60.0) -> int:
        """Wait for the process to be gone (what a user sees); its exit code."""
        wait_for(
            lambda: self.proc.poll() is not None,
            timeout=timeout,
            what=f"`purplemux status --watch` to exit after {after}",
        )
        return self.proc.returncode

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.reader.join(timeout=5)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


def test_status_watch_redraws_on_each_change_and_stops_on_ctrl_c(daemon: Daemon) -> None:
    hook(daemon, "gamma-3", "UserPromptSubmit", prompt="go")
    watch = Watch(daemon)
    try:
        first = wait_for(lambda: watch.frames())
        assert watch.state_of(first[0], "gamma-3") == "busy"

        hook(daemon, "gamma-3", "Stop")
        wait_for(lambda: any(watch.state_of(f, "gamma-3") == "review" for f in watch.frames()))
        hook(daemon, "delta-4", "UserPromptSubmit", prompt="go")
        wait_for(lambda: watch.state_of(watch.frames()[-1], "delta-4") == "busy")
        assert watch.state_of(watch.frames()[-1], "gamma-3") == "review"

        watch.proc.send_signal(signal.SIGINT)  # what Ctrl-C sends
        assert watch.exit_code(after="SIGINT") == 0
        assert watch.proc.stderr is not None
        assert watch.proc.stderr.read() == ""
    finally:
        watch.stop()


def test_status_watch_stops_on_ctrl_c_while_the_daemon_does_not_answer(daemon: Daemon) -> None:
    """Ctrl-C must not wait on the daemon's answer to the feed's close (10 s in websockets): the
    daemon is stopped (SIGSTOP: as busy as can be) until the command has exited."""
    watch = Watch(daemon)
    assert daemon.proc is not None
    try:
        wait_for(lambda: watch.frames(), what="the first frame")
        daemon.proc.send_signal(signal.SIGSTOP)
        watch.proc.send_signal(signal.SIGINT)
        # Generous for a loaded machine, but well under websockets' 10 s close timeout.
        assert watch.exit_code(after="SIGINT, the daemon stopped", timeout=8.0) == 0
        assert watch.proc.stderr is not None
        assert watch.proc.stderr.read() == ""
    finally:
        daemon.proc.send_signal(signal.SIGCONT)
        watch.stop()


def test_status_watch_tells_when_the_daemon_goes_away(daemon: Daemon) -> None:
    watch = Watch(daemon)
    try:
        wait_for(lambda: watch.frames())
        daemon.stop()
        assert watch.proc.wait(timeout=15) == 1
        assert watch.proc.stderr is not None
        assert "the daemon closed the feed" in watch.proc.stderr.read()
    finally:
        watch.stop()


def test_status_watch_with_a_stale_token_says_so(
    daemon: Daemon, capsys: pytest.CaptureFixture[str]
) -> None:
    (daemon.home / "token").write_text("stale\n")
    assert main(["status", "--watch"], out=io.StringIO()) == 1
    assert "the daemon refused the feed (HTTP 403)" in capsys.readouterr().err


def test_status_watch_on_a_terminal_clears_and_redraws(
    daemon: Daemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process, with a terminal: each frame clears the screen; Ctrl-C returns 0."""
    hook(daemon, "eps-5", "UserPromptSubmit", prompt="go")
    out = Tty()
    frames = 0

    class Interrupting(Tty):
        def write(self, s: str) -> int:
            nonlocal frames
            frames += s.count("\033[H\033[2J")
            n = out.write(s)
            if frames == 2 and "\033[2J" in s:  # the snapshot, one timed redraw, then Ctrl-C
                raise KeyboardInterrupt
            return n

    monkeypatch.setattr("purplemux.cli.commands.WATCH_REDRAW", 0.05)
    assert main(["status", "--watch"], out=Interrupting()) == 0
    text = out.getvalue()
    assert text.startswith("\033[H\033[2Jpurplemux status")
    assert "eps-5" in text and "\033[36mbusy" in text


def test_dismiss_one_by_prefix_then_all(daemon: Daemon, capsys: pytest.CaptureFixture[str]) -> None:
    for sid in ("rev-aaa", "rev-bbb", "rev-ccc"):
        hook(daemon, sid, "UserPromptSubmit", prompt="go")
        hook(daemon, sid, "Stop")
    hook(daemon, "busy-ddd", "UserPromptSubmit", prompt="go")

    assert cli("dismiss", "rev-a") == (0, "dismissed rev-aaa\n")
    assert daemon.session("rev-aaa")["state"] == "idle"  # type: ignore[index]
    assert daemon.session("rev-bbb")["state"] == "review"  # type: ignore[index]

    assert main(["dismiss", "rev-"], out=io.StringIO()) == 2  # ambiguous
    assert "3 sessions match 'rev-'" in capsys.readouterr().err
    assert main(["dismiss", "nope"], out=io.StringIO()) == 2
    assert main(["dismiss"], out=io.StringIO()) == 2

    code, text = cli("dismiss", "--all")
    assert code == 0
    assert sorted(text.splitlines()) == ["dismissed rev-bbb", "dismissed rev-ccc"]
    states = {s["id"]: s["state"] for s in daemon.sessions()}
    assert states == {"rev-aaa": "idle", "rev-bbb": "idle", "rev-ccc": "idle", "busy-ddd": "busy"}
    assert cli("dismiss", "--all") == (0, "nothing in review\n")


def test_open_prints_a_link_that_logs_in(daemon: Daemon, monkeypatch: pytest.MonkeyPatch) -> None:
    code, text = cli("open")
    assert code == 0
    link = text.strip()
    assert link == f"{daemon.url}/?token={daemon.token}"

    with urllib.request.urlopen(link, timeout=5) as signed_in:
        assert signed_in.status == 200  # the page that keeps the page key, then opens "/"
        set_cookies = signed_in.headers.get_all("Set-Cookie")
        assert b'name="purplemux-page-key"' in signed_in.read()
    cookies = [c.split(";")[0] for c in set_cookies]
    [cookie] = [c for c in cookies if c.startswith("purplemux_login=")]
    assert daemon.token not in " ".join(set_cookies)

    page = urllib.request.Request(daemon.url + "/", headers={"Cookie": cookie})
    with urllib.request.urlopen(page, timeout=5) as resp:
        assert resp.status == 200
        assert b'id="sidebar"' in resp.read()  # the dashboard, not the login form

    opened: list[str] = []

    def fake_open(url: str) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr("webbrowser.open", fake_open)
    assert cli("open", "--browser") == (0, link + "\n")
    assert opened == [link]


def test_status_marks_a_background_session_and_gives_it_no_pane() -> None:
    from purplemux.cli.render import render_table
    from purplemux.core.model import Session, State
    from purplemux.core.present import session_json

    bg = Session(
        id="4c5f61e3-e",
        state=State.NEEDS_INPUT,
        background=True,
        job_id="4c5f61e3",
        cwd="/w/proj",
        waiting_for="approve Bash: touch x.txt",
    )
    plain = Session(id="p1", state=State.BUSY, cwd="/w/other")
    text = render_table([session_json(bg), session_json(plain)], now=0.0, colour=False)
    lines = text.splitlines()
    agent_at = lines[0].index("AGENT")
    pane_at = lines[0].index("PANE")
    assert lines[1][agent_at:pane_at].strip() == "Claude bg"
    assert lines[1][pane_at:].split()[0] == "-"  # no pane
    assert lines[2][agent_at:pane_at].strip() == "Claude"
