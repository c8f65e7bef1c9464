"""The account chip: with two Claude config dirs watched, each row names its account next to
its agent chip, live and on the server's first render; an agent with one account shows none."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support import Daemon
from tests.support.browser import hook

pytestmark = pytest.mark.browser


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    """A daemon watching a work and a personal Claude login (the dashboard fixture uses it)."""
    dirs = f"work={tmp_path / 'w' / '.claude'},{tmp_path / 'me' / '.claude'}"
    d = Daemon(
        home=tmp_path / "home",
        claude_dir=tmp_path / "w" / ".claude",
        env_extra={"PURPLEMUX_CLAUDE_DIRS": dirs},
    ).start()
    yield d
    d.stop()


def row(page: Page, sid: str) -> Any:
    return page.locator(f'[data-session-id="{sid}"]')


def test_each_row_names_its_account_next_to_its_agent(
    dashboard: Page, daemon: Daemon, tmp_path: Path
) -> None:
    for sid, folder in (("at-work", tmp_path / "w"), ("at-home", tmp_path / "me")):
        transcript = folder / ".claude" / "projects" / "-w-proj" / f"{sid}.jsonl"
        hook(daemon, sid, "UserPromptSubmit", prompt="go", transcript_path=str(transcript))
    hook(daemon, "codex-one", "UserPromptSubmit", agent="codex", prompt="go")
    for _ in range(2):  # live, then as the server renders the page
        work = row(dashboard, "at-work").locator('[data-slot="account"]')
        expect(work).to_have_text("work")
        expect(work).to_be_visible()
        expect(work).to_have_attribute("title", "account: work")
        expect(row(dashboard, "at-home").locator('[data-slot="account"]')).to_have_text("claude")
        expect(row(dashboard, "at-home").locator('[data-slot="agent"]')).to_have_text("Claude")
        # The chip sits right after the agent chip.
        after = row(dashboard, "at-home").locator('[data-slot="agent"] + [data-slot="account"]')
        expect(after).to_have_count(1)
        # One Codex home: every Codex row would say the same, so none says it.
        expect(row(dashboard, "codex-one").locator('[data-slot="agent"]')).to_have_text("Codex")
        expect(row(dashboard, "codex-one").locator('[data-slot="account"]')).to_be_hidden()
        dashboard.reload()
