"""A local stand-in for the OpenAI Responses API, scripted by the last user text.

The real Codex CLI 0.171.0 (``model_provider = "fake"`` with ``base_url =
http://127.0.0.1:<port>/v1``, ``wire_api = "responses"``, see codex_harness.py) POSTs every model
call to ``/v1/responses`` with ``"stream": true`` and reads server-sent events back; codex.md
("Running the real CLI offline") lists the shapes it needs and the samples in
samples/codex-0.171.0/*/api-requests.jsonl show what it sends. Codex sent no GET and no other
path; anything else gets a 404 and is recorded.

The answer depends on the text the user typed last (a keyword at its start, any words after it
are ignored, so prompts can stay distinct):

==============================  ===============================================================
last user text                  answer
==============================  ===============================================================
anything else                   text "Hello from the fake model."
``RUN:<cmd>``                   ``function_call`` exec_command ``{"cmd", "sandbox_permissions":
                                "require_escalated", "justification"}``: under ``on-request``
                                this raises the dialog "Would you like to run the following
                                command?"
``SANDBOX:<cmd>``               exec_command without escalation: runs in the sandbox, no dialog
``PATCH:<path>``                ``custom_tool_call`` apply_patch adding ``<path>`` (one line);
                                inside the workspace no dialog, outside it the edit dialog
``ASK:<question>|<opt>|<opt>``  ``function_call`` request_user_input with that question and
                                options (default Red / Blue); needs ``[features]
                                default_mode_request_user_input = true`` (CodexHome sets it)
``SLOW`` / ``SLOW:<seconds>``   ten lines "Slow line N." spread over that many seconds
                                (default 6): time to press Esc while it streams
``ERROR:<status>``              that HTTP status (500, 429, 401, ...) with an OpenAI error body
``FAILSTREAM``                  ``response.created`` then ``response.failed``
``TOKENS:<n>``                  the plain text, usage reporting ``n`` input tokens
``LIMITS:<primary>:<second>``   the plain text with the rate-limit headers
                                ``x-codex-primary-used-percent`` / ``-window-minutes`` (300) /
                                ``-reset-at`` and the ``secondary`` ones (10080)
==============================  ===============================================================

**Follow-ups in the same turn.** After a tool call Codex sends the whole conversation again,
now ending with a ``function_call_output`` (or ``custom_tool_call_output``) after the last
user message; later items may follow it (a developer message after "don't ask again"). When a
tool output comes after the last user prompt the fake answers the text "Done." instead of
following the prompt's keyword again; an ERROR prompt fails only its first request.

**The title request.** The first turn of a thread sends a second request (a separate thread,
offering only apply_patch) whose user text starts "Generate a concise, single-line task
title..." and ends "User prompt:\\n<the prompt>". It is never scripted by the keyword (the old
stand-in of the samples did, and the title thread then ran the tool itself); the fake answers
it with the text :data:`TITLE_ANSWER`. Observed on 0.171.0: the pane title shows the first
prompt (``"<prompt> | <project>"``) before this answer arrives and keeps showing it
afterwards; the generated title does not replace it (see test_codex_harness.py).

Rate limits can also be set for every answer with :attr:`FakeResponsesAPI.rate_limits`.

**Usage limits** (fake_codex_limits.py, which has the details): ``LIMIT:5h`` / ``LIMIT:7d``
(429 ``usage_limit_reached`` with that window at 100 % in the headers), ``LIMIT:plain`` (429
``rate_limit_exceeded``, no headers); :attr:`FakeResponsesAPI.limits` (read per request) adds
the window headers to every answer, rejects every turn (``reject``), and lets LIMIT prompts
through from ``ok_after`` on.

Every request is recorded (:attr:`FakeResponsesAPI.requests`): path, last user text, whether a
tool output followed it, the tools offered and the input item types.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlsplit

from .fake_codex_limits import CodexLimitControl
from .fake_server import FakeHandler, FakeServer

PLAIN_ANSWER = "Hello from the fake model."
DONE_ANSWER = "Done."
TITLE_ANSWER = "Fake task title"
JUSTIFICATION = "The user asked to run this command."
PATCH_LINE = "hello from the fake model"
SLOW_LINES = 10
SLOW_DEFAULT_SECONDS = 6.0
DEFAULT_OPTIONS = ("Red", "Blue")
PRIMARY_WINDOW_MINUTES = 300
SECONDARY_WINDOW_MINUTES = 10080
TITLE_PREFIX = "Generate a concise, single-line task title"
RESPONSES_PATH = "/v1/responses"

#: OpenAI error types by status, for the error body (Codex shows its own text for some).
ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "server_error",
}

#: Tool outputs: an item of one of these types after the last prompt means "the tool ran".
_OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})
#: User messages Codex writes itself (context, interrupt markers), not typed by the user.
_NOT_PROMPT_PREFIXES = (
    "<environment_context>",
    "<turn_aborted>",
    "<user_instructions>",
    "# AGENTS.md",
)


# ---------------------------------------------------------------------------------------------
# Reading a request


@dataclass(frozen=True)
class Turn:
    """What a request asks: the last prompt and whether a tool output came after it."""

    text: str | None
    after_tool: bool
    tools: tuple[str, ...]
    input_types: tuple[tuple[str, str | None], ...]

    @property
    def is_title(self) -> bool:
        return (self.text or "").startswith(TITLE_PREFIX)


def _message_text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        str(part.get("text", ""))
        for part in content
        if isinstance(part, dict) and part.get("type") in ("input_text", "text", "output_text")
    ]
    return "\n".join(parts)


def _is_prompt(item: dict[str, Any]) -> bool:
    if item.get("type", "message") != "message" or item.get("role") != "user":
        return False
    text = _message_text(item).lstrip()
    return bool(text) and not text.startswith(_NOT_PROMPT_PREFIXES)


def tool_names(body: dict[str, Any]) -> tuple[str, ...]:
    """The names of the tools offered (``web_search`` and ``tool_search`` have only a type)."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return ()
    names = (t.get("name") or t.get("type") for t in tools if isinstance(t, dict))
    return tuple(str(n) for n in names if n)


