"""Read the prompt in a session's pane and answer exactly it, by label (tmux keys).

The rules (claude-code.md, codex.md), for every agent; what differs (how its prompts look, the
keys that answer them, how long a dialog ignores keys) is the agent's (agents/base.py):
- Answer only a session in needs-input, in a pane whose program in front is that session's
  agent (not any program that prints a look-alike dialog), and that process is that session's
  own (`PaneOwners`: the agent's own files, or its panes' watcher, say so), not just "an agent".
- Answer only the prompt the user saw: its id must be the one on screen now, or nothing is typed.
- Never answer a prompt with two readings (`Prompt.ambiguous`, see prompts.py): 409.
- Pick an option by its label. An option that shows its key (Codex: "Yes, proceed (y)"): press
  that key. A numbered permission dialog: press the option's digit, which
  selects and confirms it at once (2.1.197 and 2.1.332), whatever the marker shows. Otherwise
  (questions, auto mode's unnumbered approval): read the one validated selection marker, move
  it with arrow keys, check it moved, then Enter. Auto mode's approval lists "No" first;
  position means nothing.
- Free text is one line of printable characters: any control character (C0 including TAB,
  DEL, C1) is refused with 422, nothing typed (a CR or Ctrl-C would act in the pane).
- Claude 2.1.332 drops keys sent within about a second of a dialog appearing: wait until the
  dialog has been on screen the agent's `key_guard` (1.5 s; counted from when the daemon first
  saw it). Codex has no guard.
- Afterwards, check that the dialog went.
"""

from __future__ import annotations

import asyncio
import os
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from purplemux.agents import registry
from purplemux.agents.base import Agent
from purplemux.core.model import Session, State, TmuxLocation
from purplemux.core.prompts import Context, Prompt, context_of
from purplemux.io import tmux
from purplemux.io.procinfo import ProcInfo, proc_name, read_proc

MOVE_TIMEOUT = 2.0
"""Seconds to wait for the selection marker to move after an arrow key."""
CONFIRM_TIMEOUT = 6.0
"""Seconds to wait for the dialog to go after the answer."""
POLL = 0.05
MAX_MOVES = 3
"""Tries to put the marker on the option (a key dropped by the guard is sent again)."""
SEEN_LIMIT = 1000


class StatusError(Exception):
    """A refusal with an HTTP-style status, the reason, and facts for the JSON body
    (the base of AnswerError and actions.ActionError, which stay apart)."""

    def __init__(self, status: int, reason: str, **extra: Any) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.extra = extra

    def to_json(self) -> dict[str, Any]:
        """`{"error": reason, ...facts}`: what the HTTP API and the broker answer."""
        return {"error": self.reason, **self.extra}


class AnswerError(StatusError):
    """A refused or failed answer: the HTTP status, the reason, and facts for the JSON body."""


def control_character(text: str) -> str | None:
    """The first control character in `text` (C0 with TAB and newlines, DEL, C1, and Unicode's
    other format/line controls), or None. Typed into a pane each would act, not be text."""
    for char in text:
        if (
            unicodedata.category(char) in ("Cc", "Zl", "Zp")
            or char in "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
        ):
            return char
    return None


@dataclass(frozen=True, slots=True)
class Choice:
    """What to answer: an option's label, free text (a question), or cancel (Esc).

    Made only valid: free text holding a control character raises AnswerError 422."""

    option: str | None = None
    text: str | None = None
    cancel: bool = False

    def __post_init__(self) -> None:
        for name, value in (("text", self.text), ("option", self.option)):
            bad = control_character(value) if value is not None else None
            if bad is not None:
                raise AnswerError(
                    422,
                    f"{name} holds the control character U+{ord(bad):04X}: "
                    "give one line of printable text (nothing was typed)",
                )


@dataclass(frozen=True, slots=True)
class Answered:
    """What was typed and whether the dialog went afterwards."""

    prompt: Prompt
    keys: tuple[str, ...]
    confirmed: bool
    screen: str


@dataclass(frozen=True, slots=True)
class Screen:
    text: str
    prompt: Prompt | None
    at: float


Capture = Callable[[TmuxLocation], Awaitable[str]]
Keys = Callable[[TmuxLocation, tuple[str, ...]], Awaitable[None]]
Text = Callable[[TmuxLocation, str], Awaitable[None]]
InFront = Callable[[TmuxLocation, int | None, Agent], Awaitable[str | None]]
Owns = Callable[[TmuxLocation, Session, Agent], Awaitable[str | None]]
"""(the pane, the session, its agent) -> None when the agent's process in front of the pane is
that session's own; else why not (nothing is typed then)."""
Watcher = Callable[[TmuxLocation, int], Awaitable[str | None]]
"""(a pane, the agent's process in front of it) -> the session id a live watcher linked that
pane and process to, as the pane shows it now (Codex's panes), or None."""


