"""What every agent is, as plain facts: its name, its label, its command, where its config
lives. Import-free, so the settings and the core read it from below the agents' layer (the one
exception the layers contract names; the contract "Agents' facts import nothing" keeps it so).

The built-in agents' facts are here; the registry adds those of an agent registered later
(agents/registry.py `register`), so a new agent touches no file outside its own package.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Facts:
    """One agent's declarative facts."""

    name: str
    """As sessions carry it ("claude", "codex")."""
    label: str
    """As people read it ("Claude", "Codex")."""
    command: str
    """The program people run ("claude", "codex"): its folder goes on the service's PATH."""
    config_env: str
    """The variable that names its config dir (CLAUDE_CONFIG_DIR, CODEX_HOME)."""
    default_dir: str
    """Its config dir under the user's home when that variable is unset (".claude")."""
    accounts_env: str
    """purplemux's variable listing several config dirs (PURPLEMUX_CLAUDE_DIRS)."""
    canonical_dirs: bool
    """Whether its config dirs are named as the agent names them, links resolved (Codex's
    trust keys), except the default dir, which it uses as it is."""


CLAUDE = Facts(
    name="claude",
    label="Claude",
    command="claude",
    config_env="CLAUDE_CONFIG_DIR",
    default_dir=".claude",
    accounts_env="PURPLEMUX_CLAUDE_DIRS",
    canonical_dirs=False,
)
CODEX = Facts(
    name="codex",
    label="Codex",
    command="codex",
    config_env="CODEX_HOME",
    default_dir=".codex",
    accounts_env="PURPLEMUX_CODEX_HOMES",
    # As Codex names a home in its trust keys: canonicalised, ~/.codex as it is
    # (agents/codex/install.py, codex_home_from_env).
    canonical_dirs=True,
)

_KNOWN: dict[str, Facts] = {f.name: f for f in (CLAUDE, CODEX)}
DEFAULT = CLAUDE.name
"""A hook call or a stored session that names no agent is this one's (what purplemux saw first)."""


def known() -> tuple[Facts, ...]:
    """Every agent's facts, the default agent first, then in the order they were registered."""
    return tuple(_KNOWN.values())


def names() -> tuple[str, ...]:
    return tuple(_KNOWN)


def label(name: str | None) -> str:
    """The agent's label; an unknown name capitalised (a row from a newer version)."""
    found = _KNOWN.get(name or DEFAULT)
    return found.label if found else (name or DEFAULT).capitalize()


def default_dir(name: str) -> str:
    """The agent's config dir under the user's home by default (".codex"); "." + an unknown name."""
    found = _KNOWN.get(name)
    return found.default_dir if found else f".{name}"


def add(facts: Facts) -> None:
    """Make an agent's facts known (the registry's `register`)."""
    _KNOWN[facts.name] = facts


def remove(name: str) -> None:
    """Forget an agent's facts (the registry's `unregister`; the default agent stays)."""
    if name != DEFAULT:
        _KNOWN.pop(name, None)