def read_turn(body: dict[str, Any]) -> Turn:
    """The last user prompt of a Responses request, and whether a tool output follows it."""
    raw = body.get("input")
    items = [i for i in raw if isinstance(i, dict)] if isinstance(raw, list) else []
    input_types = tuple(
        (str(i.get("type", "message")), None if i.get("role") is None else str(i["role"]))
        for i in items
    )
    last_prompt = -1
    last_output = -1
    for index, item in enumerate(items):
        if _is_prompt(item):
            last_prompt = index
        elif item.get("type") in _OUTPUT_TYPES:
            last_output = index
    text = _message_text(items[last_prompt]).strip() if last_prompt >= 0 else None
    return Turn(text, last_output > last_prompt >= 0, tool_names(body), input_types)


# ---------------------------------------------------------------------------------------------
# Deciding the answer


@dataclass
class Script:
    """One answer: output items (as in ``response.output``), or an HTTP error, or a failure."""

    items: list[dict[str, Any]] = field(default_factory=list)
    error_status: int | None = None
    fail_stream: bool = False
    stream_seconds: float = 0.0  # spread the text deltas over this many seconds
    input_tokens: int = 50
    headers: dict[str, str] = field(default_factory=dict)


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def text_item(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": _id("msg"),
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call_item(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": _id("fc"),
        "status": "completed",
        "name": name,
        "arguments": json.dumps(arguments),
        "call_id": _id("call"),
    }


def custom_tool_call_item(name: str, tool_input: str) -> dict[str, Any]:
    return {
        "type": "custom_tool_call",
        "id": _id("ctc"),
        "status": "completed",
        "call_id": _id("call"),
        "name": name,
        "input": tool_input,
    }


def add_file_patch(path: str, line: str = PATCH_LINE) -> str:
    """An apply_patch (lark grammar of the tool) that adds ``path`` with one line."""
    return f"*** Begin Patch\n*** Add File: {path}\n+{line}\n*** End Patch\n"


def question_arguments(question: str, options: Sequence[str]) -> dict[str, Any]:
    """request_user_input arguments as the samples' question (i_question) had them."""
    return {
        "questions": [
            {
                "id": "choice",
                "header": "Choice",
                "question": question,
                "options": [{"label": o, "description": f"the {o} option"} for o in options],
            }
        ]
    }


def slow_answer() -> str:
    return "\n\n".join(f"Slow line {i}." for i in range(1, SLOW_LINES + 1))


def rate_limit_headers(
    primary: float, secondary: float, now: float | None = None
) -> dict[str, str]:
    """The headers Codex reads rate limits from (codex.md): used %, window, reset (unix s)."""
    now = time.time() if now is None else now
    out: dict[str, str] = {}
    for name, used, minutes in (
        ("primary", primary, PRIMARY_WINDOW_MINUTES),
        ("secondary", secondary, SECONDARY_WINDOW_MINUTES),
    ):
        out[f"x-codex-{name}-used-percent"] = f"{used:g}"
        out[f"x-codex-{name}-window-minutes"] = str(minutes)
        out[f"x-codex-{name}-reset-at"] = str(int(now + minutes * 60))
    return out


_RUN_RE = re.compile(r"^(RUN|SANDBOX):(.+)$", re.DOTALL)
_PATCH_RE = re.compile(r"^PATCH:\s*(\S+)")
_SLOW_RE = re.compile(r"^SLOW(?::\s*([0-9]+(?:\.[0-9]+)?))?\b")
_ERROR_RE = re.compile(r"^ERROR:\s*(\d{3})\b")
_TOKENS_RE = re.compile(r"^TOKENS:\s*([0-9]{1,9})\b")
_LIMITS_RE = re.compile(r"^LIMITS:\s*([0-9]+(?:\.[0-9]+)?):([0-9]+(?:\.[0-9]+)?)\b")


def script_for(turn: Turn) -> Script:
    """Decide the answer to one request (see the module docstring)."""
    if turn.is_title:
        return Script([text_item(TITLE_ANSWER)])
    prompt = turn.text or ""
    if turn.after_tool:
        return Script([text_item(DONE_ANSWER)])
    if error := _ERROR_RE.match(prompt):
        return Script(error_status=int(error.group(1)))
    if prompt.startswith("FAILSTREAM"):
        return Script(fail_stream=True)
    if run := _RUN_RE.match(prompt):
        arguments: dict[str, Any] = {"cmd": run.group(2).strip()}
        if run.group(1) == "RUN":
            arguments["sandbox_permissions"] = "require_escalated"
            arguments["justification"] = JUSTIFICATION
        return Script([function_call_item("exec_command", arguments)])
    if patch := _PATCH_RE.match(prompt):
        return Script([custom_tool_call_item("apply_patch", add_file_patch(patch.group(1)))])
    if prompt.startswith("ASK:"):
        question, *options = (p.strip() for p in prompt[len("ASK:") :].split("|"))
        options = [o for o in options if o] or list(DEFAULT_OPTIONS)
        arguments = question_arguments(question or "Which one?", options)
        return Script([function_call_item("request_user_input", arguments)])
    if slow := _SLOW_RE.match(prompt):
        seconds = float(slow.group(1)) if slow.group(1) else SLOW_DEFAULT_SECONDS
        return Script([text_item(slow_answer())], stream_seconds=seconds)
    if tokens := _TOKENS_RE.match(prompt):
        return Script([text_item(PLAIN_ANSWER)], input_tokens=int(tokens.group(1)))
    if limits := _LIMITS_RE.match(prompt):
        headers = rate_limit_headers(float(limits.group(1)), float(limits.group(2)))
        return Script([text_item(PLAIN_ANSWER)], headers=headers)
    return Script([text_item(PLAIN_ANSWER)])


# ---------------------------------------------------------------------------------------------
# Writing an answer


def usage(input_tokens: int, output_tokens: int = 10) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }


