"""What a person can do to a session — screen, answer, focus, dismiss — decided once.

Typed inputs, typed results and one error (`ActionError`: a status and a reason). The HTTP routes
(server/act.py, server/api.py), the commands other hosts send over the broker (hosts/commands.py),
push actions (the service worker posts to the answer route) and the CLI (through the HTTP API)
all come here; nothing here knows HTTP. A session another host owns is relayed to that host
(`Relay`), which applies its own checks and answers with an `Outcome`.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from purplemux.agents import registry
from purplemux.agents.base import Attacher, AttachError
from purplemux.core import events as ev
from purplemux.core.events import Source
from purplemux.core.model import Session, State
from purplemux.core.present import DISMISS, allows
from purplemux.core.prompts import Prompt
from purplemux.core.resume import armed, refusal
from purplemux.daemon.answer import AnswerError, Choice, Desk, StatusError, pane_of
from purplemux.daemon.engine import Engine
from purplemux.io import tmux
from purplemux.io.settings import Settings

BY = frozenset({"page", "push", "cli", "api"})
"""Who answers: the dashboard, a notification's action, the command line, anything else."""
MAX_TEXT = 2000
SETTLE = 1.5
"""Seconds `screen` waits for a dialog it sees to be known as needs-input (see `Actions.screen`)."""
SETTLE_STEP = 0.05
VERBS = ("dismiss", "answer", "focus", "screen", "resume")
"""What a person can do to a session (and so what another host may ask of its owner)."""


class ActionError(StatusError):
    """A refused or failed action: an HTTP-style status, the reason, and facts for the body."""

    @classmethod
    def of(cls, exc: AnswerError) -> ActionError:
        """The prompt desk's refusal, as an action's."""
        return cls(exc.status, exc.reason, **exc.extra)


@dataclass(frozen=True, slots=True)
class Outcome:
    """An action's answer as it travels (HTTP, the broker): a status and a JSON body."""

    status: int
    body: dict[str, Any]

    @classmethod
    def refused(cls, exc: ActionError) -> Outcome:
        """A refusal as it travels: its status, `{"error": reason, ...facts}`."""
        return cls(exc.status, exc.to_json())


class Relay(Protocol):
    """Other hosts' sessions as the verbs reach them (the broker link, purplemux.hosts)."""

    def owner_of(self, session_id: str) -> str | None:
        """The other host that owns a session, or None (ours, or unknown)."""
        ...

    async def ask(self, verb: str, session_id: str, args: dict[str, Any]) -> Outcome:
        """Have the owner apply `verb` (with its own checks) and answer."""
        ...


# --- inputs -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AnswerInput:
    """An answer to the prompt `prompt_id` (the id `screen` gave), and who gives it."""

    prompt_id: str
    choice: Choice
    by: str = "api"

    @classmethod
    def parse(cls, data: Any) -> AnswerInput:
        """From a JSON body `{prompt_id, option | text | cancel, by?}`; 422 with the reason."""
        if not isinstance(data, dict):
            raise ActionError(422, "send a JSON object: {prompt_id, option | text | cancel}")
        prompt_id = data.get("prompt_id")
        if not isinstance(prompt_id, str) or not prompt_id or len(prompt_id) > 64:
            raise ActionError(422, "prompt_id (the id GET /screen gave) is required")
        option, text, cancel = data.get("option"), data.get("text"), data.get("cancel")
        given = [k for k in ("option", "text", "cancel") if data.get(k) not in (None, False)]
        if len(given) != 1:
            raise ActionError(422, "give exactly one of option, text or cancel: true")
        if option is not None and (not isinstance(option, str) or not option or len(option) > 500):
            raise ActionError(422, "option must be the label of an option, as shown")
        if text is not None and (
            not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT or "\n" in text
        ):
            raise ActionError(422, f"text must be one line of 1 to {MAX_TEXT} characters")
        if cancel is not None and cancel is not True:
            raise ActionError(422, "cancel must be true")
        by = data.get("by", "api")
        if by not in BY:
            raise ActionError(422, f"by must be one of {', '.join(sorted(BY))}")
        try:  # Choice refuses control characters in free text (answer.py), for every caller
            choice = Choice(option=option, text=text, cancel=cancel is True)
        except AnswerError as exc:
            raise ActionError(exc.status, exc.reason) from None
        return cls(prompt_id, choice, str(by))

    def to_json(self) -> dict[str, Any]:
        """The body `parse` reads back (what a relay sends the owner)."""
        c = self.choice
        how: dict[str, Any] = (
            {"cancel": True}
            if c.cancel
            else {"text": c.text}
            if c.text is not None
            else {"option": c.option}
        )
        return {"prompt_id": self.prompt_id, **how, "by": self.by}


