"""Hook payloads (Claude's JSON plus the hook script's headers) -> typed events."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from purplemux import events as ev
from purplemux import session_facts
from purplemux.events import Event
from purplemux.model import BackgroundTask, TmuxLocation
from purplemux.prompts import imitates_dialog

ATTENTION_TYPES = frozenset(
    {"permission_prompt", "elicitation_dialog", "worker_permission_prompt", "agent_needs_input"}
)
MAX_ID = 200
MAX_TEXT = 2000
MAX_SHORT = 300

HEADER_ID = "x-purplemux-event-id"
HEADER_TS = "x-purplemux-ts"
HEADER_PANE = "x-purplemux-pane"
HEADER_TMUX = "x-purplemux-tmux"


class PayloadError(ValueError):
    """The hook payload is not something Claude sends; the message says what is wrong."""


def _dumps(value: Any, sort_keys: bool = False) -> str:
    try:
        return json.dumps(value, sort_keys=sort_keys, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):
        # Nested as deep as the parser allows: encoding it again, deeper in the stack, may not be.
        return "<too deeply nested>"


def _text(value: Any, cap: int = MAX_TEXT) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else _dumps(value)
    return text[:cap]


def digest(tool_input: Any) -> str:
    """A stable fingerprint of a tool call's input, to pair PreToolUse with PermissionRequest."""
    raw = _dumps(tool_input, sort_keys=True)
    return hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def describe_tool(name: str, tool_input: Any) -> str:
    """What a dialog asks for, in a few words: the tool and its command, file or question."""
    if isinstance(tool_input, Mapping):
        question = first_question(tool_input)
        if question:
            return question[:MAX_SHORT]
        for key in ("command", "file_path", "path", "url", "pattern", "prompt", "description"):
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                return f"{name}: {value}"[:MAX_SHORT]
    return name[:MAX_SHORT]


def first_question(tool_input: Mapping[str, Any]) -> str | None:
    questions = tool_input.get("questions")
    if isinstance(questions, list) and questions and isinstance(questions[0], Mapping):
        q = questions[0].get("question")
        if isinstance(q, str):
            return q[:MAX_SHORT]
    return None


def parse_time(headers: Mapping[str, str], now: float) -> float:
    """The hook script's start time (nanoseconds) as unix seconds; arrival time if absent or odd."""
    raw = headers.get(HEADER_TS, "")
    if raw.isascii() and raw.isdigit() and len(raw) <= 20:  # "²".isdigit() is true too
        return int(raw) / 1e9
    return now


def tmux_location(headers: Mapping[str, str]) -> TmuxLocation | None:
    pane = headers.get(HEADER_PANE, "").strip()
    if not pane:
        return None
    raw = headers.get(HEADER_TMUX, "").strip()
    socket = raw.split(",", 1)[0] if raw else None
    return TmuxLocation(pane=pane[:MAX_ID], socket=(socket or None) and socket[:1024])


def to_event(payload: Any, headers: Mapping[str, str], now: float) -> Event:
    """Translate one hook call; raises PayloadError on a payload Claude would never send."""
    if not isinstance(payload, Mapping):
        raise PayloadError("the hook payload must be a JSON object")
    session_id = payload.get("session_id")
    name = payload.get("hook_event_name")
    if not isinstance(session_id, str) or not session_id.strip() or len(session_id) > MAX_ID:
        raise PayloadError("session_id must be a non-empty string of at most 200 characters")
    if not isinstance(name, str) or not name or len(name) > 100:
        raise PayloadError("hook_event_name must be a non-empty string")
    event_id = headers.get(HEADER_ID, "")[:MAX_ID] or f"hook:{uuid.uuid4().hex}"
    cwd = payload.get("cwd")
    transcript = payload.get("transcript_path")
    common: dict[str, Any] = {
        "session_id": session_id,
        "at": parse_time(headers, now),
        "id": event_id,
        "name": name,
        "cwd": cwd[:4096] if isinstance(cwd, str) else None,
        "transcript_path": transcript[:4096] if isinstance(transcript, str) else None,
        "tmux": tmux_location(headers),
        "permission_mode": _text(payload.get("permission_mode"), 40),
    }
    build = _BUILDERS.get(name)
    return build(payload, common) if build else ev.Other(**common)


def _session_start(p: Mapping[str, Any], c: dict[str, Any]) -> Event:
    if p.get("source") == "compact":
        return ev.CompactEnd(**c)
    return ev.SessionStart(
        **c, origin=_text(p.get("source"), 40) or "startup", model=_text(p.get("model"), 200)
    )


