"""Proves the e2e harness against the real Claude Code CLI, with the recording stand-in hook.

Each test starts its own claude in its own private tmux server and HOME. Waits poll with
30 s deadlines; nothing sleeps a fixed time. An absence ("no Stop hook") is proven by a
later event: the next prompt's Stop arrives, and nothing came in between.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import StartClaude
from .fake_api import DONE_ANSWER, PLAIN_ANSWER, FakeAnthropicAPI
from .harness import (
    ANSWERED_DIALOG_HOOKS,
    BUSY_TEXT,
    PERMISSION_QUESTION,
    ClaudeHome,
    HookCall,
    HookLog,
    TmuxClaude,
    input_box,
    read_transcript,
    record_timing,
    transcript_texts,
    wait_until,
)
from .versions import OLDEST

# These record 2.1.197's facts (claude-code.md); 2.1.332's are in test_current_release_e2e.py.
pytestmark = [pytest.mark.e2e, pytest.mark.claude_versions(OLDEST)]


def without_notifications(events: list[str]) -> list[str]:
    # Notification(permission_prompt) follows a dialog after ~6 s, so on a slow machine it
    # may or may not come before the answer; orders are checked without it.
    return [e for e in events if e != "Notification"]


def is_subsequence(needle: Sequence[object], haystack: Sequence[object]) -> bool:
    it = iter(haystack)
    return all(any(x == y for y in it) for x in needle)


def run_turn(claude: TmuxClaude, hook_log: HookLog, prompt: str) -> HookCall:
    """Send ``prompt``, wait for its Stop hook and the idle prompt; record the timing."""
    n = len(hook_log)
    t0 = time.monotonic()
    claude.send_text(prompt)
    stop = hook_log.wait_for("Stop", since=n)
    record_timing("turn: send prompt -> Stop hook", time.monotonic() - t0)
    claude.wait_ready()
    return stop


def next_turn_follows(claude: TmuxClaude, hook_log: HookLog, n: int, before: list[str]) -> None:
    """Run another turn; its hooks must directly follow `before` (the state hooks since n):
    nothing fired in between."""
    run_turn(claude, hook_log, "hello again")
    assert hook_log.state_events(n) == [*before, "UserPromptSubmit", "Stop"]


def test_start_fires_session_start_and_shows_prompt(
    start_claude: StartClaude, hook_log: HookLog, claude_home: ClaudeHome
) -> None:
    t0 = time.monotonic()
    claude = start_claude(wait_ready=False)
    start = hook_log.wait_for("SessionStart")
    record_timing("start: spawn -> SessionStart hook", time.monotonic() - t0)
    screen = claude.wait_ready()

    assert start.get("source") == "startup"
    assert start.pane == claude.pane_id
    assert start.get("cwd") == str(claude_home.project)
    assert "Claude Code v2.1.197" in screen
    assert input_box(screen) == ""
    assert hook_log.state_events() == ["SessionStart"]

    session_id = start.get("session_id")
    assert start.get("transcript_path") == str(claude_home.transcript(session_id))
    session = claude.wait_session_status("idle")
    assert session["pid"] == claude.pane_pid
    assert session["sessionId"] == session_id
    assert session["cwd"] == str(claude_home.project)
    assert session["kind"] == "interactive"
    assert session["version"] == "2.1.197"


def test_plain_prompt_gets_the_fake_answer(
    claude: TmuxClaude, hook_log: HookLog, fake_api: FakeAnthropicAPI
) -> None:
    hook_log.wait_for("SessionStart")
    watcher = claude.watcher
    s0 = len(watcher.changes())
    n = len(hook_log)

    stop = run_turn(claude, hook_log, "hello there")

    assert hook_log.state_events(n) == ["UserPromptSubmit", "Stop"]
    submit = hook_log.calls()[n]
    assert submit.get("prompt") == "hello there"
    assert submit.pane == stop.pane == claude.pane_id
    assert stop.get("last_assistant_message") == PLAIN_ANSWER
    assert stop.get("stop_hook_active") is False
    assert PLAIN_ANSWER in claude.screen()
    watcher.wait_for("idle", since=s0 + 1)
    assert is_subsequence(["busy", "idle"], watcher.statuses(s0))

    main = fake_api.messages_requests("main")
    assert [r.last_user_text for r in main] == ["hello there"]
    assert main[0].path == "/v1/messages?beta=true"
    assert main[0].body["stream"] is True
    assert main[0].headers["x-api-key"] == "sk-ant-fake"


def test_tool_permission_dialog_approved_with_enter(
    claude: TmuxClaude, hook_log: HookLog, claude_home: ClaudeHome, fake_api: FakeAnthropicAPI
) -> None:
    hook_log.wait_for("SessionStart")
    watcher = claude.watcher
    s0 = len(watcher.changes())
    n = len(hook_log)
    claude.send_text("RUN:touch x")

    pre = hook_log.wait_for("PreToolUse", since=n)
    assert pre.get("tool_name") == "Bash"
    assert pre.get("tool_input") == {
        "command": "touch x",
        "description": "run the requested command",
    }
    request = hook_log.wait_for("PermissionRequest", since=n)
    assert request.get("tool_name") == "Bash"
    assert request.get("tool_input", {}).get("command") == "touch x"
    screen = claude.wait_screen(PERMISSION_QUESTION)
    assert "Bash command" in screen
    assert "touch x" in screen
    assert "1. Yes" in screen
    assert input_box(screen) is None
    waiting = watcher.wait_for("waiting", since=s0)
    assert waiting.waiting_for == "permission prompt"
    assert not (claude_home.project / "x").exists()

    claude.press("Enter")
    stop = hook_log.wait_for("Stop", since=n)
    claude.wait_ready()

    assert (claude_home.project / "x").exists()
    assert without_notifications(hook_log.state_events(n)) == without_notifications(
        ANSWERED_DIALOG_HOOKS
    )
    post = hook_log.wait_for("PostToolUse", since=n)
    assert post.get("tool_use_id") == pre.get("tool_use_id")
    assert stop.get("last_assistant_message") == DONE_ANSWER
    watcher.wait_for("idle", since=s0 + 1)
    assert is_subsequence(["busy", "waiting", "busy", "idle"], watcher.statuses(s0))
    # Two model calls: the tool_use, then "Done." once the tool result came back.
    assert [r.last_user_text for r in fake_api.messages_requests("main")] == [
        "RUN:touch x",
        "RUN:touch x",
    ]


@dataclass
class Interrupted:
    """A turn interrupted with Esc: where its transcript is, and the counts from before it."""

    transcript: Path
    hooks_before: int  # hook calls logged before the prompt was sent
    changes_before: int  # status changes seen before Esc was pressed

    def wait_for_entry(self, found: Callable[[list[str]], bool]) -> None:
        """Wait until the transcript's user texts show the interrupt."""
        wait_until(
            lambda: found(transcript_texts(read_transcript(self.transcript))),
            describe="the interrupt entry in the transcript",
        )


