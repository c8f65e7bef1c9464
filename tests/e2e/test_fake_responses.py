"""The fake Responses API on its own (no Codex): a real HTTP server driven with httpx, its
server-sent events parsed and checked against the shapes codex.md lists. Not marked e2e, so it
runs in the default tier."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from .fake_responses import (
    DONE_ANSWER,
    JUSTIFICATION,
    PLAIN_ANSWER,
    TITLE_ANSWER,
    TITLE_PREFIX,
    FakeResponsesAPI,
    read_turn,
    script_for,
    sse_events,
)

ALL_TOOLS = [
    {"type": "function", "name": "exec_command", "parameters": {"type": "object"}},
    {"type": "function", "name": "request_user_input", "parameters": {"type": "object"}},
    {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
    {"type": "web_search", "external_web_access": False},
]
TURN_START = [
    {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "sys"}]},
    {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "<environment_context>x</environment_context>"}],
    },
]


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def body(*items: dict[str, Any], tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "model": "gpt-5.5",
        "stream": True,
        "input": [*TURN_START, *items],
        "tools": ALL_TOOLS if tools is None else tools,
        "tool_choice": "auto",
    }


def call_output(call_id: str = "call_1", custom: bool = False) -> dict[str, Any]:
    kind = "custom_tool_call_output" if custom else "function_call_output"
    return {"type": kind, "call_id": call_id, "output": "Process exited with code 0"}


@pytest.fixture
def api() -> Iterator[FakeResponsesAPI]:
    with FakeResponsesAPI() as fake:
        yield fake


def post(api: FakeResponsesAPI, payload: dict[str, Any]) -> httpx.Response:
    return httpx.post(
        f"{api.base_url}/responses",
        json=payload,
        headers={"accept": "text/event-stream", "authorization": "Bearer sk-fake"},
        timeout=30,
    )


def parse_sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    """(event name, data) per server-sent event; each event's name equals its data's type."""
    events: list[tuple[str, dict[str, Any]]] = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        data = json.loads(fields["data"])
        assert data["type"] == fields["event"]
        events.append((fields["event"], data))
    return events


def stream(api: FakeResponsesAPI, payload: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    response = post(api, payload)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    return parse_sse(response.text)


def names(events: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [name for name, _ in events]


def output(events: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    name, completed = events[-1]
    assert name == "response.completed"
    items: list[dict[str, Any]] = completed["response"]["output"]
    return items


def test_a_plain_prompt_streams_one_text_item_and_the_usage() -> None:
    with FakeResponsesAPI() as api:
        events = stream(api, body(user("hello")))
    assert names(events) == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    deltas = "".join(d["delta"] for n, d in events if n == "response.output_text.delta")
    assert deltas == PLAIN_ANSWER
    [item] = output(events)
    assert item["type"] == "message" and item["role"] == "assistant"
    assert item["content"] == [{"type": "output_text", "text": PLAIN_ANSWER, "annotations": []}]
    usage = events[-1][1]["response"]["usage"]
    assert usage == {
        "input_tokens": 50,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 60,
    }
    assert [d["sequence_number"] for _, d in events] == list(range(len(events)))


def test_run_asks_for_escalation_then_a_tool_output_gets_done(api: FakeResponsesAPI) -> None:
    events = stream(api, body(user("RUN:touch approved.txt")))
    assert names(events) == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    [call] = output(events)
    assert call["type"] == "function_call" and call["name"] == "exec_command"
    assert json.loads(call["arguments"]) == {
        "cmd": "touch approved.txt",
        "sandbox_permissions": "require_escalated",
        "justification": JUSTIFICATION,
    }
    assert events[4][1]["item"] == call and call["call_id"].startswith("call_")
    # The follow-up of the same turn: the call and its output come after the prompt, then a
    # developer message (Codex adds one after "don't ask again"). The fake finishes the turn.
    follow_up = body(
        user("RUN:touch approved.txt"),
        {k: call[k] for k in ("type", "name", "arguments", "call_id")},
        call_output(call["call_id"]),
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "r"}]},
    )
    [done] = output(stream(api, follow_up))
    assert done["content"][0]["text"] == DONE_ANSWER
    first, second = api.turn_requests()
    assert (first.last_user_text, first.after_tool) == ("RUN:touch approved.txt", False)
    assert (second.last_user_text, second.after_tool) == ("RUN:touch approved.txt", True)
    assert second.input_types[-3:] == (
        ("function_call", None),
        ("function_call_output", None),
        ("message", "developer"),
    )
    assert first.tools == ("exec_command", "request_user_input", "apply_patch", "web_search")
    assert first.path == "/v1/responses" and first.headers["authorization"] == "Bearer sk-fake"


def test_a_new_prompt_after_an_earlier_tool_call_is_scripted_again(api: FakeResponsesAPI) -> None:
    call = {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c"}
    later = body(user("RUN:touch a"), call, call_output("c"), user("SANDBOX:touch b"))
    [item] = output(stream(api, later))
    assert json.loads(item["arguments"]) == {"cmd": "touch b"}


def test_patch_is_a_custom_apply_patch_call(api: FakeResponsesAPI) -> None:
    events = stream(api, body(user("PATCH:notes/new.txt")))
    [item] = output(events)
    assert item["type"] == "custom_tool_call" and item["name"] == "apply_patch"
    assert item["input"] == (
        "*** Begin Patch\n*** Add File: notes/new.txt\n+hello from the fake model\n*** End Patch\n"
    )
    added = next(d for n, d in events if n == "response.output_item.added")
    assert added["item"]["input"] == "" and added["item"]["status"] == "in_progress"
    tool_done = body(user("PATCH:notes/new.txt"), item, call_output(item["call_id"], custom=True))
    assert output(stream(api, tool_done))[0]["content"][0]["text"] == DONE_ANSWER


def test_ask_offers_the_question_and_its_options(api: FakeResponsesAPI) -> None:
    [item] = output(stream(api, body(user("ASK:Which colour?|Green|Yellow"))))
    assert item["name"] == "request_user_input"
    [question] = json.loads(item["arguments"])["questions"]
    assert question["question"] == "Which colour?"
    assert [o["label"] for o in question["options"]] == ["Green", "Yellow"]
    [default] = output(stream(api, body(user("ASK:Pick one"))))
    labels = [o["label"] for o in json.loads(default["arguments"])["questions"][0]["options"]]
    assert labels == ["Red", "Blue"]


def test_slow_spreads_the_lines_over_the_seconds_asked(api: FakeResponsesAPI) -> None:
    events = stream(api, body(user("SLOW:0.5 please")))
    deltas = [d["delta"] for n, d in events if n == "response.output_text.delta"]
    assert len(deltas) == 10 and deltas[0] == "Slow line 1.\n\n"
    # The pauses the server takes before each event: none before the first line, then the
    # rest of the seconds spread evenly (the default SLOW takes 6 s).
    script = script_for(read_turn(body(user("SLOW"))))
    delays = [delay for _, delay in sse_events(script)]
    assert delays[:5] == [0.0] * 5 and sum(delays) == pytest.approx(6.0)
    assert max(delays) == pytest.approx(0.6)


@pytest.mark.parametrize("status", [500, 429, 401])
def test_error_answers_that_status_once(api: FakeResponsesAPI, status: int) -> None:
    response = post(api, body(user(f"ERROR:{status} please")))
    assert response.status_code == status
    assert response.json()["error"]["message"] == f"scripted failure {status}"
    assert api.requests[-1].status == status
    call = {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c"}
    after = post(api, body(user(f"ERROR:{status}"), call, call_output("c")))
    assert after.status_code == 200


def test_failstream_sends_response_failed(api: FakeResponsesAPI) -> None:
    events = stream(api, body(user("FAILSTREAM now")))
    assert names(events) == ["response.created", "response.failed"]
    failed = events[1][1]["response"]
    assert failed["status"] == "failed"
    assert failed["error"] == {"code": "server_error", "message": "scripted stream failure"}


def test_tokens_sets_the_input_tokens(api: FakeResponsesAPI) -> None:
    events = stream(api, body(user("TOKENS:200000 big")))
    usage = events[-1][1]["response"]["usage"]
    assert usage["input_tokens"] == 200000 and usage["total_tokens"] == 200010


def test_limits_send_the_rate_limit_headers(api: FakeResponsesAPI) -> None:
    response = post(api, body(user("LIMITS:91:42.5 near")))
    headers = response.headers
    assert headers["x-codex-primary-used-percent"] == "91"
    assert headers["x-codex-primary-window-minutes"] == "300"
    assert headers["x-codex-secondary-used-percent"] == "42.5"
    assert headers["x-codex-secondary-window-minutes"] == "10080"
    reset_primary = int(headers["x-codex-primary-reset-at"])
    reset_secondary = int(headers["x-codex-secondary-reset-at"])
    assert reset_secondary - reset_primary == (10080 - 300) * 60
    assert "x-codex-primary-used-percent" not in post(api, body(user("hello"))).headers
    api.rate_limits = (10, 20)
    assert post(api, body(user("hello"))).headers["x-codex-secondary-used-percent"] == "20"


def test_the_title_request_gets_a_short_title_whatever_the_prompt(api: FakeResponsesAPI) -> None:
    title_prompt = f"{TITLE_PREFIX} of at most 36 characters.\n\nUser prompt:\nRUN:rm -rf /"
    apply_patch_only = [ALL_TOOLS[2]]
    [item] = output(stream(api, body(user(title_prompt), tools=apply_patch_only)))
    assert item["content"][0]["text"] == TITLE_ANSWER
    assert api.requests[-1].kind == "title" and api.turn_requests() == []


def test_other_paths_get_404_and_are_recorded(api: FakeResponsesAPI) -> None:
    assert httpx.get(f"{api.base_url}/models", timeout=5).status_code == 404
    assert httpx.post(f"{api.base_url}/chat/completions", json={}, timeout=5).status_code == 404
    assert [(r.method, r.path, r.kind) for r in api.requests] == [
        ("GET", "/v1/models", "other"),
        ("POST", "/v1/chat/completions", "other"),
    ]


def test_read_turn_skips_codex_own_user_messages() -> None:
    aborted = user("<turn_aborted>\nThe user interrupted.\n</turn_aborted>")
    turn = read_turn(body(user("first"), aborted))
    assert turn.text == "first" and not turn.after_tool
    assert read_turn({"input": "not a list"}).text is None
