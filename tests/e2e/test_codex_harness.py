"""Proves the Codex e2e harness against the real Codex CLI 0.171.0, with the recording
stand-in hook (record_hook.sh, registered in $CODEX_HOME/hooks.json and pre-trusted).

Each test has its own CODEX_HOME, fake Responses API and private tmux server; the
``codex_tmux`` teardown stops the app-server daemon and fails the test if any process of the
CODEX_HOME had to be killed. Waits poll with deadlines; nothing sleeps a fixed time.
"""

from __future__ import annotations

import pytest

from .codex_fixtures import StartCodex
from .codex_harness import (
    ACTION_REQUIRED,
    APPROVAL_QUESTION,
    BYPASS_HOOK_TRUST,
    CodexHome,
    CodexPane,
    TmuxCodex,
    by_start,
)
from .fake_responses import DONE_ANSWER, PLAIN_ANSWER, TITLE_ANSWER, FakeResponsesAPI
from .harness import HookCall, HookLog, wait_until

pytestmark = pytest.mark.e2e


def run_turn(pane: CodexPane, hook_log: HookLog, prompt: str) -> list[HookCall]:
    """Send ``prompt``, wait for its Stop hook and an idle title; the hooks of the turn."""
    n = len(hook_log)
    pane.send_text(prompt)
    hook_log.wait_for("Stop", since=n)
    pane.wait_idle()
    return by_start(hook_log.calls()[n:])


def test_a_plain_prompt_fires_session_start_prompt_submit_and_stop(
    start_codex: StartCodex, codex_hook_log: HookLog, fake_responses: FakeResponsesAPI
) -> None:
    pane = start_codex()
    assert pane.title() == "proj"
    assert codex_hook_log.events() == []  # a started, unprompted thread fires nothing
    calls = run_turn(pane, codex_hook_log, "hello there")
    assert [c.event for c in calls] == [
        "SessionStart",
        "UserPromptSubmit",
        "PreModelRequest",
        "PostModelRequest",
        "Stop",
    ]
    start, submit, *_, stop = calls
    assert start.get("source") == "startup"
    assert submit.get("prompt") == "hello there"
    assert stop.get("last_assistant_message") == PLAIN_ANSWER
    assert {c.get("session_id") for c in calls} == {start.get("session_id")}
    assert PLAIN_ANSWER in pane.capture()
    # The hidden title request came, and got the fake's title...
    fake_responses.wait_for_request(lambda r: r.kind == "title")
    # ...yet the pane title keeps the first prompt, also after a second turn (a prompt
    # longer than the pane is wide: it wraps in the composer and is still submitted whole).
    long_prompt = "second prompt " + " ".join(f"word{i}" for i in range(40))
    run_turn(pane, codex_hook_log, long_prompt)
    assert pane.title() == "hello there | proj"
    assert TITLE_ANSWER not in pane.capture()
    turns = fake_responses.turn_requests()
    assert [r.last_user_text for r in turns] == ["hello there", long_prompt]
    assert "exec_command" in turns[0].tools and "apply_patch" in turns[0].tools


def test_run_shows_the_approval_dialog_and_y_approves(
    start_codex: StartCodex, codex_hook_log: HookLog, codex_home: CodexHome
) -> None:
    pane = start_codex()
    pane.send_text("RUN:touch approved.txt")
    screen = pane.wait_for_screen(APPROVAL_QUESTION)
    assert "$ touch approved.txt" in screen
    assert "Yes, proceed (y)" in screen
    assert ACTION_REQUIRED in pane.title()
    assert not (codex_home.project / "approved.txt").exists()
    pane.answer_dialog("y")
    stop = codex_hook_log.wait_for("Stop")
    assert (codex_home.project / "approved.txt").is_file()
    assert stop.get("last_assistant_message") == DONE_ANSWER
    events = [c.event for c in by_start(codex_hook_log.calls())]
    assert events.index("PermissionRequest") < events.index("PostToolUse") < events.index("Stop")
    request = next(c for c in codex_hook_log.calls() if c.event == "PermissionRequest")
    assert request.get("tool_name") == "Bash"
    assert request.get("tool_input", {}).get("command") == "touch approved.txt"
    pane.wait_for_screen("You approved codex to run touch approved.txt")