@dataclass(frozen=True, slots=True)
class FocusInput:
    """Which tmux client to switch to the session's pane (None: just select the pane)."""

    client: str | None = None

    @classmethod
    def parse(cls, data: Any) -> FocusInput:
        """From a JSON body `{client?}` (or none); 422 with the reason."""
        client = data.get("client") if isinstance(data, dict) else None
        if client is not None and (not isinstance(client, str) or len(client) > 200):
            raise ActionError(422, "client must be a tmux client name (e.g. /dev/pts/3)")
        return cls(client)

    def to_json(self) -> dict[str, Any]:
        return {} if self.client is None else {"client": self.client}


@dataclass(frozen=True, slots=True)
class ResumeInput:
    """Arm (at_reset true) or cancel (false) the session's resume at its limit's reset."""

    at_reset: bool
    by: str = "api"

    @classmethod
    def parse(cls, data: Any) -> ResumeInput:
        """From a JSON body `{at_reset: true | false, by?}`; 422 with the reason."""
        if not isinstance(data, dict) or not isinstance(data.get("at_reset"), bool):
            raise ActionError(422, "send a JSON object: {at_reset: true} (or false to cancel)")
        by = data.get("by", "api")
        if by not in BY:
            raise ActionError(422, f"by must be one of {', '.join(sorted(BY))}")
        return cls(bool(data["at_reset"]), str(by))

    def to_json(self) -> dict[str, Any]:
        return {"at_reset": self.at_reset, "by": self.by}


# --- results ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScreenResult:
    """A session's pane as it shows now, the prompt on it, and whether answering is on."""

    text: str
    prompt: Prompt | None
    at: float
    state: State
    input: bool
    status = 200

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "prompt": self.prompt.to_json() if self.prompt else None,
            "at": self.at,
            "state": self.state.value,
            "input": self.input,
        }


@dataclass(frozen=True, slots=True)
class AnswerResult:
    """What was typed, and whether the dialog went (unconfirmed: status 504, look at the pane)."""

    prompt_id: str
    kind: str
    answered: str
    keys: tuple[str, ...]
    confirmed: bool
    session: dict[str, Any]

    @property
    def status(self) -> int:
        return 200 if self.confirmed else 504

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "ok": self.confirmed,
            "prompt_id": self.prompt_id,
            "kind": self.kind,
            "answered": self.answered,
            "keys": list(self.keys),
            "session": self.session,
        }
        if not self.confirmed:
            body["error"] = "the keys were sent but the dialog is still on screen; look at the pane"
        return body


@dataclass(frozen=True, slots=True)
class FocusResult:
    """Where tmux put the pane, and the client it switched (None when none is attached)."""

    pane: str
    window: str
    tmux_session: str
    client: str | None
    status = 200

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": True,
            "pane": self.pane,
            "window": self.window,
            "tmux_session": self.tmux_session,
            "client": self.client,
        }


@dataclass(frozen=True, slots=True)
class DismissResult:
    """The session after its review was dismissed (its public JSON, with its view)."""

    session: dict[str, Any]
    status = 200

    def to_json(self) -> dict[str, Any]:
        return self.session


@dataclass(frozen=True, slots=True)
class ResumeResult:
    """The session after its resume at reset was armed or cancelled (its JSON, with its view)."""

    session: dict[str, Any]
    status = 200

    def to_json(self) -> dict[str, Any]:
        return self.session


Result = ScreenResult | AnswerResult | FocusResult | DismissResult | ResumeResult


def outcome(result: Result) -> Outcome:
    """A result as it travels."""
    return Outcome(result.status, result.to_json())


# --- the verbs --------------------------------------------------------------------------------


def _no_relay() -> Relay | None:
    return None


