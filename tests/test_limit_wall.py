"""The limit wall from the real Claude 2.1.332 captures (three logins) and Codex 0.171.0's 429.

Samples: tests/samples/claude-code-2.1.332/bg-and-limits (its README says which run made which
file): the hooks of an API-key, a gateway-token and a fake-subscription login hitting 429s, the
transcript lines Claude wrote for them, and Codex's f_api_errors rollout."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from purplemux.agents.claude import limits
from purplemux.agents.claude.hooks import to_event
from purplemux.agents.claude.transcript import TranscriptReader
from purplemux.agents.codex.rollout import RolloutReader
from purplemux.core import events as ev
from purplemux.core.machine import fold
from purplemux.core.model import LimitWall, Session, State
from purplemux.core.present import present
from tests.agents.codex.samples import rollout

SAMPLES = Path(__file__).parent / "samples" / "claude-code-2.1.332" / "bg-and-limits"
GATEWAY = "b286962e-c5e9-4dfe-b005-a189125af5b2"
OAUTH = "05f43340-5b87-4f77-8090-73a35b260404"
APIKEY = "a07cbdd7-9434-4638-9775-da52ca689e0e"


def utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def hooks(login: str, session: str) -> list[ev.Event]:
    """The captured hook calls of one session, as the daemon translates them."""
    out = []
    for n, line in enumerate((SAMPLES / "hooks" / f"hooks-{login}.jsonl").read_text().splitlines()):
        record = json.loads(line)
        p: dict[str, Any] = record["payload"]
        if p.get("session_id") != session:
            continue
        name = p["hook_event_name"]
        common = dict(session_id=session, at=record["ts"], id=f"h{n}", name=name)
        out.append(to_event(name, p, common))
    return out


def transcript(name: str, session: str = "s") -> list[ev.Event]:
    path = next((SAMPLES / "transcripts").glob(f"{name}*.jsonl"))
    return TranscriptReader(session).feed(path.read_bytes())


def failures(events: list[ev.Event]) -> list[ev.StopFailure]:
    return [e for e in events if isinstance(e, ev.StopFailure)]


# --- reading Claude's words ---------------------------------------------------------------------


def test_the_hooks_text_gives_window_and_reset_in_the_zone_it_names() -> None:
    gw = failures(hooks("gateway-jwt", GATEWAY))
    assert [(f.limit_hit, f.limit_window, f.limit_resets_at) for f in gw] == [
        (True, "five_hour", utc("2026-12-01T22:32:00")),  # "resets 10:32pm (UTC)"
        (True, "seven_day", utc("2026-12-04T20:36:00")),  # "resets Dec 4, 8:36pm (UTC)"
    ]
    assert all(not f.limit_exact for f in gw)


def test_a_zone_names_its_own_clock() -> None:
    at = utc("2026-12-01T20:00:00")
    text = "You've hit your 5-hour limit · resets 10:32pm (Europe/Berlin)"
    assert limits.hit_message(text, at) == ("five_hour", utc("2026-12-01T21:32:00"))
    # Past midnight the reset is tomorrow's.
    late = "You've hit your 5-hour limit · resets 1am (UTC)"
    assert limits.hit_message(late, utc("2026-12-01T23:10:00"))[1] == utc("2026-12-02T01:00:00")


def test_an_unknown_zone_gives_no_time_rather_than_a_wrong_one() -> None:
    text = "You've hit your 5-hour limit · resets 10:32pm (Mars/Olympus)"
    assert limits.hit_message(text, 0.0) == ("five_hour", None)


def test_an_api_keys_429_is_a_wall_without_a_time() -> None:
    fs = failures(hooks("apikey-home", APIKEY))
    assert [(f.limit_hit, f.limit_window, f.limit_resets_at) for f in fs] == [
        (True, None, None)
    ] * 2
    assert fs[0].error.startswith("API Error: Request rejected (429)")


def test_the_transcripts_quota_is_exact() -> None:
    (five, seven) = failures(transcript("gateway-jwt-b286962e"))
    assert (five.limit_window, five.limit_resets_at, five.limit_exact) == (
        "five_hour",
        1796164368,
        True,
    )
    assert (seven.limit_window, seven.limit_resets_at) == ("seven_day", 1796416617)
    (plain, unified) = failures(transcript("apikey-a07cbdd7"))
    assert plain.limit_hit and plain.limit_resets_at is None and not plain.limit_exact
    assert unified.limit_hit and unified.limit_window is None  # an API key drops the headers


def test_claude_says_it_will_continue_and_esc_cancels_it() -> None:
    notes = [e for e in transcript("fake-oauth-max-05f43340") if isinstance(e, ev.Limit)]
    assert [(n.auto_resume_at, n.auto_resume_cancelled) for n in notes] == [
        (1796164845, False),  # "set to continue automatically at 10:40pm": the reset's time
        (None, True),  # "Automatic continue cancelled"
        (1796157754, False),  # the short reset that did continue
    ]


def test_the_informational_line_alone_is_read_in_claudes_local_time() -> None:
    text = "Usage limit reached · set to continue automatically at 10:40pm"
    at = utc("2026-12-01T20:40:45.457")
    assert limits.auto_resume_time(text, at, UTC) == utc("2026-12-01T22:40:00")
    assert limits.auto_resume_time(text, at, ZoneInfo("Asia/Tokyo")) == utc("2026-12-02T13:40:00")
    assert limits.auto_resume_time("Usage limit reached", at, UTC) is None


def test_only_claudes_own_continuation_is_by_the_agent() -> None:
    prompts = [e for e in hooks("fake-oauth-max", OAUTH) if isinstance(e, ev.Prompt)]
    assert [p.by_agent for p in prompts] == [False, False, False, True]
    assert limits.is_auto_continue(
        "Your claude.ai usage is available again before the usage-limit reset. Continue the task"
    )
    assert not limits.is_auto_continue("Continue the task")


# --- the wall on the session --------------------------------------------------------------------


def fold_all(events: list[ev.Event]) -> Session:
    return fold(Session(id="s"), sorted(events, key=lambda e: e.at))


def test_gateway_5h_wall_from_the_hook_then_the_transcript() -> None:
    events = hooks("gateway-jwt", GATEWAY)
    first_wall = next(i for i, e in enumerate(events) if isinstance(e, ev.StopFailure))
    s = fold_all(events[: first_wall + 1])
    assert s.state is State.REVIEW
    assert s.limit == LimitWall("five_hour", utc("2026-12-01T22:32:00"), None, s.limit.at)
    tx = [e for e in transcript("gateway-jwt-b286962e", GATEWAY) if isinstance(e, ev.StopFailure)]
    s = fold(s, tx[:1])
    assert s.limit is not None and s.limit.resets_at == 1796164368  # to the second now


def test_the_next_prompt_clears_the_wall_and_the_weekly_one_comes() -> None:
    s = fold_all(hooks("gateway-jwt", GATEWAY))
    # The session ended at last: the wall goes with it.
    assert s.ended and s.limit is None
    events = hooks("gateway-jwt", GATEWAY)
    weekly = [i for i, e in enumerate(events) if isinstance(e, ev.StopFailure)][1]
    s = fold_all(events[: weekly + 1])
    assert s.limit is not None and s.limit.window == "seven_day"
    s = fold(s, [e for e in events[weekly + 1 :] if isinstance(e, ev.Prompt)][:1])
    assert s.state is State.BUSY and s.limit is None


def test_subscription_continues_at_the_reset_and_its_turn_clears_the_wall() -> None:
    events = hooks("fake-oauth-max", OAUTH) + transcript("fake-oauth-max-05f43340", OAUTH)
    events = sorted(events, key=lambda e: e.at)
    fired = next(
        i
        for i, e in enumerate(events)
        if isinstance(e, ev.Notice) and e.notification_type == "quota_auto_resume_fired"
    )
    s = fold(Session(id=OAUTH), events[:fired])
    assert s.state is State.REVIEW
    assert s.limit is not None and s.limit.auto_resume_at == 1796157754
    s = fold(s, events[fired : fired + 1])
    assert s.limit is not None  # the notice alone: the prompt that follows starts the turn
    prompt = next(e for e in events[fired:] if isinstance(e, ev.Prompt))
    assert prompt.by_agent
    s = fold(s, [prompt])
    assert s.state is State.BUSY and s.limit is None


def test_a_cancelled_auto_continue_leaves_the_wall_without_a_time() -> None:
    events = hooks("fake-oauth-max", OAUTH) + transcript("fake-oauth-max-05f43340", OAUTH)
    events = sorted(events, key=lambda e: e.at)
    cancel = next(
        i for i, e in enumerate(events) if isinstance(e, ev.Limit) and e.auto_resume_cancelled
    )
    s = fold(Session(id=OAUTH), events[: cancel + 1])
    assert s.limit is not None
    assert (s.limit.window, s.limit.resets_at, s.limit.auto_resume_at) == (
        "five_hour",
        1796164845,
        None,
    )


# --- Codex --------------------------------------------------------------------------------------


def test_codex_429_is_a_wall_other_failures_are_not() -> None:
    events = RolloutReader("t").feed(rollout("f_api_errors").read_bytes())
    fs = failures(events)
    assert [f.limit_hit for f in fs] == [False, True, False, False]
    assert "429 Too Many Requests" in fs[1].error
    s = fold(
        Session(id="t", agent="codex"),
        sorted(events, key=lambda e: e.at)[: events.index(fs[1]) + 1],
    )
    assert s.limit == LimitWall(None, None, None, fs[1].at)


def test_codex_reached_type_names_the_full_window() -> None:
    head = {"timestamp": "2026-12-01T20:00:00Z", "type": "event_msg"}
    limits_line = {
        **head,
        "payload": {
            "type": "token_count",
            "info": None,
            "rate_limits": {
                "primary": {"used_percent": 100.0, "window_minutes": 300, "resets_at": 1796160105},
                "secondary": {
                    "used_percent": 40.0,
                    "window_minutes": 10080,
                    "resets_at": 1796415705,
                },
                "rate_limit_reached_type": "rate_limit_reached",
            },
        },
    }
    failed = {
        **head,
        "payload": {"type": "task_complete", "error": {"message": "usage limit reached"}},
    }
    data = "".join(json.dumps(x) + "\n" for x in (limits_line, failed)).encode()
    (f,) = failures(RolloutReader("t").feed(data))
    assert (f.limit_hit, f.limit_window, f.limit_resets_at, f.limit_exact) == (
        True,
        "five_hour",
        1796160105,
        True,
    )


# --- an API key's 429s: Claude retries for ~3 minutes, busy, with no hook ----------------------


def test_an_api_key_session_retrying_a_429_says_retrying_n() -> None:
    path = next((SAMPLES / "transcripts").glob("apikey-a07cbdd7*.jsonl"))
    lines = path.read_bytes().splitlines(keepends=True)
    prompts = [e for e in hooks("apikey-home", APIKEY) if isinstance(e, ev.Prompt)]
    for prompt, retried in zip(prompts[:2], ("LIMIT:plain", "LIMIT:5h"), strict=True):
        assert prompt.prompt == retried
        reader = TranscriptReader(APIKEY)
        s = fold(Session(id=APIKEY), [prompt])
        seen = []
        for line in lines:
            for e in reader.feed(line):
                if e.at >= prompt.at - 1:
                    s = fold(s, [e])
                    seen.append(present(s).retrying)
            if s.state is not State.BUSY:
                break
        # Ten retries (11 requests) are shown one by one while busy; the failure ends them.
        assert [x for x in seen if x][-1] == "retrying (10)"
        assert "retrying (4)" in seen
        assert s.state is State.REVIEW and present(s).retrying == ""
        assert s.limit is not None and s.limit.window is None


def test_codex_usage_limit_failure_is_a_wall_even_without_a_reading() -> None:
    failed = {
        "timestamp": "2026-12-01T20:00:00Z",
        "type": "event_msg",
        "payload": {
            "type": "task_complete",
            "error": {
                "message": "You\u2019ve hit your usage limit. Visit … try again at 9:42 AM.",
                "codex_error_info": "usage_limit_exceeded",
            },
        },
    }
    (f,) = failures(RolloutReader("t").feed((json.dumps(failed) + "\n").encode()))
    assert (f.limit_hit, f.limit_window, f.limit_resets_at) == (True, None, None)
