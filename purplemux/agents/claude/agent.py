"""Claude Code as an `Agent` record (agents/base.py)."""

from __future__ import annotations

from purplemux.agents.base import Agent
from purplemux.agents.claude.hooks import to_event
from purplemux.agents.claude.input_box import read_input_box
from purplemux.agents.claude.process import is_claude, shows
from purplemux.core.prompts import recognise

AGENT = Agent(
    name="claude",
    label="Claude",
    hook_event=to_event,
    pane_from_hook=True,
    is_tui=is_claude,
    recognise=recognise,
    key_guard=1.5,
    input_box=read_input_box,
    shows=shows,
)
