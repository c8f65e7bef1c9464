"""The prompt recogniser on real screens of Claude Code 2.1.197 and 2.1.332."""

from __future__ import annotations

import pytest

from purplemux.model import PendingTool, Session, State, TmuxLocation
from purplemux.prompts import Context, Prompt, context_of, recognise
from purplemux.tmux import plain
from tests.support.screens import screen, screens

CTX = Context(session_id="s1", since=100.0)


def labels(prompt: Prompt | None) -> list[str]:
    assert prompt is not None
    return [o.label for o in prompt.options]


def selected(prompt: Prompt | None) -> str:
    assert prompt is not None and prompt.selected is not None
    return prompt.options[prompt.selected].label


def test_classic_four_option_dialog_of_2_1_332() -> None:
    prompt = recognise(screen("claude-2.1.332-manual.screens.txt", "touch-dialog"), CTX)
    assert prompt is not None
    assert prompt.kind == "permission"
    assert prompt.title == "Bash command: touch b.txt"
    assert prompt.question == "Do you want to proceed?"
    assert labels(prompt) == [
        "Yes",
        "Yes, and always allow access to /home/dev/proj from this project",
        "Yes, and switch to auto mode · auto mode handles these prompts for you",
        "No",
    ]
    assert selected(prompt) == "Yes"
    assert not prompt.free_text
    assert prompt.lines[0].strip() == "Bash command"
    assert prompt.lines[-1].strip().startswith("Esc to cancel")


def test_three_option_dialog_of_2_1_197() -> None:
    prompt = recognise(screen("claude-2.1.197-dialogs.screens.txt", "touch-dialog"), CTX)
    assert prompt is not None
    assert (prompt.kind, prompt.title) == ("permission", "Bash command: touch x.txt")
    assert labels(prompt) == [
        "Yes",
        "Yes, and always allow access to proj/ from this project",
        "No",
    ]
    assert selected(prompt) == "Yes"


@pytest.mark.parametrize(
    "name", ["claude-2.1.197-dialogs.screens.txt", "claude-2.1.332-manual.screens.txt"]
)
def test_question_with_free_text(name: str) -> None:
    prompt = recognise(screen(name, "ask-dialog"), CTX)
    assert prompt is not None
    assert prompt.kind == "question"
    assert prompt.title == "Which colour should the button be?"
    assert labels(prompt) == ["Red", "Blue", "Type something.", "Chat about this"]
    assert [o.free_text for o in prompt.options] == [False, False, True, False]
    assert selected(prompt) == "Red"


def test_moving_the_selection_or_typing_keeps_the_id() -> None:
    shots = dict(screens("claude-2.1.197-dialogs.screens.txt"))
    first = recognise(shots["ask-dialog"], CTX)
    down = recognise(shots["ask-down"], CTX)
    typed = recognise(shots["ask-typed"], CTX)
    assert first is not None and down is not None and typed is not None
    assert selected(down) == "Blue"
    assert first.id == down.id == typed.id
    assert selected(typed) == "Green please" and typed.options[2].free_text
    assert recognise(shots["ask-after"], CTX) is None


def test_auto_mode_approval_lists_no_first() -> None:
    shots = [(n, t) for n, t in screens("claude-2.1.332-auto.screens.txt")]
    approval = recognise(dict(shots)["after-enter-stay-auto"], CTX)
    moved = recognise(dict(shots)["after-down"], CTX)
    assert approval is not None and moved is not None
    assert approval.kind == "permission"
    assert approval.title == 'Bash command: python3 -c "import time; time.sleep(15)"'
    assert labels(approval) == ["No", "Yes"]
    assert selected(approval) == "No"  # Enter alone denies
    assert selected(moved) == "Yes"
    assert approval.id == moved.id


def test_auto_mode_cannot_check_dialog_offers_its_footer_choices() -> None:
    prompt = recognise(screen("claude-2.1.332-auto.screens.txt", "after-bg"), CTX)
    assert prompt is not None
    assert prompt.kind == "dialog"
    assert prompt.title == "Auto mode can't check actions in this session"
    assert labels(prompt) == ["Stay in auto mode", "Leave for accept edits mode and stop"]
    assert [o.key for o in prompt.options] == ["Enter", "BTab"]
    assert prompt.selected is None


@pytest.mark.parametrize(
    "name",
    [
        "claude-2.1.197-dialogs.screens.txt",
        "claude-2.1.332-manual.screens.txt",
        "claude-2.1.332-auto.screens.txt",
    ],
)
def test_no_prompt_on_screens_without_a_dialog(name: str) -> None:
    quiet = {"after-run-touch", "after-yes", "after-bg-done", "sleep30-running", "after-esc"}
    quiet |= {"ctx", "compact", "clear", "ask-after"}
    for shot, text in screens(name):
        if shot in quiet:
            assert recognise(text, CTX) is None, shot
    # The first "ask" of the manual run only answered "Done." (see the actions log).
    if name == "claude-2.1.332-manual.screens.txt":
        assert recognise(screen(name, "ask-dialog", 0), CTX) is None


def test_id_changes_with_the_time_the_prompt_appeared() -> None:
    text = screen("claude-2.1.332-manual.screens.txt", "touch-dialog")
    a = recognise(text, Context(session_id="s1", since=100.0))
    again = recognise(text, Context(session_id="s1", since=100.0))
    later = recognise(text, Context(session_id="s1", since=160.0))
    other = recognise(text, Context(session_id="s2", since=100.0))
    assert a is not None and again is not None and later is not None and other is not None
    assert a.id == again.id
    assert len({a.id, later.id, other.id}) == 3


def test_another_dialog_on_screen_gets_another_id() -> None:
    one = recognise(screen("claude-2.1.332-manual.screens.txt", "touch-dialog"), CTX)
    two = recognise(screen("claude-2.1.332-manual.screens.txt", "sleep30-dialog"), CTX)
    assert one is not None and two is not None and one.id != two.id


def test_context_tells_a_question_apart() -> None:
    session = Session(
        id="s9",
        state=State.NEEDS_INPUT,
        state_since=5.0,
        waiting_for="Which colour?",
        pending_tool=PendingTool("AskUserQuestion", "d"),
        tmux=TmuxLocation(pane="%1"),
    )
    ctx = context_of(session)
    assert ctx == Context("s9", 5.0, "Which colour?", "AskUserQuestion", True)
    prompt = recognise(screen("claude-2.1.197-dialogs.screens.txt", "ask-dialog"), ctx)
    assert prompt is not None and prompt.kind == "question"


def test_to_json_shape() -> None:
    prompt = recognise(screen("claude-2.1.197-dialogs.screens.txt", "touch-dialog"), CTX)
    assert prompt is not None
    data = prompt.to_json()
    assert set(data) == {"id", "kind", "title", "question", "options", "free_text", "lines"}
    assert data["options"][0] == {"label": "Yes", "selected": True, "free_text": False}


def test_plain_strips_escapes_and_control_characters() -> None:
    raw = "\x1b[31mred\x1b[0m\x07 ok\r\n\x1b]0;title\x07next\x00line\x1b[2J   \nend\t!"
    assert plain(raw) == "red ok\nnextline\nend\t!"
