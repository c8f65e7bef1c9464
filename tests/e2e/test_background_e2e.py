"""Claude 2.1.332's background sessions through a real daemon (issue 25): a `claude --bg` job is
a row with no pane, its permission prompt is answered through the API (by label, through a
`claude attach` window the daemon opens and closes), and the agent view's spare worker and its
notices about other sessions never make or move a row.

Facts: ../shared/claude-code-bg-and-limits.md, A. Claude talks to the fake Messages API
(fake_api.py, API-key login): ``RUN:touch x.txt`` asks for a Bash call.
"""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import Daemon

from .bg_harness import AgentView, BackgroundClaude, both_hooks
from .fake_api import FakeAnthropicAPI
from .harness import ClaudeHome, HookCall, HookLog, wait_until
from .versions import CURRENT

pytestmark = [pytest.mark.e2e, pytest.mark.claude_versions(CURRENT)]

TIMEOUT = 90.0
"""A deadline for a loaded machine, not a speed target."""


@pytest.fixture
def hook_command(hook_log: HookLog, daemon_hook_command: str) -> str:
    """Every hook goes to the daemon, and is recorded (to know what the agent view sent)."""
    return both_hooks(hook_log.command, daemon_hook_command)


@pytest.fixture
def bg(
    claude_bin: Path, claude_home: ClaudeHome, fake_api: FakeAnthropicAPI
) -> Iterator[BackgroundClaude]:
    jobs = BackgroundClaude(claude_bin, claude_home, fake_api.base_url)
    yield jobs
    jobs.close()


