"""Fast checks of the harness's own parts (no Claude, no tmux): the fake Messages API and
the recording hook. Not marked e2e, so they run in the default tier."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .fake_api import (
    DONE_ANSWER,
    PLAIN_ANSWER,
    FakeAnthropicAPI,
    last_user_turn,
    script_for,
)
from .harness import RECORD_HOOK, HookLog, claude_json, hooks_settings, input_box

BASH_TOOL = {"name": "Bash", "input_schema": {"type": "object"}}
ASK_TOOL = {"name": "AskUserQuestion", "input_schema": {"type": "object"}}


def body(*messages: dict[str, Any], tools: bool = True, stream: bool = True) -> dict[str, Any]:
    return {
        "model": "claude-opus-4-8",
        "messages": list(messages),
        "tools": [BASH_TOOL, ASK_TOOL] if tools else [],
        "stream": stream,
    }


def user(*content: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(content)}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_result(content: str = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": "toolu_1", "content": content}


ASSISTANT_TOOL_USE = {
    "role": "assistant",
    "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}],
}


def test_the_text_after_the_last_tool_result_is_the_prompt() -> None:
    # What Claude sends after an Esc during a tool, then a new prompt (seen on 2.1.197).
    merged = user(
        tool_result("The user doesn't want to proceed with this tool use."),
        text("[Request interrupted by user for tool use]\n"),
        text("FAIL:400"),
    )
    assert last_user_turn(body(user(text("RUN:sleep 30")), ASSISTANT_TOOL_USE, merged)) == (
        "FAIL:400",
        False,
    )
    script, _ = script_for(body(user(text("RUN:sleep 30")), ASSISTANT_TOOL_USE, merged))
    assert script.error_status == 400


def test_a_tool_result_alone_finishes_the_turn() -> None:
    request = body(
        {"role": "user", "content": "RUN:touch x"},
        ASSISTANT_TOOL_USE,
        user(tool_result(), text("<system-reminder>noise</system-reminder>")),
        {"role": "system", "content": "mid-conversation system text"},
    )
    assert last_user_turn(request) == ("RUN:touch x", True)
    script, _ = script_for(request)
    assert script.blocks == [{"type": "text", "text": DONE_ANSWER}]
    assert script.stop_reason == "end_turn"


def test_run_and_ask_become_tool_uses() -> None:
    script, _ = script_for(body(user(text("RUN:touch x"))))
    assert script.stop_reason == "tool_use"
    assert [b["type"] for b in script.blocks] == ["text", "tool_use"]
    assert script.blocks[1]["name"] == "Bash"
    assert script.blocks[1]["input"] == {
        "command": "touch x",
        "description": "run the requested command",
    }

    script, _ = script_for(body(user(text("ASK:Which one?"))))
    (block,) = script.blocks
    assert block["name"] == "AskUserQuestion"
    (question,) = block["input"]["questions"]
    assert question["question"] == "Which one?"
    assert [o["label"] for o in question["options"]] == ["Red", "Blue"]
    assert question["multiSelect"] is False


def test_wait_before_a_prompt_holds_that_prompts_answer() -> None:
    script, said = script_for(body(user(text("WAIT:4 RUN:touch y"))))
    assert said == "WAIT:4 RUN:touch y"
    assert script.hold_seconds == 4.0 and script.stop_reason == "tool_use"
    assert script.blocks[1]["input"]["command"] == "touch y"

    script, _ = script_for(body(user(text("WAIT:2"))))  # alone: the plain answer, held
    assert script.hold_seconds == 2.0 and script.stop_reason == "end_turn"


def test_ask_input_has_the_shape_claude_accepted(samples: Path) -> None:
    sample = [
        json.loads(line)["payload"]
        for line in (samples / "hooks-question.jsonl").read_text().splitlines()
    ]
    accepted = next(p for p in sample if p["hook_event_name"] == "PreToolUse")["tool_input"]
    script, _ = script_for(body(user(text("ASK:Which one?"))))
    ours = script.blocks[0]["input"]

    def shape(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: shape(v) for k, v in value.items()}
        if isinstance(value, list):
            return [shape(v) for v in value]
        return type(value).__name__

    assert shape(ours) == shape(accepted)


def test_side_calls_are_never_scripted() -> None:
    title_call = body(user(text("<session>\nRUN:touch x\n</session>")), tools=False)
    title_call["output_config"] = {
        "format": {
            "type": "json_schema",
            "schema": {
                "type": "object",
                "properties": {"title": {"type": "string"}},
                "required": ["title"],
            },
        }
    }
    script, _ = script_for(title_call)
    assert script.stop_reason == "end_turn"
    assert json.loads(script.blocks[0]["text"]) == {"title": "Fake session"}


@pytest.fixture
def api() -> Iterator[FakeAnthropicAPI]:
    with FakeAnthropicAPI() as fake:
        yield fake


def post(
    api: FakeAnthropicAPI, payload: dict[str, Any], path: str = "/v1/messages?beta=true"
) -> Any:
    request = urllib.request.Request(
        api.base_url + path,
        data=json.dumps(payload).encode(),
        headers={"content-type": "application/json", "x-api-key": "sk-ant-fake"},
        method="POST",
    )
    return urllib.request.urlopen(request, timeout=10)


def sse(raw: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in raw.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_streamed_answer_follows_the_messages_protocol(api: FakeAnthropicAPI) -> None:
    with post(api, body(user(text("RUN:touch x")))) as response:
        assert response.headers["content-type"] == "text/event-stream"
        events = sse(response.read().decode())
    names = [name for name, _ in events]
    assert names == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(name == data["type"] for name, data in events)
    partial = "".join(
        d["delta"]["partial_json"] for _, d in events if d.get("index") == 1 and "delta" in d
    )
    assert json.loads(partial)["command"] == "touch x"
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    (recorded,) = api.messages_requests()
    assert recorded.last_user_text == "RUN:touch x"
    assert recorded.headers["x-api-key"] == "sk-ant-fake"


def test_plain_json_answer_when_not_streaming(api: FakeAnthropicAPI) -> None:
    with post(api, body(user(text("hi")), stream=False)) as response:
        message = json.loads(response.read())
    assert message["content"] == [{"type": "text", "text": PLAIN_ANSWER}]
    assert message["stop_reason"] == "end_turn"


def test_fail_answers_with_an_error_that_must_not_be_retried(api: FakeAnthropicAPI) -> None:
    with pytest.raises(urllib.error.HTTPError) as failure:
        post(api, body(user(text("FAIL:400"))))
    error = failure.value
    assert error.code == 400
    assert error.headers["x-should-retry"] == "false"
    assert json.loads(error.read()) == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "scripted failure 400"},
    }
    error.close()
    assert api.messages_requests()[0].status == 400


def test_count_tokens(api: FakeAnthropicAPI) -> None:
    with post(api, body(user(text("hi"))), "/v1/messages/count_tokens?beta=true") as response:
        assert json.loads(response.read()) == {"input_tokens": 50}


def test_record_hook_appends_one_json_line_per_call(tmp_path: Path) -> None:
    log = HookLog(tmp_path / "hooks.jsonl")
    payload = {"hook_event_name": "Stop", "session_id": "s1", "last_assistant_message": "a\nb"}
    for pane in ("%3", None):
        env = {"PATH": "/usr/bin:/bin"} | ({"TMUX_PANE": pane} if pane else {})
        proc = subprocess.run(
            ["sh", "-c", log.command],
            input=json.dumps(payload, indent=2),
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        assert proc.stdout == proc.stderr == ""
    calls = log.calls()
    assert [c.pane for c in calls] == ["%3", None]
    assert all(c.payload == payload and c.event == "Stop" for c in calls)
    assert calls[0].ts > 1e9
    assert not list(tmp_path.glob("*.tmp"))


def test_settings_register_every_event() -> None:
    hooks = hooks_settings("/bin/true")["hooks"]
    assert set(hooks) >= {"SessionStart", "PermissionRequest", "StopFailure", "SessionEnd"}
    assert hooks["PreToolUse"][0]["matcher"] == "*"
    assert "matcher" not in hooks["Stop"][0]
    assert hooks["Stop"][0]["hooks"][0] == {
        "type": "command",
        "command": "/bin/true",
        "timeout": 10,
    }
    assert RECORD_HOOK.is_file()
    config = claude_json([Path("/p")])
    assert config["projects"]["/p"]["hasTrustDialogAccepted"] is True


def test_input_box_reads_the_prompt_line() -> None:
    rule = "─" * 60
    assert input_box(f"history\n{rule}\n\u276f hello\n{rule}\n  ? for shortcuts") == "hello"
    assert input_box(f"{rule}\n\u276f \n{rule}\n") == ""
    assert input_box(f"{rule}\n Bash command\n Do you want to proceed?\n") is None
