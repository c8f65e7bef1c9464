"""Every agent purplemux knows, by name: the one door through which the rest of purplemux reaches
an agent (`get`), and through which a new one comes in (`register`)."""

from __future__ import annotations

from purplemux.agents import facts
from purplemux.agents.base import Agent
from purplemux.agents.claude.agent import AGENT as CLAUDE
from purplemux.agents.codex.agent import AGENT as CODEX

_AGENTS: dict[str, Agent] = {a.name: a for a in (CLAUDE, CODEX)}
DEFAULT = facts.DEFAULT
"""A hook call or a stored session that names no agent is this one's (what purplemux saw first)."""


def get(name: str | None) -> Agent:
    """The agent of that name; the default agent for None or a name this version does not know."""
    return _AGENTS.get(name or DEFAULT) or _AGENTS[DEFAULT]


def all_agents() -> tuple[Agent, ...]:
    """Every registered agent, the default first, then in the order they were registered."""
    return tuple(_AGENTS.values())


def names() -> tuple[str, ...]:
    return tuple(_AGENTS)


def with_statusline() -> Agent | None:
    """The agent whose statusLine input reaches POST /api/statusline (Claude's)."""
    return next((a for a in _AGENTS.values() if a.statusline is not None), None)


def register(agent: Agent) -> None:
    """Add an agent (its facts too): from then on it is listed, installed and watched like the
    others. A name already taken is refused."""
    if agent.name in _AGENTS:
        raise ValueError(f"an agent named {agent.name!r} is registered already")
    facts.add(agent.facts)
    _AGENTS[agent.name] = agent


def unregister(name: str) -> None:
    """Remove an agent registered with `register` (the built-in ones stay)."""
    if name in (CLAUDE.name, CODEX.name):
        raise ValueError(f"{name!r} is built in")
    _AGENTS.pop(name, None)
    facts.remove(name)
