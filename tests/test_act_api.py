"""/screen, /answer and /focus against a real daemon and a real tmux pane (private socket) that
shows a captured Claude Code 2.1.332 permission dialog (the real CLI is the e2e tier's job)."""

from __future__ import annotations

import http.client
import io
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from purplemux.cli import main
from purplemux.io.settings import Settings
from tests.support import Daemon, wait_for
from tests.support.hooks import run_hook
from tests.support.screens import asking, call, capture, dialog_pane

SCREEN = "/api/sessions/s1/screen"


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(socket path, pane id) of a pane showing the classic dialog (tests/support/screens.py)."""
    with dialog_pane(tmp_path) as found:
        yield found


def wait_state(daemon: Daemon, sid: str, state: str) -> dict[str, Any]:
    """The session once it is in `state`."""

    def there() -> dict[str, Any] | None:
        found = daemon.session(sid)
        return found if found and found["state"] == state else None

    return wait_for(there)


def test_screen_answer_and_focus(tmp_path: Path, pane: tuple[str, str]) -> None:
    sock, pane_id = pane
    daemon = Daemon(home=tmp_path / "pmx", claude_dir=tmp_path / "claude").start()
    try:
        asking(daemon, "s1", sock, pane_id)
        # The session's view offers answering and jumping (a live session in a pane that asks).
        assert wait_state(daemon, "s1", "needs-input")["view"]["actions"] == ["answer", "jump"]

        assert call(daemon, "GET", "/api/sessions/nope/screen")[0] == 404
        status, shown = call(daemon, "GET", "/api/sessions/s1/screen")
        assert status == 200, shown
        assert "Do you want to proceed?" in shown["text"] and "\x1b" not in shown["text"]
        prompt = shown["prompt"]
        assert prompt["kind"] == "permission" and prompt["title"] == "Bash command: touch b.txt"
        assert [o["label"] for o in prompt["options"]][::3] == ["Yes", "No"]
        assert shown["input"] is True

        before = capture(sock, pane_id)
        for body, code in (
            ({"prompt_id": "p-stale", "option": "Yes"}, 409),
            ({"prompt_id": prompt["id"], "option": "Maybe"}, 422),
            ({"prompt_id": prompt["id"], "option": "Yes", "cancel": True}, 422),
            ({"prompt_id": prompt["id"], "text": "free"}, 422),  # a permission takes no text
            ({"option": "Yes"}, 422),
            ({"prompt_id": prompt["id"], "option": "Yes", "by": "robot"}, 422),
        ):
            status, reply = call(daemon, "POST", "/api/sessions/s1/answer", body)
            assert status == code, (body, reply)
            assert reply["error"]
        assert call(daemon, "POST", "/api/sessions/nope/answer", {"prompt_id": "x"})[0] == 404
        assert capture(sock, pane_id) == before  # nothing was typed
        assert not [
            e
            for e in daemon.api("GET", "/api/sessions/s1/events")["events"]
            if e["kind"] == "answer"
        ]

        # The stand-in is not really Claude: the digit of "Yes" reaches it but the dialog stays.
        status, reply = call(
            daemon, "POST", "/api/sessions/s1/answer", {"prompt_id": prompt["id"], "option": "Yes"}
        )
        assert status == 504, reply
        assert "still on screen" in reply["error"] and reply["keys"] == ["1"]
        [audit] = [
            e
            for e in daemon.api("GET", "/api/sessions/s1/events")["events"]
            if e["kind"] == "answer"
        ]
        assert (audit["by"], audit["option"], audit["confirmed"]) == ("api", "Yes", False)
        session = daemon.session("s1")
        assert session is not None and session["state"] == "needs-input"
        assert session["last_event"]["name"] == "Answer: Yes (api)"

        status, reply = call(daemon, "POST", "/api/sessions/s1/focus", {})
        assert status == 200, reply
        assert reply["pane"] == pane_id and reply["client"] is None

        # A session whose pane is gone, and one outside tmux: 409.
        asking(daemon, "s2", sock, "%999")
        wait_state(daemon, "s2", "needs-input")
        status, reply = call(daemon, "GET", "/api/sessions/s2/screen")
        assert status == 409 and "%999" in reply["error"]
        asking(daemon, "s3", None, "")
        assert wait_state(daemon, "s3", "needs-input")["view"]["actions"] == []
        status, reply = call(daemon, "GET", "/api/sessions/s3/screen")
        assert (status, reply["error"]) == (409, "this session has no tmux pane")
        assert call(daemon, "POST", "/api/sessions/s3/focus")[0] == 409
    finally:
        daemon.stop()


def test_cli_peek_answer_and_jump(
    tmp_path: Path,
    pane: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sock, pane_id = pane
    daemon = Daemon(home=tmp_path / "pmx", claude_dir=tmp_path / "claude").start()
    monkeypatch.setenv("PURPLEMUX_HOME", str(daemon.home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(daemon.claude_dir))
    monkeypatch.setenv("PURPLEMUX_PORT", str(daemon.port))
    monkeypatch.delenv("TMUX", raising=False)  # not inside tmux: jump switches no client of ours
    try:
        asking(daemon, "cli-1", sock, pane_id)
        wait_state(daemon, "cli-1", "needs-input")
        asking(daemon, "cli-2", None, "")
        wait_state(daemon, "cli-2", "needs-input")

        out = io.StringIO()
        assert main(["peek", "cli-1"], out=out) == 0
        shown = out.getvalue()
        # The view's headline first.
        assert shown.startswith("Claude · proj · needs your approval: Bash touch b.txt\n")
        assert "Do you want to proceed?" in shown
        assert "[permission] Bash command: touch b.txt" in shown
        assert "\u276f Yes" in shown and "prompt id p-" in shown

        before = capture(sock, pane_id)
        assert main(["answer", "cli-1", "--option", "Maybe"], out=io.StringIO()) == 1
        assert "pick one of the options" in capsys.readouterr().err
        assert capture(sock, pane_id) == before  # nothing was typed

        out = io.StringIO()
        assert main(["jump", "cli-1"], out=out) == 0
        assert out.getvalue() == (
            f"selected proj · {pane_id}; no tmux client is attached to that server\n"
        )
        assert main(["jump", "cli-2"], out=io.StringIO()) == 1
        assert "proj is not in a tmux pane" in capsys.readouterr().err
        assert main(["peek", "cli-"], out=io.StringIO()) == 2  # ambiguous
    finally:
        daemon.stop()


def test_a_dialog_read_before_its_hook_lands_gets_the_id_answers_are_checked_with(
    tmp_path: Path, pane: tuple[str, str]
) -> None:
    """Claude draws the dialog a moment before PermissionRequest arrives: /screen, asked in that
    moment, waits for needs-input, so the id it gives is the one /answer accepts afterwards."""
    sock, pane_id = pane
    daemon = Daemon(home=tmp_path / "pmx", claude_dir=tmp_path / "claude").start()
    try:
        asking(daemon, "s1", sock, pane_id, hooks=3)  # up to PreToolUse: busy, dialog shown
        assert wait_state(daemon, "s1", "busy")
        early: dict[str, Any] = {}
        sent = threading.Event()

        def read() -> None:
            conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=40)
            conn.request("GET", SCREEN, headers={"Authorization": f"Bearer {daemon.token}"})
            sent.set()
            reply = conn.getresponse()
            early.update(status=reply.status, body=json.loads(reply.read()))
            conn.close()

        reader = threading.Thread(target=read)
        reader.start()
        wait_for(sent.is_set, what="the /screen request to be sent")  # the read is under way
        asking(daemon, "s1", sock, pane_id)  # the rest: PermissionRequest, after it
        reader.join()
        assert early["status"] == 200, early
        assert early["body"]["state"] == "needs-input"
        wait_state(daemon, "s1", "needs-input")
        status, later = call(daemon, "GET", SCREEN)
        assert status == 200 and later["prompt"]["id"] == early["body"]["prompt"]["id"]
        status, reply = call(
            daemon,
            "POST",
            "/api/sessions/s1/answer",
            {"prompt_id": early["body"]["prompt"]["id"], "option": "Yes"},
        )
        # Accepted: the keys went (the stand-in is not really Claude: the dialog stays, 504).
        assert status == 504 and reply["keys"] == ["1"], reply
    finally:
        daemon.stop()


def test_answer_is_refused_when_input_is_off(tmp_path: Path, pane: tuple[str, str]) -> None:
    sock, pane_id = pane
    daemon = Daemon(
        home=tmp_path / "pmx", claude_dir=tmp_path / "claude", env_extra={"PURPLEMUX_INPUT": "off"}
    ).start()
    try:
        asking(daemon, "s1", sock, pane_id)
        wait_state(daemon, "s1", "needs-input")
        status, shown = call(daemon, "GET", "/api/sessions/s1/screen")
        assert status == 200 and shown["input"] is False
        before = capture(sock, pane_id)
        status, reply = call(
            daemon,
            "POST",
            "/api/sessions/s1/answer",
            {"prompt_id": shown["prompt"]["id"], "option": "Yes"},
        )
        assert status == 403
        assert "PURPLEMUX_INPUT=off" in reply["error"]
        assert capture(sock, pane_id) == before
    finally:
        daemon.stop()


@pytest.mark.parametrize(
    ("env", "host", "allowed"),
    [
        ({}, "127.0.0.1", True),
        ({}, "0.0.0.0", False),
        ({"PURPLEMUX_INPUT": "on"}, "0.0.0.0", True),
        ({"PURPLEMUX_INPUT": "off"}, "127.0.0.1", False),
        ({"PURPLEMUX_INPUT": "0"}, "::1", False),
    ],
)
def test_input_switch(env: dict[str, str], host: str, allowed: bool) -> None:
    settings = Settings.from_env({**env, "PURPLEMUX_HOST": host})
    assert settings.input_allowed is allowed
    if not allowed:
        assert "PURPLEMUX_INPUT" in settings.input_refusal


def test_input_switch_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="PURPLEMUX_INPUT must be on or off"):
        Settings.from_env({"PURPLEMUX_INPUT": "maybe"})


# --- issue 22: what is answered, and where --------------------------------------------------

QUESTION = {
    "questions": [
        {
            "question": "Which colour should the button be?",
            "header": "Choice",
            "options": [
                {"label": "Red", "description": "red"},
                {"label": "Blue", "description": "blue"},
            ],
            "multiSelect": False,
        }
    ]
}


def questioning(daemon: Daemon, sid: str, sock: str, pane: str) -> None:
    """Hooks as Claude sends them for an AskUserQuestion in that pane."""
    tool = {"tool_name": "AskUserQuestion", "tool_input": QUESTION}
    for name, extra in (
        ("SessionStart", {"source": "startup"}),
        ("UserPromptSubmit", {"prompt": "ASK:Which colour should the button be?"}),
        ("PreToolUse", {**tool, "tool_use_id": "t2"}),
        ("PermissionRequest", tool),
    ):
        payload = {"session_id": sid, "hook_event_name": name, "cwd": "/w/proj", **extra}
        run_hook(daemon.home, payload, pane=pane, tmux=f"{sock},1,0")


def answers_logged(daemon: Daemon, sid: str) -> list[dict[str, Any]]:
    events = daemon.api("GET", f"/api/sessions/{sid}/events")["events"]
    return [e for e in events if e["kind"] == "answer"]


def test_free_text_with_a_control_character_is_refused_and_nothing_typed(
    tmp_path: Path,
) -> None:
    shot = ("claude-2.1.197-dialogs.screens.txt", "ask-dialog")
    daemon = Daemon(home=tmp_path / "pmx", claude_dir=tmp_path / "claude").start()
    try:
        with dialog_pane(tmp_path, shot=shot) as (sock, pane_id):
            questioning(daemon, "q1", sock, pane_id)
            wait_state(daemon, "q1", "needs-input")
            status, shown = call(daemon, "GET", "/api/sessions/q1/screen")
            assert status == 200 and shown["prompt"]["kind"] == "question", shown
            before = capture(sock, pane_id)
            for bad in (
                "Red\r",
                "Red\x03\x03",
                "Red\x04",
                "Red\x1b[B",
                "a\tb",
                "del\x7f",
                "c1\x85",
                "csi\x9b2J",
                "line\u2028sep",
                "Red\n",
            ):
                body = {"prompt_id": shown["prompt"]["id"], "text": bad}
                status, reply = call(daemon, "POST", "/api/sessions/q1/answer", body)
                assert status == 422, (bad, reply)
                assert "control character" in reply["error"] or "one line" in reply["error"]
            assert capture(sock, pane_id) == before  # nothing was typed
            assert answers_logged(daemon, "q1") == []
    finally:
        daemon.stop()


def test_answer_refused_when_the_program_in_front_is_not_claude(tmp_path: Path) -> None:
    """Some other program in the pane prints a dialog that looks like Claude's: not answered."""
    daemon = Daemon(home=tmp_path / "pmx", claude_dir=tmp_path / "claude").start()
    try:
        with dialog_pane(tmp_path, program="printer") as (sock, pane_id):
            asking(daemon, "s1", sock, pane_id)
            wait_state(daemon, "s1", "needs-input")
            status, shown = call(daemon, "GET", SCREEN)
            assert status == 200 and shown["prompt"]["kind"] == "permission", shown
            before = capture(sock, pane_id)
            body = {"prompt_id": shown["prompt"]["id"], "option": "No"}
            status, reply = call(daemon, "POST", "/api/sessions/s1/answer", body)
            assert status == 409, reply
            assert "not Claude (printer)" in reply["error"]
            assert "nothing was typed" in reply["error"]
            assert capture(sock, pane_id) == before
            assert answers_logged(daemon, "s1") == []
    finally:
        daemon.stop()


