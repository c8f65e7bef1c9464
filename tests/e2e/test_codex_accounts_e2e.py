"""Two Codex homes, one daemon: the real Codex 0.171.0 in two throw-away CODEX_HOMEs (each its
own app-server daemon, tmux server and the real status hook, trusted), and one `purplemux
serve` watching both (PURPLEMUX_CODEX_HOMES). A prompt in each gives two rows, each placed on
its own pane with its own account label and state."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents import install
from purplemux.agents.codex import install as codex_install
from tests.support import Daemon

from .codex_fixtures import StartCodex
from .codex_harness import CodexHome, CodexPane, TmuxCodex, make_codex_home
from .conftest import FeedRecorder
from .fake_responses import FakeResponsesAPI
from .test_codex_daemon_e2e import prompt

pytestmark = pytest.mark.e2e


@pytest.fixture
def codex_hook_command(tmp_path: Path) -> str:
    home = tmp_path / "pmx"
    return codex_install.hook_command(install.install_script(home), home)


@pytest.fixture
def second_home(
    tmp_path: Path, fake_responses: FakeResponsesAPI, codex_hook_command: str
) -> CodexHome:
    return make_codex_home(
        tmp_path / "second", fake_responses.base_url, hook_command=codex_hook_command
    )


@pytest.fixture
def second_tmux(codex_bin: Path, second_home: CodexHome) -> Iterator[TmuxCodex]:
    server = TmuxCodex(codex_bin, second_home)
    yield server
    server.stop()


@pytest.fixture
def daemon(
    tmp_path: Path,
    codex_home: CodexHome,
    codex_tmux: TmuxCodex,
    second_home: CodexHome,
    second_tmux: TmuxCodex,
) -> Iterator[Daemon]:
    """Stopped before both tmux servers' teardowns (they check no Codex process is left)."""
    homes = f"work={codex_home.codex_home},personal={second_home.codex_home}"
    d = Daemon(
        home=tmp_path / "pmx",
        claude_dir=tmp_path / "claude",
        env_extra={"PURPLEMUX_CODEX_HOMES": homes},
    )
    d.start()
    yield d
    d.stop()


@pytest.fixture
def feed(daemon: Daemon, connect_feed: Callable[[Daemon], FeedRecorder]) -> FeedRecorder:
    return connect_feed(daemon)


def on_pane(feed: FeedRecorder, server: TmuxCodex, pane: CodexPane) -> dict[str, Any]:
    """The first Codex row placed on this pane of this tmux server (both servers' first pane
    is %0)."""
    socket = server.tmux("display-message", "-p", "#{socket_path}").stdout.strip()

    def here(s: dict[str, Any]) -> bool:
        tmux = s.get("tmux") or {}
        return (
            s.get("agent") == "codex"
            and not s.get("ended")
            and (tmux.get("pane"), tmux.get("socket")) == (pane.pane_id, socket)
        )

    return feed.wait(None, here, timeout=30, what=f"a Codex row on {socket}").session


def test_two_codex_homes_give_two_rows_each_with_its_own_account_and_state(
    daemon: Daemon,
    feed: FeedRecorder,
    start_codex: StartCodex,
    codex_tmux: TmuxCodex,
    second_tmux: TmuxCodex,
) -> None:
    work = start_codex()
    personal: CodexPane = second_tmux.start_pane(())
    personal.wait_ready(timeout=90)  # a first start of a home copies the daemon's binaries
    work_row = on_pane(feed, codex_tmux, work)
    personal_row = on_pane(feed, second_tmux, personal)
    assert work_row["id"] != personal_row["id"]
    assert (work_row["account"], personal_row["account"]) == ("work", "personal")
    assert personal_row["view"]["account"] == "personal"  # two homes: the row names it

    mark = feed.mark()
    prompt(personal, "hello from home")
    done = feed.wait_state(personal_row["id"], "review", since=mark, timeout=60).session
    assert done["account"] == "personal" and done["tmux"]["pane"] == personal.pane_id
    assert "Hello from the fake model." in (done["snippet"] or "")
    assert feed.states(work_row["id"], since=mark) == []

    mark = feed.mark()
    prompt(work, "hello from work")
    done = feed.wait_state(work_row["id"], "review", since=mark, timeout=60).session
    assert done["account"] == "work" and done["tmux"]["pane"] == work.pane_id
    assert (daemon.session(personal_row["id"]) or {})["state"] == "review"
    # Every hook of each thread named its own home's account (from its rollout's path).
    for row, label in ((work_row, "work"), (personal_row, "personal")):
        events = daemon.api("GET", f"/api/sessions/{row['id']}/events")["events"]
        hooked = [e for e in events if e.get("source") == "hook"]
        assert hooked and {e.get("account") for e in hooked} == {label}
