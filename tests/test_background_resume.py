"""Resume at the reset for a background session (claude --bg) through a real daemon and a real
tmux (private sockets): the job has no pane, so the daemon types "continue" through a `claude
attach <job>` window on its own tmux server, with the checks a pane gets (an empty input box on
the attached screen, Claude in front), then detaches (Ctrl+Z) and closes the window. `claude`
here is a stand-in (tests/support/input_pane.py) drawing the captured 2.1.332 attached screen
of a job at its 5-hour wall with a live input box; the real CLI is the e2e tier's
(tests/e2e/test_background_resume_e2e.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import Daemon, wait_for
from tests.support.background import proc_ticks, worker_process
from tests.support.input_pane import attach_claude
from tests.support.screens import call
from tests.support.walls import at_wall, walled

JOB = "2f1401e2"
SID = "2f1401e2-cb6d-497c-a9cb-6148e32ec5fc"


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A process standing in for the job's worker, with the session's own HOME."""
    yield from worker_process(tmp_path)


def start(tmp_path: Path, worker: subprocess.Popen[bytes], typed: str = "") -> Daemon:
    """A daemon whose `claude attach` is the stand-in, and the job's session file."""
    bin_dir = attach_claude(tmp_path / "attach", typed=typed)
    d = Daemon(
        home=tmp_path / "pmx",
        claude_dir=tmp_path / "claude",
        env_extra={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
    )
    (d.claude_dir / "sessions").mkdir(parents=True)
    d.start()
    body: dict[str, Any] = {
        "pid": worker.pid,
        "sessionId": SID,
        "cwd": "/w/proj",
        "startedAt": 1_600_000_000_000,
        "procStart": proc_ticks(worker.pid),
        "version": "2.1.332",
        "kind": "bg",
        "jobId": JOB,
        "status": "idle",
        "statusUpdatedAt": 1_700_000_000_000,
        "name": "LIMIT:5h bg gw",
    }
    (d.claude_dir / "sessions" / f"{worker.pid}.json").write_text(json.dumps(body))
    return d


def tmux_sessions(sock: Path) -> list[str]:
    out = subprocess.run(
        ["tmux", "-S", str(sock), "list-sessions", "-F", "#{session_name}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.split() if out.returncode == 0 else []


def resume_events(d: Daemon) -> list[dict[str, Any]]:
    events = d.api("GET", f"/api/sessions/{SID}/events")["events"]
    return [e for e in events if e["kind"] == "resume"]


def final(d: Daemon, state: str) -> dict[str, Any]:
    def there() -> dict[str, Any] | None:
        found = [e for e in resume_events(d) if e["state"] == state]
        return found[-1] if found else None

    return wait_for(there, timeout=30, what=f"resume {state}")


def sent(tmp_path: Path) -> list[str]:
    path = tmp_path / "attach" / "sent.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_a_background_job_at_its_wall_gets_continue_typed_once_through_an_attach_window(
    tmp_path: Path, worker: subprocess.Popen[bytes]
) -> None:
    past = time.time() - 120  # the reset was two minutes ago: due as soon as it is armed
    d = start(tmp_path, worker)
    try:
        at_wall(d, SID, None, past, tmp_path)
        row = walled(d, SID, past)
        assert (row["background"], row["job_id"], row["tmux"]) == (True, JOB, None)
        assert "resume" in row["view"]["actions"]

        status, armed = call(d, "POST", f"/api/sessions/{SID}/resume", {"at_reset": True})
        assert status == 200, armed
        typed = final(d, "typed")
        assert (typed["by"], typed["text"], typed["confirmed"]) == (
            "resume-at-reset",
            "continue",
            True,
        )
        assert sent(tmp_path) == ["continue"]
        assert [e["state"] for e in resume_events(d)] == ["armed", "typing", "typed"]
        # The attach ran for the job, and was detached (Ctrl+Z) and closed.
        ran = (tmp_path / "attach" / "attach.log").read_text().splitlines()
        assert ran == [f"attach {JOB}"]
        wait_for(lambda: tmux_sessions(d.home / "attach.sock") == [], what="attach closed")
        s = wait_for(lambda: (s := d.session(SID)) and s["resume"]["state"] == "typed" and s)
        assert s["view"]["resume"] == "" and "resume" not in s["view"]["actions"]
        status, again = call(d, "POST", f"/api/sessions/{SID}/resume", {"at_reset": True})
        assert status == 409 and "already typed" in again["error"]
        assert sent(tmp_path) == ["continue"]  # still once
    finally:
        d.stop()


def test_a_background_job_with_words_in_its_attached_box_is_left_alone_and_says_why(
    tmp_path: Path, worker: subprocess.Popen[bytes]
) -> None:
    past = time.time() - 120
    d = start(tmp_path, worker, typed="my own words")
    try:
        at_wall(d, SID, None, past, tmp_path)
        walled(d, SID, past)
        done = d.cli("resume", SID, "--at-reset")
        assert done.returncode == 0, done.stderr
        skipped = final(d, "skipped")
        assert (skipped["by"], skipped["reason"]) == (
            "resume-at-reset",
            "text is typed in its input box",
        )
        assert sent(tmp_path) == []
        wait_for(lambda: tmux_sessions(d.home / "attach.sock") == [], what="attach closed")
        s = d.session(SID)
        assert s is not None
        assert s["view"]["resume"] == "not resumed at the reset: text is typed in its input box"
    finally:
        d.stop()
