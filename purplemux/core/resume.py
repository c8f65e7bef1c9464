"""Resume at the reset, when asked: whether and when to type "continue" into a session at its
usage limit (pure: no I/O, no clock; `now` is given).

The user arms a session at a wall (the row's button, `purplemux resume ID --at-reset`, or every
wall with PURPLEMUX_RESUME_AT_RESET=on); shortly after the reset (`DELAY`), if the session still
sits at that wall and nothing moved since, the resumer part (parts/resumer.py) reads the pane
and types `PROMPT` once (resume_pane.py, through the answering desk's checks). The request lives
on the session (`Session.resume`, set by Resume events) and names its wall, so a new wall is a
new question and each request is typed at most once.

Nothing types in a loop (issue 37): the setting never types a wall whose reset was already past
when it armed it (a server clock behind ours, a stale reset: "skip"); a turn purplemux resumed
that hits a new wall within `AGAIN` seconds stops the setting for that session ("stopped", told
once) until the user arms it again; and `Budget` lets at most `PER_SESSION` prompts a session
and `EVERYONE` in all through in their windows.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from purplemux.core.model import LimitWall, ResumeAtReset, Session, State

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
AGAIN = 300.0
"""Seconds: a turn purplemux resumed that hits a new wall this soon after the typing hit it "at
once" (the window had not rolled over): the setting stops for that session."""
PER_SESSION = (2, 3600.0)
"""At most 2 prompts into one session an hour (a wall resets hours apart)."""
EVERYONE = (20, 600.0)
"""At most 20 prompts in all in ten minutes (sessions of one account share a reset)."""
PAST = "the reset was already past when the wall was seen (a clock behind, or a stale time)"
"""Why the setting leaves a wall alone whose reset was past when it armed it."""
SLACK = 60.0
"""Seconds a reset may lie before the arming and still be this wall's own, not a stale one:
Claude's hook says the reset to the minute (the transcript's exact time comes later), so at
a wall that resets within the minute the hook's time can already be past (verified on
2.1.332: a reset 15 s ahead)."""
STOPPED = "auto-resume stopped: the turn it resumed hit the usage limit again at once"
"""Why the setting stops for a session (until the user arms it again)."""
AT_REST = frozenset({State.REVIEW, State.IDLE})
"""Where a session at a wall sits: its failed turn is a review (dismissed: idle)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do about one session now: "none" (not armed), "wait" until `at`, "due" (read
    the pane and type), "cancel" (armed, but the session moved: `reason`) or "skip" (armed by
    the setting at a reset already past: `reason`); of the setting (`by_setting`): "arm" or
    "stop" (`reason`)."""

    what: str
    at: float | None = None
    reason: str = ""


NONE = Decision("none")


def for_wall(r: ResumeAtReset | None, wall: LimitWall | None) -> bool:
    """Whether the request is about this wall. A wall is named by when it began (`at`), but
    the sources that say it (a job file, the hook, the transcript) land in any order, and an
    event older than the last one folds the session again in time order: the wall then begins
    at its earliest report, before the one the request was made against. A wall starts only
    after its turn's prompt, so a request made at or after the wall's start is about it, and
    one about an earlier wall (before that prompt) never is."""
    return r is not None and wall is not None and wall.at <= r.wall_at


def has_screen(s: Session) -> bool:
    """Somewhere to type: its tmux pane, or (a `claude --bg` session) its job, whose screen an
    attach window shows (attach.py)."""
    return bool(s.tmux is not None and s.tmux.pane) or bool(s.background and s.job_id)


def armed(s: Session) -> ResumeAtReset | None:
    """The session's request, when it is armed for the wall it sits at now."""
    r = s.resume
    if r is None or r.state != "armed" or not for_wall(r, s.limit):
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
    if not has_screen(s):
        return "the session has no tmux pane or background job to type into"
    if s.state not in AT_REST:
        return f"the session is {s.state.value}, not stopped at its limit"
    r = s.resume
    if for_wall(r, s.limit) and r is not None and r.state == "typing":
        return "purplemux is typing the resume prompt now"
    if for_wall(r, s.limit) and r is not None and r.state == "typed":
        return "purplemux already typed the resume prompt at this reset"
    return None


def moved(s: Session, r: ResumeAtReset) -> str | None:
    """Why an armed request no longer holds (None: it does): the session ended, left its wall,
    runs or asks again, or Claude took the reset over."""
    if s.ended:
        return "the session ended"
    if s.limit is None or not for_wall(r, s.limit):
        return "the session moved on from its limit"
    if s.limit.auto_resume_at is not None:
        return "Claude continues this session by itself"
    if s.state not in AT_REST:
        return f"the session moved ({s.state.value})"
    if s.state is State.REVIEW and s.state_since > r.at:
        return "the session moved (a new turn ended)"
    if not has_screen(s):
        return "the session has no tmux pane or background job"
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
    if r.by == SETTING and s.limit is not None and (s.limit.resets_at or 0.0) <= r.at - SLACK:
        return Decision("skip", reason=PAST)
    return Decision("due", at) if now >= at else Decision("wait", at)


def again_at_once(s: Session) -> bool:
    """The session sits at a new wall that its turn resumed by purplemux hit within AGAIN
    seconds of the typing: the window had not rolled over on the server's side."""
    r, wall = s.resume, s.limit
    if r is None or wall is None or r.state != "typed" or r.by != BY or for_wall(r, wall):
        return False
    return wall.at - r.at <= AGAIN


def by_setting(s: Session) -> Decision:
    """What PURPLEMUX_RESUME_AT_RESET=on does about `s`: "arm" a wall nobody has answered for
    (one the user cancelled, or one already typed, skipped or stopped, is left alone), "stop"
    when purplemux's last prompt hit a new wall at once, or "none"; after a stop it arms
    nothing in that session until the user arms it."""
    r = s.resume
    if s.limit is None or refusal(s) is not None or (r is not None and r.state == "stopped"):
        return NONE
    if for_wall(r, s.limit):
        return NONE
    if again_at_once(s):
        return Decision("stop", reason=STOPPED)
    return Decision("arm")


@dataclass
class Budget:
    """How many prompts the resumer has typed lately, per session and in all; times are given
    (unix seconds), so it is pure. `refusal` says why one more may not be typed now."""

    sessions: dict[str, deque[float]] = field(default_factory=dict)
    everyone: deque[float] = field(default_factory=deque)

    @staticmethod
    def _recent(times: deque[float], window: float, now: float) -> int:
        while times and times[0] <= now - window:
            times.popleft()
        return len(times)

    def refusal(self, session_id: str, now: float) -> str | None:
        """Why no prompt may go to `session_id` now (None: it may)."""
        most, window = PER_SESSION
        mine = self.sessions.get(session_id, deque())
        if not self._recent(mine, window, now):
            self.sessions.pop(session_id, None)  # forgotten once its window has passed
        elif len(mine) >= most:
            return "purplemux typed “continue” into it twice in the last hour: no more for now"
        most, window = EVERYONE
        if self._recent(self.everyone, window, now) >= most:
            return f"purplemux typed “continue” {most} times in the last ten minutes: no more now"
        return None

    def spend(self, session_id: str, at: float) -> None:
        """A prompt is being typed into `session_id` at `at`."""
        self.sessions.setdefault(session_id, deque()).append(at)
        self.everyone.append(at)


def next_due(sessions: list[Session]) -> float | None:
    """The earliest time any armed session is due (one timer for them all)."""
    times = [t for t in (due_at(s) for s in sessions) if t is not None]
    return min(times) if times else None
