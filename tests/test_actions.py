"""daemon.actions, its typed API on its own: a real engine and store, a real tmux pane on a
private socket showing a captured Claude Code 2.1.332 permission dialog (tests/support/screens)."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from purplemux.cli import main
from purplemux.core.model import State
from purplemux.daemon.actions import (
    ActionError,
    Actions,
    AnswerInput,
    FocusInput,
    Outcome,
    outcome,
)
from purplemux.daemon.answer import Choice, Desk, PaneOwners
from purplemux.daemon.engine import Engine
from purplemux.io.settings import Settings
from purplemux.io.store_thread import AsyncStore
from purplemux.sources.hooks import to_event
from tests.support import Daemon, cli_sees, wait_for
from tests.support.screens import HOOKS_ASKING, asking, capture, dialog_pane, own_pane_in


@dataclass
class World:
    """An engine running on a real store, the verbs bound to it, and a dialog pane."""

    engine: Engine
    store: AsyncStore
    acts: Actions
    sock: str
    pane: str
    claude_dir: Path | None = None
    """Where the pane's Claude writes its session file (the desk confirms the pane by it)."""

    async def hook(self, sid: str, name: str, pane: str | None = None, **extra: Any) -> None:
        """A hook event as the script sends it (pane and tmux server in its headers)."""
        payload = {"session_id": sid, "hook_event_name": name, "cwd": "/w/proj", **extra}
        headers = {"x-purplemux-pane": self.pane if pane is None else pane}
        headers["x-purplemux-tmux"] = f"{self.sock},1,0" if headers["x-purplemux-pane"] else ""
        await self.engine.submit(to_event(payload, headers, time.time()))

    async def asking(self, sid: str, pane: str | None = None) -> None:
        if self.claude_dir is not None and (pane or self.pane):
            own_pane_in(self.claude_dir, sid, self.sock, pane or self.pane)
        for name, extra in HOOKS_ASKING:
            await self.hook(sid, name, pane, **extra)

    async def answers(self, sid: str) -> list[dict[str, Any]]:
        """The Answer events stored for a session (the audit)."""
        rows = await self.store.call(lambda s: s.events_for(sid))
        return [e for e in rows if e["kind"] == "answer"]


def make_world(tmp_path: Path, engine: Engine, store: AsyncStore, **settings: Any) -> World:
    sock, pane = "", ""
    acts = Actions(
        engine,
        Desk(owners=PaneOwners(dirs={"claude": (tmp_path / "claude",)})),
        Settings(home=tmp_path / "home", claude_dir=tmp_path / "claude", **settings),
    )
    return World(engine, store, acts, sock, pane, tmp_path / "claude")


@pytest_asyncio.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    store = AsyncStore(tmp_path / "state.db")
    await store.open()
    engine = Engine(store)
    task = asyncio.create_task(engine.run())
    with dialog_pane(tmp_path) as (sock, pane):
        wait_for(lambda: "Esc to cancel" in capture(sock, pane))  # the dialog is drawn whole
        w = make_world(tmp_path, engine, store)
        w.sock, w.pane = sock, pane
        try:
            yield w
        finally:
            await engine.stop()
            await asyncio.wait_for(task, 5)
            await store.close()


async def refused(coro: Any) -> ActionError:
    """The ActionError an action raised (the test fails when it raised none)."""
    with pytest.raises(ActionError) as info:
        await coro
    return info.value


@pytest.mark.asyncio
async def test_screen_reads_the_dialog_and_its_prompt(world: World) -> None:
    await world.asking("s1")
    shown = await world.acts.screen("s1")
    assert shown.state is State.NEEDS_INPUT and shown.input is True
    assert "Do you want to proceed?" in shown.text
    assert shown.prompt is not None and shown.prompt.kind == "permission"
    assert shown.prompt.title == "Bash command: touch b.txt"
    body = outcome(shown)
    assert body.status == 200 and body.body["prompt"]["id"] == shown.prompt.id
    assert body.body["state"] == "needs-input" and "\x1b" not in body.body["text"]

    missing = await refused(world.acts.screen("nope"))
    assert (missing.status, missing.to_json()) == (404, {"error": "no session 'nope'"})
    await world.asking("gone", pane="%999")  # its pane is not there
    gone = await refused(world.acts.screen("gone"))
    assert gone.status == 409 and "%999" in gone.reason


