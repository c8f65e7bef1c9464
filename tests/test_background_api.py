"""Background sessions (claude --bg) through a real daemon and a real tmux (private sockets):
the hooks that make no row, a job read from its session file, its prompt read and answered
through a `claude attach` window the daemon opens and closes, and Jump opening one in the
user's tmux. `claude` here is a stand-in script (the real CLI is the e2e tier's job:
tests/e2e/test_background_e2e.py): `claude attach <job>` shows a captured 2.1.332 dialog,
takes one key, and clears it."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import Daemon, wait_for
from tests.support.background import proc_ticks, worker_process
from tests.support.daemon import fake_command
from tests.support.hooks import run_hook
from tests.support.screens import HOOKS_ASKING, call, screen

JOB = "4c5f61e3"
SID = "4c5f61e3-ea97-4eb0-b032-7b77830348c6"


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A process standing in for the job's worker, with the session's own HOME."""
    yield from worker_process(tmp_path)


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    shown = tmp_path / "dialog.txt"
    shown.write_text(screen("claude-2.1.332-manual.screens.txt", "touch-dialog").rstrip("\n"))
    log, keys = tmp_path / "attach.log", tmp_path / "keys"
    # `claude attach JOB`: say how it was run, show the dialog, take one key, clear the screen.
    script = (
        f'echo "$* HOME=$HOME CCD=${{CLAUDE_CONFIG_DIR-unset}}" >> {shlex.quote(str(log))}\n'
        f"stty -echo -icanon min 1; cat {shlex.quote(str(shown))}\n"
        f"dd bs=1 count=1 of={shlex.quote(str(keys))} 2>/dev/null\n"
        "printf '\\033[2J\\033[Hanswered\\n'; exec sleep 600\n"
    )
    path = fake_command(tmp_path / "bin", "claude", script)
    tmpdir = tmp_path / "tmuxdir"
    (tmpdir / f"tmux-{os.getuid()}").mkdir(parents=True, mode=0o700)
    d = Daemon(
        home=tmp_path / "pmx",
        claude_dir=tmp_path / "claude",
        env_extra={"PATH": path, "TMUX_TMPDIR": str(tmpdir)},
    )
    d.claude_dir.joinpath("sessions").mkdir(parents=True)
    d.start()
    yield d
    d.stop()
    for sock in (d.home / "attach.sock", tmpdir / f"tmux-{os.getuid()}" / "default"):
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True, check=False)


def bg_session_file(d: Daemon, worker: subprocess.Popen[bytes], status: str = "waiting") -> None:
    body: dict[str, Any] = {
        "pid": worker.pid,
        "sessionId": SID,
        "cwd": "/w/proj",
        "startedAt": 1_600_000_000_000,
        "procStart": proc_ticks(worker.pid),
        "version": "2.1.332",
        "kind": "bg",
        "jobId": JOB,
        "status": status,
        "statusUpdatedAt": 1_700_000_000_000,
        "name": "RUN:touch b.txt",
    }
    if status == "waiting":
        body["waitingFor"] = "permission prompt"
    (d.claude_dir / "sessions" / f"{worker.pid}.json").write_text(json.dumps(body))


def kinds(d: Daemon) -> set[str]:
    """The kinds of the background session's events so far."""
    status, body = call(d, "GET", f"/api/sessions/{SID}/events")
    return {e["kind"] for e in body["events"]} if status == 200 else set()


