"""Codex pane titles, from the captured 0.171.0 timelines: what each says, and what it claims."""

from __future__ import annotations

import json

import pytest

from purplemux.agents.codex.pane_title import PaneTitle, parse_title
from purplemux.model import State
from tests.agents.codex.samples import SAMPLES, rollout, screen_titles, thread_id

SCENARIOS = sorted(p.parent.name for p in SAMPLES.glob("*/timeline.jsonl"))
M_ID = "01a23345-ddc7-71d1-9e4f-4514d"
M2_ID = "01a23346-259b-7293-9fd5-4a80a"

# (title as captured, what it parses to with project "proj")
TABLE: list[tuple[str, dict[str, object]]] = [
    ("", {"empty": True, "claim": None}),
    ("host", {"project": "host", "project_matched": False, "claim": None}),  # tmux's default
    ("proj", {"project": "proj", "project_matched": True, "claim": State.IDLE}),
    ("⠦ proj", {"spinner": True, "project": "proj", "claim": State.BUSY}),
    ("hello | proj", {"thread_title": "hello", "project": "proj", "claim": State.IDLE}),
    ("⠧ hello | proj", {"spinner": True, "thread_title": "hello", "claim": State.BUSY}),
    (
        "[ ! ] Action Required | RUN:sleep 3 && touch approved.txt | proj",
        {
            "action_required": True,
            "thread_title": "RUN:sleep 3 && touch approved.txt",
            "claim": State.NEEDS_INPUT,
        },
    ),
    (
        "[ . ] Action Required | ASK:Which colour do you want? | proj",
        {"action_required": True, "claim": State.NEEDS_INPUT},
    ),
    ("Ready | proj", {"run_state": "Ready", "project": "proj", "claim": State.IDLE}),
    (
        f"Ready | {M_ID}... | proj",
        {"run_state": "Ready", "thread_id_prefix": M_ID, "thread_title": None, "claim": State.IDLE},
    ),
    (
        f"⠴ Working | {M_ID}... | proj",
        {"spinner": True, "run_state": "Working", "thread_id_prefix": M_ID, "claim": State.BUSY},
    ),
    (
        f"[ . ] Action Required | {M_ID}... | proj",
        {"action_required": True, "run_state": None, "claim": State.NEEDS_INPUT},
    ),
    # thread-id alone: the title never shows a state.
    (f"{M2_ID}...", {"thread_id_prefix": M2_ID, "project": None, "claim": None}),
]


@pytest.mark.parametrize(("title", "expected"), TABLE, ids=[t or "empty" for t, _ in TABLE])
def test_captured_titles_parse(title: str, expected: dict[str, object]) -> None:
    parsed = parse_title(title, "proj")
    assert parsed.raw == title
    for name, value in expected.items():
        assert getattr(parsed, name) == value, name


def test_the_table_holds_only_titles_codex_drew() -> None:
    seen = {t for s in SCENARIOS for t in screen_titles(s)}
    assert {t for t, _ in TABLE} <= seen


def test_every_captured_title_claims_what_the_screen_showed() -> None:
    """A dialog on screen: needs input (unless only thread-id is in the title); a spinner:
    busy; the composer: idle or nothing claimed (tmux's own title, before Codex drew one)."""
    checked = 0
    for scenario in SCENARIOS:
        for line in (SAMPLES / scenario / "timeline.jsonl").read_text().splitlines():
            entry = json.loads(line)
            if entry.get("src") != "screen":
                continue
            parsed = parse_title(entry["title"], "proj")
            checked += 1
            if entry["state"] == "dialog":
                expected = None if scenario == "m2_title_id" else State.NEEDS_INPUT
                assert parsed.claim is expected, entry
            if parsed.spinner:
                assert parsed.claim is State.BUSY
            if entry["state"] == "composer":
                assert parsed.claim in (State.IDLE, None), entry
                assert parsed.claim is State.IDLE or entry["title"] in ("host", f"{M2_ID}...")
    assert checked > 250


@pytest.mark.parametrize("scenario", ["m_title", "m2_title_id"])
def test_the_shown_id_prefix_names_the_thread(scenario: str) -> None:
    tid = thread_id(rollout(scenario))
    prefixes = {parse_title(t).thread_id_prefix for t in screen_titles(scenario)} - {None}
    assert prefixes == {tid[:29]}
    assert parse_title(f"Ready | {tid[:29]}... | proj").matches(tid)
    assert not parse_title(f"Ready | {tid[:29]}... | proj").matches("01a23340-a2c4-7502")
    assert not parse_title("hello | proj").matches(tid)


def test_a_thread_title_with_the_separator_in_it_is_kept_whole() -> None:
    parsed = parse_title("⠸ grep a | wc -l | proj", "proj")
    assert (parsed.thread_title, parsed.project, parsed.claim) == (
        "grep a | wc -l",
        "proj",
        State.BUSY,
    )


def test_a_run_state_word_never_seen_claims_nothing() -> None:
    parsed = parse_title("Starting | proj", "proj")
    assert (parsed.run_state, parsed.claim) == ("Starting", None)


def test_a_plain_title_of_another_project_claims_nothing() -> None:
    assert parse_title("hello | proj", "other").claim is None
    assert parse_title("hello | proj").claim is None  # no project given: not sure it is Codex's


@pytest.mark.parametrize(
    "title",
    ["[ ? ] Action Required | x | proj", "⠸", "x" * 5000, " | ", "\x1b]0;evil\x07 | proj", "⣿⣿"],
)
def test_unknown_shapes_claim_no_state_they_do_not_show(title: str) -> None:
    parsed = parse_title(title, "proj")
    assert isinstance(parsed, PaneTitle)
    assert not parsed.action_required
    assert parsed.claim in (None, State.IDLE)
    assert parsed.claim is None or parsed.project == "proj"
