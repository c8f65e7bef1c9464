"""The /history page in Chromium: a lane per session, a mark per state, live growth, phone, dark."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support import Daemon
from tests.support.browser import PROMPT_TOOL, hook, make, new_page, sign_in, wait_state

pytestmark = pytest.mark.browser

TOOL = {"tool_name": "Bash", "tool_input": PROMPT_TOOL}


def lived_a_day(daemon: Daemon, sid: str = "h-1") -> None:
    """idle → busy → needs-input → busy → review, through the real hook script."""
    make(daemon, sid, "needs-input", pane="%1", cwd="/w/history-proj")
    time.sleep(0.3)
    hook(daemon, sid, "PostToolUse", "%1", "/w/history-proj", tool_use_id=f"tu-{sid}", **TOOL)
    wait_state(daemon, sid, "busy")
    hook(daemon, sid, "Stop", "%1", "/w/history-proj", last_assistant_message="Deployed.")
    wait_state(daemon, sid, "review")


def open_history(page: Page, daemon: Daemon) -> Page:
    sign_in(page, daemon)
    page.locator('a[href="/history"]').click()
    expect(page).to_have_url(daemon.url + "/history")
    return page


def test_the_lane_shows_a_mark_per_state(page: Page, daemon: Daemon, errors: list[str]) -> None:
    lived_a_day(daemon)
    open_history(page, daemon)
    lane = page.locator('.lane[data-session-id="h-1"]')
    expect(lane).to_be_visible()
    expect(lane.locator(".project")).to_have_text("history-proj")
    expect(lane.locator(".pane")).to_have_text("%1")
    marks = lane.locator(".mark")
    states = [marks.nth(i).get_attribute("data-state") for i in range(marks.count())]
    assert sorted(set(states)) == ["busy", "idle", "needs-input", "review"], states
    assert states.count("busy") == 2
    for state in ("idle", "busy", "needs-input", "review"):
        mark = lane.locator(f'.mark[data-state="{state}"]').first
        assert float(mark.get_attribute("width") or 0) > 0
        label = state.replace("-", " ")
        expect(mark.locator("title")).to_contain_text(label + " · ")
    # Colours are the dashboard's state tokens.
    colours = page.evaluate(
        """() => {
          const root = getComputedStyle(document.documentElement);
          const out = {};
          for (const [state, token] of [["busy", "--busy"], ["needs-input", "--needs"],
                                        ["review", "--review"]]) {
            const probe = document.createElement("span");
            probe.style.color = root.getPropertyValue(token);
            document.body.append(probe);
            const want = getComputedStyle(probe).color;
            probe.remove();
            const mark = document.querySelector(`.lane .mark[data-state="${state}"]`);
            out[state] = [getComputedStyle(mark).fill, want];
          }
          return out;
        }"""
    )
    for state, (fill, want) in colours.items():
        assert fill == want, state
    expect(page.locator(".headline")).to_have_text(
        re.compile(r"^Claude waited on you \d+s today — 1 prompt, median answer \d+s$")
    )
    assert errors == []


def test_open_spans_grow_and_a_change_adds_a_mark_without_a_reload(
    page: Page, daemon: Daemon, errors: list[str]
) -> None:
    lived_a_day(daemon)
    open_history(page, daemon)
    page.evaluate("window.__sameDocument = true")
    lane = page.locator('.lane[data-session-id="h-1"]')
    open_mark = lane.locator(".mark[data-open]")
    expect(open_mark).to_have_count(1)
    expect(open_mark).to_have_attribute("data-state", "review")
    first = float(open_mark.get_attribute("width") or 0)
    page.wait_for_function(
        """([sid, w]) => Number(document.querySelector(
             `.lane[data-session-id="${sid}"] .mark[data-open]`).getAttribute("width")) > w""",
        arg=["h-1", first],
    )
    daemon.api("POST", "/api/sessions/h-1/dismiss")
    expect(open_mark).to_have_attribute("data-state", "idle")
    expect(lane.locator('.mark[data-state="review"]:not([data-open])')).to_have_count(1)
    hook(daemon, "h-1", "UserPromptSubmit", "%1", "/w/history-proj", prompt="again")
    expect(open_mark).to_have_attribute("data-state", "busy")
    expect(lane.locator('.mark[data-state="busy"]')).to_have_count(3)
    assert page.evaluate("window.__sameDocument") is True
    assert errors == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_phone_sees_the_whole_chart_in_both_schemes(
    browser: Browser, daemon: Daemon, scheme: str
) -> None:
    lived_a_day(daemon)
    with new_page(browser, viewport={"width": 390, "height": 844}, color_scheme=scheme) as page:
        sign_in(page, daemon)  # (its page moves itself on to "/": wait, or it races the goto)
        page.goto(daemon.url + "/history")
        lane = page.locator('.lane[data-session-id="h-1"]')
        expect(lane).to_be_visible()
        overflow = page.evaluate(
            "document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth"
        )
        assert overflow <= 0
        bar = lane.locator(".lane-bar").bounding_box()
        assert bar is not None and bar["width"] > 300  # the label sits above it on a phone
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert (background == "rgb(17, 16, 23)") == (scheme == "dark")


def test_history_needs_the_login(page: Page, daemon: Daemon) -> None:
    response = page.goto(daemon.url + "/history")
    assert response is not None and response.status == 401
    expect(page.locator(".login-card")).to_be_visible()
