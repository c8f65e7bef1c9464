"""Settings: one frozen object from flags and the environment; the only reader of os.environ."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8022
MAX_BODY = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the daemon and the CLI need to know about where things are."""

    home: Path
    claude_dir: Path
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

    @property
    def db_path(self) -> Path:
        return self.home / "state.db"

    @property
    def token_path(self) -> Path:
        return self.home / "token"

    @property
    def auth_header_path(self) -> Path:
        return self.home / "auth-header"

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
        claude = (
            Path(env["CLAUDE_CONFIG_DIR"])
            if env.get("CLAUDE_CONFIG_DIR")
            else Path.home() / ".claude"
        )
        settings = cls(
            home=home.expanduser(),
            claude_dir=claude.expanduser(),
            host=env.get("PURPLEMUX_HOST") or DEFAULT_HOST,
            port=_int(env.get("PURPLEMUX_PORT"), DEFAULT_PORT, "PURPLEMUX_PORT"),
            desktop_notifications=env.get("PURPLEMUX_DESKTOP_NOTIFY", "") in ("1", "true", "yes"),
            push_cooldown=_float(
                env.get("PURPLEMUX_PUSH_COOLDOWN"), 0.0, "PURPLEMUX_PUSH_COOLDOWN"
            ),
            notify_context=env.get("PURPLEMUX_NOTIFY_CONTEXT", "") in ("1", "true", "yes"),
            context_window=_window(env.get("PURPLEMUX_CONTEXT_WINDOW")),
        )
        return replace(settings, **{k: v for k, v in overrides.items() if v is not None})


def _int(raw: str | None, default: int, name: str) -> int:
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None


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


def _window(raw: str | None) -> int | None:
    if not raw:
        return None
    value = _int(raw, 0, "PURPLEMUX_CONTEXT_WINDOW")
    if value <= 0:
        raise ValueError(
            f"PURPLEMUX_CONTEXT_WINDOW must be a positive number of tokens, got {raw!r}"
        )
    return value
