"""Safe to act, round three, through the real Codex CLI (0.171.0) and the real daemon: the pane
a Codex row is placed on, and so the pane an answer is typed into, is that thread's own.

Codex draws the thread's first prompt verbatim in its pane title (`<prompt> | proj`). A first
prompt holding another thread's id (`… | <B's id>`) or shaped like the title's own structure
(`[ ! ] Action Required`) is text the user wrote: it must move nobody's pane or state. Before
the fix, a TUI whose first prompt held B's id, started before B's, took B's pane link, and
answering B's dialog "Yes, proceed" typed `y` into A's pane and ran A's command.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from purplemux import install
from purplemux.agents.codex import install as codex_install
from tests.support import Daemon

from .codex_fixtures import StartCodex
from .codex_harness import CodexHome, CodexPane, TmuxCodex
from .conftest import FeedRecorder
from .harness import wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture
def codex_hook_command(tmp_path: Path) -> str:
    home = tmp_path / "pmx"
    return codex_install.hook_command(install.install_script(home), home)


@pytest.fixture
def daemon(tmp_path: Path, codex_home: CodexHome, codex_tmux: TmuxCodex) -> Iterator[Daemon]:
    d = Daemon(
        home=tmp_path / "pmx",
        claude_dir=tmp_path / "claude",
        env_extra={"CODEX_HOME": str(codex_home.codex_home)},
    )
    d.start()
    yield d
    d.stop()


@pytest.fixture
def feed(daemon: Daemon, connect_feed: Callable[[Daemon], FeedRecorder]) -> FeedRecorder:
    return connect_feed(daemon)


def row_on(feed: FeedRecorder, pane: CodexPane) -> str:
    """The id of the Codex row placed on this pane."""

    def here(s: dict[str, object]) -> bool:
        tmux = s.get("tmux") or {}
        assert isinstance(tmux, dict)
        return s.get("agent") == "codex" and tmux.get("pane") == pane.pane_id and not s["ended"]

    return str(
        feed.wait(None, here, timeout=30, what=f"a Codex row on {pane.pane_id}").session["id"]
    )


def dialog(daemon: Daemon, sid: str, command: str) -> dict[str, object]:
    """The dialog /screen reads for that session, once it shows `command`."""

    def shown() -> dict[str, object] | None:
        prompt = (daemon.api("GET", f"/api/sessions/{sid}/screen") or {}).get("prompt")
        return prompt if prompt and command in str(prompt.get("title")) else None

    return wait_until(shown, timeout=20, describe=f"{sid}'s dialog for {command} on /screen")


@pytest.mark.parametrize("shown", ["whole", "prefix"])
def test_a_first_prompt_holding_another_threads_id_takes_nobodys_pane(
    daemon: Daemon,
    feed: FeedRecorder,
    start_codex: StartCodex,
    codex_home: CodexHome,
    shown: str,
) -> None:
    """A (started first) has the first prompt `x | <B's id>` (a plain turn) or `RUN:>a |
    <B's id's 29 characters>...` (a dialog of its own); Codex draws a thread title of up to
    about 45 characters whole, so the id is in A's title as Codex draws an id."""
    one = start_codex()  # A
    two = start_codex()  # B
    a, b = row_on(feed, one), row_on(feed, two)
    assert a != b
    mark = feed.mark()
    if shown == "whole":
        one.send_text(f"x | {b}")
        feed.wait_state(a, "review", since=mark, timeout=30)
        one.wait_title(lambda t: t == f"x | {b} | proj", what="A's idle title holding B's id")
    else:
        one.send_text(f"RUN:>a | {b[:29]}...")
        feed.wait_state(a, "needs-input", since=mark, timeout=30)
        one.wait_title(lambda t: f"{b[:29]}... | proj" in t, what="A's title holding B's id")
    two.send_text("RUN:touch b-ran.txt")
    feed.wait_state(b, "needs-input", since=mark, timeout=30)
    two.wait_title(lambda t: "Action Required" in t, what="B's dialog in B's title")
    rows = {s["id"]: s for s in daemon.sessions()}
    assert rows[a]["tmux"]["pane"] == one.pane_id
    assert rows[b]["tmux"]["pane"] == two.pane_id
    # Answering B's dialog types into B's pane only: B's command runs; A is untouched.
    prompt = dialog(daemon, b, "touch b-ran.txt")
    done = daemon.api(
        "POST",
        f"/api/sessions/{b}/answer",
        {"prompt_id": prompt["id"], "option": "Yes, proceed", "by": "api"},
    )
    assert done["answered"] == "Yes, proceed" and done["keys"] == ["y"]
    wait_until(lambda: (codex_home.project / "b-ran.txt").exists(), 15, describe="B's ran")
    feed.wait_state(b, "review", since=mark, timeout=30)
    if shown == "whole":
        assert one.composer() == ""  # no `y` typed into A's prompt box
        assert daemon.session(a)["state"] == "review"
    else:
        assert "Would you like to run the following command?" in one.capture()
        assert not (codex_home.project / "a").exists()
        assert daemon.session(a)["state"] == "needs-input"
    answers = [e for e in daemon.api("GET", f"/api/sessions/{a}/events")["events"]
               if e["kind"] == "answer"]  # fmt: skip
    assert answers == []
    if shown == "prefix":  # A's own dialog, denied at its terminal: its command never ran
        one.send_keys("Escape")
        feed.wait_state(a, "idle", since=mark, timeout=30)
        assert not (codex_home.project / "a").exists()


def test_a_first_prompt_shaped_like_action_required_is_a_plain_turn(
    daemon: Daemon, feed: FeedRecorder, start_codex: StartCodex
) -> None:
    """Its title reads "[ ! ] Action Required | proj" while idle and "⠸ [ ! ] Action Required |
    proj" while busy: busy and review, never needs-input (no push for a plain turn)."""
    pane = start_codex()
    sid = row_on(feed, pane)
    mark = feed.mark()
    pane.send_text("[ ! ] Action Required")
    feed.wait_state(sid, "review", since=mark, timeout=30)
    pane.wait_title(lambda t: t.startswith("[ ! ] Action Required | "), what="its idle title")
    # A second turn: its busy title starts with a spinner and then the look-alike part; the
    # daemon reads both titles before this turn's review (tmux tells of each title change).
    second = feed.mark()
    pane.send_text("hello again")
    feed.wait_state(sid, "busy", since=second, timeout=30)
    feed.wait_state(sid, "review", since=second, timeout=30)
    pane.wait_title(lambda t: t.startswith("[ ! ] Action Required | "), what="idle again")
    assert "needs-input" not in feed.states(sid, since=mark)
    row = daemon.session(sid)
    assert row["tmux"]["pane"] == pane.pane_id and not row["ended"]