def _pre_tool(p: Mapping[str, Any], c: dict[str, Any]) -> Event:
    tool = _text(p.get("tool_name"), 200) or "tool"
    tool_input = p.get("tool_input")
    use_id = _text(p.get("tool_use_id"), MAX_ID)
    if tool == "AskUserQuestion":
        question = first_question(tool_input) if isinstance(tool_input, Mapping) else None
        return ev.Question(
            **c,
            tool_name=tool,
            tool_use_id=use_id,
            digest=digest(tool_input),
            question=question,
            lookalike=imitates_dialog(tool_input),
        )
    return ev.ToolStart(
        **c,
        tool_name=tool,
        tool_use_id=use_id,
        digest=digest(tool_input),
        summary=describe_tool(tool, tool_input),
        lookalike=imitates_dialog(tool_input),
    )


def _permission(p: Mapping[str, Any], c: dict[str, Any]) -> Event:
    tool = _text(p.get("tool_name"), 200) or "tool"
    tool_input = p.get("tool_input")
    return ev.Permission(
        **c,
        tool_name=tool,
        digest=digest(tool_input),
        waiting_for=describe_tool(tool, tool_input),
        lookalike=imitates_dialog(tool_input),
    )


def _post_tool(p: Mapping[str, Any], c: dict[str, Any]) -> Event:
    response = p.get("tool_response")
    tool_input = p.get("tool_input")
    task_id = response.get("backgroundTaskId") if isinstance(response, Mapping) else None
    description = None
    if isinstance(task_id, str) and task_id and isinstance(tool_input, Mapping):
        description = _text(tool_input.get("description") or tool_input.get("command"), MAX_SHORT)
    return ev.ToolEnd(
        **c,
        tool_name=_text(p.get("tool_name"), 200) or "tool",
        tool_use_id=_text(p.get("tool_use_id"), MAX_ID),
        digest=digest(tool_input),
        failed=c["name"] == "PostToolUseFailure",
        background_task_id=_text(task_id, MAX_ID) if isinstance(task_id, str) and task_id else None,
        background_description=description,
    )


MAX_TASKS = 32


def background_tasks(value: Any) -> tuple[BackgroundTask, ...] | None:
    """Stop's `background_tasks` (2.1.332: id, type, status, description, command)."""
    if not isinstance(value, list):
        return None
    out: list[BackgroundTask] = []
    for item in value[:MAX_TASKS]:
        if not isinstance(item, Mapping):
            continue
        task_id = _text(item.get("id"), MAX_ID)
        if not task_id:
            continue
        out.append(
            BackgroundTask(
                id=task_id,
                type=_text(item.get("type"), 40) or "shell",
                description=_text(item.get("description") or item.get("command"), MAX_SHORT),
                status=_text(item.get("status"), 40) or "running",
            )
        )
    return tuple(out)


def _prompt(p: Mapping[str, Any], c: dict[str, Any]) -> Event:
    prompt = _text(p.get("prompt")) or ""
    woken = session_facts.task_notification(prompt)
    return ev.Prompt(**c, prompt=prompt, task_done=woken[0][:MAX_ID] if woken else None)


def _subagent(p: Mapping[str, Any], c: dict[str, Any]) -> Event:
    return ev.Subagent(
        **c,
        agent_id=_text(p.get("agent_id"), MAX_ID) or "",
        agent_type=_text(p.get("agent_type"), 100),
        started=c["name"] == "SubagentStart",
    )


def _notification(p: Mapping[str, Any], c: dict[str, Any]) -> Event:
    kind = _text(p.get("notification_type"), 100) or ""
    message = _text(p.get("message"), MAX_SHORT)
    if kind in ATTENTION_TYPES:
        return ev.Attention(**c, notification_type=kind, message=message)
    return ev.Notice(**c, notification_type=kind, message=message)


_BUILDERS: dict[str, Callable[[Mapping[str, Any], dict[str, Any]], Event]] = {
    "SessionStart": _session_start,
    "UserPromptSubmit": _prompt,
    "PreToolUse": _pre_tool,
    "PermissionRequest": _permission,
    "PostToolUse": _post_tool,
    "PostToolUseFailure": _post_tool,
    "Notification": _notification,
    "Stop": lambda p, c: ev.Stop(
        **c,
        last_message=_text(p.get("last_assistant_message")),
        background_tasks=background_tasks(p.get("background_tasks")),
    ),
    "StopFailure": lambda p, c: ev.StopFailure(
        **c,
        error=_text(p.get("last_assistant_message"), MAX_SHORT)
        or _text(p.get("error"), MAX_SHORT)
        or "error",
        last_message=_text(p.get("last_assistant_message")),
        error_kind=_text(p.get("error"), 100),
    ),
    "PreCompact": lambda p, c: ev.CompactStart(**c),
    "PostCompact": lambda p, c: ev.CompactEnd(**c),
    "SessionEnd": lambda p, c: ev.SessionEnd(**c, reason=_text(p.get("reason"), 100)),
    "SubagentStart": _subagent,
    "SubagentStop": _subagent,
}