def test_two_panes_share_one_daemon_whose_hooks_carry_the_first_pane(
    start_codex: StartCodex, codex_hook_log: HookLog, codex_home: CodexHome
) -> None:
    first = start_codex()
    second = start_codex()
    assert first.pane_id != second.pane_id
    # A second TUI started under load can briefly spawn an app-server of its own before it
    # finds the shared one (that one then exits): wait for the one shared daemon.
    wait_until(
        lambda: len(codex_home.daemons()) == 1,
        timeout=30,
        describe=lambda: f"one shared app-server daemon; got {codex_home.daemons()}",
    )
    calls = run_turn(second, codex_hook_log, "hello from the second pane")
    assert second.title() == "hello from the second pane | proj"
    assert first.title() == "proj"
    assert len(codex_home.daemons()) == 1
    # Hooks run in the daemon, with the environment of the TUI that started it.
    assert {c.pane for c in calls} == {first.pane_id}
    assert calls[-1].event == "Stop"


def test_teardown_stops_the_daemon_and_leaves_no_process(
    start_codex: StartCodex, codex_tmux: TmuxCodex, codex_hook_log: HookLog, codex_home: CodexHome
) -> None:
    pane = start_codex()
    run_turn(pane, codex_hook_log, "hello")
    session_id = codex_hook_log.calls()[0].get("session_id")
    assert codex_home.daemons() and codex_home.updater_pid_path.is_file()
    codex_tmux.stop()  # raises LeftoverProcesses if anything had to be killed
    assert codex_home.processes() == []
    ends = [c for c in codex_hook_log.calls() if c.event == "SessionEnd"]
    assert [(c.get("session_id"), c.get("reason")) for c in ends] == [(session_id, "other")]
    assert not (codex_home.codex_home / "packages").exists()


def test_bypassing_hook_trust_runs_untrusted_hooks_without_a_daemon(
    start_codex: StartCodex, codex_hook_log: HookLog, codex_home: CodexHome
) -> None:
    codex_home.trust_hooks = False
    codex_home.write()
    first = start_codex(BYPASS_HOOK_TRUST)
    second = start_codex(BYPASS_HOOK_TRUST)
    calls = run_turn(second, codex_hook_log, "hello untrusted")
    assert [c.event for c in calls][:2] == ["SessionStart", "UserPromptSubmit"]
    # Each TUI serves itself: no daemon, and the hooks carry their own pane.
    assert codex_home.daemons() == []
    assert {c.pane for c in calls} == {second.pane_id} != {first.pane_id}


def test_teardown_also_ends_a_command_still_running_in_the_daemon(
    start_codex: StartCodex, codex_tmux: TmuxCodex, codex_hook_log: HookLog, codex_home: CodexHome
) -> None:
    pane = start_codex()
    pane.send_text("SANDBOX:sleep 120")
    codex_hook_log.wait_for("PreToolUse")
    # The command is the daemon's (own session, never in the pane), found by its CODEX_HOME.
    wait_until(
        lambda: any(p.argv == ("sleep", "120") for p in codex_home.processes()),
        timeout=15,
        describe=lambda: f"sleep 120 among {codex_home.processes()}",
    )
    codex_tmux.stop()
    assert codex_home.processes() == []


def test_a_key_the_tui_dropped_is_typed_again(
    start_codex: StartCodex, codex_hook_log: HookLog
) -> None:
    # Seen once under load in the full tier: "ASK:Which colour?" reached the composer without
    # its "?", and send_text waited for it until its timeout. Here the first typing loses it.
    pane = start_codex()
    real = pane.type_text
    typed: list[str] = []

    def lossy(text: str) -> None:
        typed.append(text)
        real(text.replace("?", "") if len(typed) == 1 else text)

    pane.type_text = lossy  # type: ignore[method-assign]
    pane.send_text("hello there?")
    stop = codex_hook_log.wait_for("Stop", timeout=60)
    assert pane.retypes == 1 and typed == ["hello there?", "hello there?"]
    assert stop.get("last_assistant_message") == PLAIN_ANSWER
