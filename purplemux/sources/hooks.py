"""Hook calls (the agent's JSON payload plus the hook script's headers) -> typed events.

The headers are the script's own: the event id, the time it started, the agent it was installed
for, and (for an agent that runs hooks in the session's own process tree) the pane. What the
payload means is the agent's business (agents/<agent>/hooks.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from purplemux.agents import registry
from purplemux.agents.payload import MAX_ID
from purplemux.agents.payload import text as _text
from purplemux.core.events import Event
from purplemux.core.model import TmuxLocation

HEADER_ID = "x-purplemux-event-id"
HEADER_TS = "x-purplemux-ts"
HEADER_PANE = "x-purplemux-pane"
HEADER_TMUX = "x-purplemux-tmux"
HEADER_AGENT = "x-purplemux-agent"


class PayloadError(ValueError):
    """The hook payload is not something an agent sends; the message says what is wrong."""


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


AccountOf = Callable[[str, str | None], str | None]
"""(agent, transcript path) -> the account label (Settings.account_of)."""


def to_event(
    payload: Any, headers: Mapping[str, str], now: float, account_of: AccountOf | None = None
) -> Event:
    """Translate one hook call; raises PayloadError on a payload no agent would send.

    The account is the one whose dir holds the payload's `transcript_path` (Claude's under its
    config dir's projects/, Codex's rollout under its home's sessions/): the hook script need
    send nothing more."""
    if not isinstance(payload, Mapping):
        raise PayloadError("the hook payload must be a JSON object")
    session_id = payload.get("session_id")
    name = payload.get("hook_event_name")
    if not isinstance(session_id, str) or not session_id.strip() or len(session_id) > MAX_ID:
        raise PayloadError("session_id must be a non-empty string of at most 200 characters")
    if not isinstance(name, str) or not name or len(name) > 100:
        raise PayloadError("hook_event_name must be a non-empty string")
    raw_agent = headers.get(HEADER_AGENT, "").strip()
    if raw_agent and raw_agent not in registry.names():
        raise PayloadError(
            f"unknown agent {raw_agent[:40]!r}: one of {', '.join(registry.names())}"
        )
    agent = registry.get(raw_agent or registry.DEFAULT)
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
        "account": (
            account_of(agent.name, transcript)
            if account_of is not None and isinstance(transcript, str)
            else None
        ),
        # Never a pane from an agent whose hooks run outside the session's pane (Codex).
        "tmux": tmux_location(headers) if agent.pane_from_hook else None,
        "permission_mode": _text(payload.get("permission_mode"), 40),
        "agent": agent.name,
    }
    return agent.hook_event(name, payload, common)
