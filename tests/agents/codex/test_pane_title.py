"""Codex pane titles, from the captured 0.171.0 timelines: what each says, and what it claims."""

from __future__ import annotations

import json

import pytest

from purplemux.agents.codex.pane_title import Layout, PaneTitle, parse_title
from purplemux.core.model import State
from tests.agents.codex.samples import SAMPLES, rollout, screen_titles, thread_id

SCENARIOS = sorted(p.parent.name for p in SAMPLES.glob("*/timeline.jsonl"))
M_ID = "01a23345-ddc7-71d1-9e4f-4514d"
M2_ID = "01a23346-259b-7293-9fd5-4a80a"
RUN_ID = Layout(("spinner", "run-state", "thread-id", "project-name"))
"""m_title's `[tui] terminal_title`."""
ID_ONLY = Layout(("spinner", "thread-id"))
"""m2_title_id's."""
LAYOUTS = {"m_title": RUN_ID, "m2_title_id": ID_ONLY}


def layout(title: str) -> Layout:
    """The layout a captured title was drawn with (the two custom-title scenarios' own)."""
    if title.startswith(M2_ID):
        return ID_ONLY
    if any(w in title for w in ("Ready", "Working", M_ID)):
        return RUN_ID
    return Layout()


def known_prompts(scenario: str) -> set[str]:
    """The prompts typed in a scenario (each thread's title is one of them)."""
    path = SAMPLES / scenario / "history.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return {json.loads(line)["text"] for line in lines}


def resolved(title: PaneTitle, prompts: set[str]) -> PaneTitle:
    """The reading a linked pane reads, knowing its thread's title (one of the prompts)."""
    for prompt in sorted(prompts):
        one = title.resolve(prompt)
        if not one.readings:
            return one
    return title


# (title as captured, what it parses to with project "proj" and its layout, once its thread's
# own title is known)
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
        {
            "action_required": True,
            "thread_title": "ASK:Which colour do you want?",
            "claim": State.NEEDS_INPUT,
        },
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
    known = expected.get("thread_title") or "RUN:sleep 3 && touch approved.txt"
    parsed = parse_title(title, "proj", layout(title)).resolve(str(known))
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
            parsed = parse_title(entry["title"], "proj", LAYOUTS.get(scenario, Layout()))
            parsed = resolved(parsed, known_prompts(scenario))
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
    shown = LAYOUTS[scenario]
    prefixes = {parse_title(t, None, shown).thread_id_prefix for t in screen_titles(scenario)}
    assert prefixes - {None} == {tid[:29]}
    assert parse_title(f"Ready | {tid[:29]}... | proj", None, RUN_ID).matches(tid)
    assert not parse_title(f"Ready | {tid[:29]}... | proj", None, RUN_ID).matches("01a23340-a2c4")
    assert not parse_title("hello | proj").matches(tid)


def test_a_thread_title_with_the_separator_in_it_is_kept_whole() -> None:
    parsed = parse_title("⠸ grep a | wc -l | proj", "proj").resolve("grep a | wc -l")
    assert (parsed.thread_title, parsed.project, parsed.claim) == (
        "grep a | wc -l",
        "proj",
        State.BUSY,
    )


def test_a_run_state_word_never_seen_claims_nothing() -> None:
    parsed = parse_title("Starting | proj", "proj", RUN_ID)
    assert (parsed.run_state, parsed.claim) == ("Starting", None)


def test_a_plain_title_of_another_project_claims_nothing() -> None:
    assert parse_title("hello | proj", "other").claim is None
    assert parse_title("hello | proj").claim is None  # no project given: not sure it is Codex's


@pytest.mark.parametrize(
    "title",
    ["[ ? ] Action Required | x | proj", "⠸", "x" * 5000, " | ", "\x1b]0;evil\x07 | proj", "⣿⣿"],
)
@pytest.mark.parametrize("shown", [Layout(), RUN_ID, ID_ONLY], ids=["default", "run-id", "id"])
def test_unknown_shapes_claim_no_state_they_do_not_show(title: str, shown: Layout) -> None:
    parsed = parse_title(title, "proj", shown)
    assert isinstance(parsed, PaneTitle)
    assert not parsed.action_required
    assert parsed.claim in (None, State.IDLE)
    assert parsed.claim is None or parsed.project == "proj"


B_ID = "01a2333b-f7f0-74e3-863a-94b9e1111111"


@pytest.mark.parametrize("shown", [B_ID, f"{B_ID[:29]}..."])
@pytest.mark.parametrize("layout_", [Layout(), Layout(("thread-title", "project-name"))])
def test_an_id_in_the_users_first_prompt_is_never_read_as_the_thread_id(
    shown: str, layout_: Layout
) -> None:
    """Security review, critical: the first prompt `deploy | <another thread's id>` is drawn
    verbatim; with no thread-id item in the layout no part of the title is an id."""
    for title in (f"deploy | {shown} | proj", f"⠸ deploy | {shown} | proj", f"{shown} | proj"):
        parsed = parse_title(title, "proj", layout_)
        assert parsed.thread_id_prefix is None
        assert not any(r.thread_id_prefix for r in parsed.readings)


@pytest.mark.parametrize(
    ("prompt", "busy", "waiting"),
    [
        ("[ ! ] Action Required", False, False),
        ("[ . ] Action Required | deploy", False, False),
        ("⠸ deploy", False, False),
    ],
)
def test_a_first_prompt_shaped_like_the_titles_structure_claims_only_what_it_is(
    prompt: str, busy: bool, waiting: bool
) -> None:
    """Security review, low: a first prompt shaped like "Action Required" or a spinner is a
    plain thread title once the thread's own title is known, and claims nothing before."""
    idle = parse_title(f"{prompt} | proj", "proj")
    assert idle.claim is None  # two readings, the thread's title not known yet
    assert idle.resolve(prompt).claim is State.IDLE
    assert idle.resolve(prompt).thread_title == prompt
    working = parse_title(f"⠏ {prompt} | proj", "proj").resolve(prompt)
    assert (working.claim, working.thread_title) == (State.BUSY, prompt)
    asking = parse_title(f"[ . ] Action Required | {prompt} | proj", "proj").resolve(prompt)
    assert (asking.claim, asking.thread_title) == (State.NEEDS_INPUT, prompt)


def test_a_title_that_fits_no_reading_of_the_known_thread_claims_nothing() -> None:
    assert parse_title("⠸ deploy | proj", "proj").resolve("something else").claim is None


def test_an_unknown_layout_reads_nothing() -> None:
    from purplemux.agents.codex.layout import UNKNOWN

    for title in ("hello | proj", f"Ready | {B_ID[:29]}... | proj", "⠸ proj"):
        parsed = parse_title(title, "proj", UNKNOWN)
        assert (parsed.claim, parsed.thread_id_prefix, parsed.project) == (None, None, None)