def interrupt(
    claude: TmuxClaude, hook_log: HookLog, prompt: str, under_way: Callable[[int], object]
) -> Interrupted:
    """Send `prompt`, wait until `under_way(n)` (n: hook calls before it) says the turn runs,
    then press Esc."""
    start = hook_log.wait_for("SessionStart")
    watcher = claude.watcher
    n = len(hook_log)
    claude.send_text(prompt)
    under_way(n)
    s0 = len(watcher.changes())
    claude.press("Escape")
    return Interrupted(Path(start.get("transcript_path")), n, s0)


def test_esc_while_a_tool_runs_fires_no_stop(
    claude: TmuxClaude, hook_log: HookLog, fake_api: FakeAnthropicAPI
) -> None:
    def tool_running(n: int) -> None:
        hook_log.wait_for("PreToolUse", since=n)
        claude.wait_screen("Running…")

    esc = interrupt(claude, hook_log, "RUN:sleep 30", tool_running)
    n = esc.hooks_before
    screen = claude.wait_screen("Interrupted")
    assert "What should Claude do instead?" in screen
    claude.watcher.wait_for("idle", since=esc.changes_before)
    esc.wait_for_entry(
        lambda texts: any(t.startswith("[Request interrupted by user for tool use") for t in texts)
    )

    # The proof that the interrupt fired no hook: the next prompt's hooks follow directly.
    next_turn_follows(claude, hook_log, n, ["UserPromptSubmit", "PreToolUse"])
    # The next request carries the rejected tool_result, the marker and the new prompt in one
    # user message; the fake scripts by the text after the tool_result.
    assert fake_api.messages_requests("main")[-1].last_user_text == "hello again"


