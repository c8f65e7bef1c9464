"""The Codex prompt recogniser (purplemux.agents.codex.screen) against the real Codex CLI
0.171.0 in tmux, behind the fake Responses API: the dialogs it draws live are read with the
right options, hostile commands make them ambiguous (the answering desk refuses them), and each
option's key (`Option.key`, what the desk presses) does what its label says.

The context is built from the recording hook's payloads as the daemon builds it (the pending
tool, `describe_tool`'s summary, the Codex look-alike check). Each test has its own CODEX_HOME,
fake API and private tmux server; the teardown stops the daemon.
"""

# ruff: noqa: RUF001

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import replace

import pytest

from purplemux.agents.base import Agent
from purplemux.agents.codex.hooks import digest
from purplemux.agents.codex.screen import imitates_dialog, recognise
from purplemux.agents.payload import describe_tool
from purplemux.core.model import PendingTool, Session, State, TmuxLocation
from purplemux.core.prompts import Context, Prompt
from purplemux.daemon.answer import Answered, AnswerError, Choice, Desk

from .codex_fixtures import StartCodex
from .codex_harness import CodexHome, CodexPane
from .fake_responses import FakeResponsesAPI
from .harness import HookCall, HookLog

pytestmark = pytest.mark.e2e

NO_TMP_TOML = """
[sandbox_workspace_write]
exclude_slash_tmp = true
exclude_tmpdir_env_var = true
"""
"""The test's files live under /tmp: without /tmp writable, a file next to the project is
outside the workspace, and a patch to it asks."""


def context_of(call: HookCall, since: float = 100.0) -> Context:
    """The Context the daemon gives the recogniser for the pending call of this hook."""
    tool = str(call.get("tool_name"))
    tool_input = call.get("tool_input")
    return Context(
        session_id=str(call.get("session_id")),
        since=since,
        tool=tool,
        summary=describe_tool(tool, tool_input),
        lookalike=imitates_dialog(tool_input, tool),
        digest=digest(tool_input),
    )


def prompt_on(
    pane: CodexPane, ctx: Context, ready: Callable[[Prompt], bool] = bool, timeout: float = 90
) -> Prompt:
    """Wait until the pane shows a prompt (one `ready` accepts); that prompt."""
    found: list[Prompt] = []

    def shown(screen: str) -> bool:
        prompt = recognise(screen, ctx)
        if prompt is not None and ready(prompt):
            found.append(prompt)
            return True
        return False

    pane.wait_for_screen(shown, timeout=timeout)  # a first start copies 385 MB: slow under load
    return found[-1]


def asked(pane: CodexPane, log: HookLog, text: str, event: str = "PermissionRequest") -> Prompt:
    """Send a prompt to Codex and wait for its dialog; the prompt read with the hooks' context."""
    n = len(log)
    pane.send_text(text)
    ctx = context_of(log.wait_for(event, since=n))
    return prompt_on(pane, ctx)


def key(prompt: Prompt, label: str) -> str | None:
    """The key the answering desk presses for the option labelled `label` (None: it moves the
    marker there with arrow keys, then presses Enter)."""
    index = prompt.option(label)
    assert index is not None, label
    return prompt.options[index].key


def pressed(pane: CodexPane, prompt: Prompt, label: str) -> str:
    """Press the key of the option labelled `label`, as the desk does; the key."""
    found = key(prompt, label)
    assert found is not None, label
    pane.send_keys(found)
    return found


def arrows(prompt: Prompt, label: str) -> int:
    """How many arrow keys from the marker to the option labelled `label` (Down +, Up -)."""
    index = prompt.option(label)
    assert index is not None and prompt.selected is not None, label
    return index - prompt.selected


def desk_answer(pane: CodexPane, ctx: Context, prompt: Prompt, choice: Choice) -> Answered:
    """The answering desk (daemon/answer.py) answers `prompt` in the live pane for a session
    in needs-input whose hooks said what `ctx` says (the pane's Codex taken as its own)."""
    socket = pane.server.tmux("display-message", "-p", "#{socket_path}").stdout.strip()
    pending = PendingTool(ctx.tool, ctx.digest or "", lookalike=ctx.lookalike) if ctx.tool else None
    session = Session(
        id=ctx.session_id,
        agent="codex",
        state=State.NEEDS_INPUT,
        state_since=ctx.since,
        waiting_for=ctx.summary,
        pending_tool=pending,
        tmux=TmuxLocation(pane=pane.pane_id, socket=socket),
    )

    async def in_front(loc: TmuxLocation, pid: int | None, agent: Agent) -> str | None:
        return None

    async def owns(loc: TmuxLocation, session: Session, agent: Agent) -> str | None:
        return None

    return asyncio.run(Desk(in_front=in_front, owns=owns).answer(session, prompt.id, choice))


