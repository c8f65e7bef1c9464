"""Resume at the reset, decided (purplemux/core/resume.py), read off Claude's screen
(agents/claude/input_box.py) and said on the row (present.py): pure, no daemon."""

from __future__ import annotations

from dataclasses import replace

import pytest

from purplemux.agents.claude.input_box import read_input_box
from purplemux.core import events as ev
from purplemux.core.machine import fold
from purplemux.core.model import LimitWall, ResumeAtReset, Session, State, TmuxLocation
from purplemux.core.present import CANCEL_RESUME, RESUME, clock_time, present
from purplemux.core.resume import (
    AGAIN,
    DELAY,
    EVERYONE,
    PAST,
    PER_SESSION,
    SLACK,
    STOPPED,
    Budget,
    by_setting,
    decide,
    next_due,
    refusal,
)
from purplemux.notify.message import resume_payload
from tests.support.input_pane import LIMITS

WALL = LimitWall("five_hour", resets_at=10_000.0, auto_resume_at=None, at=100.0)
AT_WALL = Session(
    id="s1",
    state=State.REVIEW,
    state_since=100.0,
    tmux=TmuxLocation("%1", "/tmp/s", "w", "0"),
    limit=WALL,
    error="You've hit your 5-hour limit · resets 10:32pm (UTC)",
    error_kind="rate_limit",
)
ARMED = replace(AT_WALL, resume=ResumeAtReset(100.0, "armed", "page", 200.0))


def test_an_armed_session_waits_for_the_reset_then_a_minute_then_is_due() -> None:
    assert decide(ARMED, 5_000.0).what == "wait"
    assert decide(ARMED, 5_000.0).at == 10_000.0 + DELAY
    assert decide(ARMED, 10_000.0).what == "wait"  # at the reset itself: not yet
    assert decide(ARMED, 10_000.0 + DELAY).what == "due"
    assert next_due([AT_WALL, ARMED]) == 10_000.0 + DELAY
    assert next_due([AT_WALL]) is None  # nothing armed: no timer at all


def test_nothing_is_done_for_a_session_nobody_armed_or_one_already_typed() -> None:
    assert decide(AT_WALL, 20_000.0).what == "none"
    typed = replace(AT_WALL, resume=ResumeAtReset(100.0, "typed", "resume-at-reset", 10_060.0))
    assert decide(typed, 20_000.0).what == "none"
    assert refusal(typed) == "purplemux already typed the resume prompt at this reset"
    typing = replace(typed, resume=replace(typed.resume, state="typing"))  # type: ignore[arg-type]
    assert decide(typing, 20_000.0).what == "none"
    assert refusal(typing) == "purplemux is typing the resume prompt now"


@pytest.mark.parametrize(
    ("session", "why"),
    [
        (replace(ARMED, state=State.BUSY, state_since=300.0), "the session moved (busy)"),
        (replace(ARMED, state=State.NEEDS_INPUT), "the session moved (needs-input)"),
        (replace(ARMED, state_since=300.0), "the session moved (a new turn ended)"),
        (replace(ARMED, limit=None), "the session moved on from its limit"),
        (replace(ARMED, limit=replace(WALL, at=400.0)), "the session moved on from its limit"),
        (replace(ARMED, ended=True), "the session ended"),
        (
            replace(ARMED, limit=replace(WALL, auto_resume_at=10_100.0)),
            "Claude continues this session by itself",
        ),
    ],
)
def test_an_armed_session_that_moved_is_cancelled_with_the_reason(
    session: Session, why: str
) -> None:
    assert (decide(session, 20_000.0).what, decide(session, 20_000.0).reason) == ("cancel", why)


def test_dismissing_the_walls_review_keeps_it_armed() -> None:
    dismissed = replace(ARMED, state=State.IDLE, state_since=300.0)
    assert decide(dismissed, 20_000.0).what == "due"