def test_esc_while_the_answer_streams_fires_no_stop(
    claude: TmuxClaude, hook_log: HookLog, fake_api: FakeAnthropicAPI
) -> None:
    esc = interrupt(claude, hook_log, "SLOW:30", lambda _: claude.wait_screen("Slow line 1."))
    n = esc.hooks_before
    screen = claude.wait_screen("Interrupted")
    assert "What should Claude do instead?" in screen
    assert "Slow line 10." not in screen
    claude.wait_ready()
    claude.watcher.wait_for("idle", since=esc.changes_before)
    esc.wait_for_entry(lambda texts: "[Request interrupted by user]" in texts)

    next_turn_follows(claude, hook_log, n, ["UserPromptSubmit"])


def test_esc_before_any_output_puts_the_prompt_back(
    claude: TmuxClaude, hook_log: HookLog, fake_api: FakeAnthropicAPI
) -> None:
    def thinking(_: int) -> None:
        fake_api.wait_for_request(lambda r: r.kind == "main" and r.last_user_text == "WAIT:30")
        claude.wait_screen(BUSY_TEXT)

    esc = interrupt(claude, hook_log, "WAIT:30", thinking)
    n = esc.hooks_before
    # Nothing was answered yet: Claude drops the turn from the screen and puts the prompt
    # back into the input box, ready to be edited; it says nothing about an interruption.
    screen = claude.wait_screen(lambda s: input_box(s) == "WAIT:30" and BUSY_TEXT not in s)
    assert "Interrupted" not in screen
    claude.watcher.wait_for("idle", since=esc.changes_before)

    claude.press("C-u")  # clear the input box
    claude.wait_screen(lambda s: input_box(s) == "")
    next_turn_follows(claude, hook_log, n, ["UserPromptSubmit"])
    texts = transcript_texts(read_transcript(esc.transcript))
    assert "WAIT:30" in texts
    assert not [t for t in texts if t.startswith("[Request interrupted")]


def test_api_error_fires_stop_failure(
    claude: TmuxClaude, hook_log: HookLog, fake_api: FakeAnthropicAPI
) -> None:
    hook_log.wait_for("SessionStart")
    n = len(hook_log)
    claude.send_text("FAIL:400")

    failure = hook_log.wait_for("StopFailure", since=n)
    assert failure.get("error") == "unknown"
    assert failure.get("last_assistant_message") == "API Error: 400 scripted failure 400"
    claude.wait_screen("API Error: 400 scripted failure 400")
    claude.wait_ready()
    failed = fake_api.messages_requests("main")
    assert [(r.status, r.last_user_text) for r in failed] == [(400, "FAIL:400")]

    next_turn_follows(claude, hook_log, n, ["UserPromptSubmit", "StopFailure"])


