"""Codex's hook trust: the hash it keeps per hook handler, and the key it keeps it under.

Codex 0.171.0 runs a user's (non-managed) hook only when config.toml holds
``[hooks.state."<file>:<label>:<group>:<handler>"] trusted_hash = "sha256:<hex>"`` for it and the
hash matches the handler as it is now; otherwise the TUI asks for a review and ``codex exec``
skips the hook without a word. An installer that writes the same hash needs no prompt at all.

The hash is sha256 over compact JSON with keys sorted at every depth, of
``{"event_name": <label>, "matcher"?: ..., "hooks": [<the one handler, normalised>]}``. Each rule
below was checked against hashes Codex itself wrote (the vectors in the tests): the timeout is
600 when unset and at least 1, but SessionEnd and Interrupt are clamped to 1..3 (unset: 1); the
matcher is left out when unset and always for UserPromptSubmit and Stop (they take none);
``async`` is false when unset; ``statusMessage`` is in only when set.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# Codex's event names and the labels its trust keys use, in the order `/hooks` lists them.
EVENT_LABELS: Mapping[str, str] = {
    "PreToolUse": "pre_tool_use",
    "PermissionRequest": "permission_request",
    "PostToolUse": "post_tool_use",
    "PreCompact": "pre_compact",
    "PostCompact": "post_compact",
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "UserPromptSubmit": "user_prompt_submit",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "Stop": "stop",
    "Interrupt": "interrupt",
    "PreModelRequest": "pre_model_request",
    "PostModelRequest": "post_model_request",
}
DEFAULT_TIMEOUT = 600
CLAMPED_LABELS = frozenset({"session_end", "interrupt"})  # Codex clamps these to 1..3 s
CLAMP_MAX = 3
NO_MATCHER_LABELS = frozenset({"user_prompt_submit", "stop"})


def label_of(event: str) -> str:
    """The trust label of a Codex event name (KeyError for a name Codex does not have)."""
    return EVENT_LABELS[event]


def normalized_timeout(event_label: str, timeout: object) -> int:
    """The timeout Codex hashes (and runs with): seconds, an integer; ValueError if not one."""
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int)):
        raise ValueError(f"timeout {timeout!r} is not a whole number of seconds")
    if event_label in CLAMPED_LABELS:
        return 1 if timeout is None else min(max(timeout, 1), CLAMP_MAX)
    return DEFAULT_TIMEOUT if timeout is None else max(timeout, 1)


def trusted_hash(event_label: str, group: Mapping[str, Any], handler_index: int = 0) -> str:
    """The ``sha256:<hex>`` Codex trusts for one handler of a matcher group.

    group is one element of an event's array in hooks.json: ``{"matcher"?, "hooks": [...]}``;
    each handler has a hash of its own (the group's matcher plus that handler alone).
    """
    handler = group["hooks"][handler_index]
    normal: dict[str, Any] = {
        "type": handler.get("type", "command"),
        "command": handler.get("command"),
        "timeout": normalized_timeout(event_label, handler.get("timeout")),
        "async": bool(handler.get("async", False)),
    }
    if handler.get("statusMessage") is not None:
        normal["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": event_label, "hooks": [normal]}
    matcher = group.get("matcher")
    if matcher is not None and event_label not in NO_MATCHER_LABELS:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def state_key(
    hooks_file: Path | str, event_label: str, group_index: int, handler_index: int
) -> str:
    """The ``[hooks.state]`` key of one handler: the declaring file's absolute path first.

    Codex uses the path it read the file from (CODEX_HOME canonicalised when set in the
    environment, ~/.codex as it is otherwise): a hash written for another path is void.
    """
    return f"{hooks_file}:{event_label}:{group_index}:{handler_index}"
