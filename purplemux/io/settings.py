"""Settings: one frozen object from flags and the environment; the only reader of os.environ."""

from __future__ import annotations

import functools
import ipaddress
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from purplemux.agents import facts as agent_facts
from purplemux.agents.facts import Facts

DEFAULT_HOST = "127.0.0.1"
DEFAULT_RETENTION = 7 * 24 * 3600.0
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
DEFAULT_PORT = 8022
MAX_BODY = 1024 * 1024
MAX_HOOK_BODY = 16 * MAX_BODY
"""A hook body up to this is taken with its long strings cut (purplemux.sources.trim)."""
HOST_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
ACCOUNT_LABEL = re.compile(r"[A-Za-z0-9._-]{1,40}")


@dataclass(frozen=True, slots=True)
class Account:
    """One login of one agent: a config dir of it (a Claude config dir, a Codex home), by its
    short label."""

    agent: str
    """The agent's name (agents/facts.py)."""
    label: str
    """What rows, the CLI and the limits name it by ("claude", "claude-work", "codex")."""
    dir: Path


def default_label(path: Path) -> str:
    """An account's label when none is given: its dir's name without a leading dot
    (~/.claude -> "claude", ~/.claude-work -> "claude-work", ~/.codex -> "codex")."""
    return path.name.lstrip(".") or "default"


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the daemon and the CLI need to know about where things are."""

    home: Path
    claude_dir: Path
    """The default agent's first config dir (agents/facts.DEFAULT: Claude's, CLAUDE_CONFIG_DIR);
    every agent's are in `accounts`."""
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    allow_remote: bool = False
    desktop_notifications: bool = False
    push_cooldown: float = 0.0
    poll_interval: float = 3.0
    watch_sources: bool = True
    """Follow Claude's session files, transcripts and the process tree (off in some tests)."""
    notify_context: bool = False
    """PURPLEMUX_NOTIFY_CONTEXT=1: push when a session's context enters the critical band."""
    context_window: int | None = None
    """PURPLEMUX_CONTEXT_WINDOW: one context window (tokens) for every model, over the table."""
    # --- several machines (purplemux/hosts): off unless a broker URL is given ----------------
    host_name: str = field(default_factory=lambda: socket.gethostname() or "localhost")
    """This machine's name on the shared dashboard (default: the hostname)."""
    broker: str | None = None
    """redis:// or rediss:// URL of the Redis that daemons on several machines share."""
    broker_password_file: Path | None = None
    """A file holding the broker's password (kept off command lines and URLs)."""
    heartbeat_ttl: float = 10.0
    """Seconds after a host's last heartbeat before its rows are marked stale."""
    prune_after: float = 86_400.0
    """Seconds a stale host's rows stay listed before they are dropped."""
    input: bool | None = None
    """Answering prompts (keys typed into Claude's pane): on, off, or None for the default, which
    is on for a loopback address and off otherwise (PURPLEMUX_INPUT, `serve --no-input`)."""

    request_timeout: float = 10.0
    """Seconds a connection may take to send a whole request (PURPLEMUX_REQUEST_TIMEOUT)."""
    max_connections: int | None = None
    """Connections of all clients together (PURPLEMUX_MAX_CONNECTIONS; default: from ulimit -n,
    at most 1,024)."""
    max_feeds: int | None = None
    """Live feeds (WebSockets), in all and from one address (PURPLEMUX_MAX_FEEDS; default: 128
    in all and 16 per address, fewer under a low ulimit -n)."""
    retention: float = DEFAULT_RETENTION
    """Seconds an ended session (and its events) is kept (PURPLEMUX_RETENTION, e.g. 7d)."""
    keep_ended: int = 500
    """Ended sessions kept at most, the newest (PURPLEMUX_KEEP_ENDED): older ones go with their
    events even inside the retention period, so the list stays small."""
    allowed_hosts: tuple[str, ...] = ()
    """Host header names served besides the bound address and localhost (a proxy's name)."""
    resume_at_reset: bool = False
    """PURPLEMUX_RESUME_AT_RESET=on: every session stopped at a usage limit is armed to resume
    shortly after the reset (Claude's own auto-continue excepted; purplemux.core.resume), never at a
    reset already past when the wall is seen, and no more in a session whose resumed turn hit
    the wall again at once (told once)."""
    tmux_tmpdir: str = "/tmp"
    """TMUX_TMPDIR (tmux's own variable): where the default tmux server keeps its socket."""
    account_list: tuple[Account, ...] = ()
    """Every account watched, each agent's from its variables (PURPLEMUX_CLAUDE_DIRS, ...;
    agents/facts.py); empty: the default agent's one, claude_dir (see `accounts`)."""

    @property
    def accounts(self) -> tuple[Account, ...]:
        """Every config dir of every agent this daemon watches, the default agent's first."""
        return _all_accounts(self.account_list, self.claude_dir)

    def accounts_of(self, agent: str) -> tuple[Account, ...]:
        return _agent_accounts(self.account_list, self.claude_dir, agent)

    def account_dir(self, agent: str, label: str | None) -> Path:
        """The dir of `agent`'s account labelled `label`; the agent's first when none is."""
        mine = self.accounts_of(agent)
        found = next((a.dir for a in mine if a.label == label), None)
        if found is not None:
            return found
        if mine:
            return mine[0].dir
        return self.claude_dir

    def account_of(self, agent: str, path: str | Path | None) -> str | None:
        """The label of the account of `agent` whose dir holds `path` (a transcript, a rollout,
        a session file); None when none does. The deepest dir wins (one inside another)."""
        if not path:
            return None
        return _account_of(self.accounts_of(agent), str(path))

    @property
    def input_allowed(self) -> bool:
        """May the daemon type into panes (POST /api/sessions/{id}/answer)?"""
        return self.input if self.input is not None else is_loopback(self.host)

    @property
    def input_refusal(self) -> str:
        """Why answering is off, and how to turn it on."""
        if self.input is False:
            return (
                "answering prompts is turned off on this daemon (PURPLEMUX_INPUT=off or "
                "`serve --no-input`); answer in the terminal, or restart the daemon without it"
            )
        return (
            f"answering prompts is off because the daemon listens on {self.host}, not only "
            "loopback; set PURPLEMUX_INPUT=on to allow it (read SECURITY.md first)"
        )

    @property
    def tmux_default_socket(self) -> str:
        """The default tmux server's socket path (what `tmux` without -S/-L talks to)."""
        return os.path.join(self.tmux_tmpdir, f"tmux-{os.getuid()}", "default")

    @property
    def db_path(self) -> Path:
        return self.home / "state.db"

    @property
    def token_path(self) -> Path:
        return self.home / "token"

    @property
    def port_path(self) -> Path:
        return self.home / "port"

    @property
    def spool_dir(self) -> Path:
        return self.home / "spool"

    @property
    def settings_json(self) -> Path:
        return self.claude_dir / "settings.json"

    @property
    def base_url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Build from PURPLEMUX_* / CLAUDE_CONFIG_DIR, then apply non-None overrides (flags)."""
        env = os.environ if environ is None else environ
        home = (
            Path(env["PURPLEMUX_HOME"]) if env.get("PURPLEMUX_HOME") else Path.home() / ".purplemux"
        )
        accounts = tuple(
            account
            for agent in agent_facts.known()
            for account in _accounts(agent, env.get(agent.accounts_env), config_dir(agent, env))
        )
        settings = cls(
            home=home.expanduser(),
            claude_dir=accounts[0].dir,
            account_list=accounts,
            host=env.get("PURPLEMUX_HOST") or DEFAULT_HOST,
            port=_int(env.get("PURPLEMUX_PORT"), DEFAULT_PORT, "PURPLEMUX_PORT"),
            desktop_notifications=env.get("PURPLEMUX_DESKTOP_NOTIFY", "") in ("1", "true", "yes"),
            push_cooldown=_float(
                env.get("PURPLEMUX_PUSH_COOLDOWN"), 0.0, "PURPLEMUX_PUSH_COOLDOWN"
            ),
            host_name=env.get("PURPLEMUX_HOST_NAME") or socket.gethostname() or "localhost",
            broker=env.get("PURPLEMUX_BROKER") or None,
            broker_password_file=(
                Path(env["PURPLEMUX_BROKER_PASSWORD_FILE"]).expanduser()
                if env.get("PURPLEMUX_BROKER_PASSWORD_FILE")
                else None
            ),
            heartbeat_ttl=_float(
                env.get("PURPLEMUX_HEARTBEAT_TTL"), 10.0, "PURPLEMUX_HEARTBEAT_TTL"
            )
            or 10.0,
            prune_after=_float(
                env.get("PURPLEMUX_HOST_PRUNE_AFTER"), 86_400.0, "PURPLEMUX_HOST_PRUNE_AFTER"
            ),
            input=_switch(env.get("PURPLEMUX_INPUT"), "PURPLEMUX_INPUT"),
            poll_interval=_float(
                env.get("PURPLEMUX_POLL_INTERVAL"), 3.0, "PURPLEMUX_POLL_INTERVAL"
            ),
            retention=duration(env.get("PURPLEMUX_RETENTION"), DEFAULT_RETENTION),
            keep_ended=_count(env.get("PURPLEMUX_KEEP_ENDED"), 500, "PURPLEMUX_KEEP_ENDED"),
            request_timeout=duration(
                env.get("PURPLEMUX_REQUEST_TIMEOUT"), 10.0, "PURPLEMUX_REQUEST_TIMEOUT"
            ),
            max_connections=_int(
                env.get("PURPLEMUX_MAX_CONNECTIONS"), 0, "PURPLEMUX_MAX_CONNECTIONS"
            )
            or None,
            max_feeds=_int(env.get("PURPLEMUX_MAX_FEEDS"), 0, "PURPLEMUX_MAX_FEEDS") or None,
            allowed_hosts=tuple(
                h.strip() for h in env.get("PURPLEMUX_ALLOWED_HOSTS", "").split(",") if h.strip()
            ),
            notify_context=env.get("PURPLEMUX_NOTIFY_CONTEXT", "") in ("1", "true", "yes"),
            context_window=_window(env.get("PURPLEMUX_CONTEXT_WINDOW")),
            tmux_tmpdir=env.get("TMUX_TMPDIR") or "/tmp",
            resume_at_reset=bool(
                _switch(env.get("PURPLEMUX_RESUME_AT_RESET"), "PURPLEMUX_RESUME_AT_RESET")
            ),
        )
        settings = replace(settings, **{k: v for k, v in overrides.items() if v is not None})
        if not HOST_NAME.fullmatch(settings.host_name):
            raise ValueError(
                f"the host name must be 1-64 letters, digits, '.', '_' or '-', "
                f"got {settings.host_name!r} (set --host-name or PURPLEMUX_HOST_NAME)"
            )
        if settings.broker and not settings.broker.startswith(("redis://", "rediss://")):
            raise ValueError(
                f"the broker must be a redis:// or rediss:// URL, got {settings.broker!r}"
            )
        return settings


@functools.lru_cache(maxsize=64)
def _all_accounts(listed: tuple[Account, ...], claude_dir: Path) -> tuple[Account, ...]:
    """Settings.accounts, made once per settings: every hook's event asks for its account."""
    if listed:
        return listed
    return (Account(agent_facts.DEFAULT, default_label(claude_dir), claude_dir),)