async def _send_keys(loc: TmuxLocation, keys: tuple[str, ...]) -> None:
    await tmux.send_keys(loc, *keys)


def _proc(pid: int) -> tuple[ProcInfo, int, int] | None:
    """(the process, its process group, its terminal's foreground group) from /proc."""
    read = read_proc(pid)
    if read is None:
        return None
    stat, raw = read
    head, _, rest = stat.rpartition(b")")
    fields = rest.split()
    args = tuple(a for a in raw.decode("utf-8", "surrogateescape").split("\0") if a)
    name = proc_name(head, args)
    return ProcInfo(pid, int(fields[1]), name, args, 0.0), int(fields[2]), int(fields[5])


async def agent_in_front(loc: TmuxLocation, agent_pid: int | None, agent: Agent) -> str | None:
    """None when the program in front in the pane (its terminal's foreground process group) is
    the session's agent (its process `agent_pid` when known, else the agent's program); else
    why not."""
    try:
        out = await tmux.run(loc.socket, "display-message", "-p", "-t", loc.pane, "#{pane_pid}")
    except tmux.TmuxError as exc:
        return f"cannot read pane {loc.pane}: {exc}"
    pane_pid = out.strip()
    if not pane_pid.isdigit() or not os.path.isdir("/proc/self"):
        return "cannot tell which program is in front in that pane"
    pane = _proc(int(pane_pid))
    if pane is None or pane[2] <= 0:
        return "cannot tell which program is in front in that pane"
    front = pane[2]
    if agent_pid is not None:
        mine = _proc(agent_pid)
        if mine is None or mine[1] != front:
            return (
                f"the session's {agent.label} (pid {agent_pid}) is not the program in front"
                " in that pane"
            )
        return None
    leader = _proc(front)
    if leader is None or not agent.is_tui(leader[0]):
        name = leader[0].name if leader else "?"
        return f"the program in front in that pane is not {agent.label} ({name})"
    return None


async def front_pid(loc: TmuxLocation) -> int | None:
    """The leader of the pane's terminal's foreground process group (the program in front)."""
    try:
        out = await tmux.run(loc.socket, "display-message", "-p", "-t", loc.pane, "#{pane_pid}")
    except tmux.TmuxError:
        return None
    pane = _proc(int(out.strip())) if out.strip().isdigit() else None
    return pane[2] if pane is not None and pane[2] > 0 else None


@dataclass
class PaneOwners:
    """Whose each pane is: before any key is typed into a pane (an answer, a resume, a reply),
    the agent's process in front of it must be that session's own. An agent whose own files
    say which session a process is (Claude's sessions/<pid>.json: `Agent.shows`) is asked
    there; an agent whose files do not (Codex: the TUI writes nothing per process) is asked of
    the live watcher that linked its panes (`watch`). Neither: nothing can be confirmed, and
    nothing is typed."""

    dirs: dict[str, tuple[Path, ...]] = field(default_factory=dict)
    """Per agent, its config dirs (where its own files say which process is which session)."""
    front: Callable[[TmuxLocation], Awaitable[int | None]] = front_pid
    _watchers: dict[str, Watcher] = field(default_factory=dict)

    def watch(self, agent: str, watcher: Watcher) -> Callable[[], None]:
        """The live source that links `agent`'s panes says whose they are (until undone)."""
        self._watchers[agent] = watcher

        def undo() -> None:
            if self._watchers.get(agent) is watcher:
                del self._watchers[agent]

        return undo

    async def check(self, loc: TmuxLocation, session: Session, agent: Agent) -> str | None:
        pid = session.pid if session.pid is not None else await self.front(loc)
        if pid is None:
            return f"cannot tell which program is in front in pane {loc.pane}"
        watcher = self._watchers.get(agent.name)
        if watcher is not None:
            found = await watcher(loc, pid)
            shown = None if found is None else found == session.id
        elif agent.shows is not None:
            dirs = self.dirs.get(agent.name, ())
            shown = agent.shows(pid, dirs, session.id, session.job_id)
        else:
            shown = None
        if shown is None:
            return (
                f"cannot tell that the {agent.label} in pane {loc.pane} (pid {pid}) is this "
                "session's"
            )
        if not shown:
            return f"the {agent.label} in pane {loc.pane} (pid {pid}) is another session's"
        return None


