"""The session record and its work state (pure: no I/O)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from purplemux.agents.facts import DEFAULT as DEFAULT_AGENT
from purplemux.core import facts as session_facts


class State(StrEnum):
    """The badge: what a session is doing."""

    IDLE = "idle"
    BUSY = "busy"
    NEEDS_INPUT = "needs-input"
    REVIEW = "review"
    UNKNOWN = "unknown"


ATTENTION_STATES = frozenset({State.NEEDS_INPUT, State.REVIEW})


def evolve(s: Session, **changes: Any) -> Session:
    """`dataclasses.replace` for a Session, without its field walk and keyword call (about a
    third of its time; every event that changes a session makes one or two). Session has no
    __post_init__ and no InitVar: a copy of its slots with the changes is what replace makes."""
    new = _copy_session(s)
    for name, value in changes.items():
        _SESSION_SETTERS[name](new, value)  # (a KeyError: no such field)
    return new


def _flat(obj: Any) -> dict[str, Any]:
    """A flat dataclass (scalar fields only) as a dict: dataclasses.asdict without its deep copy,
    several times faster (every change of a session makes its JSON and its record)."""
    return {name: getattr(obj, name) for name in obj.__dataclass_fields__}


@dataclass(frozen=True, slots=True)
class TmuxLocation:
    """Where a session's pane is: the server's socket, session name, window index, pane id."""

    pane: str
    socket: str | None = None
    session: str | None = None
    window: str | None = None


@dataclass(frozen=True, slots=True)
class Tokens:
    """Token usage summed over a transcript."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_creation: int = 0


@dataclass(frozen=True, slots=True)
class RateLimits:
    """An agent's usage limits as it last reported them (Codex's token_count `rate_limits`).

    Flat, so events and records carry it like Tokens. primary is the short window (300 min:
    5 h), secondary the long one (10080 min: 7 d); a percent is used, not left; resets_at is
    unix seconds. reached_type is Codex's `rate_limit_reached_type` (None: no limit reached).
    """

    primary_percent: float | None = None
    primary_window_minutes: int | None = None
    primary_resets_at: float | None = None
    secondary_percent: float | None = None
    secondary_window_minutes: int | None = None
    secondary_resets_at: float | None = None
    reached_type: str | None = None


@dataclass(frozen=True, slots=True)
class LimitWall:
    """A session stopped by a usage limit (issue 25): which window, and when it comes back.

    window is "five_hour", "seven_day" (Claude's quotaLimits.rateLimitType, Codex's reached
    type mapped to these) or None when the agent did not say (a plain 429). resets_at and
    auto_resume_at are unix seconds; auto_resume_at is set when the agent will continue by
    itself (Claude: "Usage limit reached · set to continue automatically at 10:40pm").
    """

    window: str | None = None
    resets_at: float | None = None
    auto_resume_at: float | None = None
    at: float = 0.0
    """When the wall was hit (source time)."""


@dataclass(frozen=True, slots=True)
class ResumeAtReset:
    """The user's request to resume a session at its limit's reset, and what became of it.

    Lives on the session (set only by Resume events: the user's arming or cancelling, and the
    daemon's typing or skipping), so the event log shows who asked, it survives a restart, and
    it is tied to one wall: `wall_at` is the LimitWall.at it was asked for (a new wall is a new
    question). state: "armed", "cancelled", "typing" (due: the daemon reads the pane and types;
    stored first, so nothing is typed twice), "typed" (done, once), "skipped" (due, but the pane
    or the rate limit did not allow it, or the setting armed it at a reset already past:
    `reason`), "stopped" (the setting's last prompt hit a new wall at once: the setting arms
    nothing more in the session until the user arms it)."""

    wall_at: float
    state: str = "armed"
    by: str = "api"
    """Who: page, push, cli, api, "setting" (PURPLEMUX_RESUME_AT_RESET), "resume-at-reset"."""
    at: float = 0.0
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class LastEvent:
    """The name and source time of the newest event applied to a session."""

    name: str
    at: float


@dataclass(frozen=True, slots=True)
class PendingTool:
    """The tool call a permission dialog or question is about."""

    name: str
    digest: str
    tool_use_id: str | None = None
    lookalike: bool = False
    """Its input holds text that imitates a dialog (prompts.imitates_dialog): not answered."""