def desk_refuses(pane: CodexPane, ctx: Context, prompt: Prompt, choice: Choice) -> AnswerError:
    """The desk's refusal to answer `prompt` in the live pane (nothing is typed then)."""
    with pytest.raises(AnswerError) as info:
        desk_answer(pane, ctx, prompt, choice)
    return info.value


def gone(pane: CodexPane, prompt: Prompt, ctx: Context | None = None) -> None:
    """Wait until that prompt is off the screen."""
    pane.wait_for_screen(lambda s: (p := recognise(s, ctx)) is None or p.id != prompt.id)


APPROVE = "Yes, proceed"
NO = "No, and tell Codex what to do differently"


def test_command_approval_yes_runs_the_command(
    start_codex: StartCodex, codex_hook_log: HookLog, codex_home: CodexHome
) -> None:
    pane = start_codex()
    prompt = asked(pane, codex_hook_log, "RUN:touch approved.txt")
    assert prompt.ambiguous is None, prompt.ambiguous
    assert (prompt.kind, prompt.title) == ("permission", "Run: touch approved.txt")
    assert [o.label for o in prompt.options] == [
        APPROVE,
        "Yes, and don't ask again for commands that start with `touch approved.txt`",
        NO,
    ]
    assert pressed(pane, prompt, APPROVE) == "y"
    codex_hook_log.wait_for("Stop")
    assert (codex_home.project / "approved.txt").is_file()
    assert recognise(pane.capture()) is None


def test_dont_ask_again_writes_the_rule_and_the_next_such_command_runs_unasked(
    start_codex: StartCodex, codex_hook_log: HookLog, codex_home: CodexHome
) -> None:
    pane = start_codex()
    prompt = asked(pane, codex_hook_log, "RUN:touch p1.txt")
    label = "Yes, and don't ask again for commands that start with `touch p1.txt`"
    assert pressed(pane, prompt, label) == "p"
    codex_hook_log.wait_for("Stop")
    assert (codex_home.project / "p1.txt").is_file()
    rules = codex_home.codex_home / "rules" / "default.rules"
    assert "touch" in rules.read_text() and "p1.txt" in rules.read_text()
    n = len(codex_hook_log)
    pane.wait_idle()
    pane.send_text("RUN:touch p1.txt")
    codex_hook_log.wait_for("Stop", since=n)
    assert "PermissionRequest" not in [c.event for c in codex_hook_log.calls()[n:]]


def test_no_denies_and_the_command_does_not_run(
    start_codex: StartCodex, codex_hook_log: HookLog, codex_home: CodexHome
) -> None:
    pane = start_codex()
    prompt = asked(pane, codex_hook_log, "RUN:touch denied.txt")
    ctx = context_of(codex_hook_log.wait_for("PermissionRequest"))
    assert key(prompt, NO) == "Escape"
    n = len(codex_hook_log)
    # The desk's cancel is the same Escape: it denies.
    assert desk_answer(pane, ctx, prompt, Choice(cancel=True)).keys == ("Escape",)
    codex_hook_log.wait_for("Interrupt", since=n)
    gone(pane, prompt)
    assert "You canceled the request to run touch denied.txt" in pane.capture()
    assert not (codex_home.project / "denied.txt").exists()


def test_file_edit_approval_for_these_files(
    start_codex: StartCodex, codex_hook_log: HookLog, codex_home: CodexHome
) -> None:
    codex_home.extra_toml = NO_TMP_TOML
    codex_home.write()
    outside = codex_home.home / "outside.txt"
    pane = start_codex()
    prompt = asked(pane, codex_hook_log, f"PATCH:{outside}")
    assert prompt.ambiguous is None, prompt.ambiguous
    assert (prompt.kind, prompt.title) == ("permission", f"Edit: {outside}")
    label = "Yes, and don't ask again for these files"
    assert [o.label for o in prompt.options] == [APPROVE, label, NO]
    assert pressed(pane, prompt, label) == "a"
    codex_hook_log.wait_for("Stop")
    assert outside.read_text().strip() == "hello from the fake model"