@dataclass
class Desk:
    """The daemon's prompt desk: when each prompt was first seen, one answer per pane at a time.

    The tmux calls are parameters so the logic can be driven by a scripted pane in unit tests;
    the daemon uses the real ones."""

    capture: Capture = tmux.capture
    keys: Keys = _send_keys
    type_text: Text = tmux.send_text
    in_front: InFront = agent_in_front
    owners: PaneOwners = field(default_factory=PaneOwners)
    owns: Owns | None = None
    """Whose the pane is (tests script it); None: `owners` says."""
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    guard: float | None = None
    """Seconds a new dialog ignores keys; None: the session's agent says (Claude 1.5 s)."""
    _seen: OrderedDict[str, float] = field(default_factory=OrderedDict)
    _locks: dict[tuple[str | None, str], asyncio.Lock] = field(default_factory=dict)

    def first_seen(self, prompt: Prompt) -> float:
        """When the desk first saw this prompt (now, if it never did)."""
        at = self._seen.get(prompt.id)
        if at is None:
            at = self._seen[prompt.id] = self.clock()
            while len(self._seen) > SEEN_LIMIT:
                self._seen.popitem(last=False)
        return at

    async def confirm(self, loc: TmuxLocation, session: Session, agent: Agent) -> str | None:
        """None when the program in front of the pane is the session's agent and that process
        is the session's own; else why not. Asked before any key is typed into a pane."""
        why = await self.in_front(loc, session.pid, agent)
        if why is not None:
            return why
        owns = self.owns or self.owners.check
        return await owns(loc, session, agent)

    def lock(self, loc: TmuxLocation) -> asyncio.Lock:
        """The pane's lock: one thing types into a pane at a time (answers, resume at reset)."""
        return self._locks.setdefault((loc.socket, loc.pane), asyncio.Lock())

    async def read(self, session: Session) -> Screen:
        """The pane's text and the prompt on it (AnswerError 409 when there is no pane)."""
        loc = pane_of(session)
        text = await self._capture(loc)
        prompt = registry.get(session.agent).recognise(text, context_of(session))
        if prompt is not None:
            self.first_seen(prompt)
        return Screen(text, prompt, time.time())

    async def _capture(self, loc: TmuxLocation) -> str:
        try:
            return await self.capture(loc)
        except tmux.TmuxError as exc:
            raise AnswerError(409, f"cannot read pane {loc.pane}: {exc}") from None

    async def _press(self, loc: TmuxLocation, *keys: str) -> None:
        try:
            await self.keys(loc, keys)
        except tmux.TmuxError as exc:
            raise AnswerError(502, f"tmux refused the keys: {exc}") from None

    async def answer(self, session: Session, prompt_id: str, choice: Choice) -> Answered:
        """Answer the prompt `prompt_id` if it is the one on screen; see the module's rules."""
        loc = pane_of(session)
        ctx = context_of(session)
        if session.state is not State.NEEDS_INPUT:
            raise AnswerError(
                409,
                f"the session is {session.state.value}, not needs-input: nothing was typed",
            )
        agent = registry.get(session.agent)
        async with self.lock(loc):
            why = await self.confirm(loc, session, agent)
            if why is not None:
                raise AnswerError(409, f"{why}: nothing was typed")
            return await _Answering(self, agent, loc, ctx).answer(prompt_id, choice)