@pytest.mark.asyncio
async def test_refused_answers_type_nothing_and_are_not_audited(world: World) -> None:
    await world.asking("s1")
    shown = await world.acts.screen("s1")
    assert shown.prompt is not None
    pid = shown.prompt.id
    before = capture(world.sock, world.pane)

    stale = await refused(world.acts.answer("s1", AnswerInput("p-stale", Choice(option="Yes"))))
    assert stale.status == 409 and "nothing was typed" in stale.reason
    wrong = await refused(world.acts.answer("s1", AnswerInput(pid, Choice(option="Maybe"))))
    # The refusal names the options on screen and carries the prompt.
    assert wrong.status == 422 and "'Yes'" in wrong.reason
    assert wrong.to_json()["prompt"]["id"] == pid
    text = await refused(world.acts.answer("s1", AnswerInput(pid, Choice(text="free"))))
    assert text.status == 422 and "takes no free text" in text.reason
    nope = await refused(world.acts.answer("nope", AnswerInput(pid, Choice(option="Yes"))))
    assert nope.status == 404

    assert capture(world.sock, world.pane) == before
    assert await world.answers("s1") == []
    assert world.engine.sessions["s1"].state is State.NEEDS_INPUT


@pytest.mark.asyncio
async def test_answering_off_refuses_before_anything(tmp_path: Path, world: World) -> None:
    await world.asking("s1")
    off = make_world(tmp_path, world.engine, world.store, input=False)
    shown = await off.acts.screen("s1")
    assert shown.input is False and shown.prompt is not None
    given = AnswerInput(shown.prompt.id, Choice(option="Yes"))
    error = await refused(off.acts.answer("s1", given))
    assert error.status == 403 and "PURPLEMUX_INPUT" in error.reason
    # Even for an unknown session: the switch is checked first.
    assert (await refused(off.acts.answer("nope", given))).status == 403
    assert await world.answers("s1") == []


@pytest.mark.asyncio
async def test_an_answer_is_typed_audited_and_unconfirmed_when_the_dialog_stays(
    world: World,
) -> None:
    await world.asking("s1")
    shown = await world.acts.screen("s1")
    assert shown.prompt is not None
    # The pane is not Claude: its digit reaches it but the dialog stays; the result says so.
    done = await world.acts.answer("s1", AnswerInput(shown.prompt.id, Choice(option="Yes"), "cli"))
    assert (done.confirmed, done.keys, done.kind, done.answered) == (
        False,
        ("1",),
        "permission",
        "Yes",
    )
    wire = outcome(done)
    assert wire.status == 504 and "still on screen" in wire.body["error"]
    assert wire.body["session"]["id"] == "s1" and wire.body["ok"] is False
    [audit] = await world.answers("s1")
    assert (audit["by"], audit["option"], audit["confirmed"]) == ("cli", "Yes", False)
    assert world.engine.sessions["s1"].last_event is not None
    assert world.engine.sessions["s1"].last_event.name == "Answer: Yes (cli)"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ([], "JSON object"),
        ({"option": "Yes"}, "prompt_id"),
        ({"prompt_id": "p", "option": "Yes", "cancel": True}, "exactly one"),
        ({"prompt_id": "p"}, "exactly one"),
        ({"prompt_id": "p", "option": ""}, "label"),
        ({"prompt_id": "p", "option": 3}, "label"),
        ({"prompt_id": "p", "text": "two\nlines"}, "one line"),
        ({"prompt_id": "p", "cancel": "yes"}, "cancel must be true"),
        ({"prompt_id": "p", "option": "Yes", "by": "robot"}, "by must be one of"),
    ],
)
def test_bad_answer_input_is_a_422_with_its_reason(body: Any, reason: str) -> None:
    with pytest.raises(ActionError) as info:
        AnswerInput.parse(body)
    assert info.value.status == 422 and reason in info.value.reason


@pytest.mark.parametrize(
    "given",
    [
        AnswerInput("p1", Choice(option="Yes")),
        AnswerInput("p1", Choice(text="do it this way"), "push"),
        AnswerInput("p1", Choice(cancel=True), "page"),
    ],
)
def test_answer_input_travels_as_json_and_back(given: AnswerInput) -> None:
    assert AnswerInput.parse(given.to_json()) == given


def test_focus_input() -> None:
    assert FocusInput.parse({}) == FocusInput() and FocusInput.parse(None) == FocusInput()
    assert FocusInput.parse({"client": "/dev/pts/3"}).to_json() == {"client": "/dev/pts/3"}
    for bad in ({"client": 3}, {"client": "x" * 201}):
        with pytest.raises(ActionError) as info:
            FocusInput.parse(bad)
        assert info.value.status == 422


@pytest.mark.asyncio
async def test_focus_selects_the_pane_or_says_why_not(world: World) -> None:
    await world.asking("s1")
    done = await world.acts.focus("s1", FocusInput())
    assert (done.pane, done.client) == (world.pane, None)
    assert outcome(done).body["ok"] is True and done.tmux_session.startswith("$")
    await world.asking("outside", pane="")  # not in tmux
    error = await refused(world.acts.focus("outside", FocusInput()))
    assert (error.status, error.reason) == (409, "this session has no tmux pane")


