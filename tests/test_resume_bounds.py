"""Resume at the reset never types in a loop (issue 37), through a real daemon typing into a
real tmux pane (private socket) that draws Claude 2.1.332's wall with a live input box: a reset
already past when the wall is seen is never typed by the setting, a resumed turn that hits the
wall again at once stops auto-resume for the session with one notification, and a session gets
"continue" at most twice an hour. The walls come as Claude sends them (hooks and transcript)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.support import Daemon, wait_for
from tests.support.hosts import fake_notify_send
from tests.support.input_pane import InputPane, input_pane
from tests.support.screens import call
from tests.support.walls import at_wall, hit_wall, walled

OUTCOMES = ("typed", "skipped", "stopped")


def resume_events(d: Daemon, sid: str) -> list[dict[str, Any]]:
    events = d.api("GET", f"/api/sessions/{sid}/events")["events"]
    return [e for e in events if e["kind"] == "resume"]


def outcomes(d: Daemon, sid: str, n: int) -> list[dict[str, Any]]:
    """Once the session's walls have `n` outcomes (typed, skipped, stopped): them all."""

    def there() -> list[dict[str, Any]] | None:
        done = [e for e in resume_events(d, sid) if e["state"] in OUTCOMES]
        return done if len(done) >= n else None

    return wait_for(there, timeout=30, what=f"{n} resume outcomes of {sid}")


def stop_notes(record: Path) -> list[str]:
    """The desktop notifications (title|body) saying auto-resume stopped."""
    lines = record.read_text().splitlines() if record.exists() else []
    return [line for line in lines if "· auto-resume stopped|" in line]


def again(d: Daemon, sid: str, pane: InputPane, resets_at: float, root: Path) -> None:
    """The session's next turn ("continue") hits the wall again, with the same reset."""
    wall = d.session(sid)
    before = wall["limit"]["at"] if wall and wall.get("limit") else 0.0
    hit_wall(d, sid, pane, resets_at, root, "continue")
    walled(d, sid, resets_at, after=before)


def test_with_the_setting_a_reset_five_minutes_past_gets_continue_typed_at_most_once(
    tmp_path: Path,
) -> None:
    """A server clock behind ours (or a stale reset): each new wall says a reset five minutes
    ago. Before issue 37 every wall was armed and typed at once (147 in 92 s)."""
    past = time.time() - 300
    with input_pane(tmp_path / "a") as pane:
        d = Daemon.under(tmp_path, PURPLEMUX_RESUME_AT_RESET="on").start()
        try:
            at_wall(d, "s1", pane, past, tmp_path)
            walled(d, "s1", past)
            for n in (1, 2, 3):
                done = outcomes(d, "s1", n)
                if len(pane.lines_sent()) > 1:
                    break
                if n < 3:
                    again(d, "s1", pane, past, tmp_path)
            assert len(pane.lines_sent()) <= 1, pane.lines_sent()
            assert pane.lines_sent() == []  # past when first seen: never typed at all
            assert [e["state"] for e in done] == ["skipped"] * 3
            assert all("already past" in (e["reason"] or "") for e in done)
            row = d.session("s1")
            assert row is not None and "already past" in row["view"]["resume"]
            assert "resume" in row["view"]["actions"]  # the user may still ask for it
        finally:
            d.stop()


def test_a_resumed_turn_that_hits_the_wall_again_at_once_stops_auto_resume_with_one_note(
    tmp_path: Path,
) -> None:
    past = time.time() - 300
    record = tmp_path / "notify-send.log"
    path = fake_notify_send(tmp_path / "bin", record)
    env = {"PURPLEMUX_RESUME_AT_RESET": "on", "PURPLEMUX_DESKTOP_NOTIFY": "1", "PATH": path}
    with input_pane(tmp_path / "a") as pane, input_pane(tmp_path / "b") as other:
        d = Daemon.under(tmp_path, **env).start()
        try:
            at_wall(d, "s1", pane, past, tmp_path)
            walled(d, "s1", past)
            outcomes(d, "s1", 1)  # the setting leaves a past reset alone; the user asks
            status, armed = call(d, "POST", "/api/sessions/s1/resume", {"at_reset": True})
            assert status == 200 and armed["resume"]["by"] == "api", armed
            outcomes(d, "s1", 2)
            assert pane.lines_sent() == ["continue"]

            again(d, "s1", pane, past, tmp_path)  # the resumed turn: the wall again, at once
            stopped = outcomes(d, "s1", 3)[-1]
            assert (stopped["state"], stopped["by"]) == ("stopped", "resume-at-reset")
            row = wait_for(
                lambda: (s := d.session("s1")) and s["resume"]["state"] == "stopped" and s
            )
            assert "auto-resume stopped" in row["view"]["resume"]
            wait_for(lambda: stop_notes(record), what="the note that auto-resume stopped")

            again(d, "s1", pane, past, tmp_path)  # and again: the setting leaves it alone
            # s2's wall comes after s1's third: once s2's outcome shows, the resumer has looked
            # at s1's third wall too (one round looks at every session at a wall, in id order).
            at_wall(d, "s2", other, past, tmp_path)
            walled(d, "s2", past)
            outcomes(d, "s2", 1)
            states = [(e["state"], e["by"]) for e in resume_events(d, "s1")]
            assert states == [
                ("armed", "setting"),
                ("skipped", "resume-at-reset"),
                ("armed", "api"),
                ("typing", "resume-at-reset"),
                ("typed", "resume-at-reset"),
                ("stopped", "resume-at-reset"),
            ]
            assert pane.lines_sent() == ["continue"]
            told = stop_notes(record)
            assert len(told) == 1, record.read_text()
            assert "hit the usage limit again" in told[0]
        finally:
            d.stop()


def test_a_session_gets_continue_at_most_twice_an_hour_even_when_asked(tmp_path: Path) -> None:
    past = time.time() - 300
    with input_pane(tmp_path / "a") as pane:
        d = Daemon.under(tmp_path).start()
        try:
            at_wall(d, "s1", pane, past, tmp_path)
            walled(d, "s1", past)
            for n in (1, 2, 3):
                status, reply = call(d, "POST", "/api/sessions/s1/resume", {"at_reset": True})
                assert status == 200, reply
                done = outcomes(d, "s1", n)
                if n < 3:
                    again(d, "s1", pane, past, tmp_path)
            assert [e["state"] for e in done] == ["typed", "typed", "skipped"]
            assert "twice in the last hour" in done[-1]["reason"]
            assert pane.lines_sent() == ["continue", "continue"]
        finally:
            d.stop()