def _response(
    response_id: str, model: str, status: str, output: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": output,
        "usage": None,
        "error": None,
    }


def _pieces(text: str, slow: bool) -> list[str]:
    """Deltas of a text: one per line when streaming slowly, else two halves."""
    if slow:
        return [p for p in re.split(r"(?<=\n\n)", text) if p]
    half = len(text) // 2
    return [p for p in (text[:half], text[half:]) if p]


Event = tuple[dict[str, Any], float]
"""One SSE event (its ``data``; the event name is ``data["type"]``) and the delay before it."""


def sse_events(script: Script, model: str = "gpt-5.5") -> Iterator[Event]:
    """The events of one streamed answer, in the order codex.md lists them.

    ``response.created``, ``response.in_progress``, then per output item
    ``response.output_item.added`` ... ``response.output_item.done`` (a text item has
    ``content_part.added``, ``output_text.delta``..., ``output_text.done``,
    ``content_part.done`` in between), then ``response.completed`` with the usage; or, for a
    failing stream, ``response.failed`` after ``response.created``.
    """
    response_id = _id("resp")
    seq = iter(range(1_000_000))

    def event(kind: str, delay: float = 0.0, **data: Any) -> Event:
        return {"type": kind, "sequence_number": next(seq), **data}, delay

    yield event("response.created", response=_response(response_id, model, "in_progress", []))
    if script.fail_stream:
        failed = _response(response_id, model, "failed", [])
        failed["error"] = {"code": "server_error", "message": "scripted stream failure"}
        yield event("response.failed", response=failed)
        return
    yield event("response.in_progress", response=_response(response_id, model, "in_progress", []))
    slow = script.stream_seconds > 0
    n_deltas = sum(
        len(_pieces(_message_text(i), slow)) for i in script.items if i["type"] == "message"
    )
    step = script.stream_seconds / max(n_deltas, 1) if slow else 0.0
    for index, item in enumerate(script.items):
        if item["type"] == "message":
            yield from _text_item_events(event, index, item, slow, step)
            continue
        yield event("response.output_item.added", output_index=index, item=_pending(item))
        if item["type"] == "function_call":
            yield event(
                "response.function_call_arguments.done",
                output_index=index,
                item_id=item["id"],
                arguments=item["arguments"],
            )
        yield event("response.output_item.done", output_index=index, item=item)
    done = _response(response_id, model, "completed", script.items)
    done["usage"] = usage(script.input_tokens)
    yield event("response.completed", step, response=done)


