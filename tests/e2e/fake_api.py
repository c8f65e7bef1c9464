"""A local stand-in for the Anthropic Messages API, scripted by the last user text.

Claude Code (``ANTHROPIC_BASE_URL=http://127.0.0.1:<port>``) talks to it exactly as it would to
the real API. The answer depends on the text the user typed last (see :func:`script_for`):

========================  =====================================================================
last user text            answer
========================  =====================================================================
anything else             text "Hello from the fake model.", ``end_turn``
``RUN:<cmd>``             text "I will run it." + ``tool_use`` Bash ``{"command": cmd, ...}``,
                          ``tool_use``; once the tool result is back: "Done.", ``end_turn``
``ASK:<question>``        ``tool_use`` AskUserQuestion (options Red / Blue); then "Done."
``SLOW:<seconds>``        ten paragraphs "Slow line N.", the first at once, the rest spread
                          over that many seconds (Claude shows each finished paragraph)
``WAIT:<seconds>``        nothing at all (not even headers) for that long, then the plain answer
``WAIT:<seconds> <text>`` the same silence, then the answer to ``<text>`` (``WAIT:3 RUN:ls``)
``FAIL:<status>[:type]``  that HTTP status with an Anthropic-style error body
``STREAMFAIL:<type>``     one text delta, then an SSE ``error`` event of that type
``CTX:<n> <text>``        the plain answer, its usage reporting ``n`` input tokens
``BG:<cmd>``              like RUN, with ``run_in_background: true`` (description
                          "background job")
``TOOL:<base64 json>``    ``tool_use`` of ``{"name": ..., "input": {...}}`` (URL-safe base64 of
                          that JSON, see :func:`tool_prompt`): any tool with any input, e.g. a
                          hostile multi-line command; then "Done."
``LIMIT:plain``           429 ``rate_limit_error`` (no unified headers)
``LIMIT:5h`` / ``7d``     429 plus the unified headers of a subscription at its 5-hour / weekly
                          limit (fake_limits.py); 200 once ``limits.ok_after`` has come
========================  =====================================================================

Usage limits: :attr:`FakeAnthropicAPI.limits` (a :class:`fake_limits.LimitControl`, read per
request) adds rate-limit headers to every 200 and sets the LIMIT answers' ``retry-after``,
reset time and ``ok_after``; fake_limits.py's docstring has the details.

"The last user text" is the text that follows the last ``tool_result`` in the last user
message (Claude merges "[Request interrupted ...]" markers, tool results and the next prompt
into one message); with no text after a tool_result the tool has run, and the answer is
"Done.". Only requests that offer tools ("main" requests) are scripted; side calls carry
``"tools": []`` (the session title, asked with a JSON schema) and get a sensible short answer.

``FAIL`` error types default to what the real API uses for the status (400
``invalid_request_error``, 401 ``authentication_error``, 529 ``overloaded_error``, ...). Error
answers carry ``x-should-retry: false`` (``error_should_retry``) so Claude's SDK does not retry
them with backoff, except 529, which Claude retries anyway; README.md lists what each does.

Every request is recorded (:attr:`FakeAnthropicAPI.requests`) for assertions.
"""

from __future__ import annotations

import base64
import json
import re
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlsplit

from .fake_limits import LimitControl
from .fake_server import FakeHandler, FakeServer

PLAIN_ANSWER = "Hello from the fake model."
RUN_PREAMBLE = "I will run it."
DONE_ANSWER = "Done."
SIDE_ANSWER = "Fake session"
SLOW_ANSWER_LINES = 10

ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}