@functools.lru_cache(maxsize=64)
def _agent_accounts(
    listed: tuple[Account, ...], claude_dir: Path, agent: str
) -> tuple[Account, ...]:
    return tuple(a for a in _all_accounts(listed, claude_dir) if a.agent == agent)


@functools.lru_cache(maxsize=4096)
def _account_of(mine: tuple[Account, ...], path: str) -> str | None:
    """Settings.account_of, remembered: every hook names its transcript, and resolving links
    (realpath: an lstat per component) was a few % of the daemon's CPU per event."""
    text = os.path.normpath(os.path.abspath(os.path.expanduser(path)))
    found = _holder(text, [(os.path.normpath(os.path.abspath(a.dir)), a) for a in mine])
    if found is None:  # a link on either side: compare where they really are
        try:
            real = os.path.realpath(text)
        except (ValueError, OSError):  # a NUL, a lone surrogate: no file of any account
            return None
        found = _holder(real, [(os.path.realpath(a.dir), a) for a in mine])
    return found.label if found else None


def _holder(path: str, dirs: list[tuple[str, Account]]) -> Account | None:
    best: tuple[int, Account] | None = None
    for folder, account in dirs:
        if (path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)) and (
            best is None or len(folder) > best[0]
        ):
            best = (len(folder), account)
    return best[1] if best else None