def _pending(item: dict[str, Any]) -> dict[str, Any]:
    """The item as ``output_item.added`` shows it: in progress, arguments/input empty."""
    pending = {**item, "status": "in_progress"}
    if "arguments" in pending:
        pending["arguments"] = ""
    if "input" in pending:
        pending["input"] = ""
    return pending


def _text_item_events(
    event: Callable[..., Event], index: int, item: dict[str, Any], slow: bool, step: float
) -> Iterator[Event]:
    text = _message_text(item)
    ids = {"item_id": item["id"], "output_index": index, "content_index": 0}
    yield event("response.output_item.added", output_index=index, item={**item, "content": []})
    empty = {"type": "output_text", "text": "", "annotations": []}
    yield event("response.content_part.added", part=empty, **ids)
    for n, piece in enumerate(_pieces(text, slow)):
        yield event("response.output_text.delta", step if n else 0.0, delta=piece, **ids)
    yield event("response.output_text.done", text=text, **ids)
    part = {"type": "output_text", "text": text, "annotations": []}
    yield event("response.content_part.done", part=part, **ids)
    yield event("response.output_item.done", output_index=index, item=item)


def error_body(status: int) -> dict[str, Any]:
    return {
        "error": {
            "message": f"scripted failure {status}",
            "type": ERROR_TYPES.get(status, "server_error"),
            "param": None,
            "code": None,
        }
    }


