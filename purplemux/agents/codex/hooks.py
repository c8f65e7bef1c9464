"""Codex's hook payloads -> typed events (pure).

Codex 0.171.0 fires 14 hooks, all from its shared app-server daemon (codex.md, "Hook events").
What differs from Claude, and how it maps:

- the hook's $TMUX_PANE is the daemon's: the script sends no pane for Codex (PURPLEMUX_AGENT),
  and sources/hooks.py takes none; the pane comes from agents/codex/panes.py;
- a question is PreToolUse(request_user_input), with no PermissionRequest: a Question here;
- PermissionRequest's input adds the model's `description` to PreToolUse's `command`: the two
  are paired by the command alone (`digest`), as PostToolUse is;
- `Interrupt` (Esc, or a denied approval) is its own hook: an Interrupt;
- nothing fires when an approval is answered or a turn fails: the pane title and the rollout say
  so (agents/codex/pane_title.py, rollout.py);
- Pre/PostModelRequest carry no state: logged as `Other`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from purplemux.agents.codex.screen import imitates_dialog
from purplemux.agents.payload import MAX_ID, MAX_SHORT, describe_tool, first_question
from purplemux.agents.payload import digest as _digest
from purplemux.agents.payload import text as _text
from purplemux.core import events as ev
from purplemux.core.events import Event

QUESTION_TOOL = "request_user_input"


def digest(tool_input: Any) -> str:
    """A tool call's fingerprint from its command (or patch) alone, when it has one: the same
    for PreToolUse, PermissionRequest (which adds a description) and PostToolUse."""
    if isinstance(tool_input, Mapping) and isinstance(tool_input.get("command"), str):
        return _digest({"command": tool_input["command"]})
    return _digest(tool_input)


def _tool(p: Mapping[str, Any]) -> str:
    return _text(p.get("tool_name"), 200) or "tool"


def _session_start(p: Mapping[str, Any], c: dict[str, Any]) -> Event:
    source = _text(p.get("source"), 40) or "startup"
    if source == "compact":
        return ev.CompactEnd(**c)
    return ev.SessionStart(**c, origin=source, model=_text(p.get("model"), 200))


def _pre_tool(p: Mapping[str, Any], c: dict[str, Any]) -> Event:
    tool = _tool(p)
    tool_input = p.get("tool_input")
    use_id = _text(p.get("tool_use_id"), MAX_ID)
    if tool == QUESTION_TOOL:
        return ev.Question(
            **c,
            tool_name=tool,
            tool_use_id=use_id,
            digest=digest(tool_input),
            question=first_question(tool_input) if isinstance(tool_input, Mapping) else None,
            lookalike=imitates_dialog(tool_input, tool),
        )
    return ev.ToolStart(
        **c,
        tool_name=tool,
        tool_use_id=use_id,
        digest=digest(tool_input),
        summary=describe_tool(tool, tool_input),
        lookalike=imitates_dialog(tool_input, tool),
    )


def _permission(p: Mapping[str, Any], c: dict[str, Any]) -> Event:
    tool = _tool(p)
    tool_input = p.get("tool_input")
    return ev.Permission(
        **c,
        tool_name=tool,
        digest=digest(tool_input),
        waiting_for=describe_tool(tool, tool_input),
        lookalike=imitates_dialog(tool_input, tool),
    )


def _post_tool(p: Mapping[str, Any], c: dict[str, Any]) -> Event:
    return ev.ToolEnd(
        **c,
        tool_name=_tool(p),
        tool_use_id=_text(p.get("tool_use_id"), MAX_ID),
        digest=digest(p.get("tool_input")),
    )


def _subagent(p: Mapping[str, Any], c: dict[str, Any]) -> Event:
    return ev.Subagent(
        **c,
        agent_id=_text(p.get("agent_id"), MAX_ID) or "",
        agent_type=_text(p.get("agent_type"), 100),
        started=c["name"] == "SubagentStart",
    )


_BUILDERS: dict[str, Callable[[Mapping[str, Any], dict[str, Any]], Event]] = {
    "SessionStart": _session_start,
    "UserPromptSubmit": lambda p, c: ev.Prompt(**c, prompt=_text(p.get("prompt")) or ""),
    "PreToolUse": _pre_tool,
    "PermissionRequest": _permission,
    "PostToolUse": _post_tool,
    "Stop": lambda p, c: ev.Stop(**c, last_message=_text(p.get("last_assistant_message"))),
    "Interrupt": lambda p, c: ev.Interrupt(**c),
    "PreCompact": lambda p, c: ev.CompactStart(**c),
    "PostCompact": lambda p, c: ev.CompactEnd(**c),
    "SessionEnd": lambda p, c: ev.SessionEnd(**c, reason=_text(p.get("reason"), 100)),
    "SubagentStart": _subagent,
    "SubagentStop": _subagent,
}
"""PreModelRequest and PostModelRequest are not here: `Other` (their failure alone does not end
a turn: Codex retries, and the rollout's task_complete says when it gave up)."""

EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
    "Interrupt",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
    "SubagentStart",
    "SubagentStop",
    "PreModelRequest",
    "PostModelRequest",
)
"""Every hook Codex 0.171.0 lists in /hooks: the installer registers our script for each."""


def to_event(name: str, payload: Mapping[str, Any], common: dict[str, Any]) -> Event:
    """One Codex hook call as a typed event; any other hook is `Other`."""
    build = _BUILDERS.get(name)
    return build(payload, common) if build else ev.Other(**common)


__all__ = ["EVENTS", "MAX_SHORT", "QUESTION_TOOL", "digest", "to_event"]