def config_dir(agent: Facts, env: Mapping[str, str]) -> Path:
    """The agent's config dir by its own variable (CLAUDE_CONFIG_DIR, CODEX_HOME), else its
    default under the user's home; canonicalised where the agent names its dirs so (Codex)."""
    given = env.get(agent.config_env)
    if not given:
        return Path.home() / agent.default_dir
    path = Path(given).expanduser()
    return path.resolve() if agent.canonical_dirs else path


def _accounts(facts: Facts, raw: str | None, default: Path) -> tuple[Account, ...]:
    """`path` or `label=path` entries, comma-separated; none: the one default dir. An agent's
    dirs are canonicalised where it names them so (Codex, in its trust keys:
    agents/codex/install.py), except its default dir (~/.codex), used as it is."""
    agent, name = facts.name, facts.accounts_env
    if raw is None or not raw.strip():
        return (Account(agent, default_label(default), default),)
    out: list[Account] = []
    example = f"{name}=work=~/.{agent}-work,home=~/.{agent}"
    for entry in (e.strip() for e in raw.split(",")):
        if not entry:
            continue
        label, eq, where = entry.partition("=")
        if not eq:
            label, where = "", entry
        label, where = label.strip(), where.strip()
        if not where:
            raise ValueError(f"{name}: {entry!r} names no folder; write path or label=path")
        path = Path(where).expanduser()
        if not path.is_absolute():
            raise ValueError(
                f"{name}: {where!r} is not an absolute path; write it from / or ~ ({example})"
            )
        if facts.canonical_dirs and path != Path.home() / facts.default_dir:
            path = path.resolve()
        label = label or default_label(path)
        if not ACCOUNT_LABEL.fullmatch(label):
            raise ValueError(
                f"{name}: the label {label!r} must be 1-40 letters, digits, '.', '_' or '-'; "
                f"name it with label=path ({example})"
            )
        for other in out:
            if other.dir == path:
                raise ValueError(f"{name}: {path} is listed twice; list each folder once")
            if other.label == label:
                raise ValueError(
                    f"{name}: two folders have the label {label!r} ({other.dir} and {path}); "
                    f"give each its own with label=path ({example})"
                )
        out.append(Account(agent, label, path))
    if not out:
        raise ValueError(f"{name} lists no folder; unset it or list some ({example})")
    return tuple(out)


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or localhost."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _switch(raw: str | None, name: str) -> bool | None:
    if raw is None or not raw.strip():
        return None
    value = raw.strip().lower()
    if value in ("1", "on", "true", "yes"):
        return True
    if value in ("0", "off", "false", "no"):
        return False
    raise ValueError(f"{name} must be on or off, got {raw!r}")