def api(daemon: Daemon, method: str, path: str, body: Any = None) -> Any:
    """The daemon's API with room for an attach to start on a loaded machine."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(daemon.url + path, data=data, method=method)
    req.add_header("Authorization", f"Bearer {daemon.token}")
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as exc:
        detail = f"{method} {path}: {exc.code} {exc.read()!r}\n{daemon.logs()}"
        raise AssertionError(detail) from None


def _row(daemon: Daemon, sid: str, *states: str) -> dict[str, Any] | None:
    row = daemon.session(sid)
    return row if row is not None and (not states or row["state"] in states) else None


def test_a_background_job_is_listed_and_its_permission_prompt_answered_through_the_api(
    purplemux_daemon: Daemon, bg: BackgroundClaude
) -> None:
    daemon = purplemux_daemon
    job = bg.start("RUN:touch x.txt", "--permission-mode", "default")
    sid = bg.session_id(job)

    row = wait_until(
        lambda: _row(daemon, sid, "needs-input"),
        timeout=TIMEOUT,
        describe=lambda: f"a needs-input row for job {job}: {daemon.session(sid)}",
    )
    assert (row["agent"], row["background"], row["job_id"], row["tmux"]) == (
        "claude",
        True,
        job,
        None,
    )
    assert row["view"]["background"] is True and row["view"]["pane"] == ""
    assert "answer" in row["view"]["actions"]
    assert "touch x.txt" in (row["waiting_for"] or "")

    # The prompt as the attach window shows it, then answered by its label.
    screen = api(daemon, "GET", f"/api/sessions/{sid}/screen")
    prompt = screen["prompt"]
    assert prompt is not None and prompt["kind"] == "permission", screen["text"]
    assert prompt["ambiguous"] is None
    assert prompt["options"][0]["label"] == "Yes"
    done = api(
        daemon, "POST", f"/api/sessions/{sid}/answer", {"prompt_id": prompt["id"], "option": "Yes"}
    )
    assert done["ok"] is True and done["answered"] == "Yes"

    # The command ran, the turn ended, and the answer is on the session's record.
    wait_until(lambda: (bg.home.project / "x.txt").exists(), timeout=TIMEOUT, describe="x.txt")
    wait_until(lambda: _row(daemon, sid, "review", "idle"), timeout=TIMEOUT, describe="review")
    events = daemon.api("GET", f"/api/sessions/{sid}/events")["events"]
    answers = [e for e in events if e["kind"] == "answer"]
    assert [(a["by"], a["option"], a["confirmed"]) for a in answers] == [("api", "Yes", True)]
    # The attach window is closed and the session keeps running (Ctrl+Z detached it).
    socket = daemon.home / "attach.sock"
    wait_until(lambda: not _tmux_has_sessions(socket), timeout=TIMEOUT, describe="attach closed")
    assert bg.state(job) is not None and bg.state(job)["state"] != "stopped"  # type: ignore[index]
    assert _row(daemon, sid)["ended"] is False  # type: ignore[index]


def test_a_background_jobs_question_is_answered_by_label_through_the_api(
    purplemux_daemon: Daemon, bg: BackgroundClaude, fake_api: FakeAnthropicAPI
) -> None:
    daemon = purplemux_daemon
    job = bg.start("ASK:Which colour should the button be?", "--permission-mode", "default")
    sid = bg.session_id(job)
    wait_until(lambda: _row(daemon, sid, "needs-input"), timeout=TIMEOUT, describe="asking")
    screen = api(daemon, "GET", f"/api/sessions/{sid}/screen")
    prompt = screen["prompt"]
    assert prompt is not None and prompt["kind"] == "question", screen["text"]
    assert "Blue" in [o["label"] for o in prompt["options"]]
    done = api(
        daemon,
        "POST",
        f"/api/sessions/{sid}/answer",
        {"prompt_id": prompt["id"], "option": "Blue"},
    )
    assert done["ok"] is True and done["keys"][-1] == "Enter"
    wait_until(lambda: _row(daemon, sid, "review", "idle"), timeout=TIMEOUT, describe="review")
    # Claude sent the model the answer picked on the attached screen.
    results = [
        json.dumps(block.get("content"))
        for r in fake_api.messages_requests()
        for m in r.body.get("messages", [])
        if isinstance(m.get("content"), list)
        for block in m["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert results and "Blue" in results[-1] and "Red" not in results[-1], results


def test_a_rate_limited_background_job_is_a_rate_limit_failure_from_its_job_file(
    purplemux_daemon: Daemon,
    claude_bin: Path,
    claude_home: ClaudeHome,
    fake_api: FakeAnthropicAPI,
) -> None:
    daemon = purplemux_daemon
    fake_api.limits.retry_after = 0
    # Workers inherit the environment of the --bg that starts Claude's daemon: one retry only.
    bg = BackgroundClaude(
        claude_bin, claude_home, fake_api.base_url, extra_env={"CLAUDE_CODE_MAX_RETRIES": "1"}
    )
    try:
        job = bg.start("LIMIT:plain")
        sid = bg.session_id(job)
        st = bg.wait_state(job, timeout=TIMEOUT, state="blocked")
        assert str(st["needs"]).startswith("rate limited")
        row = wait_until(
            lambda: (r := _row(daemon, sid, "review")) and r["error_kind"] == "rate_limit" and r,
            timeout=TIMEOUT,
            describe=lambda: f"a rate-limited review: {daemon.session(sid)}",
        )
        assert row["background"] is True and row["job_id"] == job
        events = daemon.api("GET", f"/api/sessions/{sid}/events")["events"]
        from_job = [e for e in events if e["source"] == "job" and e["kind"] == "stop_failure"]
        assert [e["error_kind"] for e in from_job] == ["rate_limit"]
    finally:
        bg.close()


def _tmux_has_sessions(socket: Path) -> bool:
    if not socket.exists():
        return False
    out = subprocess.run(
        ["tmux", "-S", str(socket), "list-sessions"], capture_output=True, text=True, timeout=10
    )
    return out.returncode == 0 and bool(out.stdout.strip())


def test_the_agent_views_spare_and_notices_make_no_row(
    purplemux_daemon: Daemon,
    bg: BackgroundClaude,
    hook_log: HookLog,
    claude_bin: Path,
    claude_home: ClaudeHome,
    fake_api: FakeAnthropicAPI,
) -> None:
    daemon = purplemux_daemon
    first = bg.start("hello from bg")
    first_sid = bg.session_id(first)
    settled = wait_until(
        lambda: _row(daemon, first_sid, "review"), timeout=TIMEOUT, describe="the first job's turn"
    )

    view = AgentView(claude_bin, claude_home, fake_api.base_url).start()
    try:
        spare_start = hook_log.wait_for(
            "SessionStart", lambda c: c.get("agent_type") == "claude", timeout=TIMEOUT
        )
        spare_sid = spare_start.get("session_id")
        wait_until(
            lambda: any(
                f.get("spare") is True and f.get("sessionId") == spare_sid
                for f in bg.session_files()
            ),
            timeout=TIMEOUT,
            describe=lambda: f"the spare's session file: {bg.session_files()}",
        )

        # A job that asks while the view is open: the view says so under its own session id.
        # The view tells only of a row that changes band under its eyes: a job it first sees
        # already asking is no news (2.1.332's binary; a quick job asks within the view's poll).
        # So the model keeps the job working a few seconds first; should the view still miss
        # it on a loaded machine, a second job asks.
        for attempt, made in enumerate(("y.txt", "z.txt")):
            second = bg.start(f"WAIT:4 RUN:touch {made}", "--permission-mode", "default")
            second_sid = bg.session_id(second)
            try:
                notice = hook_log.wait_for("Notification", _view_notice, timeout=TIMEOUT)
                break
            except TimeoutError:
                if attempt:
                    calls = hook_log.calls()
                    said = [c.get("notification_type") for c in calls if c.event == "Notification"]
                    raise TimeoutError(
                        f"no agent view notice; notifications: {said}; the view:\n{view.screen()}"
                    ) from None
        view_sid = notice.get("session_id")
        assert notice.pane is not None  # the view's own pane
        wait_until(
            lambda: f"session {view_sid} makes no row" in daemon.logs(),
            timeout=TIMEOUT,
            describe="the daemon to take (and set aside) the agent view's notice",
        )
        listed = {s["id"] for s in daemon.sessions()}
        assert spare_sid not in listed and view_sid not in listed
        assert {first_sid, second_sid} <= listed
        # The asking job is needs-input by its own hooks; the other row did not move.
        asking = wait_until(lambda: _row(daemon, second_sid, "needs-input"), timeout=TIMEOUT)
        assert asking["background"] is True and asking["job_id"] == second
        first_row = _row(daemon, first_sid)
        assert first_row is not None
        assert (first_row["state"], first_row["state_since"]) == (
            settled["state"],
            settled["state_since"],
        )
    finally:
        view.close()
    # The view closed: its spare ends (SessionEnd), still no row.
    hook_log.wait_for("SessionEnd", lambda c: c.get("session_id") == spare_sid, timeout=TIMEOUT)
    wait_until(
        lambda: (
            f"session {spare_sid} makes no row" in daemon.logs()
            and daemon.logs().count(f"session {spare_sid} makes no row") >= 2
        ),
        timeout=TIMEOUT,
        describe="the spare's SessionEnd set aside",
    )
    assert spare_sid not in {s["id"] for s in daemon.sessions()}


def _view_notice(call: HookCall) -> bool:
    """A notice of the agent view about another session."""
    return call.get("notification_type") in ("agent_completed", "agent_needs_input")
