"""Typing the resume prompt (daemon/resume_pane.py) through the desk's checks, on a scripted
pane: what is typed, and what types nothing and says why."""

from __future__ import annotations

from dataclasses import replace

import pytest

from purplemux.agents.base import Agent
from purplemux.core.model import LimitWall, ResumeAtReset, Session, State, TmuxLocation
from purplemux.daemon.answer import Desk
from purplemux.daemon.resume_pane import Skipped, Typed, type_resume
from tests.support.input_pane import LIMITS
from tests.support.screens import screen

WALL = (LIMITS / "screen-gw-5h-final.txt").read_text()
EMPTY = "\u276f\u00a0"
TYPING = Session(
    id="s1",
    state=State.REVIEW,
    state_since=100.0,
    tmux=TmuxLocation("%1", "/tmp/s"),
    limit=LimitWall("five_hour", 1000.0, None, 100.0),
    resume=ResumeAtReset(100.0, "typing", "resume-at-reset", 1100.0),
)


class Pane:
    """A scripted pane: its screen's input box follows what is typed, as Claude's does."""

    def __init__(self, box: str = "", screen: str = WALL, front: str | None = None) -> None:
        self.box, self.base, self.front = box, screen, front
        self.keys: list[str] = []
        self.sent: list[str] = []
        self.echo = True
        self.meddle = ""

    def screen(self) -> str:
        return self.base.replace(EMPTY, "\u276f " + (self.box or "\u00a0"))

    def desk(self) -> Desk:
        async def capture(loc: TmuxLocation) -> str:
            return self.screen()

        async def keys(loc: TmuxLocation, keys: tuple[str, ...]) -> None:
            for key in keys:
                self.keys.append(key)
                if key == "Enter":
                    self.sent.append(self.box)
                    self.box = ""
                elif key == "BSpace":
                    self.box = self.box[:-1]

        async def text(loc: TmuxLocation, typed: str) -> None:
            self.keys.append(f"text:{typed}")
            if self.echo:
                self.box = self.meddle + self.box + typed

        async def in_front(loc: TmuxLocation, pid: int | None, agent: Agent) -> str | None:
            return self.front

        async def sleep(seconds: float) -> None:
            self.clock += seconds

        async def owns(loc: TmuxLocation, session: Session, agent: Agent) -> str | None:
            return None  # (whose the pane is: tests/test_pane_owners.py)

        self.clock = 0.0
        return Desk(
            capture=capture,
            keys=keys,
            type_text=text,
            in_front=in_front,
            owns=owns,
            clock=lambda: self.clock,
            sleep=sleep,
        )


async def run(pane: Pane, session: Session = TYPING, allowed: bool = True) -> Typed:
    return await type_resume(pane.desk(), session, allowed, lambda: session)


async def skipped(pane: Pane, session: Session = TYPING, allowed: bool = True) -> str:
    with pytest.raises(Skipped) as info:
        await run(pane, session, allowed)
    return info.value.reason


@pytest.mark.asyncio
async def test_continue_is_typed_then_sent_with_enter() -> None:
    pane = Pane()
    assert await run(pane) == Typed("continue", True)
    assert pane.keys == ["text:continue", "Enter"] and pane.sent == ["continue"]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("pane", "why"),
    [
        (Pane(box="my words"), "text is typed in its input box"),
        (Pane(front="the program in front in that pane is not Claude (vim)"), "not Claude (vim)"),
        (
            Pane(screen=screen("claude-2.1.332-manual.screens.txt", "touch-dialog")),
            "Claude asks something on screen",
        ),
        (Pane(screen=WALL + "\n" + WALL), "two input boxes on screen"),
        (Pane(screen="$ "), "no input box on screen"),
    ],
)
async def test_anything_but_an_empty_box_at_rest_types_nothing(pane: Pane, why: str) -> None:
    assert why in await skipped(pane)
    assert pane.keys == []


@pytest.mark.asyncio
async def test_input_off_or_a_session_that_moved_types_nothing() -> None:
    pane = Pane()
    assert "PURPLEMUX_INPUT" in await skipped(pane, allowed=False)
    busy = replace(TYPING, state=State.BUSY)
    assert await skipped(pane, busy) == "the session moved while its pane was read"
    assert pane.keys == []


@pytest.mark.asyncio
async def test_text_typed_by_someone_else_meanwhile_is_taken_back_and_enter_not_pressed() -> None:
    pane = Pane()
    pane.meddle = "hey "
    why = await skipped(pane)
    assert why == "the input box did not show the prompt as typed: Enter not pressed"
    assert "Enter" not in pane.keys and pane.box == "hey " and pane.sent == []


@pytest.mark.asyncio
async def test_keys_that_never_show_in_the_box_are_not_sent() -> None:
    pane = Pane()
    pane.echo = False
    assert "Enter not pressed" in await skipped(pane)
    assert pane.keys == ["text:continue"] and pane.sent == []