@pytest.mark.parametrize(
    ("session", "why"),
    [
        (replace(AT_WALL, limit=None), "the session is not at a usage limit"),
        (
            replace(AT_WALL, limit=replace(WALL, auto_resume_at=10_100.0)),
            "Claude continues this session by itself at the reset",
        ),
        (
            replace(AT_WALL, limit=replace(WALL, resets_at=None)),
            "the limit's reset time is unknown",
        ),
        (
            replace(AT_WALL, tmux=None),
            "the session has no tmux pane or background job to type into",
        ),
        (
            replace(AT_WALL, tmux=None, background=True, job_id=None),
            "the session has no tmux pane or background job to type into",
        ),
        (replace(AT_WALL, ended=True), "the session has ended"),
        (replace(AT_WALL, state=State.BUSY), "the session is busy, not stopped at its limit"),
    ],
)
def test_only_a_session_stopped_at_a_known_reset_in_a_pane_can_be_armed(
    session: Session, why: str
) -> None:
    assert refusal(session) == why
    assert RESUME not in present(session).actions


def test_a_background_job_at_its_wall_can_be_armed_and_stays_armed_with_no_pane() -> None:
    bg = replace(AT_WALL, tmux=None, background=True, job_id="2f1401e2")
    assert refusal(bg) is None and RESUME in present(bg).actions
    armed_bg = replace(bg, resume=ARMED.resume)
    assert decide(armed_bg, 10_000.0 + DELAY).what == "due"


def test_the_setting_arms_each_wall_once_and_leaves_a_cancelled_one_alone() -> None:
    assert by_setting(AT_WALL).what == "arm"
    assert by_setting(ARMED).what == "none"
    cancelled = replace(AT_WALL, resume=ResumeAtReset(100.0, "cancelled", "cli", 300.0))
    assert by_setting(cancelled).what == "none"
    # The next wall is a new question.
    assert by_setting(replace(cancelled, limit=replace(WALL, at=500.0))).what == "arm"
    assert by_setting(replace(AT_WALL, limit=replace(WALL, auto_resume_at=1.0))).what == "none"


def by_the_setting(resets_at: float, armed_at: float) -> Session:
    """At a wall resetting at `resets_at`, armed by the setting at `armed_at`."""
    return replace(
        AT_WALL,
        limit=replace(WALL, resets_at=resets_at),
        resume=ResumeAtReset(100.0, "armed", "setting", armed_at),
    )


def test_the_setting_never_types_a_wall_whose_reset_was_past_when_it_armed_it() -> None:
    now = 20_000.0
    five_past = by_the_setting(now - 300, now)  # a clock behind ours, or a stale reset
    for later in (now, now + DELAY, now + 3600):
        assert (decide(five_past, later).what, decide(five_past, later).reason) == ("skip", PAST)
    # The reset moved back after the arming (the hook's minute, then the transcript's second).
    moved_back = replace(five_past, limit=replace(WALL, resets_at=now - 120))
    assert decide(moved_back, now + DELAY).what == "skip"
    # Within the hook's minute before the arming: this wall's own reset (Claude's hook rounds
    # it), not a stale one: typed after the delay.
    this_minute = replace(five_past, limit=replace(WALL, resets_at=now - SLACK + 1))
    assert decide(this_minute, now + DELAY).what == "due"
    # A reset still ahead when armed is typed after it, once the delay is over.
    ahead = by_the_setting(now + 10, now)
    assert decide(ahead, now + 10 + DELAY - 1).what == "wait"
    assert decide(ahead, now + 10 + DELAY).what == "due"
    # The user's own request at a past reset is typed (once: its wall then says typed).
    users = replace(five_past, resume=ResumeAtReset(100.0, "armed", "page", now))
    assert decide(users, now).what == "due"


def typed_at(at: float, wall_at: float) -> Session:
    """purplemux typed its prompt at `at`; the session now sits at a new wall begun `wall_at`."""
    return replace(
        AT_WALL,
        limit=replace(WALL, at=wall_at, resets_at=wall_at - 300),
        resume=ResumeAtReset(100.0, "typed", "resume-at-reset", at),
    )


