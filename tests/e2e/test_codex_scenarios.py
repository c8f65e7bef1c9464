"""The fake Responses API's vocabulary against the real Codex CLI 0.171.0: each keyword gives
what codex.md recorded (hooks, screen, files). Proves the fake for the tests that build on it.

An absence ("no Stop after an API error") is proven by a later event: the next prompt's Stop
arrives and nothing of the kind came in between.
"""

from __future__ import annotations

import json

import pytest

from .codex_fixtures import StartCodex
from .codex_harness import APPROVAL_QUESTION, CodexHome, CodexPane, by_start
from .fake_responses import DONE_ANSWER, PATCH_LINE, FakeResponsesAPI
from .harness import HookCall, HookLog

pytestmark = pytest.mark.e2e


def run_turn(pane: CodexPane, hook_log: HookLog, prompt: str, until: str = "Stop") -> list[str]:
    """Send ``prompt``, wait for the hook ``until`` and an idle title; the turn's events."""
    n = len(hook_log)
    pane.send_text(prompt)
    hook_log.wait_for(until, since=n)
    pane.wait_idle()
    return [c.event for c in by_start(hook_log.calls()[n:])]


def last(hook_log: HookLog, event: str) -> HookCall:
    return [c for c in by_start(hook_log.calls()) if c.event == event][-1]


def test_sandboxed_command_and_patch_run_without_a_dialog(
    start_codex: StartCodex, codex_hook_log: HookLog, codex_home: CodexHome
) -> None:
    pane = start_codex()
    events = run_turn(pane, codex_hook_log, "SANDBOX:touch sandboxed.txt")
    assert "PermissionRequest" not in events
    assert events.index("PreToolUse") < events.index("PostToolUse") < events.index("Stop")
    assert (codex_home.project / "sandboxed.txt").is_file()
    assert last(codex_hook_log, "PreToolUse").get("tool_name") == "Bash"
    events = run_turn(pane, codex_hook_log, "PATCH:notes.txt")
    assert "PermissionRequest" not in events
    assert last(codex_hook_log, "PostToolUse").get("tool_name") == "apply_patch"
    assert (codex_home.project / "notes.txt").read_text() == PATCH_LINE + "\n"
    assert last(codex_hook_log, "Stop").get("last_assistant_message") == DONE_ANSWER
    assert APPROVAL_QUESTION not in pane.capture(history=True)


def test_ask_shows_the_question_and_enter_answers_it(
    start_codex: StartCodex, codex_hook_log: HookLog
) -> None:
    pane = start_codex()
    pane.send_text("ASK:Which colour?|Green|Yellow")
    pre = codex_hook_log.wait_for("PreToolUse")
    assert pre.get("tool_name") == "request_user_input"
    screen = pane.wait_for_screen("Question 1/1")
    assert "Which colour?" in screen and "Green" in screen and "Yellow" in screen
    pane.send_keys("Enter")
    post = codex_hook_log.wait_for("PostToolUse")
    assert post.get("tool_name") == "request_user_input"
    assert "Green" in json.dumps(post.get("tool_response"))
    codex_hook_log.wait_for("Stop")
    assert "PermissionRequest" not in codex_hook_log.events()


def test_esc_interrupts_a_slow_answer(start_codex: StartCodex, codex_hook_log: HookLog) -> None:
    pane = start_codex()
    pane.send_text("SLOW:20")
    pane.wait_for_screen("Slow line 1.")
    pane.send_keys("Escape")
    codex_hook_log.wait_for("Interrupt")
    cancelled = last(codex_hook_log, "PostModelRequest")
    assert cancelled.get("status") == "cancelled"
    pane.wait_idle()
    events = run_turn(pane, codex_hook_log, "hello after the interrupt")
    assert events[0] == "UserPromptSubmit"
    assert codex_hook_log.events().count("Stop") == 1  # the interrupted turn had none


@pytest.mark.parametrize(
    ("prompt", "message"),
    [
        ("ERROR:500", "We\u2019re currently experiencing high demand"),
        ("ERROR:429", "exceeded retry limit, last status: 429 Too Many Requests"),
        ("ERROR:401", "unexpected status 401 Unauthorized: scripted failure 401"),
        ("FAILSTREAM", "stream disconnected before completion: scripted stream failure"),
    ],
)
def test_api_errors_end_the_turn_without_stop(
    start_codex: StartCodex, codex_hook_log: HookLog, prompt: str, message: str
) -> None:
    pane = start_codex()
    events = run_turn(pane, codex_hook_log, prompt, until="PostModelRequest")
    failed = last(codex_hook_log, "PostModelRequest")
    assert failed.get("status") == "failed"
    assert str(failed.get("error")).startswith(message)
    pane.wait_for_screen(f"\u25a0 {message}")
    events = run_turn(pane, codex_hook_log, "hello after the error")
    everything = codex_hook_log.events()
    assert everything.count("Stop") == 1 and everything[-1] == "Stop"
    assert events[0] == "UserPromptSubmit"


def test_tokens_and_limits_reach_the_hooks_and_the_rollout(
    start_codex: StartCodex, codex_hook_log: HookLog, codex_home: CodexHome
) -> None:
    pane = start_codex()
    run_turn(pane, codex_hook_log, "TOKENS:120000 big context")
    usage = last(codex_hook_log, "PostModelRequest").get("token_usage")
    assert usage["input_tokens"] == 120000
    run_turn(pane, codex_hook_log, "LIMITS:42:17 some use")
    [rollout] = codex_home.rollouts()
    limits = [
        entry["payload"]["rate_limits"]
        for entry in map(json.loads, rollout.read_text().splitlines())
        if entry.get("type") == "event_msg"
        and entry["payload"].get("type") == "token_count"
        and (entry["payload"].get("rate_limits") or {}).get("primary")
    ]
    assert limits, "no token_count with rate limits in the rollout"
    primary, secondary = limits[-1]["primary"], limits[-1]["secondary"]
    assert (primary["used_percent"], primary["window_minutes"]) == (42, 300)
    assert (secondary["used_percent"], secondary["window_minutes"]) == (17, 10080)


def test_fake_records_what_codex_sent(
    start_codex: StartCodex, codex_hook_log: HookLog, fake_responses: FakeResponsesAPI
) -> None:
    pane = start_codex()
    pane.send_text("RUN:true")
    pane.wait_for_screen(APPROVAL_QUESTION)
    pane.answer_dialog("y")
    codex_hook_log.wait_for("Stop")
    first, follow_up = fake_responses.turn_requests()
    assert (first.last_user_text, first.after_tool) == ("RUN:true", False)
    assert (follow_up.last_user_text, follow_up.after_tool) == ("RUN:true", True)
    assert follow_up.input_types[-2:] == (("function_call", None), ("function_call_output", None))
    assert first.headers["authorization"] == "Bearer sk-fake"
    assert first.headers["accept"] == "text/event-stream"
    assert all(r.path == "/v1/responses" for r in fake_responses.requests)
