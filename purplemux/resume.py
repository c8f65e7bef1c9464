"""Resume at the reset, when asked: whether and when to type "continue" into a session at its
usage limit (pure: no I/O, no clock; `now` is given).

The user arms a session at a wall (the row's button, `purplemux resume ID --at-reset`, or every
wall with PURPLEMUX_RESUME_AT_RESET=on); shortly after the reset (`DELAY`), if the session still
sits at that wall and nothing moved since, the resumer part (parts/resumer.py) reads the pane
and types `PROMPT` once (resume_pane.py, through the answering desk's checks). The request lives
on the session (`Session.resume`, set by Resume events) and names its wall, so a new wall is a
new question and each request is typed at most once.
"""

from __future__ import annotations

from dataclasses import dataclass

from purplemux.model import ResumeAtReset, Session, State

DELAY = 60.0
"""Seconds after the limit's reset before typing: the reset time is the server's clock and
its window rolls over on its side, so a prompt sent at the second may hit the wall again; Claude
itself waits about 105 s before it continues on its own (claude-code-bg-and-limits.md). A
minute clears that and still reads as "at the reset"."""
PROMPT = "continue"
"""What is typed: short, and what a person types to pick up where the turn stopped."""
BY = "resume-at-reset"
"""Who typed it, as the audit event names the daemon's own typing."""
SETTING = "setting"
"""Who armed it when PURPLEMUX_RESUME_AT_RESET=on did."""
AT_REST = frozenset({State.REVIEW, State.IDLE})
"""Where a session at a wall sits: its failed turn is a review (dismissed: idle)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do about one session now: "none" (not armed), "wait" until `at`, "due" (read
    the pane and type), or "cancel" (armed, but the session moved: `reason`)."""

    what: str
    at: float | None = None
    reason: str = ""


NONE = Decision("none")


def armed(s: Session) -> ResumeAtReset | None:
    """The session's request, when it is armed for the wall it sits at now."""
    r = s.resume
    if r is None or r.state != "armed" or s.limit is None or r.wall_at != s.limit.at:
        return None
    return r


def due_at(s: Session) -> float | None:
    """When an armed session's prompt is to be typed (None: not armed, or no reset time)."""
    if armed(s) is None or s.limit is None or s.limit.resets_at is None:
        return None
    return s.limit.resets_at + DELAY


def refusal(s: Session) -> str | None:
    """Why this session cannot be armed now (None: it can), as the API's 409 says it."""
    if s.ended:
        return "the session has ended"
    if s.limit is None:
        return "the session is not at a usage limit"
    if s.limit.auto_resume_at is not None:
        return "Claude continues this session by itself at the reset"
    if s.limit.resets_at is None:
        return "the limit's reset time is unknown"
    if s.tmux is None or not s.tmux.pane:
        return "the session has no tmux pane to type into"
    if s.state not in AT_REST:
        return f"the session is {s.state.value}, not stopped at its limit"
    r = s.resume
    if r is not None and r.wall_at == s.limit.at and r.state == "typing":
        return "purplemux is typing the resume prompt now"
    if r is not None and r.wall_at == s.limit.at and r.state == "typed":
        return "purplemux already typed the resume prompt at this reset"
    return None


def moved(s: Session, r: ResumeAtReset) -> str | None:
    """Why an armed request no longer holds (None: it does): the session ended, left its wall,
    runs or asks again, or Claude took the reset over."""
    if s.ended:
        return "the session ended"
    if s.limit is None or s.limit.at != r.wall_at:
        return "the session moved on from its limit"
    if s.limit.auto_resume_at is not None:
        return "Claude continues this session by itself"
    if s.state not in AT_REST:
        return f"the session moved ({s.state.value})"
    if s.state is State.REVIEW and s.state_since > r.at:
        return "the session moved (a new turn ended)"
    if s.tmux is None or not s.tmux.pane:
        return "the session has no tmux pane"
    return None


def pending(s: Session) -> ResumeAtReset | None:
    """The session's request while it says armed, for its wall or one it has left."""
    return s.resume if s.resume is not None and s.resume.state == "armed" else None


def decide(s: Session, now: float) -> Decision:
    """What to do about `s` at `now` (see Decision)."""
    r = pending(s)
    if r is None:
        return NONE
    why = moved(s, r)
    if why is not None:
        return Decision("cancel", reason=why)
    at = due_at(s)
    if at is None:
        return Decision("cancel", reason="the limit's reset time is unknown")
    return Decision("due", at) if now >= at else Decision("wait", at)


def arm_by_setting(s: Session) -> bool:
    """PURPLEMUX_RESUME_AT_RESET=on arms every wall nobody has answered for: a wall the user
    cancelled (or one already typed or skipped) is left alone."""
    if s.limit is None or refusal(s) is not None:
        return False
    return s.resume is None or s.resume.wall_at != s.limit.at


def next_due(sessions: list[Session]) -> float | None:
    """The earliest time any armed session is due (one timer for them all)."""
    times = [t for t in (due_at(s) for s in sessions) if t is not None]
    return min(times) if times else None