_SKIP_TEXT_PREFIXES = ("<system-reminder>", "[Request interrupted by user")


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request the fake API received."""

    ts: float
    method: str
    path: str  # including the query string, e.g. "/v1/messages?beta=true"
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when it was not JSON, or None
    status: int = 0  # the status the fake answered with (filled in before it answered)
    kind: str = ""  # "main" (offered tools), "side" (no tools), "count_tokens", "other"
    last_user_text: str | None = None

    @property
    def route(self) -> str:
        return urlsplit(self.path).path


@dataclass
class Script:
    """What to answer: content blocks (dicts as in the API), stop reason, or an error."""

    blocks: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str = "end_turn"
    error_status: int | None = None
    error_type: str = ""
    error_message: str = ""
    stream_seconds: float = 0.0  # spread the text deltas over this many seconds
    stream_error: str | None = None  # end the stream with an SSE ``error`` of this type
    hold_seconds: float = 0.0  # say nothing at all for this long before answering
    input_tokens: int = 50  # what the answer's usage reports


# ---------------------------------------------------------------------------------------------
# Reading a request


def _content_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _is_prompt_text(text: str) -> bool:
    stripped = text.lstrip()
    return bool(stripped) and not stripped.startswith(_SKIP_TEXT_PREFIXES)


def last_user_turn(body: dict[str, Any]) -> tuple[str | None, bool]:
    """Return (the last text the user typed, whether tool results came after it).

    Looks at the last ``user`` message only. Claude merges consecutive user entries into one
    message, e.g. ``[tool_result (rejected), "[Request interrupted by user for tool use]",
    "FAIL:400"]`` after an Esc, so the text that *follows* the last tool_result wins; system
    reminders and interrupt markers are not user text. When no text follows a tool_result the
    second value is True ("the tool ran, finish the turn"); the first is then the last prompt
    text found further back in the conversation, for information.
    """
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None, False
    last_user: dict[str, Any] | None = None
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            last_user = message
            break
    if last_user is None:
        return None, False
    blocks = _content_blocks(last_user.get("content"))
    after_tool: list[str] = []
    saw_tool_result = False
    for block in blocks:
        if block.get("type") == "tool_result":
            saw_tool_result = True
            after_tool = []
        elif block.get("type") == "text" and _is_prompt_text(str(block.get("text", ""))):
            after_tool.append(str(block["text"]))
    if after_tool:
        return after_tool[-1].strip(), False
    if saw_tool_result:
        return _last_prompt_anywhere(messages), True
    return None, False


def _last_prompt_anywhere(messages: list[Any]) -> str | None:
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        for block in reversed(_content_blocks(message.get("content"))):
            text = str(block.get("text", "")) if block.get("type") == "text" else ""
            if _is_prompt_text(text):
                return text.strip()
    return None


def _tool_names(body: dict[str, Any]) -> set[str]:
    tools = body.get("tools")
    if not isinstance(tools, list):
        return set()
    return {str(t.get("name")) for t in tools if isinstance(t, dict) and t.get("name")}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _tool_use(name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": "toolu_" + uuid.uuid4().hex[:20],
        "name": name,
        "input": tool_input,
    }


def ask_user_question_input(question: str) -> dict[str, Any]:
    """The AskUserQuestion input Claude 2.1.197 accepted (see samples/hooks-question.jsonl)."""
    return {
        "questions": [
            {
                "question": question,
                "header": "Choice",
                "options": [
                    {"label": "Red", "description": "red"},
                    {"label": "Blue", "description": "blue"},
                ],
                "multiSelect": False,
            }
        ]
    }


def tool_prompt(name: str, tool_input: dict[str, Any]) -> str:
    """The prompt text that makes the fake propose this tool call (``TOOL:<base64 json>``):
    one line of plain ASCII, whatever the input holds (newlines, selection markers)."""
    raw = json.dumps({"name": name, "input": tool_input}).encode()
    return "TOOL:" + base64.urlsafe_b64encode(raw).decode()


def _scripted_tool(prompt: str) -> tuple[str, dict[str, Any]] | None:
    try:
        data = json.loads(base64.urlsafe_b64decode(prompt[len("TOOL:") :].strip()))
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("input"), dict):
        return None
    return str(data.get("name")), data["input"]


_FAIL_RE = re.compile(r"^FAIL:\s*(\d{3})(?::([a-z_]+))?", re.IGNORECASE)
_STREAMFAIL_RE = re.compile(r"^STREAMFAIL:\s*([a-z_]+)", re.IGNORECASE)
_WAIT_RE = re.compile(r"^WAIT:\s*([0-9]+(?:\.[0-9]+)?)", re.IGNORECASE)
_SLOW_RE = re.compile(r"^SLOW:\s*([0-9]+(?:\.[0-9]+)?)", re.IGNORECASE)
_CTX_RE = re.compile(r"^CTX:\s*([0-9]{1,9})\b", re.IGNORECASE)
BACKGROUND_DESCRIPTION = "background job"


def slow_answer() -> str:
    """The SLOW: answer: paragraphs "Slow line 1." ... streamed one per delta. Claude shows a
    streamed text paragraph by paragraph, so the first line is on screen early."""
    return "\n\n".join(f"Slow line {i}." for i in range(1, SLOW_ANSWER_LINES + 1))


def _json_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    output_config = body.get("output_config")
    fmt = output_config.get("format") if isinstance(output_config, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = fmt.get("schema")
        return schema if isinstance(schema, dict) else {}
    return None


def _example_for(schema: dict[str, Any]) -> Any:
    """A small value that satisfies a (simple) JSON schema; strings say "Fake session"."""
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        required = schema.get("required") or list(props)
        return {k: _example_for(props.get(k) or {}) for k in required}
    if kind == "array":
        return []
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return 0
    if schema.get("enum"):
        return schema["enum"][0]
    return SIDE_ANSWER


def script_for(body: dict[str, Any]) -> tuple[Script, str | None]:
    """Decide the answer to one /v1/messages request. Returns (script, last user text)."""
    text, tool_done = last_user_turn(body)
    tools = _tool_names(body)
    prompt = text or ""
    held = _WAIT_RE.match(prompt)
    rest = prompt[held.end() :].strip() if held else ""
    if held and rest and tools and not tool_done:
        # "WAIT:<seconds> <prompt>": the answer to <prompt>, after that long of silence.
        script, _ = script_for({**body, "messages": [{"role": "user", "content": rest}]})
        script.hold_seconds = float(held.group(1))
        return script, text
    fail = _FAIL_RE.match(prompt)
    if fail and not tool_done:
        status = int(fail.group(1))
        error_type = fail.group(2) or ERROR_TYPES.get(status, "api_error")
        return (
            Script(
                error_status=status,
                error_type=error_type,
                error_message=f"scripted failure {status}",
            ),
            text,
        )
    if tool_done:
        return Script(blocks=[_text(DONE_ANSWER)]), text
    stream_fail = _STREAMFAIL_RE.match(prompt)
    if stream_fail and tools:
        blocks = [_text("Partial answer before the stream broke.")]
        return Script(blocks=blocks, stream_error=stream_fail.group(1)), text
    if prompt.startswith("RUN:") and "Bash" in tools:
        command = prompt[len("RUN:") :].strip()
        blocks = [
            _text(RUN_PREAMBLE),
            _tool_use("Bash", {"command": command, "description": "run the requested command"}),
        ]
        return Script(blocks=blocks, stop_reason="tool_use"), text
    if prompt.startswith("TOOL:") and (scripted := _scripted_tool(prompt)) is not None:
        name, tool_input = scripted
        if name in tools:
            blocks = [_text(RUN_PREAMBLE), _tool_use(name, tool_input)]
            return Script(blocks=blocks, stop_reason="tool_use"), text
    if prompt.startswith("BG:") and "Bash" in tools:
        command = prompt[len("BG:") :].strip()
        tool_input = {
            "command": command,
            "description": BACKGROUND_DESCRIPTION,
            "run_in_background": True,
        }
        blocks = [_text("Starting it in the background."), _tool_use("Bash", tool_input)]
        return Script(blocks=blocks, stop_reason="tool_use"), text
    ctx = _CTX_RE.match(prompt)
    if ctx and tools:
        return Script(blocks=[_text(PLAIN_ANSWER)], input_tokens=int(ctx.group(1))), text
    if prompt.startswith("ASK:") and "AskUserQuestion" in tools:
        question = prompt[len("ASK:") :].strip() or "Which one?"
        blocks = [_tool_use("AskUserQuestion", ask_user_question_input(question))]
        return Script(blocks=blocks, stop_reason="tool_use"), text
    wait = _WAIT_RE.match(prompt)
    if wait and tools:
        return Script(blocks=[_text(PLAIN_ANSWER)], hold_seconds=float(wait.group(1))), text
    slow = _SLOW_RE.match(prompt)
    if slow and tools:
        seconds = float(slow.group(1))
        return Script(blocks=[_text(slow_answer())], stream_seconds=seconds), text
    if not tools:
        # A side call (the session title, ...): a short text, or JSON when a schema is asked.
        schema = _json_schema(body)
        answer = json.dumps(_example_for(schema)) if schema is not None else SIDE_ANSWER
        return Script(blocks=[_text(answer)]), text
    return Script(blocks=[_text(PLAIN_ANSWER)]), text


# ---------------------------------------------------------------------------------------------
# Writing an answer


def _usage(output_tokens: int = 10, input_tokens: int = 50) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    }


def _message(
    model: str, blocks: list[dict[str, Any]], stop_reason: str, input_tokens: int = 50
) -> dict[str, Any]:
    return {
        "id": "msg_" + uuid.uuid4().hex[:20],
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": _usage(input_tokens=input_tokens),
    }


def _pieces(text: str, slow: bool) -> list[str]:
    """Split a text block into deltas: by paragraph when streaming slowly, else in two."""
    if slow:
        parts = re.split(r"(?<=\n\n)", text)
        return [p for p in parts if p]
    half = len(text) // 2
    return [p for p in (text[:half], text[half:]) if p]


def sse_events(model: str, script: Script) -> Iterator[tuple[str, dict[str, Any], float]]:
    """The SSE events of one streamed answer: (event name, data, delay before sending it).

    A slow script sends its first text delta at once and spreads the rest, and the end of
    the message, over ``stream_seconds``.
    """
    start = _message(model, [], "")
    start["stop_reason"] = None
    start["usage"] = _usage(1, script.input_tokens)
    yield "message_start", {"type": "message_start", "message": start}, 0.0
    slow = script.stream_seconds > 0
    text_deltas = sum(len(_pieces(b["text"], slow)) for b in script.blocks if b["type"] == "text")
    step = script.stream_seconds / max(text_deltas, 1) if slow else 0.0
    sent_text = 0
    for index, block in enumerate(script.blocks):
        if block["type"] == "text":
            start_block = {"type": "text", "text": ""}
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start_block},
                0.0,
            )
            for piece in _pieces(block["text"], slow):
                delta = {"type": "text_delta", "text": piece}
                yield (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                    step if sent_text else 0.0,
                )
                sent_text += 1
                if script.stream_error:
                    error = {"type": script.stream_error, "message": "scripted stream failure"}
                    yield "error", {"type": "error", "error": error}, 0.0
                    return
        else:
            tool_block: dict[str, Any] = {
                "type": "tool_use",
                "id": block["id"],
                "name": block["name"],
                "input": {},
            }
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": tool_block},
                0.0,
            )
            partial = json.dumps(block["input"])
            half = len(partial) // 2
            for piece in (partial[:half], partial[half:]):
                delta = {"type": "input_json_delta", "partial_json": piece}
                yield (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                    0.0,
                )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}, 0.0
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": script.stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 10},
        },
        step,
    )
    yield "message_stop", {"type": "message_stop"}, 0.0


def _request_id() -> dict[str, str]:
    return {"request-id": "req_fake_" + uuid.uuid4().hex[:16]}


class _Handler(FakeHandler):
    @property
    def api(self) -> FakeAnthropicAPI:
        return cast(FakeAnthropicAPI, self.server.owner)

    def _send_json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        super()._send_json(status, payload, {**_request_id(), **(headers or {})})

    def do_GET(self) -> None:
        self._other()

    def do_HEAD(self) -> None:
        self._record(None, 200, "other", None)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        body = self._read_body()
        route = urlsplit(self.path).path
        if route == "/v1/messages" and isinstance(body, dict):
            try:
                self._messages(body)
            except (BrokenPipeError, ConnectionResetError):
                # Claude hung up (Esc interrupts a pending or streaming answer).
                self.close_connection = True
        elif route == "/v1/messages/count_tokens":
            self._record(body, 200, "count_tokens", None)
            self._send_json(200, {"input_tokens": 50})
        else:
            self._record(body, 404, "other", None)
            self._send_json(
                404, {"type": "error", "error": {"type": "not_found_error", "message": route}}
            )

    def _other(self) -> None:
        self._record(None, 404, "other", None)
        self._send_json(404, {"type": "error", "error": {"type": "not_found_error"}})

    def _record(self, body: Any, status: int, kind: str, text: str | None) -> None:
        self.api._record(
            RecordedRequest(**self._record_fields(body, status, kind), last_user_text=text)
        )

    def _messages(self, body: dict[str, Any]) -> None:
        script, text = script_for(body)
        kind = "main" if _tool_names(body) else "side"
        model = str(body.get("model") or "claude-fake")
        now = time.time()
        if kind == "main" and self._limit_wall(body, text, now):
            return
        extra = self.api.limits.ok_headers(now)
        if script.error_status is not None:
            self._record(body, script.error_status, kind, text)
            should_retry = self.api.error_should_retry
            retry_header = (
                {} if should_retry is None else {"x-should-retry": str(should_retry).lower()}
            )
            self._send_json(
                script.error_status,
                {
                    "type": "error",
                    "error": {"type": script.error_type, "message": script.error_message},
                },
                retry_header,
            )
            return
        self._record(body, 200, kind, text)
        if script.hold_seconds and self.api.stopping.wait(script.hold_seconds):
            self.close_connection = True
            return
        if not body.get("stream"):
            self._send_json(
                200, _message(model, script.blocks, script.stop_reason, script.input_tokens), extra
            )
            return
        self._send_sse({**_request_id(), **extra}, sse_events(model, script))

    def _limit_wall(self, body: dict[str, Any], text: str | None, now: float) -> bool:
        """Answer a LIMIT prompt with its 429 (fake_limits.py); False when it is not one."""
        _, tool_done = last_user_turn(body)
        rejection = None if tool_done else self.api.limits.rejection(text, now)
        if rejection is None:
            return False
        message, headers = rejection
        self._record(body, 429, "main", text)
        error = {"type": "error", "error": {"type": "rate_limit_error", "message": message}}
        self._send_json(429, error, headers)
        return True


class FakeAnthropicAPI(FakeServer[RecordedRequest]):
    """The fake Messages API on 127.0.0.1:<free port>, served from a background thread.

    Use as a context manager, or call :meth:`start` / :meth:`stop`.
    """

    thread_name = "fake-anthropic-api"

    def __init__(
        self, host: str = "127.0.0.1", port: int = 0, *, error_should_retry: bool | None = False
    ) -> None:
        super().__init__(_Handler, host, port)
        #: The ``x-should-retry`` header on error answers: False (default) stops the SDK's
        #: retries with backoff, True forces them, None leaves the SDK's own rule (it retries
        #: 408, 409, 429 and 5xx).
        self.error_should_retry = error_should_retry
        #: Usage limits (fake_limits.py): headers on every 200, the LIMIT answers' details.
        self.limits = LimitControl()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def messages_requests(self, kind: str | None = "main") -> list[RecordedRequest]:
        """The /v1/messages requests; ``kind`` "main" (default), "side", or None for both."""
        return [
            r
            for r in self.requests
            if r.route == "/v1/messages" and (kind is None or r.kind == kind)
        ]

    def _summary(self, request: RecordedRequest) -> object:
        return (request.method, request.path, request.kind, request.last_user_text)


if __name__ == "__main__":  # pragma: no cover - manual use: python fake_api.py
    with FakeAnthropicAPI() as api:
        print(f"ANTHROPIC_BASE_URL={api.base_url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
