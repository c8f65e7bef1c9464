"""RolloutReader over every captured Codex 0.171.0 rollout: the turn ends a user saw become the
same events Claude's transcript gives, with the numbers Codex showed."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents.codex.rollout import (
    ReaderState,
    RolloutReader,
    Turn,
    codex_left_percent,
    context_percent,
    rate_limits_of,
    read_tail_state,
    tokens_of,
)
from purplemux.core.events import (
    Event,
    Interrupt,
    Source,
    Stop,
    StopFailure,
    TranscriptFacts,
    event_from_json,
)
from purplemux.core.model import RateLimits, Tokens
from tests.agents.codex.samples import SAMPLES, rollout, rollouts, thread_id

ALL_ROLLOUTS = sorted(SAMPLES.glob("*/rollout/rollout-*.jsonl"))
ANSWER = "Hello from the fake model."


def read(path: Path) -> tuple[RolloutReader, list[Event]]:
    reader = RolloutReader(thread_id(path))
    reader.sync(os.stat(path))
    return reader, reader.feed(path.read_bytes())


def turn_events(events: list[Event]) -> list[Event]:
    return [e for e in events if not isinstance(e, TranscriptFacts)]


def by_line(path: Path) -> list[tuple[dict[str, Any], list[Event], ReaderState, str]]:
    """Each line with the events it gave, the state and the current tool after it, fed one at a
    time (as the daemon appends them)."""
    reader = RolloutReader(thread_id(path))
    out = []
    for raw in path.read_bytes().splitlines(keepends=True):
        events = reader.feed(raw)
        out.append((json.loads(raw), events, copy.copy(reader.state), reader.current_tool))
    return out


def facts_after(path: Path, ordinal: int) -> RolloutReader:
    reader = RolloutReader(thread_id(path))
    for raw in path.read_bytes().splitlines(keepends=True):
        reader.feed(raw)
        if json.loads(raw)["ordinal"] == ordinal:
            break
    return reader


def test_every_sample_is_covered() -> None:
    assert len(ALL_ROLLOUTS) == 22


def test_b_plain_each_answer_is_a_stop_with_the_answer() -> None:
    path = rollout("b_plain")
    reader, events = read(path)
    sid = thread_id(path)
    stops = turn_events(events)
    assert [type(e) for e in stops] == [Stop, Stop]
    assert [e.id for e in stops] == [f"rollout:{sid}:13", f"rollout:{sid}:23"]
    assert all(isinstance(e, Stop) and e.last_message == ANSWER for e in stops)
    assert all(e.source is Source.TRANSCRIPT and e.session_id == sid for e in stops)
    assert stops[0].at == pytest.approx(1796156205.870)  # the task_complete line's timestamp
    assert reader.state.turn is Turn.FINISHED
    (facts,) = [e for e in events if isinstance(e, TranscriptFacts)]
    assert facts.snippet == ANSWER
    assert facts.model == "gpt-5.5"
    assert facts.cwd == "/home/user/proj"
    assert facts.tokens == Tokens(input=2400, output=20)
    assert (facts.context_tokens, facts.context_window) == (1210, 258400)
    assert (reader.state.cli_version, reader.state.originator) == ("0.171.0", "codex-tui")
    assert reader.state.thread_id == sid


def test_a_start_idle_never_prompted_has_no_turn() -> None:
    reader, events = read(rollout("a_start_idle"))
    assert turn_events(events) == []
    assert reader.state.turn is Turn.NONE
    (facts,) = events
    assert isinstance(facts, TranscriptFacts)
    assert (facts.cwd, facts.model, facts.tokens) == ("/home/user/proj", "gpt-5.5", None)


def test_a_turn_start_emits_nothing_but_says_in_progress() -> None:
    # Claude's reader emits no Prompt for a prompt line either: the hook says busy.
    starts = 0
    for entry, events, state, _ in by_line(rollout("b_plain")):
        if entry["payload"].get("type") == "task_started":
            starts += 1
            assert turn_events(events) == []
            assert state.turn is Turn.IN_PROGRESS
    assert starts == 2


def test_c_approve_the_running_command_is_the_current_tool() -> None:
    path = rollout("c_approve")
    lines = by_line(path)
    tools = {e["ordinal"]: tool for e, _, _, tool in lines}
    # The function_call (ordinal 9) waits for approval and runs; its output is ordinal 12.
    assert tools[9] == tools[11] == "Bash"
    assert tools[12] == ""
    assert [e.last_message for e in turn_events(read(path)[1]) if isinstance(e, Stop)] == [
        "Done.",
        "Done.",
        "Done.",
    ]


def test_d_deny_is_an_interrupt_then_the_next_prompt_stops() -> None:
    path = rollout("d_deny")
    sid = thread_id(path)
    events = turn_events(read(path)[1])
    assert [(type(e), e.id) for e in events] == [
        (Interrupt, f"rollout:{sid}:14"),
        (Stop, f"rollout:{sid}:24"),
    ]
    assert facts_after(path, 14).state.turn is Turn.INTERRUPTED
    assert facts_after(path, 14).current_tool == ""


def test_e_interrupt_both_escapes_are_interrupts_and_no_stop() -> None:
    path = rollout("e_interrupt")
    reader, events = read(path)
    assert [type(e) for e in turn_events(events)] == [Interrupt, Interrupt]
    assert reader.state.turn is Turn.INTERRUPTED
    assert read_tail_state(path) is Turn.INTERRUPTED


F_ERRORS = [
    (
        "We\u2019re currently experiencing high demand, which may cause temporary errors.",
        "internal_server_error",
    ),
    (
        "exceeded retry limit, last status: 429 Too Many Requests",
        "response_too_many_failed_attempts",
    ),
    (
        "unexpected status 401 Unauthorized: scripted failure 401, url: "
        "http://127.0.0.1:18192/v1/responses",
        "http_connection_failed",
    ),
    ("stream disconnected before completion: scripted stream failure", "other"),
]


def test_f_api_errors_each_failed_turn_is_a_stop_failure_with_the_message() -> None:
    path = rollout("f_api_errors")
    reader, events = read(path)
    failures = turn_events(events)
    assert all(isinstance(e, StopFailure) for e in failures)
    assert [(e.error, e.error_kind) for e in failures if isinstance(e, StopFailure)] == F_ERRORS
    assert [e.last_message for e in failures if isinstance(e, StopFailure)] == [
        m for m, _ in F_ERRORS
    ]
    assert reader.state.turn is Turn.FAILED
    # The stream failure's token_count has no usage (info null): nothing is made up.
    (facts,) = [e for e in events if isinstance(e, TranscriptFacts)]
    assert (facts.tokens, facts.context_tokens, facts.snippet) == (None, None, None)
    assert facts.rate_limits is not None and facts.rate_limits.primary_percent == 12.0


def test_f2_api_retry_only_the_final_error_ends_the_turn() -> None:
    events = turn_events(read(rollout("f2_api_retry"))[1])
    assert [(type(e), getattr(e, "error_kind", None)) for e in events] == [
        (StopFailure, "internal_server_error")
    ]


def test_k_context_tokens_and_context_as_codex_showed_them() -> None:
    path = rollout("k_context")
    first = facts_after(path, 12).state
    assert first.tokens == Tokens(input=200000, output=10)
    assert (first.context_tokens, first.context_window) == (200010, 258400)
    # /status said "Context window: 24% left (200K used / 258K)".
    assert codex_left_percent(first.context_tokens, first.context_window) == 23.7
    assert context_percent(first.context_tokens, first.context_window) == 77.4
    second = facts_after(path, 22).state
    assert second.tokens == Tokens(input=450000, output=20)
    assert second.context_tokens == 250010


def test_k_context_compaction_forgets_the_context_until_the_next_count() -> None:
    path = rollout("k_context")
    lines = {e["ordinal"]: (ev, st.context_tokens) for e, ev, st, _ in by_line(path)}
    events, used = lines[30]  # the auto-compaction's `compacted` line
    (facts,) = events
    assert isinstance(facts, TranscriptFacts) and facts.compacted
    assert used is None
    assert lines[34][1] == 8256  # the next token_count: the compacted context


def test_k_context_a_manual_compact_ends_no_turn() -> None:
    # /compact fires PreCompact/PostCompact and no Stop; its task_complete has no answer.
    path = rollout("k_context")
    stops = [e for e in turn_events(read(path)[1]) if isinstance(e, Stop)]
    sid = thread_id(path)
    assert [e.id for e in stops] == [f"rollout:{sid}:{n}" for n in (13, 23, 42)]
    assert read(path)[0].state.turn is Turn.FINISHED
    assert read(path)[0].state.context_tokens == 8261


def test_k2_limit_rate_limits_as_reported() -> None:
    path = rollout("k2_limit")
    near = facts_after(path, 12).state.rate_limits
    # The stand-in's headers for the "LIMIT:91" prompt: 95 % of 5 h, 100 % of the week.
    assert near == RateLimits(
        primary_percent=95.0,
        primary_window_minutes=300,
        primary_resets_at=1796160105.0,
        secondary_percent=100.0,
        secondary_window_minutes=10080,
        secondary_resets_at=1796415705.0,
        reached_type=None,
    )
    later = read(path)[0].state.rate_limits
    assert later is not None
    assert (later.primary_percent, later.secondary_percent) == (12.0, 34.0)


def test_rate_limit_reached_type_is_carried() -> None:
    limits = rate_limits_of(
        {
            "primary": {"used_percent": 100.0, "window_minutes": 300, "resets_at": 10},
            "secondary": None,
            "rate_limit_reached_type": "primary",
        }
    )
    assert limits == RateLimits(100.0, 300, 10.0, reached_type="primary")
    assert rate_limits_of({"primary": None, "secondary": None}) is None
    assert rate_limits_of("nope") is None


def test_tokens_cached_and_reasoning_are_counted_as_claude_counts_them() -> None:
    usage = {
        "input_tokens": 1000,
        "cached_input_tokens": 600,
        "cache_write_input_tokens": 100,
        "output_tokens": 50,
        "reasoning_output_tokens": 20,
        "total_tokens": 1050,
    }
    assert tokens_of(usage) == Tokens(input=300, output=50, cache_read=600, cache_creation=100)
    assert tokens_of({"input_tokens": -5, "output_tokens": "x"}) == Tokens()
    assert tokens_of(None) is None


def test_i_question_waits_on_request_user_input_then_stops() -> None:
    path = rollout("i_question")
    tools = {e["ordinal"]: tool for e, _, _, tool in by_line(path)}
    assert tools[9] == tools[11] == "request_user_input"
    assert tools[12] == ""
    assert [(type(e), getattr(e, "last_message", None)) for e in turn_events(read(path)[1])] == [
        (Stop, "Done.")
    ]


def test_j_patch_inside_stops_outside_denied_interrupts() -> None:
    path = rollout("j_patch")
    tools = {e["ordinal"]: tool for e, _, _, tool in by_line(path)}
    assert tools[24] == "apply_patch"
    assert tools[35] == "Bash"
    assert [type(e) for e in turn_events(read(path)[1])] == [Stop, Interrupt, Stop]


def test_l_two_panes_each_thread_its_own_stop() -> None:
    paths = rollouts("l_two_panes")
    assert len(paths) == 4
    ids = []
    for path in paths:
        (stop,) = turn_events(read(path)[1])
        assert isinstance(stop, Stop) and stop.session_id == thread_id(path)
        ids.append(stop.id)
    assert len(set(ids)) == 4


def test_h_resume_appends_to_the_same_file() -> None:
    path = rollout("h_resume")
    stops = turn_events(read(path)[1])
    assert [e.id.rsplit(":", 1)[1] for e in stops] == ["13", "23", "33"]


@pytest.mark.parametrize("path", ALL_ROLLOUTS, ids=lambda p: f"{p.parts[-3]}-{p.stem[-4:]}")
def test_every_rollout_is_the_same_read_whole_bytewise_or_resumed(path: Path) -> None:
    data = path.read_bytes()
    whole = turn_events(read(path)[1])
    again = turn_events(read(path)[1])
    assert [e.to_json() for e in whole] == [e.to_json() for e in again]  # replays change nothing
    small = RolloutReader(thread_id(path))
    bytewise = [e for i in range(0, len(data), 97) for e in small.feed(data[i : i + 97])]
    assert [e.to_json() for e in turn_events(bytewise)] == [e.to_json() for e in whole]
    assert small.state == read(path)[0].state
    # Resume at every line from a JSON round trip of the snapshot.
    reader = RolloutReader(thread_id(path))
    resumed: list[Event] = []
    for raw in data.splitlines(keepends=True):
        resumed += turn_events(reader.feed(raw))
        snap = json.loads(json.dumps(reader.snapshot()))
        reader = RolloutReader(thread_id(path))
        assert reader.restore(snap, (0, 0))
    assert [e.to_json() for e in resumed] == [e.to_json() for e in whole]
    assert reader.state == small.state


def test_a_tail_inside_a_turn_still_ends_it() -> None:
    path = rollout("b_plain")
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    start = sum(len(x) for x in lines[:17])  # after turn 2's task_started
    reader = RolloutReader(thread_id(path))
    reader.partial = True
    reader.offset = reader._line_start = start
    (stop,) = turn_events(reader.feed(data[start:]))
    assert isinstance(stop, Stop) and stop.id.endswith(":23") and stop.last_message == ANSWER


def test_a_tail_inside_a_manual_compact_gives_no_stop() -> None:
    path = rollout("k_context")
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    start = sum(len(x) for x in lines[:44])  # inside the /compact turn
    reader = RolloutReader(thread_id(path))
    reader.partial = True
    assert turn_events(reader.feed(data[start:])) == []
    assert reader.state.turn is Turn.FINISHED


def test_read_tail_state_small_tails_and_non_files(tmp_path: Path) -> None:
    assert read_tail_state(rollout("f_api_errors"), tail=4000) is Turn.FAILED
    assert read_tail_state(rollout("k_context"), tail=3000) is Turn.FINISHED
    assert read_tail_state(tmp_path / "missing.jsonl") is Turn.NONE
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    assert read_tail_state(fifo) is Turn.NONE  # does not block


def test_bad_lines_are_skipped_and_never_raise() -> None:
    reader = RolloutReader("t")
    bad = [
        b"not json\n",
        b"[1, 2]\n",
        b'{"type": "event_msg"}\n',
        b'{"type": "event_msg", "payload": "x"}\n',
        b'{"type": "event_msg", "payload": {"type": "task_complete", "error": 5}}\n',
        b'{"type": "event_msg", "payload": {"type": "token_count", "info": [], '
        b'"rate_limits": 3}}\n',
        b'{"type": "event_msg", "payload": {"type": "item_completed", '
        b'"item": {"type": "AgentMessage", "content": "x"}}}\n',
        b'{"type": "response_item", "payload": {"type": "function_call", "call_id": 5}}\n',
        b'{"type": "brand_new", "payload": {}}\n',
        b"\xff\xfe\n",
        b"[" * 100_000 + b"\n",
        b"\n",
    ]
    events = reader.feed(b"".join(bad))
    # task_complete with a non-object error and no answer: a Stop-less end, nothing made up.
    assert all(isinstance(e, TranscriptFacts | Stop | StopFailure) for e in events)
    assert reader.state.snippet is None and reader.state.tokens is None


def test_an_overlong_line_is_skipped_and_the_next_read() -> None:
    reader = RolloutReader("t", max_line=200)
    line = json.dumps(
        {
            "timestamp": "2026-12-01T20:16:45.870Z",
            "ordinal": 7,
            "type": "event_msg",
            "payload": {"type": "turn_aborted", "reason": "interrupted"},
        }
    ).encode()
    long = b'{"pad": "' + b"x" * 500 + b'"}\n'
    events = reader.feed(long[:50]) + reader.feed(long[50:] + line + b"\n")
    assert [e.id for e in events] == ["rollout:t:7"]


def test_a_snapshot_of_another_version_or_garbage_is_refused() -> None:
    reader, _ = read(rollout("b_plain"))
    snap = reader.snapshot()
    fresh = RolloutReader("x")
    assert not fresh.restore({**snap, "v": 99}, (0, 0))
    assert not fresh.restore({**snap, "tokens": {"input": "many"}}, (0, 0))
    assert not fresh.restore({**snap, "snippet": 5}, (0, 0))
    assert not fresh.restore({"v": 1}, (0, 0))
    assert fresh.offset == 0 and fresh.state.turn is Turn.NONE


def test_announce_says_every_fact_again() -> None:
    reader, _ = read(rollout("k2_limit"))
    reader.announce(":r1")
    (facts,) = reader.feed(b"")
    assert isinstance(facts, TranscriptFacts)
    assert facts.id.endswith(":r1")
    assert facts.rate_limits == reader.state.rate_limits
    assert (facts.snippet, facts.model, facts.context_window) == (ANSWER, "gpt-5.5", 258400)


def test_a_truncated_or_replaced_file_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(rollout("b_plain").read_bytes())
    reader = RolloutReader("t")
    assert not reader.sync(os.stat(path))
    reader.feed(path.read_bytes())
    path.write_bytes(b"")
    assert reader.sync(os.stat(path))
    assert reader.offset == 0 and reader.state.turn is Turn.NONE


def test_facts_with_rate_limits_survive_the_event_log() -> None:
    _, events = read(rollout("k2_limit"))
    (facts,) = [e for e in events if isinstance(e, TranscriptFacts)]
    back = event_from_json(json.loads(json.dumps(facts.to_json())))
    assert back.to_json() == facts.to_json()
    assert back.rate_limits == facts.rate_limits is not None