def test_a_resumed_turn_at_a_new_wall_at_once_stops_the_setting_for_the_session() -> None:
    at_once = typed_at(10_060.0, 10_062.0)
    assert (by_setting(at_once).what, by_setting(at_once).reason) == ("stop", STOPPED)
    assert by_setting(typed_at(10_060.0, 10_060.0 + AGAIN)).what == "stop"
    assert by_setting(typed_at(10_060.0, 10_061.0 + AGAIN)).what == "arm"  # a turn ran
    # The user typed it (or the user's own request did): no stop, only purplemux's own.
    users = replace(at_once, resume=replace(at_once.resume, by="page"))  # type: ignore[arg-type]
    assert by_setting(users).what == "arm"
    stopped = replace(
        at_once, resume=ResumeAtReset(10_062.0, "stopped", "resume-at-reset", 10_063.0, STOPPED)
    )
    assert by_setting(stopped).what == "none"
    later = replace(stopped, limit=replace(WALL, at=50_000.0, resets_at=60_000.0))
    assert by_setting(later).what == "none"  # every later wall too, until the user arms it
    assert refusal(stopped) is None and refusal(later) is None
    assert RESUME in present(stopped).actions
    assert present(stopped).resume == STOPPED
    payload = resume_payload(stopped)
    assert payload is not None and "auto-resume stopped" in payload["title"]
    assert payload["body"].startswith(STOPPED)


def test_a_session_gets_at_most_two_prompts_an_hour() -> None:
    budget = Budget()
    most, window = PER_SESSION
    assert (most, window) == (2, 3600.0)
    for at in (0.0, 10.0):
        assert budget.refusal("s1", at) is None
        budget.spend("s1", at)
    why = budget.refusal("s1", 20.0)
    assert why is not None and "twice in the last hour" in why
    assert budget.refusal("s1", 3599.0) is not None
    assert budget.refusal("s2", 20.0) is None  # another session has its own
    assert budget.refusal("s1", 3600.5) is None  # the first has left the hour


def test_at_most_twenty_prompts_in_all_in_ten_minutes() -> None:
    budget = Budget()
    most, window = EVERYONE
    assert (most, window) == (20, 600.0)
    for n in range(most):
        assert budget.refusal(f"s{n}", float(n)) is None
        budget.spend(f"s{n}", float(n))
    why = budget.refusal("another", 30.0)
    assert why is not None and "20 times in the last ten minutes" in why
    assert budget.refusal("another", 599.0) is not None
    assert budget.refusal("another", 600.5) is None  # s0's prompt has left the window


def test_the_row_offers_the_button_says_it_is_armed_and_offers_cancelling() -> None:
    view = present(AT_WALL)
    assert RESUME in view.actions and view.resume == "" and view.resume_at is None
    view = present(ARMED)
    assert CANCEL_RESUME in view.actions and RESUME not in view.actions
    assert view.resume == f"resumes after {clock_time(10_000.0, 100.0)}"
    assert view.resume_at == 10_000.0
    skipped = replace(
        AT_WALL,
        resume=ResumeAtReset(100.0, "skipped", "resume-at-reset", 10_060.0, "text is typed"),
    )
    assert present(skipped).resume == "not resumed at the reset: text is typed"
    assert RESUME in present(skipped).actions  # it may be asked again


