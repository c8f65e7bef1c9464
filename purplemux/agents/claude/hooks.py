"""Claude Code's hook payloads -> typed events (pure).

Claude runs each hook in the session's own process tree, so the hook script's $TMUX_PANE is the
session's pane (sources/hooks.py reads it from the headers). Which hooks fire when, and their
fields: ../shared/claude-code.md; real payloads in tests/samples.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from purplemux.agents.claude import limits
from purplemux.agents.claude.screen import imitates_dialog
from purplemux.agents.payload import MAX_ID, MAX_SHORT, describe_tool, digest, first_question
from purplemux.agents.payload import text as _text
from purplemux.core import events as ev
from purplemux.core import facts as session_facts
from purplemux.core.events import Event
from purplemux.core.machine import MAX_TASKS
from purplemux.core.model import BackgroundTask

ATTENTION_TYPES = frozenset(
    {"permission_prompt", "elicitation_dialog", "worker_permission_prompt", "agent_needs_input"}
)


def to_event(name: str, payload: Mapping[str, Any], common: dict[str, Any]) -> Event:
    """One Claude hook call as a typed event; a hook this daemon does not know is `Other`."""
    build = _BUILDERS.get(name)
    return build(payload, common) if build else ev.Other(**common)


def _session_start(p: Mapping[str, Any], c: dict[str, Any]) -> Event:
    if p.get("source") == "compact":
        return ev.CompactEnd(**c)
    return ev.SessionStart(
        **c,
        origin=_text(p.get("source"), 40) or "startup",
        model=_text(p.get("model"), 200),
        agent_type=_text(p.get("agent_type"), 100),
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
    return ev.Prompt(
        **c,
        prompt=prompt,
        task_done=woken[0][:MAX_ID] if woken else None,
        by_agent=limits.is_auto_continue(prompt),
    )


RATE_LIMIT = "rate_limit"
"""StopFailure's `error` for a 429, whatever the login (2.1.332): the limit wall."""


def _stop_failure(p: Mapping[str, Any], c: dict[str, Any]) -> Event:
    message = _text(p.get("last_assistant_message"))
    kind = _text(p.get("error"), 100)
    hit = kind == RATE_LIMIT
    window, resets = limits.hit_message(message, c["at"]) if hit else (None, None)
    return ev.StopFailure(
        **c,
        error=_text(message, MAX_SHORT) or _text(p.get("error"), MAX_SHORT) or "error",
        last_message=message,
        error_kind=kind,
        limit_hit=hit,
        limit_window=window,
        limit_resets_at=resets,
    )


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
    "StopFailure": _stop_failure,
    "PreCompact": lambda p, c: ev.CompactStart(**c),
    "PostCompact": lambda p, c: ev.CompactEnd(**c),
    "SessionEnd": lambda p, c: ev.SessionEnd(**c, reason=_text(p.get("reason"), 100)),
    "SubagentStart": _subagent,
    "SubagentStop": _subagent,
}