# ---------------------------------------------------------------------------------------------
# The server


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request the fake received, and how it answered."""

    ts: float
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, the raw text when it was not JSON, or None
    status: int  # the HTTP status answered
    kind: str  # "turn" (a model call of a turn), "title" (the hidden title request), "other"
    last_user_text: str | None = None
    after_tool: bool = False
    tools: tuple[str, ...] = ()
    input_types: tuple[tuple[str, str | None], ...] = ()


class _Handler(FakeHandler):
    @property
    def api(self) -> FakeResponsesAPI:
        return cast(FakeResponsesAPI, self.server.owner)

    def _record(self, body: Any, status: int, kind: str, turn: Turn | None = None) -> None:
        self.api._record(
            RecordedRequest(
                **self._record_fields(body, status, kind),
                last_user_text=turn.text if turn else None,
                after_tool=turn.after_tool if turn else False,
                tools=turn.tools if turn else (),
                input_types=turn.input_types if turn else (),
            )
        )

    def do_GET(self) -> None:
        self._record(None, 404, "other")
        self._send_json(404, error_body(404))

    def do_POST(self) -> None:
        body = self._read_body()
        if urlsplit(self.path).path != RESPONSES_PATH or not isinstance(body, dict):
            self._record(body, 404, "other")
            self._send_json(404, error_body(404))
            return
        try:
            self._responses(body)
        except (BrokenPipeError, ConnectionResetError):
            # Codex hung up (Esc interrupts a streaming answer).
            self.close_connection = True

    def _responses(self, body: dict[str, Any]) -> None:
        turn = read_turn(body)
        kind = "title" if turn.is_title else "turn"
        now = time.time()
        limits = self.api.limits
        rejection = None if kind != "turn" or turn.after_tool else limits.rejection(turn.text, now)
        if rejection is not None:
            payload, limit_headers = rejection
            self._record(body, 429, kind, turn)
            self._send_json(429, payload, limit_headers)
            return
        script = script_for(turn)
        headers = dict(script.headers) or limits.ok_headers(now)
        if self.api.rate_limits is not None and not headers:
            headers = rate_limit_headers(*self.api.rate_limits)
        if script.error_status is not None:
            self._record(body, script.error_status, kind, turn)
            self._send_json(script.error_status, error_body(script.error_status), headers)
            return
        self._record(body, 200, kind, turn)
        model = str(body.get("model") or "gpt-5.5")
        events = ((data["type"], data, delay) for data, delay in sse_events(script, model))
        self._send_sse({"x-request-id": _id("req"), **headers}, events)


class FakeResponsesAPI(FakeServer[RecordedRequest]):
    """The fake Responses API on 127.0.0.1:<free port>, served from a background thread.

    Use as a context manager, or call :meth:`start` / :meth:`stop`. ``base_url`` is what
    config.toml's ``[model_providers.fake] base_url`` takes (it ends in ``/v1``).
    """

    thread_name = "fake-responses-api"

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(_Handler, host, port)
        #: (primary %, secondary %) sent as rate-limit headers on every answer, or None.
        self.rate_limits: tuple[float, float] | None = None
        #: Usage limits (fake_codex_limits.py): window headers, LIMIT answers, ``reject``.
        self.limits = CodexLimitControl()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def turn_requests(self) -> list[RecordedRequest]:
        """The model calls of turns (not the hidden title requests, not stray paths)."""
        return [r for r in self.requests if r.kind == "turn"]

    def _summary(self, request: RecordedRequest) -> object:
        return (request.path, request.kind, request.last_user_text, request.after_tool)


if __name__ == "__main__":  # pragma: no cover - manual use: python -m tests.e2e.fake_responses
    with FakeResponsesAPI() as api:
        print(f"base_url = {api.base_url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