@dataclass(frozen=True, slots=True)
class BackgroundTask:
    """Work that goes on after a turn: a background shell (Bash run_in_background) or an agent."""

    id: str
    type: str = "shell"
    description: str | None = None
    status: str = "running"


@dataclass(frozen=True, slots=True)
class Session:
    """One agent session (Claude Code, Codex), keyed by the agent's session (thread) id."""

    id: str
    agent: str = DEFAULT_AGENT
    """The agent's name (agents/facts.py); a row that names none is the default agent's."""
    account: str | None = None
    """The account (config dir / Codex home) the session runs under, as a short label."""
    background: bool = False
    """A Claude background session (claude --bg, the agent view): no pane of its own."""
    job_id: str | None = None
    """A background session's job (~/.claude/jobs/<id>, `claude attach <id>`)."""
    state: State = State.IDLE
    state_since: float = 0.0
    alive: bool | None = None
    ended: bool = False
    cwd: str | None = None
    pid: int | None = None
    tmux: TmuxLocation | None = None
    transcript_path: str | None = None
    seq: int = 0
    last_event: LastEvent | None = None
    current_tool: str | None = None
    waiting_for: str | None = None
    snippet: str | None = None
    tokens: Tokens = field(default_factory=Tokens)
    model: str | None = None
    compacting: bool = False
    error: str | None = None
    updated_at: float = 0.0
    title: str | None = None
    """Claude's own name (session file `name`, transcript custom-title / ai-title; newest wins)."""
    title_at: float = 0.0
    permission_mode: str | None = None
    context_tokens: int | None = None
    """Tokens in the context now: the newest main-chain reply's input + cache tokens."""
    context_window: int | None = None
    """The model's context window as the agent reports it (Codex's rollout), else None: the
    model table (session_facts) says."""
    long_context: bool = False
    """The session runs a 1M-context model variant (a "[1m]" model id was seen)."""
    cost_usd: float | None = None
    cost_source: str | None = None
    """"claude" (the transcript's cost-state) or "computed" (usage x the price table)."""
    retries: int = 0
    """How many times Claude has retried the current API call (busy, no hook says so)."""
    error_kind: str | None = None
    """StopFailure's `error` (server_error, authentication_failed, ...)."""
    background_tasks: tuple[BackgroundTask, ...] = ()
    superseded: bool = False
    """Ended, and its tmux pane has moved on to another session (/clear): no longer listed."""
    limit: LimitWall | None = None
    """Stopped by a usage limit, until the next turn starts (None: not at a wall)."""
    resume: ResumeAtReset | None = None
    """Resume at the reset of the wall, as asked (core.resume decides when and whether)."""
    # Reducer bookkeeping, not part of the public shape.
    pending_tool: PendingTool | None = None
    recent_tools: tuple[PendingTool, ...] = ()
    idle_armed_at: float | None = None

    @property
    def project(self) -> str | None:
        """The last path component of cwd."""
        if not self.cwd:
            return None
        return self.cwd.rstrip("/").rsplit("/", 1)[-1] or self.cwd

    def to_json(self, window: int | None = None) -> dict[str, Any]:
        """The public JSON shape (DESIGN.md, HTTP API); `window`: the context window setting."""
        return {
            "id": self.id,
            "agent": self.agent,
            "account": self.account,
            "background": self.background,
            "job_id": self.job_id,
            "state": self.state.value,
            "state_since": self.state_since,
            "alive": self.alive,
            "ended": self.ended,
            "cwd": self.cwd,
            "project": self.project,
            "pid": self.pid,
            "tmux": _flat(self.tmux) if self.tmux else None,
            "transcript_path": self.transcript_path,
            "seq": self.seq,
            "last_event": _flat(self.last_event) if self.last_event else None,
            "current_tool": self.current_tool,
            "waiting_for": self.waiting_for,
            "snippet": self.snippet,
            "tokens": _flat(self.tokens),
            "model": self.model,
            "compacting": self.compacting,
            "error": self.error,
            "updated_at": self.updated_at,
            "name": session_facts.display_name(self.title, self.project, self.id),
            "title": self.title,
            "permission_mode": self.permission_mode,
            "context": session_facts.context(
                self.context_tokens,
                self.model,
                self.long_context,
                self.compacting,
                window if window is not None else self.context_window,
            ),
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
            "cost_source": self.cost_source,
            "retries": self.retries,
            "error_kind": self.error_kind,
            "background_tasks": [_flat(t) for t in self.background_tasks],
            "superseded": self.superseded,
            "limit": _flat(self.limit) if self.limit else None,
            "resume": _flat(self.resume) if self.resume else None,
        }

    def to_record(self) -> dict[str, Any]:
        """Everything, including bookkeeping, for the store."""
        data = self.to_json()
        for derived in ("project", "name", "context"):
            data.pop(derived)
        data["title_at"] = self.title_at
        data["context_tokens"] = self.context_tokens
        data["context_window"] = self.context_window
        data["long_context"] = self.long_context
        data["pending_tool"] = _flat(self.pending_tool) if self.pending_tool else None
        data["recent_tools"] = [_flat(t) for t in self.recent_tools]
        data["idle_armed_at"] = self.idle_armed_at
        return data

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> Session:
        """Inverse of to_record; unknown keys are ignored."""
        tmux = data.get("tmux")
        last = data.get("last_event")
        pending = data.get("pending_tool")
        return cls(
            id=str(data["id"]),
            agent=str(data.get("agent") or DEFAULT_AGENT),
            account=data.get("account"),
            background=bool(data.get("background")),
            job_id=data.get("job_id"),
            state=State(data.get("state", "idle")),
            state_since=float(data.get("state_since") or 0.0),
            alive=data.get("alive"),
            ended=bool(data.get("ended")),
            cwd=data.get("cwd"),
            pid=data.get("pid"),
            tmux=TmuxLocation(**tmux) if tmux else None,
            transcript_path=data.get("transcript_path"),
            seq=int(data.get("seq") or 0),
            last_event=LastEvent(**last) if last else None,
            current_tool=data.get("current_tool"),
            waiting_for=data.get("waiting_for"),
            snippet=data.get("snippet"),
            tokens=Tokens(**(data.get("tokens") or {})),
            model=data.get("model"),
            compacting=bool(data.get("compacting")),
            error=data.get("error"),
            updated_at=float(data.get("updated_at") or 0.0),
            superseded=bool(data.get("superseded")),
            pending_tool=PendingTool(**pending) if pending else None,
            recent_tools=tuple(PendingTool(**t) for t in data.get("recent_tools") or ()),
            idle_armed_at=data.get("idle_armed_at"),
            title=data.get("title"),
            title_at=float(data.get("title_at") or 0.0),
            permission_mode=data.get("permission_mode"),
            context_tokens=data.get("context_tokens"),
            context_window=data.get("context_window"),
            long_context=bool(data.get("long_context")),
            cost_usd=data.get("cost_usd"),
            cost_source=data.get("cost_source"),
            retries=int(data.get("retries") or 0),
            error_kind=data.get("error_kind"),
            background_tasks=tuple(BackgroundTask(**t) for t in data.get("background_tasks") or ()),
            limit=LimitWall(**data["limit"]) if data.get("limit") else None,
            resume=ResumeAtReset(**data["resume"]) if data.get("resume") else None,
        )


_SESSION_FIELDS: tuple[str, ...] = tuple(Session.__dataclass_fields__)
_SESSION_SETTERS: dict[str, Callable[[Session, Any], None]] = {
    name: Session.__dict__[name].__set__ for name in _SESSION_FIELDS
}
"""Each field's slot setter (a member descriptor's __set__): it sets a copy's slot without the
frozen __setattr__, about 40 % faster than object.__setattr__ by name."""


def _session_copier() -> Callable[[Session], Session]:
    """A function that copies a Session slot by slot, one line per field, as dataclasses writes
    a class's __init__: unrolled, a copy takes about 60 % of a loop over the fields' setters."""
    names = {f"set_{i}": setter for i, setter in enumerate(_SESSION_SETTERS.values())}
    lines = ["def copy_session(s):", "    new = new_object(Session)"]
    lines += [f"    set_{i}(new, s.{name})" for i, name in enumerate(_SESSION_SETTERS)]
    lines.append("    return new")
    scope: dict[str, Any] = {"new_object": object.__new__, "Session": Session, **names}
    exec("\n".join(lines), scope)  # the text is made here, from the field names
    copier: Callable[[Session], Session] = scope["copy_session"]
    return copier


_copy_session = _session_copier()
