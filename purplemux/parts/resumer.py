"""The resumer part: one timer at the earliest armed reset; types the resume prompt once.

It holds no state of its own beyond which sessions to look at and when it typed lately (the
rate limit, `resume.Budget`, seeded from the sessions' last prompts at a start): the request is
the session's (`Session.resume`, set by Resume events), so a restart picks it up where it was.
While nothing is armed it waits on the engine's changes only (no timer, no polling). What it
does is recorded as a Resume event by "resume-at-reset": typed, skipped with the reason (a reset
already past when the setting armed it, or the rate limit), cancelled because the session
moved, or stopped (the setting's prompt hit the wall again at once); the notifier pushes the
typed, skipped and stopped ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid

from purplemux.agents import registry
from purplemux.core import events as ev
from purplemux.core import resume
from purplemux.core.events import Source
from purplemux.core.model import Session
from purplemux.daemon.resume_pane import Locate, Skipped, type_resume
from purplemux.daemon.runtime import Runtime

log = logging.getLogger(__name__)


def _watched(s: Session) -> bool:
    """Worth a look: at a wall (the setting may arm it) or armed."""
    return s.limit is not None or resume.pending(s) is not None


def _typed(s: Session) -> tuple[float, str] | None:
    """When the resumer last typed (or began typing) into `s`, with its id; None: never."""
    r = s.resume
    if r is None or r.by != resume.BY or r.state not in ("typing", "typed"):
        return None
    return (r.at, s.id)


async def _record(
    rt: Runtime,
    s: Session,
    wall_at: float,
    state: str,
    by: str,
    reason: str | None = None,
    text: str | None = None,
    confirmed: bool = True,
) -> None:
    """Store a Resume event: the setting's arming is the user's (their standing request), the
    rest the daemon's."""
    await rt.engine.submit(
        ev.Resume(
            session_id=s.id,
            at=time.time(),
            id=f"resume:{uuid.uuid4().hex}",
            source=Source.USER if by == resume.SETTING else Source.DAEMON,
            name=f"Resume at reset: {state} ({by})",
            wall_at=wall_at,
            state=state,
            by=by,
            reason=reason,
            text=text,
            confirmed=confirmed,
        )
    )


def _locate(rt: Runtime) -> Locate:
    """A session's pane, or a background session's attach window (opened for the typing, then
    detached with Ctrl+Z and closed), as the answers use them."""
    return rt.actions.shown


async def _fire(rt: Runtime, s: Session, wall_at: float) -> None:
    """Type the prompt (or say why not), and record what happened.

    "typing" is stored first: a request is typed at most once even if the daemon stops (or the
    store fails) between the keys and the record of them."""
    await _record(rt, s, wall_at, "typing", resume.BY)
    s = rt.engine.sessions.get(s.id, s)
    try:
        typed = await type_resume(
            rt.desk,
            s,
            rt.settings.input_allowed,
            lambda: rt.engine.sessions.get(s.id),
            locate=_locate(rt),
        )
    except Skipped as exc:
        log.info("resume at reset of %s skipped: %s", s.id, exc.reason)
        await _record(rt, s, wall_at, "skipped", resume.BY, reason=exc.reason[:100])
        return
    except Exception as exc:  # never left at "typing": the user hears it did not happen
        log.exception("resume at reset of %s failed", s.id)
        why = f"it failed: {type(exc).__name__}"
        await _record(rt, s, wall_at, "skipped", resume.BY, reason=why)
        return
    log.info("resume at reset of %s: typed %r (confirmed: %s)", s.id, typed.text, typed.confirmed)
    await _record(rt, s, wall_at, "typed", resume.BY, text=typed.text, confirmed=typed.confirmed)


async def _by_setting(rt: Runtime, s: Session) -> Session:
    """PURPLEMUX_RESUME_AT_RESET=on: arm the session's new wall, or stop for the session."""
    said = resume.by_setting(s)
    if s.limit is None or said.what == "none":
        return s
    if said.what == "stop":
        log.warning("resume at reset of %s stopped: %s", s.id, said.reason)
        await _record(rt, s, s.limit.at, "stopped", resume.BY, reason=said.reason)
    else:
        await _record(rt, s, s.limit.at, "armed", resume.SETTING)
    return rt.engine.sessions[s.id]


async def _round(rt: Runtime, ids: set[str], budget: resume.Budget) -> float | None:
    """Arm, cancel or fire what is due among `ids`; the next due time (None: nothing armed)."""
    for sid in sorted(ids):
        s = rt.engine.sessions.get(sid)
        if s is None or not _watched(s):
            ids.discard(sid)
            continue
        typable = registry.get(s.agent).input_box is not None
        if rt.settings.resume_at_reset and typable:
            s = await _by_setting(rt, s)
        now = time.time()
        decision = resume.decide(s, now)
        request = resume.pending(s)
        if request is None:
            continue
        why = decision.reason
        if decision.what == "due" and (over := budget.refusal(sid, now)) is not None:
            decision, why = resume.Decision("skip"), over
        if decision.what == "cancel":
            await _record(rt, s, request.wall_at, "cancelled", resume.BY, reason=why)
        elif decision.what == "skip":
            log.info("resume at reset of %s skipped: %s", sid, why)
            await _record(rt, s, request.wall_at, "skipped", resume.BY, reason=why)
        elif decision.what == "due":
            budget.spend(sid, now)
            await _fire(rt, s, request.wall_at)
    return resume.next_due([s for sid in ids if (s := rt.engine.sessions.get(sid)) is not None])


async def resumer(rt: Runtime) -> None:
    """Wake on a change of a session at a wall or armed, or when the earliest reset is due."""
    wake = asyncio.Event()
    ids = {s.id for s in rt.engine.sessions.values() if _watched(s)}
    budget = resume.Budget()
    for at, sid in sorted(t for s in rt.engine.sessions.values() if (t := _typed(s))):
        budget.spend(sid, at)  # the last prompt of each session before a restart counts

    def on_change(session: Session) -> None:
        if _watched(session) or session.id in ids:
            ids.add(session.id)
            wake.set()

    unsubscribe = rt.engine.subscribe(change=on_change)
    try:
        while True:
            wake.clear()
            due = await _round(rt, ids, budget)
            timeout = None if due is None else max(0.0, due - time.time())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), timeout)
    finally:
        unsubscribe()