@pytest.mark.asyncio
async def test_dismiss_only_a_review(world: World) -> None:
    await world.hook("d1", "UserPromptSubmit", prompt="x")
    busy = await refused(world.acts.dismiss("d1"))
    assert (busy.status, busy.reason) == (409, "session is busy, not in review")
    await world.hook("d1", "Stop")
    assert world.engine.sessions["d1"].state is State.REVIEW
    done = await world.acts.dismiss("d1")
    assert done.session["state"] == "idle" and outcome(done).status == 200
    assert world.engine.sessions["d1"].state is State.IDLE
    assert (await refused(world.acts.dismiss("nope"))).status == 404


@dataclass
class OtherHost:
    """The broker link as the verbs see it (actions.Relay); the link itself runs against a real
    Redis in tests/hosts. Holds one session, "r1", owned by host "b"."""

    asked: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)

    def owner_of(self, session_id: str) -> str | None:
        return "b" if session_id == "r1" else None

    async def ask(self, verb: str, session_id: str, args: dict[str, Any]) -> Outcome:
        self.asked.append((verb, session_id, args))
        return Outcome(503, {"error": "host 'b' is offline"})


@pytest.mark.asyncio
async def test_another_hosts_session_is_relayed_and_ours_never(world: World) -> None:
    await world.asking("s1")
    other = OtherHost()
    acts = Actions(world.engine, world.acts.desk, world.acts.settings, relay=lambda: other)
    assert acts.owner_of("r1") == "b" and acts.owner_of("s1") is None
    assert await acts.relayed("screen", "s1", {}) is None  # ours: acted on here
    assert await acts.relayed("screen", "unknown", {}) is None  # nobody's: a 404 here
    out = await acts.relayed("focus", "r1", FocusInput("/dev/pts/1").to_json())
    assert out == Outcome(503, {"error": "host 'b' is offline"})
    assert other.asked == [("focus", "r1", {"client": "/dev/pts/1"})]
    # Without a broker, nothing is relayed.
    assert await world.acts.relayed("screen", "r1", {}) is None


def test_the_cli_says_what_a_refused_or_unconfirmed_answer_means(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI goes through the HTTP API: an ActionError's JSON (its reason, the keys typed, the
    prompt) reaches the terminal with what to do next."""
    with dialog_pane(tmp_path) as (sock, pane):
        d = cli_sees(
            Daemon(home=tmp_path / "pmx", claude_dir=tmp_path / "claude").start(), monkeypatch
        )
        try:
            asking(d, "cli-1", sock, pane)
            wait_for(lambda: (d.session("cli-1") or {}).get("state") == "needs-input")
            # Not Claude: the digit reaches the pane, the dialog stays (504).
            assert main(["answer", "cli-1", "--option", "Yes"], out=io.StringIO()) == 1
            err = capsys.readouterr().err
            assert "still on screen" in err and "(HTTP 504)" in err
            assert "keys typed: 1" in err and "purplemux peek cli-1" in err
            # A free-text answer to a permission: 422, with the options to pick from.
            assert main(["answer", "cli-1", "--text", "maybe"], out=io.StringIO()) == 1
            err = capsys.readouterr().err
            assert "takes no free text" in err and "pick one of the options" in err
        finally:
            d.stop()


@pytest.mark.asyncio
async def test_resume_arms_only_what_it_can_type_into(world: World) -> None:
    from purplemux.core import events as ev
    from purplemux.daemon.actions import ResumeInput

    for sid, agent in (("w1", "claude"), ("w2", "codex")):
        await world.hook(sid, "UserPromptSubmit", prompt="x")
        await world.engine.submit(
            ev.StopFailure(
                session_id=sid,
                at=time.time(),
                id=f"wall-{sid}",
                agent=agent,
                error="limit",
                error_kind="rate_limit",
                limit_hit=True,
                limit_resets_at=time.time() + 3600,
            )
        )
    codex = await refused(world.acts.resume("w2", ResumeInput(True, "cli")))
    assert codex.status == 409
    assert codex.reason == (
        "purplemux cannot read Codex's input box to type into it: nothing was armed"
    )
    armed = await world.acts.resume("w1", ResumeInput(True, "cli"))
    assert armed.session["resume"]["state"] == "armed"
    assert armed.session["view"]["resume"].startswith("resumes after ")
    again = await world.acts.resume("w1", ResumeInput(True, "page"))  # asked twice: armed once
    assert again.session["resume"]["by"] == "cli"
    cancelled = await world.acts.resume("w1", ResumeInput(False, "page"))
    assert cancelled.session["resume"]["state"] == "cancelled"
    assert cancelled.session["view"]["resume"] == ""
    assert (await refused(world.acts.resume("nope", ResumeInput(True)))).status == 404