def _int(raw: str | None, default: int, name: str) -> int:
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None


def _count(raw: str | None, default: int, name: str) -> int:
    """A whole number of at least 0."""
    value = _int(raw, default, name)
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {raw!r}")
    return value


def _float(raw: str | None, default: float, name: str) -> float:
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, got {raw!r}") from None
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {raw!r}")
    return value


def duration(raw: str | None, default: float, name: str = "PURPLEMUX_RETENTION") -> float:
    """`7d`, `12h`, `30m`, `90s` (or plain seconds) as seconds; ValueError says how to fix it."""
    if raw is None or not raw.strip():
        return default
    text = raw.strip().lower()
    number, unit = (text[:-1], text[-1]) if text[-1] in UNITS else (text, "s")
    try:
        value = float(number) * UNITS[unit]
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise ValueError(
            f"{name} must be a positive duration such as 7d, 12h, 30m or 3600s (got {raw!r}); "
            f"fix or unset it (default 7d)"
        )
    return value


def _window(raw: str | None) -> int | None:
    if not raw:
        return None
    value = _int(raw, 0, "PURPLEMUX_CONTEXT_WINDOW")
    if value <= 0:
        raise ValueError(
            f"PURPLEMUX_CONTEXT_WINDOW must be a positive number of tokens, got {raw!r}"
        )
    return value