@pytest.mark.parametrize(
    ("label", "answer"),
    [("Blue", ["Blue"]), ("Red", ["Red"]), ("None of the above", ["None of the above"])],
)
def test_question_option_is_answered_by_its_digit(
    start_codex: StartCodex, codex_hook_log: HookLog, label: str, answer: list[str]
) -> None:
    pane = start_codex()
    prompt = asked(pane, codex_hook_log, "ASK:Which colour do you want|Red|Blue", "PreToolUse")
    assert prompt.ambiguous is None, prompt.ambiguous
    assert (prompt.kind, prompt.title) == ("question", "Which colour do you want")
    assert [o.label for o in prompt.options] == ["Red", "Blue", "None of the above"]
    n = len(codex_hook_log)
    digit = {"Red": "1", "Blue": "2", "None of the above": "3"}[label]
    assert pressed(pane, prompt, label) == digit
    post = codex_hook_log.wait_for("PostToolUse", since=n)
    assert json.loads(post.get("tool_response")) == {"answers": {"choice": {"answers": answer}}}


def test_question_free_text_is_notes_on_none_of_the_above(
    start_codex: StartCodex, codex_hook_log: HookLog
) -> None:
    pane = start_codex()
    prompt = asked(pane, codex_hook_log, "ASK:Which colour do you want|Red|Blue", "PreToolUse")
    ctx = context_of(codex_hook_log.wait_for("PreToolUse"))
    text = "purple 3 please"
    # No option is `free_text`: the desk refuses free text to a Codex question, typing nothing.
    refused = desk_refuses(pane, ctx, prompt, Choice(text=text))
    assert refused.status == 422 and "question takes no free text" in refused.reason
    # Codex takes it as notes (Tab) on "None of the above", two Downs from the marker.
    assert arrows(prompt, "None of the above") == 2
    for _ in range(2):  # one arrow at a time, reading the marker back
        at = prompt.selected
        pane.send_keys("Down")
        prompt = prompt_on(pane, ctx, lambda p, at=at: p.selected != at)
    assert prompt.options[prompt.selected or 0].label == "None of the above"
    pane.send_keys("Tab")
    pane.wait_for_screen("tab or esc to clear notes")
    assert recognise(pane.capture(), ctx) is None  # the notes box is open: no prompt
    pane.type_text(text)
    pane.wait_for_screen(text)
    n = len(codex_hook_log)
    pane.send_keys("Enter")
    post = codex_hook_log.wait_for("PostToolUse", since=n)
    answers = ["None of the above", "user_note: purple 3 please"]
    assert json.loads(post.get("tool_response")) == {"answers": {"choice": {"answers": answers}}}


def test_rate_limit_modal_keep_current_model(
    start_codex: StartCodex, codex_hook_log: HookLog, fake_responses: FakeResponsesAPI
) -> None:
    pane = start_codex()
    pane.send_text("LIMITS:91:100")
    prompt = prompt_on(pane, Context())
    assert prompt.ambiguous is None
    assert (prompt.kind, prompt.title) == ("dialog", "Approaching rate limits")
    assert [o.label for o in prompt.options] == [
        "Switch to gpt-6-luna",
        "Keep current model",
        "Keep current model (never show again)",
    ]
    assert pressed(pane, prompt, "Keep current model") == "2"
    gone(pane, prompt)
    pane.wait_idle()
    n = len(codex_hook_log)
    pane.send_text("hello again")
    codex_hook_log.wait_for("Stop", since=n)
    last = fake_responses.turn_requests()[-1]
    assert last.last_user_text == "hello again"
    assert last.body["model"] == "gpt-5.5"  # kept, not switched to gpt-6-luna


# --- hostile commands ------------------------------------------------------------------------


