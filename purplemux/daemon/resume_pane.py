"""Typing the resume prompt into a session's pane at its limit's reset, with the answering
desk's checks (daemon/answer.py): the input switch, the session's agent in front of the pane,
nothing asked on screen, and the agent's input box read empty with one reading. Anything else
types nothing and says why (`Skipped`); the resumer part records either outcome.

The pane is where `locate` puts the session: its own, or for a background session (`claude
--bg`, no pane) the `claude attach <job>` window the daemon opens on its private tmux server and
detaches (Ctrl+Z) and closes afterwards (attach.py), so both go through the same checks here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from purplemux.agents import registry
from purplemux.agents.base import Agent, AttachError, InputBox
from purplemux.core.model import Session, TmuxLocation
from purplemux.core.resume import PROMPT, moved
from purplemux.daemon.answer import MOVE_TIMEOUT, POLL, AnswerError, Desk, pane_of
from purplemux.io import tmux

CONFIRM_TIMEOUT = 6.0
"""Seconds to wait for the typed prompt to leave the input box after Enter."""


class Skipped(Exception):
    """Nothing was typed (or what was typed was taken back): the reason, for the audit and the
    user's notification."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Typed:
    """What was typed, and whether it left the input box afterwards (sent)."""

    text: str
    confirmed: bool


Locate = Callable[[Session], AbstractAsyncContextManager[Session]]
"""The session as the desk reads it while the context lasts: its pane, or its attach window."""


@asynccontextmanager
async def own_pane(session: Session) -> AsyncIterator[Session]:
    """The session's own pane (no attach window)."""
    yield session


async def type_resume(
    desk: Desk,
    session: Session,
    input_allowed: bool,
    current: Callable[[], Session | None],
    locate: Locate = own_pane,
) -> Typed:
    """Type PROMPT and Enter into the session's pane if it still sits at its wall, at rest,
    with an empty input box; `current` gives the session as the engine holds it now (read again
    once the pane is read: nothing may have moved meanwhile; its request says "typing")."""
    if not input_allowed:
        raise Skipped("typing into panes is off on this daemon (PURPLEMUX_INPUT)")
    agent = registry.get(session.agent)
    if agent.input_box is None:
        raise Skipped(f"purplemux cannot read {agent.label}'s input box")
    async with AsyncExitStack() as opened:
        try:
            shown = await opened.enter_async_context(locate(session))
        except (AttachError, tmux.TmuxError, OSError) as exc:
            raise Skipped(f"cannot attach to background job {session.job_id}: {exc}") from None
        try:
            loc = pane_of(shown)
        except AnswerError as exc:
            raise Skipped(exc.reason) from None
        async with desk.lock(loc):
            return await _Typing(desk, agent, loc).run(shown, current)


@dataclass
class _Typing:
    desk: Desk
    agent: Agent
    loc: TmuxLocation

    async def _screen(self) -> str:
        try:
            return await self.desk.capture(self.loc)
        except tmux.TmuxError as exc:
            raise Skipped(f"cannot read pane {self.loc.pane}: {exc}") from None

    async def _box(self, session: Session) -> InputBox:
        text = await self._screen()
        assert self.agent.input_box is not None
        if self.agent.recognise(text, None) is not None:
            return InputBox(unreadable=f"{self.agent.label} asks something on screen")
        return self.agent.input_box(text)

    async def _wait_box(self, session: Session, done: Callable[[InputBox], bool]) -> InputBox:
        deadline = self.desk.clock() + MOVE_TIMEOUT
        while True:
            box = await self._box(session)
            if done(box) or self.desk.clock() >= deadline:
                return box
            await self.desk.sleep(POLL)

    async def _keys(self, *keys: str) -> None:
        try:
            await self.desk.keys(self.loc, keys)
        except tmux.TmuxError as exc:
            raise Skipped(f"tmux refused the keys: {exc}") from None

    async def run(self, session: Session, current: Callable[[], Session | None]) -> Typed:
        why = await self.desk.confirm(self.loc, session, self.agent)
        if why is not None:
            raise Skipped(why)
        box = await self._box(session)
        if box.unreadable is not None:
            raise Skipped(box.unreadable)
        if box.text:
            raise Skipped("text is typed in its input box")
        now = current()
        request = now.resume if now is not None else None
        if now is None or request is None or request.state != "typing" or moved(now, request):
            raise Skipped("the session moved while its pane was read")
        try:
            await self.desk.type_text(self.loc, PROMPT)
        except tmux.TmuxError as exc:
            raise Skipped(f"tmux refused the text: {exc}") from None
        shown = await self._wait_box(session, lambda b: b.text == PROMPT)
        if shown.text != PROMPT:
            if shown.text.endswith(PROMPT):  # someone typed too: take ours back
                await self._keys(*(["BSpace"] * len(PROMPT)))
            raise Skipped("the input box did not show the prompt as typed: Enter not pressed")
        await self._keys("Enter")
        deadline = self.desk.clock() + CONFIRM_TIMEOUT
        while True:
            after = await self._box(session)
            if after.text != PROMPT:
                return Typed(PROMPT, True)
            if self.desk.clock() >= deadline:
                return Typed(PROMPT, False)
            await self.desk.sleep(POLL)
