"""Resume at the reset through a real daemon: POST/DELETE /api/sessions/{id}/resume, the CLI,
the resumer part typing into a real tmux pane (private socket) that draws Claude 2.1.332's wall
screen with a live input box (tests/support/input_pane.py), and the restart keeping the request.
The wall itself comes as Claude sends it: the StopFailure hook and the transcript's quotaLimits.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from purplemux.core.present import clock_time
from tests.support import Daemon, wait_for
from tests.support.hooks import run_hook
from tests.support.input_pane import input_pane
from tests.support.screens import call
from tests.support.walls import at_wall, walled


def resume_events(d: Daemon, sid: str) -> list[dict[str, Any]]:
    events = d.api("GET", f"/api/sessions/{sid}/events")["events"]
    return [e for e in events if e["kind"] == "resume"]


def final(d: Daemon, sid: str, state: str) -> dict[str, Any]:
    def there() -> dict[str, Any] | None:
        found = [e for e in resume_events(d, sid) if e["state"] == state]
        return found[-1] if found else None

    return wait_for(there, timeout=30, what=f"{sid} resume {state}")


def test_armed_sessions_get_continue_typed_once_and_one_with_text_in_its_box_is_left_alone(
    tmp_path: Path,
) -> None:
    past = time.time() - 120  # the reset was two minutes ago: due as soon as it is armed
    with (
        input_pane(tmp_path / "a") as quiet,
        input_pane(tmp_path / "b", typed="half a thought") as busy_box,
    ):
        d = Daemon.under(tmp_path).start()
        try:
            at_wall(d, "s1", quiet, past, tmp_path)
            at_wall(d, "s2", busy_box, past, tmp_path)
            s1 = walled(d, "s1", past)
            walled(d, "s2", past)
            assert s1["state"] == "review"
            assert "resume" in s1["view"]["actions"]

            status, armed = call(d, "POST", "/api/sessions/s1/resume", {"at_reset": True})
            assert status == 200, armed
            assert armed["view"]["resume"] == f"resumes after {clock_time(int(past), time.time())}"
            assert armed["resume"]["by"] == "api" and armed["resume"]["state"] == "armed"

            typed = final(d, "s1", "typed")
            assert (typed["by"], typed["text"], typed["confirmed"]) == (
                "resume-at-reset",
                "continue",
                True,
            )
            assert quiet.lines_sent() == ["continue"]
            s1 = wait_for(lambda: (s := d.session("s1")) and s["resume"]["state"] == "typed" and s)
            assert s1["view"]["resume"] == "" and "resume" not in s1["view"]["actions"]
            # Asked again for the same wall: refused, nothing typed twice.
            status, again = call(d, "POST", "/api/sessions/s1/resume", {"at_reset": True})
            assert status == 409 and "already typed" in again["error"]

            status, _ = call(d, "POST", "/api/sessions/s2/resume", {"at_reset": True, "by": "cli"})
            assert status == 200
            skipped = final(d, "s2", "skipped")
            assert skipped["reason"] == "text is typed in its input box"
            assert busy_box.lines_sent() == []
            assert busy_box.box_line().startswith("\u276f half a thought")
            s2 = d.session("s2")
            assert s2 is not None
            assert (
                s2["view"]["resume"] == "not resumed at the reset: text is typed in its input box"
            )
            assert quiet.lines_sent() == ["continue"]  # still once
        finally:
            d.stop()


def test_bad_requests_are_refused_with_the_reason_and_change_nothing(tmp_path: Path) -> None:
    future = time.time() + 3600
    with input_pane(tmp_path / "a") as pane:
        d = Daemon.under(tmp_path).start()
        try:
            at_wall(d, "s1", pane, future, tmp_path)
            at_wall(d, "s4", None, future, tmp_path)  # outside tmux
            walled(d, "s1", future)
            walled(d, "s4", future)
            run_hook(
                d.home,
                {"session_id": "s3", "hook_event_name": "SessionStart", "cwd": "/w/proj"},
                pane=pane.pane,
                tmux=f"{pane.socket},1,0",
            )
            wait_for(lambda: d.session("s3"))
            for path, body, code, words in (
                ("/api/sessions/nope/resume", {"at_reset": True}, 404, "no session"),
                ("/api/sessions/s1/resume", {"at_reset": "yes"}, 422, "at_reset"),
                ("/api/sessions/s1/resume", [True], 422, "at_reset"),
                ("/api/sessions/s1/resume", {"at_reset": True, "by": "robot"}, 422, "by must"),
                ("/api/sessions/s3/resume", {"at_reset": True}, 409, "not at a usage limit"),
                ("/api/sessions/s4/resume", {"at_reset": True}, 409, "no tmux pane"),
                ("/api/sessions/s1/resume", {"at_reset": False}, 409, "not armed"),
            ):
                status, reply = call(d, "POST", path, body)
                assert (status, words in reply["error"]) == (code, True), (path, body, reply)
            assert call(d, "DELETE", "/api/sessions/s1/resume")[0] == 409
            assert resume_events(d, "s1") == []
            assert pane.lines_sent() == []
        finally:
            d.stop()


def test_input_switched_off_refuses_arming_as_it_refuses_answers(tmp_path: Path) -> None:
    future = time.time() + 3600
    with input_pane(tmp_path / "a") as pane:
        d = Daemon.under(tmp_path, PURPLEMUX_INPUT="off").start()
        try:
            at_wall(d, "s1", pane, future, tmp_path)
            walled(d, "s1", future)
            status, reply = call(d, "POST", "/api/sessions/s1/resume", {"at_reset": True})
            _, answer = call(
                d, "POST", "/api/sessions/s1/answer", {"prompt_id": "p", "cancel": True}
            )
            assert status == 403 and reply["error"] == answer["error"]
            assert "PURPLEMUX_INPUT" in reply["error"]
            assert resume_events(d, "s1") == []
        finally:
            d.stop()


def test_the_cli_arms_shows_and_cancels_and_a_restart_keeps_the_request(tmp_path: Path) -> None:
    future = time.time() + 3600
    with input_pane(tmp_path / "a") as pane:
        d = Daemon.under(tmp_path).start()
        try:
            at_wall(d, "s1", pane, future, tmp_path)
            walled(d, "s1", future)
            done = d.cli("resume", "s1", "--at-reset")
            said = f"resumes after {clock_time(int(future), time.time())}"
            assert done.returncode == 0, done.stderr
            assert said in done.stdout
            d.stop()
            d.start()
            s1 = d.session("s1")
            assert s1 is not None and s1["view"]["resume"] == said
            assert "cancel-resume" in s1["view"]["actions"]
            assert said in d.cli("status").stdout
            [armed] = resume_events(d, "s1")
            assert (armed["by"], armed["state"], armed["source"]) == ("cli", "armed", "user")

            done = d.cli("resume", "s1", "--cancel")
            assert done.returncode == 0 and "cancelled" in done.stdout
            s1 = d.session("s1")
            assert s1 is not None and s1["view"]["resume"] == ""
            assert "resume" in s1["view"]["actions"]
            refused = d.cli("resume", "s1", "--cancel")
            assert refused.returncode == 1 and "not armed" in refused.stderr
            assert pane.lines_sent() == []
        finally:
            d.stop()


def test_a_new_prompt_cancels_an_armed_resume(tmp_path: Path) -> None:
    future = time.time() + 3600
    with input_pane(tmp_path / "a") as pane:
        d = Daemon.under(tmp_path).start()
        try:
            at_wall(d, "s1", pane, future, tmp_path)
            walled(d, "s1", future)
            assert call(d, "POST", "/api/sessions/s1/resume", {"at_reset": True})[0] == 200
            run_hook(
                d.home,
                {"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "go on"},
                pane=pane.pane,
                tmux=f"{pane.socket},1,0",
            )
            cancelled = final(d, "s1", "cancelled")
            assert cancelled["by"] == "resume-at-reset"
            assert cancelled["reason"] == "the session moved on from its limit"
        finally:
            d.stop()


def test_the_setting_arms_every_wall_whose_reset_is_ahead(tmp_path: Path) -> None:
    """A wall whose reset is still ahead is armed by the setting and waits for it (one already
    past is never typed by the setting: tests/test_resume_bounds.py)."""
    future = time.time() + 3600
    with input_pane(tmp_path / "a") as pane:
        d = Daemon.under(tmp_path, PURPLEMUX_RESUME_AT_RESET="on").start()
        try:
            at_wall(d, "s1", pane, future, tmp_path)
            walled(d, "s1", future)
            armed = final(d, "s1", "armed")
            assert (armed["by"], armed["source"]) == ("setting", "user")
            said = f"resumes after {clock_time(int(future), time.time())}"
            s1 = wait_for(lambda: (s := d.session("s1")) and s["view"]["resume"] == said and s)
            assert "cancel-resume" in s1["view"]["actions"]
            assert pane.lines_sent() == []
        finally:
            d.stop()
