"""Every agent purplemux knows, by name: where the sources and adapters look an agent up."""

from __future__ import annotations

from purplemux.agents.base import Agent
from purplemux.agents.claude.agent import AGENT as CLAUDE
from purplemux.agents.codex.agent import AGENT as CODEX
from purplemux.io.procinfo import ProcInfo

AGENTS: dict[str, Agent] = {a.name: a for a in (CLAUDE, CODEX)}
NAMES: tuple[str, ...] = tuple(AGENTS)
DEFAULT = CLAUDE.name
"""A hook call or a stored session that names no agent is Claude's (what purplemux saw first)."""


def get(name: str | None) -> Agent:
    """The agent of that name; Claude for None or a name this version does not know."""
    return AGENTS.get(name or DEFAULT, CLAUDE)


def of_process(info: ProcInfo) -> Agent | None:
    """The agent whose interactive program this process is, if any."""
    for agent in AGENTS.values():
        if agent.is_tui(info):
            return agent
    return None
