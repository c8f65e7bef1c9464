"""What a push says."""

from __future__ import annotations

from purplemux.model import Session, State, TmuxLocation
from purplemux.notify.message import BODY_LIMIT, push_payload, shorten, urgency_for


def test_needs_input_names_project_pane_and_what_it_waits_for() -> None:
    s = Session(
        id="abc",
        state=State.NEEDS_INPUT,
        cwd="/home/u/shop/",
        tmux=TmuxLocation(pane="%7"),
        waiting_for="Bash: rm -rf build\n  && make",
    )
    assert push_payload(s) == {
        "title": "needs input: shop · %7",
        "body": "Waiting for: Bash: rm -rf build && make",
        "tag": "purplemux-abc",
        "session_id": "abc",
        "state": "needs-input",
        "url": "/#session-abc",
    }
    assert urgency_for(s.state) == "high"


def test_needs_input_without_details() -> None:
    s = Session(id="abc", state=State.NEEDS_INPUT, cwd="/w/api")
    assert push_payload(s)["body"] == "Waiting for your input"
    assert push_payload(s)["title"] == "needs input: api"


def test_review_shows_the_answer_or_the_error() -> None:
    s = Session(id="abc", state=State.REVIEW, cwd="/w/api", snippet="Done. I renamed the module.")
    assert push_payload(s)["body"] == "Done. I renamed the module."
    failed = Session(id="abc", state=State.REVIEW, snippet="partial", error="rate_limit")
    assert push_payload(failed)["body"] == "Failed: rate_limit"
    assert push_payload(Session(id="abc", state=State.REVIEW))["body"]
    assert urgency_for(State.REVIEW) == "normal"


def test_title_without_a_cwd_uses_the_session_id() -> None:
    assert push_payload(Session(id="0123456789", state=State.REVIEW))["title"] == "review: 01234567"


def test_long_bodies_are_cut_at_a_word() -> None:
    s = Session(id="a", state=State.REVIEW, snippet="word " * 100)
    body = push_payload(s)["body"]
    assert len(body) <= BODY_LIMIT
    assert body.endswith("word…")
    assert shorten("x" * 500).endswith("…") and len(shorten("x" * 500)) == BODY_LIMIT
    assert shorten("short") == "short"
