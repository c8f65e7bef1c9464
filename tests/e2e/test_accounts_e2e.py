"""Two Claude logins, one daemon: the real Claude 2.1.332 in two throw-away HOMEs (a work and a
personal config dir, as people keep them), each with the real status hook installed, and one
`purplemux serve` watching both (PURPLEMUX_CLAUDE_DIRS). A prompt in each gives two rows, each
with its own account label and its own states."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support import Daemon

from .conftest import FeedRecorder, StartClaude
from .fake_api import PLAIN_ANSWER, FakeAnthropicAPI
from .harness import ClaudeHome, TmuxClaude, make_claude_home
from .test_daemon_e2e import (
    FEED_TIMEOUT,
    current,
    session_id_of,
    submit,
    wait_file_idle,
    wait_found,
)
from .versions import CURRENT

pytestmark = [pytest.mark.e2e, pytest.mark.claude_versions(CURRENT)]


@pytest.fixture
def purplemux_daemon(tmp_path: Path) -> Iterator[Daemon]:
    """The daemon watching both config dirs: the fixture's HOME (work) and a second HOME's."""
    work, personal = tmp_path / "home" / ".claude", tmp_path / "second" / "home" / ".claude"
    daemon = Daemon(
        home=tmp_path / "pmx",
        claude_dir=work,
        env_extra={"PURPLEMUX_CLAUDE_DIRS": f"work={work},personal={personal}"},
    )
    daemon.start()
    yield daemon
    daemon.stop()


@pytest.fixture
def hook_command(daemon_hook_command: str) -> str:
    return daemon_hook_command


@pytest.fixture
def feed(purplemux_daemon: Daemon, connect_feed: Callable[[Daemon], FeedRecorder]) -> FeedRecorder:
    return connect_feed(purplemux_daemon)


@pytest.fixture
def second_claude(
    tmp_path: Path, claude_bin: Path, hook_command: str, fake_api: FakeAnthropicAPI
) -> Iterator[Callable[[], TmuxClaude]]:
    """Start Claude in the second HOME (its own config dir, the same real hook)."""
    started: list[TmuxClaude] = []

    def start() -> TmuxClaude:
        home: ClaudeHome = make_claude_home(tmp_path / "second", hook_command)
        claude = TmuxClaude(claude_bin, home, fake_api.base_url)
        started.append(claude)
        claude.start()
        claude.wait_ready()
        claude.wait_started()
        return claude

    yield start
    for claude in started:
        claude.kill()


def test_two_config_dirs_give_two_rows_each_with_its_own_account_and_state(
    purplemux_daemon: Daemon,
    start_claude: StartClaude,
    second_claude: Callable[[], TmuxClaude],
    claude_home: ClaudeHome,
    feed: FeedRecorder,
) -> None:
    daemon = purplemux_daemon
    work = start_claude()
    personal = second_claude()
    work_sid, personal_sid = session_id_of(work), session_id_of(personal)
    assert work_sid != personal_sid
    # Each found from its own config dir's session file, on its own pane, with its account.
    for claude, sid, label in ((work, work_sid, "work"), (personal, personal_sid, "personal")):
        wait_found(feed, sid, claude)
        row = feed.wait(sid, lambda s, lb=label: s.get("account") == lb, what=label).session
        assert row["view"]["account"] == label

    # A prompt in the personal one only: it alone goes busy, then review with its answer.
    mark = feed.mark()
    sent = submit(personal, "hello from home")
    feed.wait_state(personal_sid, "review", since=mark, timeout=FEED_TIMEOUT)
    wait_file_idle(daemon, personal_sid, sent.wall)
    assert "busy" in feed.states(personal_sid, since=mark)
    assert feed.states(work_sid, since=mark) == []  # the work row did not move
    row = current(daemon, personal_sid)
    assert row["account"] == "personal" and row["snippet"] == PLAIN_ANSWER
    assert row["transcript_path"].startswith(str(personal.home.config_dir))
    assert current(daemon, work_sid)["state"] == "idle"

    # Then one in the work one: its own row, its own account, the personal row stays review.
    mark = feed.mark()
    sent = submit(work, "hello from work")
    feed.wait_state(work_sid, "review", since=mark, timeout=FEED_TIMEOUT)
    wait_file_idle(daemon, work_sid, sent.wall)
    row = current(daemon, work_sid)
    assert row["account"] == "work" and row["snippet"] == PLAIN_ANSWER
    assert row["transcript_path"].startswith(str(claude_home.config_dir))
    assert current(daemon, personal_sid)["state"] == "review"

    # The events of each came from its own dir: every hook of the session named its account.
    for sid, label in ((work_sid, "work"), (personal_sid, "personal")):
        events = daemon.api("GET", f"/api/sessions/{sid}/events")["events"]
        hooked = [e for e in events if e.get("source") == "hook"]
        assert hooked and {e.get("account") for e in hooked} == {label}

    # `status` names each row's account.
    out = daemon.cli("status", check=True).stdout
    assert out.splitlines()[0].split()[:4] == ["STATE", "NAME", "AGENT", "ACCOUNT"]
    cells = {line.split()[-1]: line.split() for line in out.splitlines()[1:]}
    assert cells[work_sid[:8]][3] == "work" and cells[personal_sid[:8]][3] == "personal"
