"""Resume at the reset with the real Claude Code 2.1.332 and the real daemon.

- Gateway login (Claude does not continue by itself): two sessions hit the 5-hour limit
  (the fake API's ``LIMIT:5h`` with a short ``reset_in``); both are armed; shortly after the
  reset purplemux types "continue" once into the one at its empty prompt, and Claude runs a
  new turn; the one with the user's own words in its input box is left alone, with the reason.
- Fake subscription (Claude continues by itself): arming is refused, the setting
  PURPLEMUX_RESUME_AT_RESET=on leaves it alone, and Claude's own continuation is the only
  prompt.
"""

from __future__ import annotations

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

from .fake_api import FakeAnthropicAPI
from .fake_limits import LimitControl
from .harness import HookLog, TmuxClaude, input_box, make_claude_home, wait_until
from .versions import CURRENT

pytestmark = [pytest.mark.e2e, pytest.mark.claude_versions(CURRENT)]

RESET_IN = 15
"""Seconds from the wall to its reset (the fake's ``reset_in``)."""
RETRY_ENV = {"CLAUDE_CODE_MAX_RETRIES": "1"}
MINE = "my own words"


def start_daemon(root: Path, **env: str) -> Daemon:
    root.mkdir(parents=True, exist_ok=True)
    return Daemon(home=root / "pmx", claude_dir=root / "home" / ".claude", env_extra=env).start()


def hook_command(daemon: Daemon) -> str:
    script = install.install_script(daemon.home)
    return claude_install.hook_command(script, daemon.home)


class Sessions:
    """Claudes of one login in one throw-away HOME, hooked into the daemon."""

    def __init__(self, root: Path, daemon: Daemon, api: FakeAnthropicAPI, login: str) -> None:
        self.daemon, self.api, self.login = daemon, api, login
        self.hooks = HookLog(root / "hooks.jsonl")
        self.home = make_claude_home(root, hook_command(daemon), login=login)
        self.started: list[TmuxClaude] = []

    def start(self, claude_bin: Path) -> tuple[TmuxClaude, str]:
        claude = TmuxClaude(
            claude_bin, self.home, self.api.base_url, env=RETRY_ENV, login=self.login
        )
        self.started.append(claude)
        claude.start()
        claude.wait_ready(timeout=60)
        claude.wait_started(timeout=60)
        data = claude.session_file()
        assert data is not None
        sid = str(data["sessionId"])
        wait_until(
            lambda: ((self.daemon.session(sid) or {}).get("tmux") or {}).get("pane"),
            timeout=30,
            describe=f"the daemon to know {sid}'s pane",
        )
        return claude, sid

    def close(self) -> None:
        for claude in self.started:
            claude.kill()


@pytest.fixture
def make_sessions(tmp_path: Path, fake_api: FakeAnthropicAPI) -> Iterator[Any]:
    made: list[tuple[Sessions, Daemon]] = []

    def make(login: str, **env: str) -> Sessions:
        root = tmp_path / login
        daemon = start_daemon(root, **env)
        sessions = Sessions(root, daemon, fake_api, login)
        made.append((sessions, daemon))
        return sessions

    yield make
    for sessions, daemon in made:
        sessions.close()
        daemon.stop()


def at_wall(d: Daemon, sid: str, timeout: float = 90) -> dict[str, Any]:
    """The session once the daemon has it at its wall with the reset known."""

    def probe() -> dict[str, Any] | None:
        s = d.session(sid) or {}
        wall = s.get("limit") or {}
        return s if wall.get("resets_at") and s.get("state") == "review" else None

    return wait_until(
        probe, timeout=timeout, describe=lambda: f"{sid} at its wall: {d.session(sid)}"
    )


def resume_events(d: Daemon, sid: str) -> list[dict[str, Any]]:
    return [
        e for e in d.api("GET", f"/api/sessions/{sid}/events")["events"] if e["kind"] == "resume"
    ]


def prompts(d: Daemon, sid: str) -> list[str]:
    events = d.api("GET", f"/api/sessions/{sid}/events")["events"]
    return [str(e.get("prompt")) for e in events if e["kind"] == "prompt"]