def test_arming_is_a_user_event_the_event_log_keeps_and_a_replay_restores() -> None:
    events: list[ev.Event] = [
        ev.SessionStart(session_id="s1", at=1.0, id="a"),
        ev.Prompt(session_id="s1", at=2.0, id="b", prompt="go"),
        ev.StopFailure(
            session_id="s1",
            at=3.0,
            id="c",
            error="You've hit your 5-hour limit",
            error_kind="rate_limit",
            limit_hit=True,
            limit_resets_at=9_000.0,
            tmux=TmuxLocation("%1"),
        ),
    ]
    at_wall = fold(Session(id="s1"), events)
    assert at_wall.limit is not None and at_wall.state is State.REVIEW
    arm = ev.Resume(
        session_id="s1", at=4.0, id="d", source=ev.Source.USER, wall_at=at_wall.limit.at, by="cli"
    )
    armed = fold(at_wall, [arm])
    assert armed.resume == ResumeAtReset(at_wall.limit.at, "armed", "cli", 4.0, None)
    assert Session.from_record(armed.to_record()) == armed
    assert decide(armed, 9_000.0 + DELAY).what == "due"
    # Typing it starts a turn (Claude's prompt hook): the wall goes, the request is moot.
    moved = fold(armed, [ev.Prompt(session_id="s1", at=5.0, id="e", prompt="continue")])
    assert decide(moved, 9_999.0).what == "cancel"


def test_the_push_says_it_resumed_or_why_not() -> None:
    typed = replace(AT_WALL, resume=ResumeAtReset(100.0, "typed", "resume-at-reset", 10_060.0))
    payload = resume_payload(typed)
    assert payload is not None
    assert "resumed after the usage limit's reset" in payload["title"]
    assert "continue" in payload["body"]
    skipped = replace(
        AT_WALL,
        resume=ResumeAtReset(100.0, "skipped", "resume-at-reset", 1.0, "text is typed in its box"),
    )
    payload = resume_payload(skipped)
    assert payload is not None and "not resumed at the reset" in payload["title"]
    assert payload["body"].startswith("text is typed in its box")
    assert resume_payload(ARMED) is None


def shot(name: str) -> str:
    return (LIMITS / name).read_text()


def test_the_input_box_at_the_gateway_wall_reads_empty() -> None:
    assert read_input_box(shot("screen-gw-5h-final.txt")).text == ""
    assert read_input_box(shot("screen-gw-5h-final.txt")).unreadable is None


def test_text_in_the_input_box_is_read_as_typed() -> None:
    text = shot("screen-gw-5h-final.txt").replace("\u276f\u00a0", "\u276f half a thought")
    assert read_input_box(text).text == "half a thought"


def test_claudes_own_hint_after_an_api_error_reads_as_empty() -> None:
    assert read_input_box(shot("screen-lim-plain-final.txt")).text == ""


def test_claude_saying_it_continues_by_itself_is_not_read() -> None:
    box = read_input_box(shot("screen-oauth-5h-short-wait.txt"))
    assert box.unreadable == "Claude says it continues by itself"


def test_two_input_boxes_or_none_are_not_read() -> None:
    rule = "\u2500" * 40
    two = "\n".join([rule, "\u276f ", rule, "", rule, "\u276f ", rule])
    assert read_input_box(two).unreadable == "two input boxes on screen"
    assert read_input_box("just a shell prompt $").unreadable == "no input box on screen"
    below = "\n".join([rule, "\u276f ", rule, *["more"] * 8])
    assert read_input_box(below).unreadable == "the input box is not at the bottom of the screen"


def test_a_wall_folded_again_from_an_earlier_report_keeps_its_request() -> None:
    # Armed against the job file's report (at 100.5); the transcript's (at 100.0) landed
    # later and the refold starts the wall there: still the same wall, still armed.
    armed_late = replace(AT_WALL, resume=ResumeAtReset(100.5, "armed", "api", 101.0))
    assert decide(armed_late, 10_000.0 + DELAY).what == "due"
    # A request about the wall before the last prompt is never about the new one.
    new_wall = replace(AT_WALL, limit=replace(WALL, at=300.0), state_since=300.0)
    old = replace(new_wall, resume=ResumeAtReset(100.5, "cancelled", "api", 150.0))
    assert by_setting(old).what == "arm"
    stale = replace(new_wall, resume=ResumeAtReset(100.5, "armed", "api", 150.0))
    assert decide(stale, 10_000.0 + DELAY).reason == "the session moved on from its limit"