@dataclass(eq=False)
class Actions:
    """The verbs of one daemon: its engine, its prompt desk, its input switch, and the relay to
    other hosts (while the broker part runs)."""

    engine: Engine
    desk: Desk
    settings: Settings
    relay: Callable[[], Relay | None] = field(default=_no_relay)
    attachers: dict[str, Attacher] = field(default_factory=dict)
    """Each agent's windows for its sessions with no pane of their own (Claude's background
    sessions: `claude attach <job>`), made on first use (agents/base.py `Background`)."""

    def attacher(self, session: Session) -> Attacher | None:
        """The attach windows of the session's agent when the session has no pane of its own
        (None: it has one, or its agent shows none)."""
        background = registry.get(session.agent).background
        if background is None or not background.needs_attach(session):
            return None
        if session.agent not in self.attachers:
            self.attachers[session.agent] = background.attacher(self.settings)
        return self.attachers[session.agent]

    @asynccontextmanager
    async def shown(self, session: Session) -> AsyncIterator[Session]:
        """The session where the desk reads and types: its own pane, or its attach window
        (opened for the while, then closed: the agent's `Attacher.shown`)."""
        attacher = self.attacher(session)
        if attacher is None:
            yield session
            return
        async with attacher.shown(session) as shown:
            yield shown

    async def _on_screen(self, session: Session) -> Session:
        """The session as the desk reads it: a background session (no pane of its own) through
        its attach window, whose program in front is the attach (the worker runs elsewhere)."""
        attacher = self.attacher(session)
        if attacher is None:
            return session
        try:
            loc = await attacher.open(session)
        except (AttachError, tmux.TmuxError, OSError) as exc:
            raise ActionError(
                409, f"cannot attach to background job {session.job_id}: {exc}"
            ) from None
        return replace(session, tmux=loc, pid=None)

    def session(self, session_id: str) -> Session:
        """One of this host's sessions; 404 otherwise."""
        session = self.engine.sessions.get(session_id)
        if session is None:
            raise ActionError(404, f"no session {session_id!r}")
        return session

    def owner_of(self, session_id: str) -> str | None:
        """The other host that owns a session not ours, or None."""
        if session_id in self.engine.sessions:
            return None
        link = self.relay()
        return link.owner_of(session_id) if link is not None else None

    async def relayed(self, verb: str, session_id: str, args: dict[str, Any]) -> Outcome | None:
        """Another host's session: its owner acts (under its own checks) and answers; None when
        the session is ours or no host has it."""
        link = self.relay() if session_id not in self.engine.sessions else None
        if link is None or link.owner_of(session_id) is None:
            return None
        return await link.ask(verb, session_id, args)

    def require_input(self) -> None:
        """403 unless this daemon types into panes (PURPLEMUX_INPUT, --no-input)."""
        if not self.settings.input_allowed:
            raise ActionError(403, self.settings.input_refusal)

    async def _by_user(
        self, make: Callable[..., ev.Event], session_id: str, verb: str, **fields: Any
    ) -> None:
        """Store what a person did to a session: an event of theirs, with a fresh id."""
        await self.engine.submit(
            make(
                session_id=session_id,
                at=time.time(),
                id=f"{verb}:{uuid.uuid4().hex}",
                source=Source.USER,
                **fields,
            )
        )

    async def screen(self, session_id: str) -> ScreenResult:
        """The pane's text and prompt, with the prompt id an answer will be checked against.

        A prompt's id includes when its session entered its state. Claude draws a dialog a
        moment before its PermissionRequest hook lands, so a read in that moment would hand out
        an id made from the busy state, which stops matching as soon as needs-input arrives (an
        answer with it is refused, nothing typed). So while a dialog shows and the session is
        not yet needs-input, read again until it is, for at most SETTLE seconds (a dialog no
        hook announces keeps the id of the state it was drawn in)."""
        deadline = time.monotonic() + SETTLE
        while True:
            session = self.session(session_id)
            try:
                shown = await self.desk.read(await self._on_screen(session))
            except AnswerError as exc:
                raise ActionError.of(exc) from None
            if (
                shown.prompt is None
                or session.state is State.NEEDS_INPUT
                or time.monotonic() >= deadline
            ):
                break
            await asyncio.sleep(SETTLE_STEP)
        return ScreenResult(
            shown.text, shown.prompt, shown.at, session.state, self.settings.input_allowed
        )

    async def answer(self, session_id: str, given: AnswerInput) -> AnswerResult:
        """Type the answer into the pane if its prompt is still `given.prompt_id`; audited as an
        Answer event (confirmed or not)."""
        self.require_input()
        session = self.session(session_id)
        choice = given.choice
        shown = await self._on_screen(session)
        try:
            done = await self.desk.answer(shown, given.prompt_id, choice)
        except AnswerError as exc:
            raise ActionError.of(exc) from None
        finally:
            attacher = self.attacher(session) if shown is not session else None
            if attacher is not None and session.job_id:
                await attacher.close(session.job_id)  # Ctrl+Z: the session runs on
        what = "cancel" if choice.cancel else (choice.option or "text")
        await self._by_user(
            ev.Answer,
            session_id,
            "answer",
            name=f"Answer: {what} ({given.by})",
            by=given.by,
            prompt_id=given.prompt_id,
            prompt_kind=done.prompt.kind,
            option=choice.option,
            text=choice.text,
            cancel=choice.cancel,
            confirmed=done.confirmed,
        )
        return AnswerResult(
            prompt_id=given.prompt_id,
            kind=done.prompt.kind,
            answered=what,
            keys=done.keys,
            confirmed=done.confirmed,
            session=self.engine.public(self.engine.sessions[session_id]),
        )

    async def focus(self, session_id: str, given: FocusInput) -> FocusResult:
        """Select the session's pane (and switch `given.client` to it)."""
        session = self.session(session_id)
        background = registry.get(session.agent).background
        if background is not None and background.needs_attach(session):
            return await self._jump_background(session, given)
        try:
            done = await tmux.focus(pane_of(session), given.client)
        except AnswerError as exc:
            raise ActionError.of(exc) from None
        except tmux.TmuxError as exc:
            raise ActionError(409, f"cannot focus pane: {exc}") from None
        return FocusResult(done.pane, done.window, done.session, done.client)

    async def _jump_background(self, session: Session, given: FocusInput) -> FocusResult:
        """A session with no pane of its own: its agent opens a window that shows it in the
        user's tmux (Claude's background session: `claude attach <job>`)."""
        socket = self.settings.tmux_default_socket or None
        try:
            background = registry.get(session.agent).background
            assert background is not None
            pane = await background.jump(session, self.settings, given.client, socket)
            where = await tmux.run(
                socket, "display-message", "-p", "-t", pane, "#{window_id}\t#{session_name}"
            )
        except (AttachError, tmux.TmuxError) as exc:
            raise ActionError(409, f"cannot open an attach window in your tmux: {exc}") from None
        window, _, tmux_session = where.strip().partition("\t")
        return FocusResult(pane, window, tmux_session, given.client)

    async def dismiss(self, session_id: str) -> DismissResult:
        """Mark a review as seen (review -> idle); 409 in any other state."""
        session = self.session(session_id)
        if not allows(session, DISMISS):
            raise ActionError(409, f"session is {session.state.value}, not in review")
        await self._by_user(ev.Dismiss, session_id, "dismiss")
        return DismissResult(self.engine.public(self.engine.sessions[session_id]))

    async def resume(self, session_id: str, given: ResumeInput) -> ResumeResult:
        """Arm the session to resume at its limit's reset (or cancel that): a Resume event of
        the user's, so the event log says who asked and a restart keeps it. Arming types into
        the pane later, so it needs what an answer needs (403 with the input switch off)."""
        session = self.session(session_id)
        if given.at_reset:
            self.require_input()
            why = refusal(session)
            agent = registry.get(session.agent)
            if why is None and agent.input_box is None:
                why = f"purplemux cannot read {agent.label}'s input box to type into it"
            if why is not None:
                raise ActionError(409, f"{why}: nothing was armed")
            if armed(session) is not None:  # asked twice: armed once
                return ResumeResult(self.engine.public(session))
        elif armed(session) is None:
            raise ActionError(409, "the session is not armed to resume at the reset")
        assert session.limit is not None
        await self._by_user(
            ev.Resume,
            session_id,
            "resume",
            name=f"Resume at reset: {'armed' if given.at_reset else 'cancelled'} ({given.by})",
            wall_at=session.limit.at,
            state="armed" if given.at_reset else "cancelled",
            by=given.by,
        )
        return ResumeResult(self.engine.public(self.engine.sessions[session_id]))
