"""The page as rendered: states, grouping, title, escaping, login, no-JavaScript, ended, layout."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from purplemux.core.model import Session, State
from purplemux.core.present import present
from tests.support import Daemon
from tests.support.browser import PROMPT_TOOL, hook, make, new_page, wait_state

pytestmark = pytest.mark.browser

STATES = ("idle", "busy", "needs-input", "review")


def row(page: Page, sid: str) -> Any:
    return page.locator(f'[data-session-id="{sid}"]')


def test_rows_carry_state_and_what_each_session_does(dashboard: Page, daemon: Daemon) -> None:
    for n, state in enumerate(STATES):
        make(daemon, f"s-{state}", state, pane=f"%{n + 1}", cwd=f"/w/{state}-project")
    for n, state in enumerate(STATES):
        r = row(dashboard, f"s-{state}")
        expect(r).to_have_attribute("data-state", state)
        expect(r).to_have_attribute("id", f"session-s-{state}")
        expect(r.locator(".badge-label")).to_have_text(state.replace("-", " "))
        expect(r.locator(".project")).to_have_text(f"{state}-project")
        expect(r.locator(".pane")).to_have_text(f"%{n + 1}")
        expect(r.locator(".since")).to_have_text(re.compile(r"^\d+s$"))
    expect(row(dashboard, "s-needs-input").locator(".detail")).to_contain_text(
        PROMPT_TOOL["command"]
    )
    expect(row(dashboard, "s-busy").locator(".detail")).to_have_text("Working…")
    expect(row(dashboard, "s-review").locator(".detail")).to_contain_text("All tests pass")
    expect(dashboard.locator('[data-action="dismiss"]')).to_have_count(1)
    expect(row(dashboard, "s-review").locator('[data-action="dismiss"]')).to_have_count(1)
    # The same page rendered by the server shows the same rows.
    dashboard.reload()
    for state in STATES:
        expect(row(dashboard, f"s-{state}")).to_have_attribute("data-state", state)
    expect(dashboard.locator("[data-session-id]")).to_have_count(len(STATES))


def test_five_badges_differ_in_shape_or_motion_and_words(dashboard: Page) -> None:
    views = [
        present(Session(id=f"x-{state}", state=state, state_since=1.0)).to_json() for state in State
    ]
    badges = dashboard.evaluate(
        """async (views) => {
          const view = await import("/static/view.js");
          const out = {};
          for (const v of views) {
            const row = document.getElementById("row-template").content
              .querySelector(".row").cloneNode(true);
            view.fillRow(row, v, Date.now() / 1000);
            document.querySelector("[data-slot=groups]").append(row);
            const icon = getComputedStyle(row.querySelector(".badge-icon"));
            out[v.state] = {label: row.querySelector(".badge-label").textContent,
              look: [icon.animationName, icon.borderRadius, icon.borderStyle,
                     icon.backgroundColor, icon.width].join("|")};
            row.remove();
          }
          return out;
        }""",
        views,
    )
    assert len({b["label"] for b in badges.values()}) == 5
    assert len({b["look"] for b in badges.values()}) == 5
    assert badges["busy"]["look"].startswith("spin")
    assert badges["idle"]["look"].startswith("none")
    assert badges["unknown"]["look"].startswith("none")


def test_title_and_favicon_count_what_needs_attention(dashboard: Page, daemon: Daemon) -> None:
    favicon = dashboard.locator("link[data-favicon]")
    expect(dashboard).to_have_title("purplemux")
    make(daemon, "t-busy", "busy", pane="%1")
    expect(favicon).to_have_attribute("href", "/static/icon-busy.svg")
    make(daemon, "t-review", "review", pane="%2")
    expect(dashboard).to_have_title("(1) purplemux")
    expect(favicon).to_have_attribute("href", "/static/icon-review.svg")
    make(daemon, "t-ask", "needs-input", pane="%3")
    expect(dashboard).to_have_title("(2) purplemux")
    expect(favicon).to_have_attribute("href", "/static/icon-needs-input.svg")
    recent = dashboard.locator(".recent-item")
    expect(recent).to_have_count(2)
    expect(recent.first).to_have_attribute("data-state", "needs-input")  # newest first
    expect(recent.first.locator(".recent-at")).to_have_text(re.compile(r"^\d\d:\d\d:\d\d$"))
    hook(
        daemon,
        "t-ask",
        "PostToolUse",
        pane="%3",
        tool_name="Bash",
        tool_input=PROMPT_TOOL,
        tool_use_id="tu-t-ask",
    )
    expect(dashboard).to_have_title("(1) purplemux")
    # One attention set: the answered prompt leaves the title, the favicon and the recent list.
    expect(recent).to_have_count(1)
    expect(recent.first).to_have_attribute("data-state", "review")
    expect(favicon).to_have_attribute("href", "/static/icon-review.svg")
    dashboard.reload()
    expect(dashboard).to_have_title("(1) purplemux")
    expect(favicon).to_have_attribute("href", "/static/icon-review.svg")
    # The server lists what waits now; the script's snapshot must not add it a second time.
    expect(dashboard.locator("#connection")).to_have_attribute("data-connection", "live")
    expect(recent).to_have_count(1)
    expect(recent.first).to_have_attribute("data-state", "review")


def test_session_text_is_shown_as_text_never_markup(dashboard: Page, daemon: Daemon) -> None:
    evil = "<img src=x onerror=window.__pwned=1>"
    cwd = f"/w/{evil}"
    hook(daemon, "xss", "SessionStart", cwd=cwd, source="startup")
    hook(daemon, "xss", "UserPromptSubmit", cwd=cwd, prompt=evil)
    hook(daemon, "xss", "Stop", cwd=cwd, last_assistant_message=f"answer {evil} <b>bold</b>")
    wait_state(daemon, "xss", "review")
    for rendered_by in ("script", "server"):
        r = row(dashboard, "xss")
        expect(r.locator(".project"), rendered_by).to_have_text(evil)
        expect(r.locator(".detail")).to_contain_text(f"answer {evil} <b>bold</b>")
        expect(dashboard.locator(".recent-item .recent-project")).to_contain_text(evil)
        assert dashboard.locator(".layout img, .layout b").count() == 0
        assert dashboard.evaluate("window.__pwned") is None
        dashboard.reload()
        expect(dashboard.locator("#connection")).to_have_attribute("data-connection", "live")


def test_without_the_cookie_no_session_data(browser: Browser, daemon: Daemon) -> None:
    make(daemon, "secret-session", "review", cwd="/w/secret-project")
    with new_page(browser) as page:
        response = page.goto(daemon.url + "/")
        assert response is not None and response.status == 401
        expect(page.locator("body")).to_contain_text("Open the link from purplemux open")
        expect(page.locator("[data-session-id]")).to_have_count(0)
        html = page.content()
        assert "secret" not in html
        response = page.goto(daemon.url + "/?token=wrong")
        assert response is not None and response.status == 401
        expect(page.locator("[data-session-id]")).to_have_count(0)


def test_server_renders_the_state_without_javascript(browser: Browser, daemon: Daemon) -> None:
    make(daemon, "nojs-busy", "busy", pane="%1")
    make(daemon, "nojs-review", "review", pane="%2")
    with new_page(browser, java_script_enabled=False) as page:
        page.goto(f"{daemon.url}/?token={daemon.token}")
        page.wait_for_url(daemon.url + "/")  # the login page's <noscript> refresh
        page.goto(f"{daemon.url}/#session-nojs-review")
        expect(row(page, "nojs-busy")).to_have_attribute("data-state", "busy")
        expect(row(page, "nojs-review")).to_have_attribute("data-state", "review")
        expect(row(page, "nojs-review").locator('[data-action="dismiss"]')).to_be_visible()
        expect(page).to_have_title("(1) purplemux")
        expect(page.locator("link[data-favicon]")).to_have_attribute(
            "href", "/static/icon-review.svg"
        )
        assert row(page, "nojs-review").evaluate("el => el.matches(':target')")
        expect(page.locator(".recent-item")).to_have_count(1)


def test_ended_sessions_move_to_the_ended_section(dashboard: Page, daemon: Daemon) -> None:
    make(daemon, "keeps", "busy", pane="%1")
    make(daemon, "goes", "idle", pane="%2")
    ended = dashboard.locator("details.ended")
    expect(ended).to_be_hidden()
    hook(daemon, "goes", "SessionEnd", pane="%2", reason="prompt_input_exit")
    wait_state(daemon, "goes", "idle", ended=True)
    for rendered_by in ("script", "server"):
        expect(ended.locator('[data-session-id="goes"]'), rendered_by).to_have_count(1)
        expect(dashboard.locator('.groups [data-session-id="goes"]')).to_have_count(0)
        expect(dashboard.locator('.groups [data-session-id="keeps"]')).to_have_count(1)
        expect(ended.locator(".ended-count")).to_have_text("1")
        expect(ended.locator('[data-session-id="goes"]')).to_be_hidden()  # collapsed
        ended.locator("summary").click()
        expect(ended.locator('[data-session-id="goes"]')).to_be_visible()
        dashboard.reload()


def test_rows_filled_by_the_script_match_the_server(dashboard: Page, daemon: Daemon) -> None:
    # Both fill the same slots from the same view (core/present.py); this checks the slots.
    for n, state in enumerate(STATES):
        make(daemon, f"p-{state}", state, pane=f"%{n}", cwd=f"/w/{state}")
    hook(daemon, "p-review", "SessionEnd", pane="%3")
    wait_state(daemon, "p-review", "idle", ended=True)
    mismatches = dashboard.evaluate(
        """async () => {
          const view = await import("/static/view.js");
          const get = (url) => fetch(url, {credentials: "same-origin"});
          const {sessions} = await (await get("/api/sessions?all=1")).json();
          const html = await (await get("/")).text();
          const server = new DOMParser().parseFromString(html, "text/html");
          const template = document.getElementById("row-template");
          const shape = (row) => [...row.querySelectorAll("*")].map((el) => [el.tagName,
            el.className, el.dataset.slot || "", el.hidden, el.dataset.kind || "",
            el.dataset.slot === "since" ? "" : el.childElementCount ? "" : el.textContent,
            el.getAttribute("title") && el.dataset.slot !== "since" ? el.title : ""].join("/"))
            .concat([row.id, row.dataset.state, row.dataset.actions,
              row.hasAttribute("data-ended")]);
          const out = [];
          for (const s of sessions) {
            const mine = view.fillRow(template.content.querySelector(".row").cloneNode(true),
              s.view, Date.now() / 1000);
            const a = JSON.stringify(shape(mine));
            const b = JSON.stringify(shape(server.getElementById("session-" + s.id)));
            if (a !== b) out.push({id: s.id, script: a, server: b});
          }
          return out;
        }"""
    )
    assert mismatches == []
    # The view's actions decide the buttons: Jump on live rows in a pane, not on an ended one.
    expect(dashboard.locator("#session-p-busy [data-action='jump']")).to_be_visible()
    expect(dashboard.locator("#session-p-review [data-action='jump']")).to_be_hidden()
    asking = dashboard.locator("#session-p-needs-input")
    expect(asking).to_have_attribute("data-actions", "answer jump")


def test_fits_a_phone_and_follows_the_colour_scheme(dashboard: Page, daemon: Daemon) -> None:
    make(daemon, "phone", "needs-input", pane="%1", cwd="/w/" + "a-very-long-project-name" * 3)
    dashboard.set_viewport_size({"width": 375, "height": 740})
    expect(row(dashboard, "phone")).to_be_visible()
    overflow = dashboard.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0
    box = row(dashboard, "phone").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375
    backgrounds = set()
    for scheme in ("light", "dark"):
        dashboard.emulate_media(color_scheme=scheme)
        backgrounds.add(dashboard.evaluate("getComputedStyle(document.body).backgroundColor"))
    assert len(backgrounds) == 2