def test_resume_at_reset_types_once_into_the_session_at_its_prompt_only(
    make_sessions: Any, fake_api: FakeAnthropicAPI, claude_bin: Path
) -> None:
    fake_api.limits = LimitControl(retry_after=1, reset_in=RESET_IN)
    gw = make_sessions("gateway")
    d = gw.daemon
    quiet, quiet_sid = gw.start(claude_bin)
    typing, typing_sid = gw.start(claude_bin)
    fake_api.limits.ok_after = time.time() + RESET_IN  # the account is back at the reset
    for claude in (quiet, typing):
        claude.send_text("LIMIT:5h")
    wall = at_wall(d, quiet_sid)["limit"]
    at_wall(d, typing_sid)
    assert wall["window"] == "five_hour" and wall["auto_resume_at"] is None
    typing.type_text(MINE)
    typing.wait_screen(lambda s: input_box(s) == MINE)

    status, armed = call(d, "POST", f"/api/sessions/{quiet_sid}/resume", {"at_reset": True})
    assert status == 200, armed
    assert armed["view"]["resume"].startswith("resumes after ")
    done = d.cli("resume", typing_sid, "--at-reset")
    assert done.returncode == 0, done.stderr

    # Shortly after the reset: typed once, by purplemux, and Claude runs the turn.
    typed = wait_until(
        lambda: next((e for e in resume_events(d, quiet_sid) if e["state"] == "typed"), None),
        timeout=RESET_IN + DELAY + 60,
        describe=lambda: f"resume typed: {resume_events(d, quiet_sid)}",
    )
    assert typed["by"] == "resume-at-reset" and typed["text"] == "continue"
    assert typed["at"] >= wall["resets_at"] + DELAY
    answered = wait_until(
        lambda: (s := d.session(quiet_sid)) and s["state"] == "review" and not s["limit"] and s,
        timeout=60,
        describe=lambda: f"the resumed turn to end: {d.session(quiet_sid)}",
    )
    assert answered["resume"]["state"] == "typed"
    assert [p for p in prompts(d, quiet_sid) if "continue" in p] != []
    assert [e["state"] for e in resume_events(d, quiet_sid)] == ["armed", "typing", "typed"]
    sent = [r for r in fake_api.messages_requests() if r.status == 200]
    assert any("continue" in (r.last_user_text or "") for r in sent)

    # The session with the user's words in its box: nothing typed, and why.
    skipped = wait_until(
        lambda: next((e for e in resume_events(d, typing_sid) if e["state"] == "skipped"), None),
        timeout=30,
        describe=lambda: f"resume skipped: {resume_events(d, typing_sid)}",
    )
    assert skipped["reason"] == "text is typed in its input box"
    assert input_box(typing.screen()) == MINE
    assert prompts(d, typing_sid) == ["LIMIT:5h"]
    view = (d.session(typing_sid) or {})["view"]
    assert view["resume"] == "not resumed at the reset: text is typed in its input box"


def test_a_session_claude_continues_itself_is_never_typed_into(
    make_sessions: Any, fake_api: FakeAnthropicAPI, claude_bin: Path
) -> None:
    fake_api.limits = LimitControl(reset_in=RESET_IN)
    sub = make_sessions("subscription", PURPLEMUX_RESUME_AT_RESET="on")
    d = sub.daemon
    claude, sid = sub.start(claude_bin)
    fake_api.limits.ok_after = time.time() + RESET_IN
    claude.send_text("LIMIT:5h")
    wall = wait_until(
        lambda: (
            ((d.session(sid) or {}).get("limit") or {}).get("auto_resume_at") and d.session(sid)
        ),
        timeout=90,
        describe=lambda: f"Claude's own resume time: {d.session(sid)}",
    )
    status, refused = call(d, "POST", f"/api/sessions/{sid}/resume", {"at_reset": True})
    assert status == 409 and "Claude continues this session by itself" in refused["error"]
    assert "resume" not in wall["view"]["actions"]

    # Claude continues by itself (~105 s after the reset): its prompt is the only one.
    wait_until(
        lambda: any("usage limit has reset" in p for p in prompts(d, sid)),
        timeout=RESET_IN + 180,
        describe=lambda: f"Claude's own continuation: {prompts(d, sid)}",
    )
    assert not [p for p in prompts(d, sid) if p.strip() == "continue"]
    assert not [e for e in resume_events(d, sid) if e["state"] in ("typed", "skipped")]
