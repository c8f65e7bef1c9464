"""/history as the server renders it (TestClient): lanes, marks, CSP, the headline."""

from __future__ import annotations

import re
import time
from datetime import date, datetime

import pytest
from fastapi.testclient import TestClient

from purplemux.core.history import Replay, Span, Summary, Totals
from purplemux.core.model import Session, State
from purplemux.core.present import LOOKS
from purplemux.io.paths import web_dir
from purplemux.server.history import build_chart, headline, look
from tests.support import post_hook

STATES = ("idle", "busy", "needs-input", "review", "unknown")


def test_the_page_draws_a_lane_per_session_with_a_mark_per_span(client: TestClient) -> None:
    now = time.time()
    base = {"session_id": "p1", "cwd": "/w/<b>bold</b>"}
    post_hook(client, {**base, "hook_event_name": "SessionStart"}, 1, now - 50)
    post_hook(client, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "x"}, 2, now - 40)
    post_hook(client, {**base, "hook_event_name": "Stop"}, 3, now - 20)
    r = client.get("/history")
    assert r.status_code == 200
    assert "script-src 'self'" in r.headers["content-security-policy"]
    html = r.text
    assert 'data-session-id="p1"' in html
    marks = re.findall(
        r'<rect class="mark" data-state="([a-z-]+)" data-colour="[a-z]+" data-label="[a-z ]+"'
        r" data-from",
        html,
    )
    assert marks == ["idle", "busy", "review"] or marks[-3:] == ["idle", "busy", "review"]
    assert "&lt;b&gt;bold&lt;/b&gt;" in html and "<b>bold" not in html
    assert " style=" not in html and "<style" not in html and "<script>" not in html
    assert '<script type="module" src="/static/history.js">' in html
    assert "Claude waited on you 20s today — no prompts" in html
    assert client.get("/").text.count('href="/history"') == 1


def test_the_page_needs_the_login_and_a_valid_day(client: TestClient) -> None:
    del client.headers["Authorization"]
    r = client.get("/history")
    assert r.status_code == 401 and "purplemux open" in r.text
    client.headers["Authorization"] = "Bearer nope"
    assert client.get("/api/summary").status_code == 401
    assert client.get("/api/sessions/x/timeline").status_code == 401


def test_a_past_day_has_its_own_axis_and_no_live_growth(client: TestClient) -> None:
    r = client.get("/history?day=2020-02-29")
    assert r.status_code == 200
    assert "No session lived on this day" in r.text
    assert "data-today" not in r.text
    assert "Sat 2020-02-29" in r.text
    assert 'href="/history?day=2020-03-01"' in r.text


def test_headline_words() -> None:
    s = Summary(0, 1, Totals(), {})
    assert headline(s, "today") == "Claude waited on you 0s today — no prompts"
    s.total.seconds["needs-input"] = 3000
    s.total.seconds["review"] = 1320
    s.total.prompts = 14
    s.total.answers = [30.0, 38.0, 50.0]
    assert headline(s, "today") == (
        "Claude waited on you 1h 12m today — 14 prompts, median answer 38s"
    )
    s.total.prompts, s.total.answers = 1, []
    assert headline(s, "yesterday") == "Claude waited on you 1h 12m yesterday — 1 prompt"


def test_every_state_looks_like_the_dashboard() -> None:
    style = (web_dir() / "static" / "style.css").read_text()
    history_css = (web_dir() / "static" / "history.css").read_text()
    for state in STATES:
        lk = look(state)
        assert lk.label == LOOKS[State(state)].label  # the one state table's words
        assert lk.token == LOOKS[State(state)].colour
        assert f"{lk.colour}:" in style, state  # a variable style.css defines (light and dark)
        assert f'.mark[data-colour="{lk.token}"]' in history_css
    assert look("needs-input").label == "needs input"


def test_chart_clips_to_the_day_and_keeps_short_waits_visible() -> None:
    day = date(2024, 5, 1)
    lo = datetime(2024, 5, 1).timestamp()
    spans = (
        Span(State.IDLE, lo - 7200, lo + 9 * 3600),  # idle since yesterday
        Span(State.BUSY, lo + 9 * 3600, lo + 9 * 3600 + 600),
        Span(State.NEEDS_INPUT, lo + 9 * 3600 + 600, lo + 9 * 3600 + 605),
        Span(State.BUSY, lo + 9 * 3600 + 605, lo + 11 * 3600),
    )
    r = Replay(Session(id="c1"), spans)
    chart = build_chart({"c1": r}, {"c1": Session(id="c1", cwd="/w/p")}, day, now=lo + 3 * 86400)
    assert (chart.start, chart.end) == (lo, lo + 11 * 3600)
    assert not chart.today
    lane = chart.lanes["c1"]
    assert lane.marks[0].x == 0 and lane.marks[0].width == 9 * 3600
    wait = next(m for m in lane.marks if m.state == "needs-input")
    assert wait.width == pytest.approx(11 * 3600 * 0.004)  # 5 s would be invisible
    assert lane.marks[-1] is wait  # drawn on top
    assert "needs input · 5s" in wait.title
    assert [t.text for t in chart.ticks][:2] == ["00:00", "02:00"]
    assert chart.headline.startswith("Claude waited on you 5s on Wed 2024-05-01 — 1 prompt")