def test_answer_refused_unless_the_session_waits_for_input(
    tmp_path: Path, pane: tuple[str, str]
) -> None:
    """A busy session (the hook has not said it asks) and one in review: refused, nothing typed,
    although the pane shows a dialog."""
    sock, pane_id = pane
    daemon = Daemon(home=tmp_path / "pmx", claude_dir=tmp_path / "claude").start()
    try:
        asking(daemon, "s1", sock, pane_id, hooks=3)  # up to PreToolUse: busy
        wait_state(daemon, "s1", "busy")
        status, shown = call(daemon, "GET", SCREEN)
        assert status == 200 and shown["state"] == "busy" and shown["prompt"], shown
        before = capture(sock, pane_id)
        body = {"prompt_id": shown["prompt"]["id"], "option": "Yes"}
        status, reply = call(daemon, "POST", "/api/sessions/s1/answer", body)
        assert status == 409, reply
        assert reply["error"].startswith("the session is busy, not needs-input")

        payload = {"session_id": "s1", "hook_event_name": "Stop", "cwd": "/w/proj"}
        run_hook(daemon.home, payload, pane=pane_id, tmux=f"{sock},1,0")
        wait_state(daemon, "s1", "review")
        status, shown = call(daemon, "GET", SCREEN)
        assert status == 200 and shown["prompt"], shown
        body = {"prompt_id": shown["prompt"]["id"], "option": "Yes"}
        status, reply = call(daemon, "POST", "/api/sessions/s1/answer", body)
        assert status == 409, reply
        assert reply["error"].startswith("the session is review, not needs-input")
        assert capture(sock, pane_id) == before
        assert answers_logged(daemon, "s1") == []
    finally:
        daemon.stop()