@dataclass
class _Answering:
    """One answer on one pane, read with its agent's eyes."""

    desk: Desk
    agent: Agent
    loc: TmuxLocation
    ctx: Context

    def recognise(self, text: str) -> Prompt | None:
        prompt: Prompt | None = self.agent.recognise(text, self.ctx)
        return prompt

    async def _capture(self, loc: TmuxLocation) -> str:
        return await self.desk._capture(loc)

    async def _press(self, loc: TmuxLocation, *keys: str) -> None:
        await self.desk._press(loc, *keys)

    async def answer(self, prompt_id: str, choice: Choice) -> Answered:
        return await self._answer(self.loc, self.ctx, prompt_id, choice)

    async def _current(self, loc: TmuxLocation, ctx: Context, prompt_id: str) -> tuple[str, Prompt]:
        text = await self._capture(loc)
        prompt = self.recognise(text)
        if prompt is None:
            raise AnswerError(409, "nothing is asked in that pane now: nothing was typed")
        if prompt.id != prompt_id:
            raise AnswerError(
                409,
                "the prompt on screen is not the one answered (it changed): nothing was typed",
                prompt=prompt.to_json(),
            )
        if prompt.ambiguous is not None:
            raise AnswerError(
                409,
                f"the screen can be read two ways ({prompt.ambiguous}): nothing was typed; "
                "answer in the terminal",
                prompt=prompt.to_json(),
            )
        return text, prompt

    async def _answer(
        self, loc: TmuxLocation, ctx: Context, prompt_id: str, choice: Choice
    ) -> Answered:
        _, prompt = await self._current(loc, ctx, prompt_id)
        target = _target(prompt, choice)
        desk = self.desk
        guard = desk.guard if desk.guard is not None else self.agent.key_guard
        wait = desk.first_seen(prompt) + guard - desk.clock()
        if wait > 0:
            await desk.sleep(wait)
            _, prompt = await self._current(loc, ctx, prompt_id)
        typed: list[str] = []
        if choice.cancel:
            typed.append("Escape")
            await self._press(loc, "Escape")
        elif target is not None and prompt.options[target].key:
            key = prompt.options[target].key
            assert key is not None
            typed.append(key)
            await self._press(loc, key)
        elif target is not None and prompt.kind == "permission" and prompt.numbered:
            # The digit picks the option by its own number: no reliance on the marker.
            key = str(prompt.options[target].number)
            typed.append(key)
            await self._press(loc, key)
        else:
            assert target is not None
            prompt = await self._select(loc, ctx, prompt, target, typed)
            if choice.text is not None:
                await self._type(loc, choice.text)
                typed.append(f"text:{len(choice.text)}")
            typed.append("Enter")
            await self._press(loc, "Enter")
        confirmed, screen = await self._gone(loc, ctx, prompt_id)
        return Answered(prompt, tuple(typed), confirmed, screen)

    async def _select(
        self, loc: TmuxLocation, ctx: Context, prompt: Prompt, target: int, typed: list[str]
    ) -> Prompt:
        """Move the marker onto option `target`, one arrow key at a time, reading it back."""
        tries = 0
        while prompt.selected != target:
            current = prompt.selected
            if current is None:
                raise AnswerError(409, "no option is selected on screen: cannot move to one")
            key = "Down" if target > current else "Up"
            typed.append(key)
            await self._press(loc, key)
            moved = await self._poll(loc, ctx, _moved_from(prompt.id, current))
            if moved is None or moved.id != prompt.id or moved.ambiguous is not None:
                raise AnswerError(
                    409,
                    "the prompt went or changed while the selection was moved",
                    typed=typed,
                )
            if moved.selected == current:
                tries += 1
                if tries >= MAX_MOVES:
                    raise AnswerError(
                        504,
                        f"the selection did not move: {self.agent.label} ignored the keys",
                        typed=typed,
                    )
            prompt = moved
        return prompt

    async def _type(self, loc: TmuxLocation, text: str) -> None:
        try:
            await self.desk.type_text(loc, text)
        except tmux.TmuxError as exc:
            raise AnswerError(502, f"tmux refused the text: {exc}") from None
        # Enter right after a burst of typing can be taken as part of a paste: wait for the text.
        needle = " ".join(text.split())[-30:]
        deadline = self.desk.clock() + MOVE_TIMEOUT
        while self.desk.clock() < deadline:
            if needle in " ".join((await self._capture(loc)).split()):
                return
            await self.desk.sleep(POLL)

    async def _poll(
        self, loc: TmuxLocation, ctx: Context, done: Callable[[Prompt | None], bool]
    ) -> Prompt | None:
        deadline = self.desk.clock() + MOVE_TIMEOUT
        while True:
            prompt = self.recognise(await self._capture(loc))
            if done(prompt) or self.desk.clock() >= deadline:
                return prompt
            await self.desk.sleep(POLL)

    async def _gone(self, loc: TmuxLocation, ctx: Context, prompt_id: str) -> tuple[bool, str]:
        deadline = self.desk.clock() + CONFIRM_TIMEOUT
        while True:
            text = await self._capture(loc)
            prompt = self.recognise(text)
            if prompt is None or prompt.id != prompt_id:
                return True, text
            if self.desk.clock() >= deadline:
                return False, text
            await self.desk.sleep(POLL)


def _moved_from(prompt_id: str, current: int) -> Callable[[Prompt | None], bool]:
    def moved(p: Prompt | None) -> bool:
        return p is None or p.id != prompt_id or p.selected != current

    return moved


def pane_of(session: Session) -> TmuxLocation:
    if session.tmux is None or not session.tmux.pane:
        raise AnswerError(409, "this session has no tmux pane")
    if session.ended:
        raise AnswerError(409, "this session has ended")
    return session.tmux


def _target(prompt: Prompt, choice: Choice) -> int | None:
    """The option to select (None for cancel); 422 when the choice does not fit the prompt."""
    if choice.cancel:
        return None
    if choice.text is not None:
        index = next((i for i, o in enumerate(prompt.options) if o.free_text), None)
        if index is None:
            reason = f"this {prompt.kind} takes no free text; pick an option"
            raise AnswerError(422, reason, prompt=prompt.to_json())
        return index
    assert choice.option is not None
    index = prompt.option(choice.option)
    if index is None:
        labels = ", ".join(repr(o.label) for o in prompt.options)
        reason = f"no option {choice.option!r} on screen; options: {labels}"
        raise AnswerError(422, reason, prompt=prompt.to_json())
    return index
