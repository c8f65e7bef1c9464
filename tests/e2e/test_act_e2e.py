"""Acting from anywhere, through the real Claude Code CLI in tmux and the real daemon:
read the prompt through /screen, answer exactly it by label, refuse a stale prompt id with
nothing typed, focus the pane, and refuse to answer when input is off.

Parametrised over the Claude Code versions in VERSIONS (2.1.197, the oldest supported, and
2.1.332, the current one). 2.1.332 defaults to auto mode, where a `touch` runs unasked: the
classic dialog needs `--permission-mode default`; auto mode's own No-first approval has its test.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import CDPSession, Locator, Page, Worker, expect

from tests.notify.fake_push_service import BrowserSubscription, FakePushService
from tests.support import Daemon
from tests.support.browser import sign_in
from tests.support.screens import call

from .conftest import StartClaude
from .harness import TmuxClaude, wait_until
from .versions import CURRENT, OLDEST, VERSIONS, profile

pytestmark = pytest.mark.e2e

CLASSIC_ARGS = {v: list(profile(v).manual_args) for v in VERSIONS}
"""Arguments that give the classic permission dialog (2.1.332's default is auto mode); the
releases come from .ci/claude-versions, and conftest parametrizes `claude_version` over them."""


@pytest.fixture
def daemon_env() -> dict[str, str]:
    """Extra environment for the daemon (a test parametrises it to turn input off)."""
    return {}


@pytest.fixture
def purplemux_daemon(tmp_path: Path, daemon_env: dict[str, str]) -> Iterator[Daemon]:
    daemon = Daemon(
        home=tmp_path / "pmx", claude_dir=tmp_path / "home" / ".claude", env_extra=daemon_env
    )
    daemon.start()
    yield daemon
    daemon.stop()


@pytest.fixture
def hook_command(daemon_hook_command: str) -> str:
    return daemon_hook_command


# ---------------------------------------------------------------------------------------------


def session_id_of(claude: TmuxClaude) -> str:
    data = claude.session_file()
    assert data is not None
    return str(data["sessionId"])


def start(
    daemon: Daemon, start_claude: StartClaude, version: str, *, classic: bool = True
) -> tuple[TmuxClaude, str]:
    """Start Claude and wait until the daemon knows its session's pane: (claude, session id)."""
    claude = start_claude(args=CLASSIC_ARGS[version] if classic else [])
    sid = session_id_of(claude)
    wait_until(
        lambda: ((daemon.session(sid) or {}).get("tmux") or {}).get("pane"),
        timeout=20,
        describe=f"the daemon to know {sid}'s pane",
    )
    return claude, sid


def prompted(
    daemon: Daemon, start_claude: StartClaude, version: str, text: str, kind: str
) -> tuple[TmuxClaude, str, dict[str, Any]]:
    """Start Claude, type `text`, and wait for the prompt (of `kind`) it brings: (claude,
    session id, the /screen body)."""
    claude, sid = start(daemon, start_claude, version)
    claude.send_text(text)
    return claude, sid, wait_prompt(daemon, sid, kind)


def answer(
    daemon: Daemon, sid: str, prompt_id: str, option: str, by: str | None = None
) -> tuple[int, Any]:
    """POST /answer: pick `option` (a label) on the prompt `prompt_id`, as `by` when given."""
    body = {"prompt_id": prompt_id, "option": option} | ({"by": by} if by else {})
    return call(daemon, "POST", f"/api/sessions/{sid}/answer", body)


def wait_prompt(
    daemon: Daemon, sid: str, kind: str | None = None, labels: list[str] | None = None
) -> dict[str, Any]:
    """Poll /screen until it shows a prompt (of that kind, with those options) while the daemon
    has the session in needs-input; returns the /screen body."""
    last: dict[str, Any] = {}

    def probe() -> dict[str, Any] | None:
        nonlocal last
        status, body = call(daemon, "GET", f"/api/sessions/{sid}/screen")
        assert status == 200, body
        last = body
        prompt = body.get("prompt")
        if not prompt or body.get("state") != "needs-input":
            return None
        if kind and prompt["kind"] != kind:
            return None
        if labels is not None and [o["label"] for o in prompt["options"]][: len(labels)] != labels:
            return None
        return body

    return wait_until(
        probe,
        timeout=45,
        interval=0.1,
        describe=lambda: (
            f"a {kind or ''} prompt on /screen; last: {last.get('state')}, "
            f"{last.get('prompt')}\n{last.get('text', '')}"
        ),
    )


def events(daemon: Daemon, sid: str) -> list[dict[str, Any]]:
    return list(daemon.api("GET", f"/api/sessions/{sid}/events")["events"])


def wait_event(daemon: Daemon, sid: str, name: str, since: float = 0.0) -> dict[str, Any]:
    return wait_until(
        lambda: next(
            (
                e
                for e in events(daemon, sid)
                if e.get("name") == name and float(e.get("at") or 0) >= since
            ),
            None,
        ),
        timeout=30,
        describe=lambda: f"{name} in the log: {[e.get('name') for e in events(daemon, sid)]}",
    )


def dialog_part(text: str) -> str:
    """The screen below its last full-width rule: the dialog (2.1.332's logo animates above)."""
    lines = text.split("\n")
    rules = [i for i, line in enumerate(lines) if line.startswith("─" * 20)]
    return "\n".join(lines[rules[-1] :] if rules else lines)


def labels_of(body: dict[str, Any]) -> list[str]:
    return [o["label"] for o in body["prompt"]["options"]]


# ---------------------------------------------------------------------------------------------


def test_permission_read_stale_refused_then_yes_runs_the_tool(
    purplemux_daemon: Daemon, start_claude: StartClaude, claude_version: str
) -> None:
    claude, sid = start(purplemux_daemon, start_claude, claude_version)
    made = claude.cwd / "made.txt"
    claude.send_text("RUN:touch made.txt")

    shown = wait_prompt(purplemux_daemon, sid, "permission")
    prompt = shown["prompt"]
    assert prompt["title"] == "Bash command: touch made.txt"
    assert prompt["question"] == "Do you want to proceed?"
    assert labels_of(shown)[0] == "Yes" and labels_of(shown)[-1] == "No"
    assert len(labels_of(shown)) == (3 if claude_version == "2.1.197" else 4)
    assert "Do you want to proceed?" in shown["text"]

    # A prompt id that is not the one on screen: refused, nothing typed.
    before = dialog_part(claude.screen())
    status, body = answer(purplemux_daemon, sid, "p-0000000000000000", "Yes")
    assert status == 409, body
    assert "nothing was typed" in body["error"]
    assert body["prompt"]["id"] == prompt["id"]
    time.sleep(1.0)  # give a wrongly sent key time to act before looking
    assert dialog_part(claude.screen()) == before  # the same selection, nothing typed
    assert not made.exists()

    # A label that is not on screen: 422, nothing typed.
    status, body = answer(purplemux_daemon, sid, prompt["id"], "Maybe")
    assert status == 422 and "no option 'Maybe'" in body["error"]

    sent = time.time()
    status, body = answer(purplemux_daemon, sid, prompt["id"], "Yes", "page")
    assert status == 200, body
    assert body["ok"] is True and body["answered"] == "Yes" and body["keys"] == ["1"]
    wait_until(made.exists, timeout=20, describe="made.txt to be created")
    wait_event(purplemux_daemon, sid, "PostToolUse", since=sent - 1)
    [audit] = [e for e in events(purplemux_daemon, sid) if e["kind"] == "answer"]
    assert (audit["by"], audit["option"], audit["prompt_id"]) == ("page", "Yes", prompt["id"])
    assert audit["name"] == "Answer: Yes (page)" and audit["confirmed"] is True
    # The same prompt id again: it is gone, refused.
    status, body = answer(purplemux_daemon, sid, prompt["id"], "Yes")
    assert status == 409


def test_question_answered_with_its_second_option(
    purplemux_daemon: Daemon, start_claude: StartClaude, claude_version: str
) -> None:
    text = "ASK:Which colour should the button be?"
    claude, sid, shown = prompted(purplemux_daemon, start_claude, claude_version, text, "question")
    prompt = shown["prompt"]
    assert prompt["title"] == "Which colour should the button be?"
    assert labels_of(shown)[:3] == ["Red", "Blue", "Type something."]
    assert prompt["free_text"] is True

    status, body = answer(purplemux_daemon, sid, prompt["id"], "Blue", "cli")
    assert status == 200, body
    assert body["keys"] == ["Down", "Enter"]
    claude.wait_screen("→ Blue", timeout=20)
    wait_event(purplemux_daemon, sid, "PostToolUse")


# Auto mode's safety check, and its No-first approval, exist from 2.1.332 on.
@pytest.mark.claude_versions(*(v for v in VERSIONS if v != OLDEST))
def test_auto_mode_no_first_approval_answered_yes_by_label(
    purplemux_daemon: Daemon, start_claude: StartClaude, claude_version: str
) -> None:
    claude, sid = start(purplemux_daemon, start_claude, claude_version, classic=False)
    claude.send_text("RUN:python3 -c \"open('auto.txt', 'w').write('42')\"")

    # First: "Auto mode can't check actions in this session" (no hook; the session file says it).
    shown = wait_prompt(purplemux_daemon, sid, "dialog")
    assert shown["prompt"]["title"] == "Auto mode can't check actions in this session"
    assert labels_of(shown)[0] == "Stay in auto mode"
    status, body = answer(purplemux_daemon, sid, shown["prompt"]["id"], "Stay in auto mode")
    assert status == 200, body

    # Then the approval, "No" first and selected: "Yes" is picked by its label.
    shown = wait_prompt(purplemux_daemon, sid, "permission", ["No", "Yes"])
    assert shown["prompt"]["options"][0]["selected"] is True
    status, body = answer(purplemux_daemon, sid, shown["prompt"]["id"], "Yes", "push")
    assert status == 200, body
    assert body["keys"] == ["Down", "Enter"]
    done = claude.cwd / "auto.txt"
    wait_until(
        lambda: done.exists() and done.read_text() == "42",
        timeout=20,
        describe="the command to run",
    )


@pytest.mark.parametrize("daemon_env", [{"PURPLEMUX_INPUT": "off"}])
def test_answer_refused_when_input_is_off(
    purplemux_daemon: Daemon, start_claude: StartClaude, claude_version: str
) -> None:
    text = "RUN:touch refused.txt"
    claude, sid, shown = prompted(
        purplemux_daemon, start_claude, claude_version, text, "permission"
    )
    assert shown["input"] is False
    status, body = answer(purplemux_daemon, sid, shown["prompt"]["id"], "Yes")
    assert status == 403
    assert "PURPLEMUX_INPUT=off" in body["error"]
    time.sleep(1.0)
    assert not (claude.cwd / "refused.txt").exists()
    again = wait_prompt(purplemux_daemon, sid, "permission")
    assert again["prompt"]["id"] == shown["prompt"]["id"]
    assert not [e for e in events(purplemux_daemon, sid) if e["kind"] == "answer"]


def test_focus_brings_the_pane_forward_and_switches_the_client(
    purplemux_daemon: Daemon, start_claude: StartClaude, claude_version: str, tmp_path: Path
) -> None:
    claude, sid = start(purplemux_daemon, start_claude, claude_version)
    claude_window = claude.tmux("display-message", "-p", "-t", claude.pane_id, "#{window_id}")
    # Another window becomes the current one of Claude's tmux session, and a client is attached
    # to another tmux session of the same server.
    claude.tmux("new-window", "-t", f"{claude.session_name}:", "sleep 600")
    claude.tmux("new-session", "-d", "-s", "other", "sleep 600")

    def current_window() -> str:
        out = claude.tmux("display-message", "-p", "-t", f"{claude.session_name}:", "#{window_id}")
        return out.stdout.strip()

    assert current_window() != claude_window.stdout.strip()
    pid, fd = pty.fork()
    if pid == 0:  # the child: a real tmux client attached to "other"
        os.execvpe(
            "tmux",
            ["tmux", "-L", claude.socket_name, "attach-session", "-t", "other"],
            {**claude.env, "TERM": "xterm-256color"},
        )
    try:

        def clients() -> list[str]:
            # A person's clients: the daemon's own control-mode client (tmux_control.py) is not.
            fmt = "#{client_control_mode} #{client_session}"
            out = claude.tmux("list-clients", "-F", fmt, check=False)
            return [ln.split(" ", 1)[1] for ln in out.stdout.splitlines() if ln.startswith("0 ")]

        wait_until(lambda: clients() == ["other"], timeout=10, describe="the client to attach")
        status, body = call(purplemux_daemon, "POST", f"/api/sessions/{sid}/focus", {})
        assert status == 200, body
        assert body["pane"] == claude.pane_id and body["client"]
        assert current_window() == claude_window.stdout.strip()
        wait_until(lambda: clients() == [claude.session_name], timeout=5, describe="switch")
        active = claude.tmux("display-message", "-p", "-t", claude.pane_id, "#{pane_active}")
        assert active.stdout.strip() == "1"
    finally:
        subprocess.run(["kill", str(pid)], check=False)
        os.waitpid(pid, 0)
        os.close(fd)
    # Unknown session: 404; the API refuses rather than guess.
    status, body = call(purplemux_daemon, "POST", "/api/sessions/nope/focus", {})
    assert status == 404


# ---------------------------------------------------------------------------------------------
# In Chromium: the dashboard's buttons, and a notification's action through the service worker


def start_with_row(
    page: Page, daemon: Daemon, start_claude: StartClaude, claude_version: str
) -> tuple[TmuxClaude, str, Locator]:
    """Claude started for `daemon`; `page` signed in; the session's row, once it offers Jump."""
    claude, sid = start(daemon, start_claude, claude_version)
    sign_in(page, daemon)
    row = page.locator(f"#session-{sid}")
    expect(row.locator("[data-action='jump']")).to_be_visible()
    return claude, sid, row


SLOW = "RUN:python3 -c \"import time; time.sleep(4); open('slow.txt', 'w').write('ok')\""
"""A tool that asks permission and then runs for seconds: the row stays busy meanwhile."""


@pytest.mark.browser
def test_prompt_buttons_in_the_dashboard_answer_and_the_row_turns_busy(
    purplemux_daemon: Daemon, start_claude: StartClaude, claude_version: str, page: Page
) -> None:
    claude, sid, row = start_with_row(page, purplemux_daemon, start_claude, claude_version)
    claude.send_text(SLOW)

    expect(row).to_have_attribute("data-state", "needs-input", timeout=30_000)
    panel = row.locator("[data-slot='prompt']")
    expect(panel.locator("[data-slot='prompt-title']")).to_contain_text("Bash command")
    expect(panel.locator("[data-slot='prompt-screen']")).to_contain_text("Do you want to proceed?")
    labels = panel.locator("[data-action='answer']").all_inner_texts()
    assert labels[0] == "Yes" and labels[-1] == "No"
    panel.locator("[data-action='answer'][data-option='Yes']").click()

    expect(row).to_have_attribute("data-state", "busy", timeout=15_000)
    expect(panel).to_be_hidden()
    wait_until(lambda: (claude.cwd / "slow.txt").exists(), timeout=30, describe="the tool to run")
    audit = [e for e in events(purplemux_daemon, sid) if e["kind"] == "answer"]
    assert [(e["by"], e["option"]) for e in audit] == [("page", "Yes")]


REGISTER = """async () => {
  await navigator.serviceWorker.register("/static/sw.js", {scope: "/"});
  const registration = await navigator.serviceWorker.ready;
  return registration.active.state;
}"""


def registration_id(page: Page, cdp: CDPSession, origin: str) -> str:
    found: list[dict[str, Any]] = []
    cdp.on("ServiceWorker.workerRegistrationUpdated", lambda e: found.extend(e["registrations"]))
    cdp.send("ServiceWorker.enable")

    def probe() -> str | None:
        page.wait_for_timeout(25)
        return next(
            (
                str(r["registrationId"])
                for r in found
                if r["scopeURL"] == origin + "/" and not r["isDeleted"]
            ),
            None,
        )

    return wait_until(probe, timeout=10, describe="the service worker registration")


def subscribe(service: FakePushService, daemon: Daemon) -> BrowserSubscription:
    """A browser subscription of the fake push service, registered with the daemon."""
    sub = service.subscribe()
    status, _ = call(daemon, "POST", "/api/push/subscriptions", sub.to_json())
    assert status == 201
    return sub


def watch_pushes(page: Page, daemon: Daemon) -> tuple[CDPSession, str]:
    """Sign `page` in with notifications allowed and its service worker registered, then leave
    the dashboard; the CDP session and registration id that deliver pushes to that worker."""
    origin = daemon.url
    page.context.grant_permissions(["notifications"], origin=origin)
    sign_in(page, daemon)  # the cookie the service worker's fetch will carry
    assert page.evaluate(REGISTER) in ("activated", "activating")
    cdp = page.context.new_cdp_session(page)
    reg_id = registration_id(page, cdp, origin)
    # Leave the dashboard: a focused dashboard page would hold the push back.
    page.goto(origin + "/static/logo.svg")
    return cdp, reg_id


def prompt_push(service: FakePushService, sub: BrowserSubscription) -> dict[str, Any]:
    """The payload of the first push to `sub` that carries a prompt id."""
    delivery = wait_until(
        lambda: next((d for d in service.for_subscription(sub) if d.json.get("prompt_id")), None),
        timeout=45,
        describe=lambda: f"a push with a prompt id; got {service.for_subscription(sub)}",
    )
    payload: dict[str, Any] = delivery.json
    return payload


def deliver(
    page: Page, cdp: CDPSession, origin: str, reg_id: str, payload: dict[str, Any]
) -> Worker:
    """Hand `payload` to the service worker of `origin` as a push; the worker."""
    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {"origin": origin, "registrationId": reg_id, "data": json.dumps(payload)},
    )
    [worker] = wait_until(lambda: page.context.service_workers, timeout=10)
    return worker


