"""Codex as an `Agent` record (agents/base.py)."""

from __future__ import annotations

from purplemux.agents.base import Agent
from purplemux.agents.codex.hooks import to_event
from purplemux.agents.codex.process import is_codex
from purplemux.agents.codex.screen import recognise

AGENT = Agent(
    name="codex",
    label="Codex",
    hook_event=to_event,
    pane_from_hook=False,
    is_tui=is_codex,
    recognise=recognise,
    key_guard=0.0,
)