def test_ask_user_question(claude: TmuxClaude, hook_log: HookLog) -> None:
    hook_log.wait_for("SessionStart")
    watcher = claude.watcher
    s0 = len(watcher.changes())
    n = len(hook_log)
    question = "Which colour should the button be?"
    claude.send_text(f"ASK:{question}")

    pre = hook_log.wait_for("PreToolUse", since=n)
    assert pre.get("tool_name") == "AskUserQuestion"
    request = hook_log.wait_for("PermissionRequest", since=n)
    assert request.get("tool_input", {})["questions"][0]["question"] == question
    screen = claude.wait_screen("2. Blue")
    assert question in screen
    assert "1. Red" in screen
    assert "Enter to select" in screen
    assert watcher.wait_for("waiting", since=s0).waiting_for == "permission prompt"
    notification = hook_log.wait_for("Notification", since=n)
    assert notification.get("notification_type") == "permission_prompt"
    record_timing(
        "dialog: PermissionRequest -> Notification(permission_prompt)",
        notification.ts - request.ts,
    )

    claude.press("Enter")  # option 1, Red
    hook_log.wait_for("Stop", since=n)
    claude.wait_ready()
    post = hook_log.wait_for("PostToolUse", since=n)
    assert post.get("tool_input", {}).get("answers") == {question: "Red"}
    assert hook_log.state_events(n) == ANSWERED_DIALOG_HOOKS


def test_exit_fires_session_end(
    claude: TmuxClaude, hook_log: HookLog, claude_home: ClaudeHome
) -> None:
    hook_log.wait_for("SessionStart")
    session_file = claude_home.session_file(claude.pane_pid)
    assert session_file.exists()
    n = len(hook_log)

    claude.send_text("/exit")
    end = hook_log.wait_for("SessionEnd", since=n)
    assert end.get("reason") == "prompt_input_exit"
    assert end.pane == claude.pane_id
    claude.wait_exit()
    wait_until(lambda: not session_file.exists(), describe=f"{session_file} to be removed")
    assert hook_log.state_events(n) == ["SessionEnd"]


def test_extra_args_reach_claude_disable_all_hooks(
    start_claude: StartClaude, hook_log: HookLog, claude_home: ClaudeHome
) -> None:
    claude = start_claude(args=["--settings", '{"disableAllHooks": true}'])
    session = claude.session_file()
    assert session is not None
    transcript = claude_home.transcript(session["sessionId"])
    claude.send_text("hello there")
    claude.wait_screen(PLAIN_ANSWER)
    # The turn's end: Claude writes turn_duration after the Stop hooks would have run.
    wait_until(
        lambda: any(e.get("subtype") == "turn_duration" for e in read_transcript(transcript)),
        describe=f"turn_duration in {transcript}",
    )
    assert hook_log.state_events() == []


def test_failing_tool_fires_post_tool_use_failure(claude: TmuxClaude, hook_log: HookLog) -> None:
    hook_log.wait_for("SessionStart")
    n = len(hook_log)
    # A read-only command runs without asking; this one exits non-zero.
    stop = run_turn(claude, hook_log, "RUN:ls missing-dir")
    assert hook_log.state_events(n) == [
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUseFailure",
        "Stop",
    ]
    failure = hook_log.wait_for("PostToolUseFailure", since=n)
    assert failure.get("tool_name") == "Bash"
    assert stop.get("last_assistant_message") == DONE_ANSWER


def test_bypass_permissions_mode_runs_tools_without_a_dialog(
    start_claude: StartClaude, hook_log: HookLog, claude_home: ClaudeHome
) -> None:
    # As root Claude refuses --dangerously-skip-permissions unless IS_SANDBOX=1.
    claude = start_claude(args=["--dangerously-skip-permissions"], env={"IS_SANDBOX": "1"})
    assert "bypass permissions on" in claude.screen()
    hook_log.wait_for("SessionStart")
    n = len(hook_log)
    run_turn(claude, hook_log, "RUN:touch y")
    assert (claude_home.project / "y").exists()
    assert hook_log.state_events(n) == ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]
    assert hook_log.calls()[n].get("permission_mode") == "bypassPermissions"