def tmux_sessions(sock: Path) -> list[str]:
    out = subprocess.run(
        ["tmux", "-S", str(sock), "list-sessions", "-F", "#{session_name}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.split() if out.returncode == 0 else []


def test_a_background_jobs_prompt_is_read_and_answered_through_an_attach_window(
    tmp_path: Path, daemon: Daemon, worker: subprocess.Popen[bytes]
) -> None:
    # A background worker's hooks come with no pane ($CLAUDE_JOB_DIR set: the script drops it).
    for name, extra in HOOKS_ASKING[1:]:
        payload = {"session_id": SID, "hook_event_name": name, "cwd": "/w/proj", **extra}
        run_hook(daemon.home, payload, pane="", tmux="")
    bg_session_file(daemon, worker)
    # The script delivers detached: wait for all three hooks, or one arriving after the screen
    # was read folds the log again and moves the dialog's start (its prompt id) back to the
    # PermissionRequest's time, so the answer is refused as a prompt that changed.
    wait_for(lambda: {"prompt", "tool_start", "permission"} <= kinds(daemon))
    # The job comes from the session file, read on its own watch: the PermissionRequest hook may
    # show needs-input a few ms before the file's event names the job (seen once on CI).
    row = wait_for(
        lambda: (s := daemon.session(SID)) and s["state"] == "needs-input" and s["job_id"] and s
    )
    assert (row["background"], row["job_id"], row["tmux"], row["pid"]) == (
        True,
        JOB,
        None,
        worker.pid,
    )
    assert row["view"]["actions"] == ["answer", "jump"] and row["view"]["background"] is True
    assert row["view"]["where"] == f"RUN:touch b.txt · bg {JOB}"

    status, shown = call(daemon, "GET", f"/api/sessions/{SID}/screen")
    assert status == 200, shown
    prompt = shown["prompt"]
    assert prompt["kind"] == "permission" and prompt["title"] == "Bash command: touch b.txt"
    attach_sock = daemon.home / "attach.sock"
    assert tmux_sessions(attach_sock) == [f"job-{JOB}"]  # the daemon's own server, not yours
    # The attach ran for the job, with the session's HOME and no config dir of the daemon's.
    ran = (tmp_path / "attach.log").read_text().splitlines()
    assert ran == [f"attach {JOB} HOME={tmp_path / 'user'} CCD=unset"]

    status, done = call(
        daemon, "POST", f"/api/sessions/{SID}/answer", {"prompt_id": prompt["id"], "option": "Yes"}
    )
    assert status == 200, done
    assert (done["answered"], done["keys"]) == ("Yes", ["1"])
    assert (tmp_path / "keys").read_text() == "1"  # the digit reached the attached screen
    assert tmux_sessions(attach_sock) == []  # detached and closed afterwards
    events = daemon.api("GET", f"/api/sessions/{SID}/events")["events"]
    answers = [(e["by"], e["option"], e["confirmed"]) for e in events if e["kind"] == "answer"]
    assert answers == [("api", "Yes", True)]


def test_jump_opens_an_attach_window_in_the_users_tmux(
    tmp_path: Path, daemon: Daemon, worker: subprocess.Popen[bytes]
) -> None:
    user_sock = tmp_path / "tmuxdir" / f"tmux-{os.getuid()}" / "default"
    subprocess.run(
        ["tmux", "-S", str(user_sock), "-f", os.devnull, "new-session", "-d", "-s", "mine"],
        check=True,
    )
    bg_session_file(daemon, worker, status="busy")
    wait_for(lambda: (s := daemon.session(SID)) and s["state"] == "busy")
    status, done = call(daemon, "POST", f"/api/sessions/{SID}/focus", {})
    assert status == 200, done
    assert done["tmux_session"] == "mine" and done["pane"].startswith("%")
    windows = subprocess.run(
        ["tmux", "-S", str(user_sock), "list-windows", "-t", "mine", "-F", "#{window_name}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    assert f"bg {JOB}" in windows
    wait_for(lambda: (tmp_path / "attach.log").exists())
    assert (tmp_path / "attach.log").read_text().split()[:2] == ["attach", JOB]
    assert tmux_sessions(daemon.home / "attach.sock") == []  # the daemon's own server: unused


def test_the_agent_views_notices_and_an_unclaimed_spare_make_no_row(daemon: Daemon) -> None:
    view = {"session_id": "view-1", "cwd": "/w/proj", "hook_event_name": "Notification"}
    run_hook(
        daemon.home,
        {**view, "notification_type": "agent_completed", "message": "hello finished"},
        pane="%1",
    )
    spare = {"session_id": "spare-1", "cwd": "/w/proj", "agent_type": "claude"}
    run_hook(
        daemon.home,
        {**spare, "hook_event_name": "SessionStart", "source": "startup"},
        pane="",
        tmux="",
    )
    run_hook(daemon.home, {**view, "hook_event_name": "SessionEnd", "reason": "other"}, pane="%1")
    wait_for(lambda: daemon.logs().count("makes no row") >= 3)
    assert daemon.session("view-1") is None and daemon.session("spare-1") is None
    # A spare claimed by a task: its turn makes its row.
    run_hook(
        daemon.home,
        {**spare, "hook_event_name": "UserPromptSubmit", "prompt": "hello"},
        pane="",
        tmux="",
    )
    row = wait_for(lambda: daemon.session("spare-1"))
    assert row["state"] == "busy"


def test_an_attach_window_opened_to_read_is_closed_when_the_daemon_stops(
    daemon: Daemon, worker: subprocess.Popen[bytes]
) -> None:
    bg_session_file(daemon, worker)
    wait_for(lambda: (s := daemon.session(SID)) and s["state"] == "needs-input")
    status, shown = call(daemon, "GET", f"/api/sessions/{SID}/screen")
    assert status == 200 and shown["prompt"] is not None
    attach_sock = daemon.home / "attach.sock"
    assert tmux_sessions(attach_sock) == [f"job-{JOB}"]
    daemon.stop()
    assert tmux_sessions(attach_sock) == []