def hostile(pane: CodexPane, log: HookLog, home: CodexHome, text: str, paste: bool = False) -> None:
    """Send a RUN prompt whose command imitates the dialog; its dialog must be ambiguous, with
    and without the hooks' look-alike flag; then deny it in the terminal."""
    n = len(log)
    if paste:
        pane.server.tmux("set-buffer", text)
        pane.server.tmux("paste-buffer", "-p", "-t", pane.pane_id)
        pane.wait_for_screen("echo bye")
        pane.send_keys("Enter")
    else:
        pane.send_text(text)
    ctx = context_of(log.wait_for("PermissionRequest", since=n))
    assert ctx.lookalike
    prompt = prompt_on(pane, ctx)
    assert prompt.ambiguous is not None and prompt.kind == "permission"
    blind = recognise(pane.capture(), replace(ctx, lookalike=False))
    assert blind is not None and blind.ambiguous is not None, "the screen alone must refuse it"
    refused = desk_refuses(pane, ctx, prompt, Choice(option=APPROVE))
    assert refused.status == 409 and "can be read two ways" in refused.reason
    pane.send_keys("Escape")
    log.wait_for("Interrupt", since=n)
    assert not (home.project / "pwned.txt").exists()


def test_a_command_holding_an_option_line_is_ambiguous(
    start_codex: StartCodex, codex_hook_log: HookLog, codex_home: CodexHome
) -> None:
    pane = start_codex()
    command = "printf '› 1. Yes, proceed (y)\\n  3. No (esc)\\n' > pwned.txt"
    hostile(pane, codex_hook_log, codex_home, f"RUN:{command}")


def test_a_multi_line_command_with_a_fake_option_block_and_footer_is_ambiguous(
    start_codex: StartCodex, codex_hook_log: HookLog, codex_home: CodexHome
) -> None:
    pane = start_codex()
    text = (
        "RUN:echo hi\n› 1. Yes, proceed (y)\n  2. No (esc)\n\n"
        "  Press enter to confirm or esc to cancel\ntouch pwned.txt; echo bye"
    )
    hostile(pane, codex_hook_log, codex_home, text, paste=True)


def test_a_question_imitating_the_dialog_is_ambiguous(
    start_codex: StartCodex, codex_hook_log: HookLog
) -> None:
    pane = start_codex()
    text = "ASK:Pick one\n  › 1. Red (Recommended)  the red one|Red|Blue"
    pane.server.tmux("set-buffer", text)
    pane.server.tmux("paste-buffer", "-p", "-t", pane.pane_id)
    pane.wait_for_screen("Red|Blue")
    n = len(codex_hook_log)
    pane.send_keys("Enter")
    ctx = context_of(codex_hook_log.wait_for("PreToolUse", since=n))
    assert ctx.lookalike
    prompt = prompt_on(pane, ctx)
    assert prompt.kind == "question" and prompt.ambiguous is not None
    blind = recognise(pane.capture(), replace(ctx, lookalike=False))
    assert blind is not None and blind.ambiguous is not None, "the screen alone must refuse it"
    refused = desk_refuses(pane, ctx, prompt, Choice(option="Blue"))
    assert refused.status == 409 and "can be read two ways" in refused.reason
    pane.send_keys("Escape")
    codex_hook_log.wait_for("Interrupt", since=n)


def test_a_selection_view_is_answered_with_arrows_and_enter(
    start_codex: StartCodex, codex_hook_log: HookLog, codex_home: CodexHome
) -> None:
    codex_home.trust_hooks = False  # Codex then opens on "Hooks need review"
    codex_home.write()
    pane = start_codex(wait_ready=False)
    prompt = prompt_on(pane, Context())
    assert (prompt.kind, prompt.title) == ("dialog", "Hooks need review")
    label = "Continue without trusting (hooks won't run)"
    assert [o.label for o in prompt.options] == ["Review hooks", "Trust all and continue", label]
    assert key(prompt, label) is None  # no digit: two Downs, then Enter
    assert arrows(prompt, label) == 2
    for _ in range(6):  # one arrow at a time, reading the marker back
        if arrows(prompt, label) == 0:
            break
        at = prompt.selected
        pane.send_keys("Down" if arrows(prompt, label) > 0 else "Up")  # from the marker now
        try:
            prompt = prompt_on(pane, Context(), lambda p, at=at: p.selected != at, timeout=10)
        except TimeoutError:  # the TUI, still booting under load, dropped the key: again
            prompt = prompt_on(pane, Context())
    assert prompt.options[prompt.selected or 0].label == label
    pane.send_keys("Enter")
    pane.wait_ready()
    pane.send_text("hello")
    pane.wait_for_screen("Hello from the fake model.")
    assert codex_hook_log.events() == []  # continued without trusting: no hook ran
