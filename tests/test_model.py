"""The session record: its copy with changes (evolve) is dataclasses.replace's, field for field."""

from __future__ import annotations

import dataclasses

import pytest

from purplemux.core.model import LastEvent, Session, State, TmuxLocation, evolve


def test_evolve_makes_what_replace_makes_and_leaves_the_original_alone() -> None:
    s = Session(id="a", state=State.BUSY, title="fix", tmux=TmuxLocation("%1"), seq=4)
    changes = {"state": State.REVIEW, "seq": 5, "last_event": LastEvent("Stop", 2.0)}
    made = evolve(s, **changes)
    assert made == dataclasses.replace(s, **changes)
    assert made is not s and (s.state, s.seq) == (State.BUSY, 4)
    assert [getattr(made, f.name) for f in dataclasses.fields(Session)] == [
        changes.get(f.name, getattr(s, f.name)) for f in dataclasses.fields(Session)
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.title = "x"  # type: ignore[misc]


def test_evolve_refuses_a_field_the_session_does_not_have() -> None:
    with pytest.raises(KeyError):
        evolve(Session(id="a"), colour="red")
