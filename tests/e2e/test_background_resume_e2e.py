"""Resume at the reset for a background session, with the real Claude Code 2.1.332 and the real
daemon: a `claude --bg` job of the gateway login hits the 5-hour limit (the fake API's
``LIMIT:5h`` with a short ``reset_in``), is armed through the API, and shortly after the reset
purplemux types "continue" once through a `claude attach <job>` window of its own tmux server,
detaches (Ctrl+Z) and closes it; Claude runs a new turn, and the job keeps running.

Why it matters: the fake-subscription bg job armed no auto-continue of Claude's own and stayed
blocked past the reset (../shared/claude-code-bg-and-limits.md, B), so background users need it
most.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents import install
from purplemux.agents.claude import install as claude_install
from purplemux.core.resume import DELAY
from tests.support import Daemon
from tests.support.screens import call

from .bg_harness import BackgroundClaude
from .fake_api import FakeAnthropicAPI
from .fake_limits import LimitControl
from .harness import make_claude_home, wait_until
from .versions import CURRENT

pytestmark = [pytest.mark.e2e, pytest.mark.claude_versions(CURRENT)]

RESET_IN = 15
"""Seconds from the wall to its reset (the fake's ``reset_in``)."""
TIMEOUT = 90.0
"""A deadline for a loaded machine, not a speed target."""


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    d = Daemon(home=tmp_path / "pmx", claude_dir=tmp_path / "home" / ".claude").start()
    yield d
    d.stop()


@pytest.fixture
def bg(
    tmp_path: Path, daemon: Daemon, claude_bin: Path, fake_api: FakeAnthropicAPI
) -> Iterator[BackgroundClaude]:
    hook = claude_install.hook_command(install.install_script(daemon.home), daemon.home)
    home = make_claude_home(tmp_path, hook, login="gateway")
    # Workers inherit the environment of the --bg that starts Claude's daemon: one retry only.
    jobs = BackgroundClaude(
        claude_bin,
        home,
        fake_api.base_url,
        extra_env={"CLAUDE_CODE_MAX_RETRIES": "1"},
        login="gateway",
    )
    yield jobs
    jobs.close()


def events(d: Daemon, sid: str, kind: str) -> list[dict[str, Any]]:
    return [e for e in d.api("GET", f"/api/sessions/{sid}/events")["events"] if e["kind"] == kind]


def attach_windows(d: Daemon) -> list[str]:
    socket = d.home / "attach.sock"
    if not socket.exists():
        return []
    out = subprocess.run(
        ["tmux", "-S", str(socket), "list-sessions", "-F", "#{session_name}"],
        capture_output=True,
        text=True,
        timeout=10,
    )
    return out.stdout.split() if out.returncode == 0 else []


def test_a_background_job_at_its_wall_gets_continue_typed_once_after_the_reset(
    daemon: Daemon, bg: BackgroundClaude, fake_api: FakeAnthropicAPI
) -> None:
    d = daemon
    fake_api.limits = LimitControl(retry_after=1, reset_in=RESET_IN)
    job = bg.start("LIMIT:5h")
    fake_api.limits.ok_after = time.time() + RESET_IN  # the account is back at the reset
    sid = bg.session_id(job)
    st = bg.wait_state(job, timeout=TIMEOUT, state="blocked")
    assert "You've hit your 5-hour limit" in str(st.get("detail")), st

    def at_wall() -> dict[str, Any] | None:
        s = d.session(sid) or {}
        wall = s.get("limit") or {}
        return s if wall.get("resets_at") and s.get("state") == "review" else None

    row = wait_until(at_wall, timeout=TIMEOUT, describe=lambda: f"at its wall: {d.session(sid)}")
    assert (row["background"], row["job_id"], row["tmux"]) == (True, job, None)
    wall = row["limit"]
    assert wall["window"] == "five_hour" and wall["auto_resume_at"] is None
    assert "resume" in row["view"]["actions"]

    status, armed = call(d, "POST", f"/api/sessions/{sid}/resume", {"at_reset": True})
    assert status == 200, armed
    assert armed["view"]["resume"].startswith("resumes after ")

    # Shortly after the reset: typed once, by purplemux, through the attach window.
    typed = wait_until(
        lambda: next((e for e in events(d, sid, "resume") if e["state"] == "typed"), None),
        timeout=RESET_IN + DELAY + TIMEOUT,
        describe=lambda: f"resume typed: {events(d, sid, 'resume')}\n{d.logs()[-3000:]}",
    )
    assert typed["by"] == "resume-at-reset" and typed["text"] == "continue"
    assert typed["at"] >= wall["resets_at"] + DELAY
    assert [e["state"] for e in events(d, sid, "resume")] == ["armed", "typing", "typed"]

    # Claude runs the new turn: the prompt reached the model, and the wall is gone.
    answered = wait_until(
        lambda: (s := d.session(sid)) and s["state"] == "review" and not s["limit"] and s,
        timeout=TIMEOUT,
        describe=lambda: f"the resumed turn to end: {d.session(sid)}",
    )
    assert answered["resume"]["state"] == "typed"
    prompts = [str(e.get("prompt")) for e in events(d, sid, "prompt")]
    assert any("continue" in p for p in prompts), prompts
    sent = [r for r in fake_api.messages_requests() if r.status == 200]
    assert any("continue" in (r.last_user_text or "") for r in sent)
    assert sum("continue" in p for p in prompts) == 1  # once

    # The attach window was detached and closed; the job runs on.
    wait_until(lambda: attach_windows(d) == [], timeout=TIMEOUT, describe="attach closed")
    assert (bg.state(job) or {}).get("state") != "stopped"
    assert (d.session(sid) or {}).get("ended") is False
