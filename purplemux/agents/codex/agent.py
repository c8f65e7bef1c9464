"""Codex as an `Agent` record (agents/base.py)."""

from __future__ import annotations

from purplemux.agents.base import Agent
from purplemux.agents.codex.hooks import to_event
from purplemux.agents.codex.process import is_codex

AGENT = Agent(
    name="codex",
    label="Codex",
    hook_event=to_event,
    pane_from_hook=False,
    is_tui=is_codex,
    recognise=lambda screen, ctx: None,  # replaced by agents/codex/screen.py
    key_guard=0.0,
)
