"""The row of a session at its usage limit in a real browser: the "Resume at reset" button arms
it (the row then says when it resumes, and offers cancelling), Cancel takes it back."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support import Daemon, wait_for
from tests.support.input_pane import input_pane
from tests.support.walls import at_wall, walled

pytestmark = pytest.mark.browser


def resume_events(d: Daemon, sid: str) -> list[dict[str, Any]]:
    events = d.api("GET", f"/api/sessions/{sid}/events")["events"]
    return [e for e in events if e["kind"] == "resume"]


def test_the_button_arms_resume_at_reset_and_cancel_takes_it_back(
    dashboard: Page, daemon: Daemon, tmp_path: Path
) -> None:
    future = time.time() + 3600
    with input_pane(tmp_path / "pane") as pane:
        at_wall(daemon, "s1", pane, future, tmp_path)
        walled(daemon, "s1", future)
        row = dashboard.locator('[data-session-id="s1"]')
        arm = row.locator('[data-action="resume"]')
        cancel = row.locator('[data-action="cancel-resume"]')
        note = row.locator('[data-slot="resume"]')
        expect(arm).to_be_visible()
        expect(cancel).to_be_hidden()
        expect(note).to_be_hidden()

        arm.click()
        shown = dashboard.evaluate(
            """async (ts) => (await import("/static/view.js")).wallClock(ts, Date.now() / 1000)""",
            int(future),
        )
        expect(note).to_have_text(f"resumes after {shown}")
        expect(arm).to_be_hidden()
        expect(cancel).to_be_visible()
        [armed] = resume_events(daemon, "s1")
        assert (armed["state"], armed["by"]) == ("armed", "page")

        # The server-rendered page says the same.
        dashboard.reload()
        expect(note).to_contain_text("resumes after")
        expect(cancel).to_be_visible()

        cancel.click()
        expect(note).to_be_hidden()
        expect(arm).to_be_visible()
        wait_for(
            lambda: [e["state"] for e in resume_events(daemon, "s1")] == ["armed", "cancelled"]
        )
        assert pane.lines_sent() == []