def notifications(worker: Worker) -> Any:
    """The notifications `worker` shows (tag and action names), once there are any."""
    return wait_until(
        lambda: worker.evaluate(
            "async () => (await self.registration.getNotifications())"
            ".map((n) => ({tag: n.tag, actions: n.actions.map((a) => a.action)}))"
        ),
        timeout=10,
        describe="the notification",
    )


def click(worker: Worker, action: str) -> None:
    """A click on the shown notification's `action` (synthetic: headless Chromium has no
    notification UI)."""
    worker.evaluate(
        """async (action) => {
             const [n] = await self.registration.getNotifications();
             try {
               self.dispatchEvent(new NotificationEvent("notificationclick",
                                                        {notification: n, action}));
             } catch (_) {}
           }""",
        action,
    )


@pytest.mark.browser
@pytest.mark.claude_versions(CURRENT)
def test_push_notification_action_yes_answers_the_permission(
    purplemux_daemon: Daemon, start_claude: StartClaude, claude_version: str, page: Page
) -> None:
    with FakePushService() as service:
        sub = subscribe(service, purplemux_daemon)
        claude, sid = start(purplemux_daemon, start_claude, claude_version)
        cdp, reg_id = watch_pushes(page, purplemux_daemon)

        claude.send_text("RUN:touch pushed.txt")
        payload = prompt_push(service, sub)
        assert payload["state"] == "needs-input" and payload["prompt_kind"] == "permission"
        assert payload["actions"] == ["Yes", "No"]
        shown = wait_prompt(purplemux_daemon, sid, "permission")
        assert shown["prompt"]["id"] == payload["prompt_id"]

        worker = deliver(page, cdp, purplemux_daemon.url, reg_id, payload)
        notes = notifications(worker)
        assert notes == [{"tag": f"purplemux-{sid}", "actions": ["Yes", "No"]}]
        click(worker, "Yes")  # its "Yes" action
        wait_until(
            lambda: (claude.cwd / "pushed.txt").exists(), timeout=30, describe="the tool to run"
        )
        # The answer is logged once the daemon has seen the dialog go, which can come after the
        # tool already ran: wait for the entry, then check it.
        audit = wait_until(
            lambda: [e for e in events(purplemux_daemon, sid) if e["kind"] == "answer"],
            timeout=30,
            describe="the answer in the session's log",
        )
        assert [(e["by"], e["option"], e["prompt_id"]) for e in audit] == [
            ("push", "Yes", payload["prompt_id"])
        ]
