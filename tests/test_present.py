"""The one view of a session (purplemux/core/present.py) and the surfaces that render it."""

from __future__ import annotations

import dataclasses
import time

import pytest

from purplemux.cli import render_table
from purplemux.cli.tmux_status import badge, count
from purplemux.core import present as pr
from purplemux.core.model import Session, State, TmuxLocation
from purplemux.core.present import LOOKS, present, session_json
from purplemux.core.prompts import Option, Prompt
from purplemux.notify.message import push_payload
from purplemux.server.page import group_sessions, render_dashboard


def test_every_state_has_one_look_with_distinct_words_glyphs_and_order() -> None:
    assert set(LOOKS) == set(State)
    for field in ("label", "glyph", "order"):
        assert len({getattr(look, field) for look in LOOKS.values()}) == len(State)
    assert [s for s in State if LOOKS[s].attention] == [State.NEEDS_INPUT, State.REVIEW]
    assert [s for s in State if pr.DISMISS in LOOKS[s].actions] == [State.REVIEW]


ALL = slice(None)
SAID: list[tuple[dict[str, object], int | slice, object]] = [
    (
        {"state": State.NEEDS_INPUT, "waiting_for": "Bash: ls"},
        ALL,
        ("waiting", "Waiting for", "Bash: ls", "Waiting for: Bash: ls"),
    ),
    ({"state": State.NEEDS_INPUT}, 3, "Waiting for your input"),
    (
        {"state": State.BUSY, "current_tool": "Read"},
        ALL,
        ("tool", "Running", "Read", "Running: Read"),
    ),
    ({"state": State.BUSY}, 2, "Working…"),
    ({"state": State.BUSY, "compacting": True}, 2, "Compacting the conversation…"),
    ({"state": State.REVIEW}, 2, "Finished; ready for review."),
    ({"state": State.REVIEW, "snippet": "Done."}, 2, "Done."),
    (
        {"state": State.REVIEW, "snippet": "boom", "error": "boom"},
        ALL,
        ("", "", "", "Failed: boom"),
    ),
    ({"state": State.IDLE}, ALL, ("", "", "", "")),
]


@pytest.mark.parametrize(("fields", "part", "expected"), SAID)
def test_what_a_row_says_for_each_state(
    fields: dict[str, object], part: int | slice, expected: object
) -> None:
    v = present(Session(id="s", **fields))  # type: ignore[arg-type]
    said = (v.detail_kind, v.detail_prefix, v.detail, v.reason)
    assert said[part] == expected


def test_places_and_their_order() -> None:
    loc = TmuxLocation(socket="/tmp/tmux-1/default", pane="%1", session="dev", window="2")
    sessions = [
        Session(id="a", cwd="/p", tmux=loc),
        Session(id="b", cwd="/p", tmux=dataclasses.replace(loc, pane="%10")),
        Session(id="c", cwd="/p", tmux=dataclasses.replace(loc, pane="%9", window="10")),
        Session(id="d", cwd="/q", tmux=dataclasses.replace(loc, session="api", window=None)),
        Session(id="e", cwd="/q", tmux=dataclasses.replace(loc, session=None, window=None)),
        Session(id="f", cwd="/q", tmux=TmuxLocation(pane="%3")),
        Session(id="g", cwd="/w/zeta"),
        Session(id="h"),
        Session(id="i", cwd="/w/alpha"),
    ]
    groups = group_sessions(present(s) for s in reversed(sessions))
    assert [(g.place.kind, g.place.label) for g in groups] == [
        ("tmux", "api"),
        ("tmux", "dev"),
        ("socket", "default"),
        ("socket", "tmux"),
        ("project", "alpha"),
        ("project", "no folder"),
        ("project", "zeta"),
    ]
    dev = groups[1]
    assert [w.place.label for w in dev.windows] == ["window 2", "window 10"]
    assert [[v.id for v in w.sessions] for w in dev.windows] == [["a", "b"], ["c"]]
    assert groups[1].place.noun == "tmux session" and groups[2].place.noun == "tmux server"


def test_one_label_changed_in_the_table_changes_every_surface(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    words = "ready to read"
    monkeypatch.setitem(LOOKS, State.REVIEW, dataclasses.replace(LOOKS[State.REVIEW], label=words))
    now = time.time()
    s = Session(
        id="r1", state=State.REVIEW, state_since=now - 5, cwd="/w/shop", tmux=TmuxLocation("%4")
    )
    assert present(s).label == words
    page = render_dashboard([s], now)
    assert f'data-slot="label">{words}</span>' in page  # the row's badge
    assert f'<span class="recent-state">{words}</span>' in page  # the recent list
    assert f"</span> {words}</li>" in page  # the counts
    table = render_table([session_json(s)], now, colour=False)
    assert table.splitlines()[1].startswith(words)
    assert push_payload(s)["title"] == f"Claude · shop · {words}: finished"  # a notification


def test_tmux_badge_uses_the_glyphs_and_colours_of_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(LOOKS, State.REVIEW, dataclasses.replace(LOOKS[State.REVIEW], glyph="R"))
    counts = count([{"state": "review"}, {"state": "needs-input"}])
    assert badge(counts) == "⚠1 R1"
    assert badge(counts, tmux_colours=True) == "#[fg=yellow]⚠1#[default] #[fg=magenta]R1#[default]"


def test_answer_and_jump_are_actions_of_a_live_session_in_a_pane() -> None:
    loc = TmuxLocation(socket="/tmp/tmux-1/default", pane="%4", session="dev", window="1")
    asking = Session(id="a", state=State.NEEDS_INPUT, tmux=loc)
    assert present(asking).actions == (pr.ANSWER, pr.JUMP)
    assert pr.allows(asking, pr.ANSWER) and pr.allows(asking, pr.JUMP)
    assert present(dataclasses.replace(asking, state=State.REVIEW)).actions == (
        pr.DISMISS,
        pr.JUMP,
    )
    assert present(dataclasses.replace(asking, state=State.BUSY)).actions == (pr.JUMP,)
    # Without a pane, or once ended, there is nothing to type into or jump to.
    assert present(dataclasses.replace(asking, tmux=None)).actions == ()
    assert present(dataclasses.replace(asking, ended=True)).actions == ()
    assert not pr.allows(dataclasses.replace(asking, tmux=None), pr.ANSWER)
    # A push carries the prompt (and its Yes/No actions) only when the view allows answering.
    yes_no = (Option("Yes", selected=True), Option("No"))
    prompt = Prompt("p-1", "permission", "Bash command: ls", None, yes_no, ())
    assert push_payload(asking, prompt)["actions"] == ["Yes", "No"]
    assert "prompt_id" not in push_payload(dataclasses.replace(asking, tmux=None), prompt)


def test_a_background_session_offers_answer_and_jump_without_a_pane_and_is_marked() -> None:
    from purplemux.core.model import Session, State
    from purplemux.core.present import present

    bg = Session(id="s", state=State.NEEDS_INPUT, background=True, job_id="4c5f61e3", cwd="/w/p")
    v = present(bg)
    assert (v.actions, v.background, v.job_id, v.pane) == (("answer", "jump"), True, "4c5f61e3", "")
    assert v.where == "p · bg 4c5f61e3" and v.to_json()["background"] is True
    # Ended, or a plain session outside tmux: nothing to act on.
    from dataclasses import replace

    assert present(replace(bg, ended=True)).actions == ()
    plain = present(Session(id="t", state=State.NEEDS_INPUT, cwd="/w/p"))
    assert (plain.actions, plain.background) == ((), False)
