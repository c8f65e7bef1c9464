"""The real daemon against the current Claude Code release (2.1.332) in tmux: what each session
is, costs and still runs (issue 16), and the release's own ways (claude-code.md, "What changed
by 2.1.332"): auto mode by default, dialogs that ignore keys for about a second, `shell` status,
the self-woken `<task-notification>` turn, MessageDisplay after Stop.

Claude talks to the fake Messages API (fake_api.py): ``CTX:150000 hello`` answers with usage
reporting 150,000 input tokens; ``BG:<cmd>`` asks for a Bash call with run_in_background.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from tests.support import Daemon

from .conftest import FeedRecorder, StartClaude
from .fake_api import BACKGROUND_DESCRIPTION, PLAIN_ANSWER
from .harness import PERMISSION_QUESTION, ClaudeHome, TmuxClaude, wait_until
from .test_daemon_e2e import (
    FEED_TIMEOUT,
    current,
    hooks,
    screen_shows,
    session_id_of,
    start_found,
    submit,
    wait_file_idle,
    wait_found,
    wait_hook,
)
from .versions import CURRENT, Profile

pytestmark = [pytest.mark.e2e, pytest.mark.claude_versions(CURRENT)]

CONTEXT_TOKENS = 150_000


@pytest.fixture
def hook_command(daemon_hook_command: str) -> str:
    return daemon_hook_command


@pytest.fixture
def feed(purplemux_daemon: Daemon, connect_feed: Callable[[Daemon], FeedRecorder]) -> FeedRecorder:
    """A recorder of the daemon's feed, connected before the test's Claude starts."""
    return connect_feed(purplemux_daemon)


def answer_dialog(
    claude: TmuxClaude, shown_at: float, profile: Profile, key: str = "Enter"
) -> None:
    """Press ``key`` on a dialog once it has been on screen long enough to take keys (2.1.332
    drops keys for about a second after a dialog appears), and check that it went."""
    wait_until(lambda: time.monotonic() - shown_at >= profile.dialog_guard, timeout=10)
    claude.press(key)
    wait_until(
        lambda: PERMISSION_QUESTION not in claude.screen(),
        timeout=10,
        describe=lambda: f"the dialog to close after {key}; screen:\n{claude.screen()}",
    )


def test_name_mode_context_cost_and_a_background_task(
    purplemux_daemon: Daemon,
    start_claude: StartClaude,
    claude_home: ClaudeHome,
    claude_profile: Profile,
    feed: FeedRecorder,
) -> None:
    daemon = purplemux_daemon
    claude = start_claude(args=claude_profile.manual_args)
    sid = session_id_of(claude)
    session = wait_found(feed, sid, claude)

    # The row is named as Claude names the session (its session file's `name`).
    claude_name = (claude.session_file() or {}).get("name")
    assert claude_name, f"2.1.332 names its sessions: {claude.session_file()}"
    named = feed.wait(sid, lambda s: s.get("name") == claude_name, what="Claude's name")
    assert named.session["title"] == claude_name
    assert session["project"] == claude_home.project.name != claude_name

    # A reply whose usage reports 150k input tokens: the context bar, the mode, the cost.
    mark = feed.mark()
    sent = submit(claude, f"CTX:{CONTEXT_TOKENS} hello")
    feed.wait_state(sid, "review", since=mark, timeout=FEED_TIMEOUT)
    wait_file_idle(daemon, sid, sent.wall)
    row = feed.wait(
        sid,
        lambda s: (s.get("context") or {}).get("tokens") == CONTEXT_TOKENS,
        since=mark,
        what="context.tokens from the transcript",
    ).session
    ctx = row["context"]
    assert ctx["window"] == 200_000, f"opus-5-5 runs a 200k window: {row['model']}"
    assert ctx["percent"] == pytest.approx(100 * CONTEXT_TOKENS / ctx["window"], abs=0.1)
    assert ctx["band"] == "warning"  # 75 %: 70 <= warning < 85
    assert row["permission_mode"] == "default"
    row = feed.wait(sid, lambda s: (s.get("cost_usd") or 0) > 0, since=mark, what="a cost").session
    assert row["cost_usd"] > 0.6  # 150k input tokens of Opus 5.5 at $4/M
    assert current(daemon, sid)["snippet"] == PLAIN_ANSWER
    claude.wait_ready()

    # A background shell: listed as running after Stop, gone once it ends and Claude has
    # woken itself with the <task-notification> turn.
    mark = feed.mark()
    seconds = 8
    sent = submit(claude, "BG:" + claude_profile.sleep_command(seconds))
    shown = screen_shows(claude, PERMISSION_QUESTION)  # python3 asks in manual mode
    feed.wait_state(sid, "needs-input", since=mark, timeout=FEED_TIMEOUT)
    answer_dialog(claude, shown.mono, claude_profile)
    stop = wait_hook(daemon, sid, "Stop", sent.wall)
    running = feed.wait(
        sid,
        lambda s: s.get("state") == "review" and bool(s.get("background_tasks")),
        since=mark,
        what="review with a background task",
    ).session
    (task,) = running["background_tasks"]
    assert task["type"] == "shell" and task["status"] == "running"
    assert task["description"] == BACKGROUND_DESCRIPTION and task["id"]
    # Claude's file says `shell` while it runs; the badge stays review (the turn is over).
    claude.wait_session_status("shell", timeout=10)
    assert current(daemon, sid)["state"] == "review"
    assert [t["id"] for t in current(daemon, sid)["background_tasks"]] == [task["id"]]

    woken = feed.wait(
        sid,
        lambda s: s.get("background_tasks") == [],
        since=feed.updates(sid, mark)[-1].index,
        timeout=seconds + 30,
        what="the background task gone",
    )
    assert woken.wall > stop["at"]
    wake = wait_hook(daemon, sid, "UserPromptSubmit", stop["at"] + 1e-6)
    assert wake["task_done"] == task["id"], "the <task-notification> turn"
    assert wake["prompt"].startswith("<task-notification>")
    final = feed.wait_state(sid, "review", since=woken.index, timeout=FEED_TIMEOUT).session
    assert final["background_tasks"] == []
    # MessageDisplay may land after Stop: logged, the badge did not move for it.
    assert "MessageDisplay" in hooks(daemon, sid, sent.wall)


def test_auto_mode_dialog_without_a_hook_is_needs_input_at_once(
    purplemux_daemon: Daemon,
    start_claude: StartClaude,
    claude_profile: Profile,
    feed: FeedRecorder,
) -> None:
    """Default launch (auto mode) against a stand-in API: "Auto mode can't check actions in
    this session" opens with no hook; the session file alone says so."""
    daemon = purplemux_daemon
    claude, sid = start_found(start_claude, feed)

    mark = feed.mark()
    sent = submit(claude, 'RUN:python3 -c "print(42)"')
    needs = feed.wait_state(sid, "needs-input", since=mark, timeout=FEED_TIMEOUT)
    assert "auto mode" in (needs.session["waiting_for"] or ""), needs.session
    assert needs.session["permission_mode"] == "auto"
    assert "PermissionRequest" not in hooks(daemon, sid, sent.wall)
    shown = screen_shows(claude, "Auto mode can't check")
    # Enter keeps auto mode; the approval dialog that follows offers "No" first.
    wait_until(lambda: time.monotonic() - shown.mono >= claude_profile.dialog_guard, timeout=10)
    claude.press("Enter")
    approval = screen_shows(claude, "needs your approval")
    feed.wait(
        sid,
        lambda s: s.get("state") == "needs-input" and "python3" in (s.get("waiting_for") or ""),
        since=needs.index,
        what="the approval naming the command",
    )
    wait_until(lambda: time.monotonic() - approval.mono >= claude_profile.dialog_guard, timeout=10)
    claude.press("Down")
    claude.press("Enter")
    feed.wait_state(sid, "review", since=needs.index, timeout=FEED_TIMEOUT)
    wait_file_idle(daemon, sid, sent.wall)
    assert feed.states(sid, mark)[-1] == "review"
    assert current(daemon, sid)["waiting_for"] is None


def test_exit_deletes_the_file_before_session_end(
    purplemux_daemon: Daemon,
    start_claude: StartClaude,
    feed: FeedRecorder,
) -> None:
    """2.1.332 removes its session file ~50 ms before SessionEnd: the row ends, once."""
    daemon = purplemux_daemon
    claude, sid = start_found(start_claude, feed)
    mark = feed.mark()
    sent = submit(claude, "/exit")
    ended = feed.wait(sid, lambda s: s.get("ended") is True, since=mark, what="ended")
    claude.wait_exit()
    wait_hook(daemon, sid, "SessionEnd", sent.wall)
    assert ended.session["alive"] is False and ended.session["state"] == "idle"
    assert ended.session["background_tasks"] == []
    assert sid not in [s["id"] for s in daemon.sessions(all=False)]
    assert feed.states(sid, mark) == []
