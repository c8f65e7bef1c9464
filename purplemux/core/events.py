"""Typed events: every signal about a session becomes one of these (pure: no I/O).

Each event carries `at`, the time it happened at its source (the hook script's clock when it
started, a transcript entry's timestamp, a session file's statusUpdatedAt, the daemon's clock for
the poller, timers and the user), and an `id` that is unique per signal: a replayed or duplicated
event has the same id and changes nothing. Sources translate what they see into these kinds; the
translation is where "a Notification of type idle_prompt" becomes a NOTICE rather than an
ATTENTION, so the transition table can stay a plain lookup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from enum import StrEnum
from typing import Any, ClassVar

from purplemux.core.model import BackgroundTask, RateLimits, TmuxLocation, Tokens


class Kind(StrEnum):
    """What happened, as far as the state machine cares."""

    SESSION_START = "session_start"  # SessionStart startup / resume / clear
    PROMPT = "prompt"  # UserPromptSubmit
    TOOL_START = "tool_start"  # PreToolUse (not AskUserQuestion)
    QUESTION = "question"  # PreToolUse(AskUserQuestion): a question is on screen
    PERMISSION = "permission"  # PermissionRequest: a dialog is on screen
    ATTENTION = "attention"  # Notification permission_prompt / elicitation_dialog / ...
    NOTICE = "notice"  # Notification of any other type
    TOOL_END = "tool_end"  # PostToolUse / PostToolUseFailure
    STOP = "stop"  # Stop hook, or the end-of-turn entry of a transcript
    STOP_FAILURE = "stop_failure"  # StopFailure hook, or an API error entry of a transcript
    INTERRUPT = "interrupt"  # transcript: "[Request interrupted by user"
    COMPACT_START = "compact_start"  # PreCompact
    COMPACT_END = "compact_end"  # PostCompact, SessionStart(source=compact)
    STATUS_BUSY = "status_busy"  # session file status busy
    STATUS_WAITING = "status_waiting"  # session file status waiting
    STATUS_IDLE = "status_idle"  # session file status idle
    DISMISS = "dismiss"  # the user has looked at a review
    SESSION_END = "session_end"  # SessionEnd hook
    PROCESS_SEEN = "process_seen"  # the poller found the Claude process (pid, pane)
    PROCESS_GONE = "process_gone"  # the poller saw the process and now it is gone
    RESTART = "restart"  # the daemon started again with this session loaded
    TICK = "tick"  # a timer the reducer asked for has come due
    TRANSCRIPT = "transcript"  # facts read from a transcript: snippet, tokens, model, tool
    SUBAGENT = "subagent"  # SubagentStart / SubagentStop: counts running agents only
    SUPERSEDED = "superseded"  # the daemon: another session now runs in this ended one's pane
    OTHER = "other"  # any other hook (PostToolBatch, MessageDisplay, ...): no state change
    ANSWER = "answer"  # the user answered a prompt through purplemux (page, push, CLI): audit
    LIMIT = "limit"  # a usage limit stopped the session: its window, reset, Claude's own resume
    RESUME = "resume"  # resume at the limit's reset: armed / cancelled (user), typed / skipped


class Source(StrEnum):
    """Where an event came from."""

    HOOK = "hook"
    TRANSCRIPT = "transcript"
    SESSION_FILE = "session_file"
    PANE_TITLE = "pane_title"
    """An agent's pane title (Codex: spinner, "Action Required"): its own word on its state."""
    PROCESS = "process"
    JOB = "job"
    """A Claude background job's state.json (agents/claude/jobs.py)."""
    USER = "user"
    DAEMON = "daemon"


_NESTED = frozenset({TmuxLocation, Tokens, RateLimits})
"""The flat dataclasses an event's field may hold (none is subclassed): written as an object of
their fields; a tuple of them as a list of such objects."""


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names, in order (`dataclasses.fields` walks them at every call)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


@dataclass(frozen=True, kw_only=True, slots=True)
class Event:
    """Fields every event has. `name` is what the event log shows (e.g. the hook's name)."""

    kind: ClassVar[Kind]
    session_id: str
    at: float
    id: str
    source: Source = Source.HOOK
    name: str = ""
    cwd: str | None = None
    transcript_path: str | None = None
    tmux: TmuxLocation | None = None
    permission_mode: str | None = None
    agent: str | None = None
    """Which agent the source speaks for ("claude", "codex"); None: the source cannot tell."""
    account: str | None = None
    """The account (config dir's label) the source read this under; None: it cannot tell."""
    job_id: str | None = None
    """A Claude background session's job (session file `jobId`, ~/.claude/jobs/<id>): the
    source knows the session runs with no pane of its own (claude --bg, the agent view)."""

    @property
    def label(self) -> str:
        """The name shown in the event log and on `last_event`."""
        return self.name or self.kind.value

    def to_json(self) -> dict[str, Any]:
        """A flat JSON form for the event log (the store writes one per event)."""
        out: dict[str, Any] = {"kind": self.kind.value}
        for name in _names(type(self)):
            value = getattr(self, name)
            kind = type(value)
            if kind in _NESTED:
                value = {n: getattr(value, n) for n in _names(kind)}
            elif kind is tuple:
                value = [{n: getattr(t, n) for n in _names(type(t))} for t in value]
            out[name] = value
        out["name"] = self.label
        return out


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionStart(Event):
    kind: ClassVar[Kind] = Kind.SESSION_START
    origin: str = "startup"
    model: str | None = None
    agent_type: str | None = None
    """SessionStart's `agent_type` (2.1.332: "claude" for the agent view's spare worker)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Prompt(Event):
    kind: ClassVar[Kind] = Kind.PROMPT
    prompt: str = ""
    task_done: str | None = None
    """The background task whose end woke Claude (a `<task-notification>` turn), if any."""
    by_agent: bool = False
    """Typed by the agent itself, not the user (Claude's auto-continuation after a limit reset):
    it starts a turn, but it is not the user's prompt."""


@dataclass(frozen=True, kw_only=True, slots=True)
class _ToolCall(Event):
    """Fields of the events about one tool call (not an event kind itself)."""

    tool_name: str = ""
    tool_use_id: str | None = None
    digest: str = ""
    lookalike: bool = False
    """The input holds text that imitates a dialog (prompts.imitates_dialog)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolStart(_ToolCall):
    kind: ClassVar[Kind] = Kind.TOOL_START
    summary: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Question(_ToolCall):
    kind: ClassVar[Kind] = Kind.QUESTION
    tool_name: str = "AskUserQuestion"
    question: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Permission(Event):
    kind: ClassVar[Kind] = Kind.PERMISSION
    tool_name: str = ""
    digest: str = ""
    lookalike: bool = False
    waiting_for: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class _Notification(Event):
    """Fields of a Notification hook (not an event kind itself)."""

    notification_type: str = ""
    message: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Attention(_Notification):
    kind: ClassVar[Kind] = Kind.ATTENTION


@dataclass(frozen=True, kw_only=True, slots=True)
class Notice(_Notification):
    kind: ClassVar[Kind] = Kind.NOTICE


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolEnd(_ToolCall):
    kind: ClassVar[Kind] = Kind.TOOL_END
    failed: bool = False
    background_task_id: str | None = None
    background_description: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Stop(Event):
    kind: ClassVar[Kind] = Kind.STOP
    last_message: str | None = None
    background_tasks: tuple[BackgroundTask, ...] | None = None
    """Stop's `background_tasks` (None: the payload had none, e.g. a transcript's Stop)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class StopFailure(Event):
    kind: ClassVar[Kind] = Kind.STOP_FAILURE
    error: str = "error"
    last_message: str | None = None
    error_kind: str | None = None
    limit_hit: bool = False
    """The turn failed on a usage limit (Claude's `rate_limit`, Codex's 429): the wall."""
    limit_window: str | None = None
    """Which limit ("five_hour", "seven_day"), when the source can tell."""
    limit_resets_at: float | None = None
    """When it resets (unix s), when the source can tell."""
    limit_exact: bool = False
    """The reset is the agent's own number (a transcript's quotaLimits), not a minute read back
    from text (a hook's message): an exact one is never overwritten by a read-back one."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Interrupt(Event):
    kind: ClassVar[Kind] = Kind.INTERRUPT


@dataclass(frozen=True, kw_only=True, slots=True)
class CompactStart(Event):
    kind: ClassVar[Kind] = Kind.COMPACT_START


@dataclass(frozen=True, kw_only=True, slots=True)
class CompactEnd(Event):
    kind: ClassVar[Kind] = Kind.COMPACT_END


@dataclass(frozen=True, kw_only=True, slots=True)
class _Status(Event):
    """Fields of a session file's status (not an event kind itself)."""

    pid: int | None = None
    title: str | None = None
    title_at: float | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class StatusBusy(_Status):
    kind: ClassVar[Kind] = Kind.STATUS_BUSY


@dataclass(frozen=True, kw_only=True, slots=True)
class StatusWaiting(_Status):
    kind: ClassVar[Kind] = Kind.STATUS_WAITING
    waiting_for: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class StatusIdle(_Status):
    kind: ClassVar[Kind] = Kind.STATUS_IDLE
    shell: bool = False
    """The file says `shell` (2.1.332): the turn is over, a background shell still runs."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Dismiss(Event):
    kind: ClassVar[Kind] = Kind.DISMISS


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionEnd(Event):
    kind: ClassVar[Kind] = Kind.SESSION_END
    reason: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ProcessSeen(Event):
    kind: ClassVar[Kind] = Kind.PROCESS_SEEN
    pid: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ProcessGone(Event):
    kind: ClassVar[Kind] = Kind.PROCESS_GONE
    pid: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Restart(Event):
    kind: ClassVar[Kind] = Kind.RESTART


@dataclass(frozen=True, kw_only=True, slots=True)
class Tick(Event):
    kind: ClassVar[Kind] = Kind.TICK


@dataclass(frozen=True, kw_only=True, slots=True)
class TranscriptFacts(Event):
    """Facts a transcript tailer read; None means "not seen in this chunk"."""

    kind: ClassVar[Kind] = Kind.TRANSCRIPT
    snippet: str | None = None
    tokens: Tokens | None = None
    model: str | None = None
    current_tool: str | None = None
    context_tokens: int | None = None
    cost_usd: float | None = None
    cost_source: str | None = None
    retries: int | None = None
    title: str | None = None
    compacted: bool = False
    """A compact boundary was read: the context size is unknown until the next reply."""
    context_window: int | None = None
    """The context window the agent itself reported (Codex); None: look it up by model."""
    rate_limits: RateLimits | None = None
    """The agent's usage limits as it last reported them (Codex)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Subagent(Event):
    kind: ClassVar[Kind] = Kind.SUBAGENT
    agent_id: str = ""
    agent_type: str | None = None
    started: bool = True


@dataclass(frozen=True, kw_only=True, slots=True)
class Superseded(Event):
    """The session's pane runs another session now (after /clear): its row is retired."""

    kind: ClassVar[Kind] = Kind.SUPERSEDED
    by: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class Other(Event):
    kind: ClassVar[Kind] = Kind.OTHER


@dataclass(frozen=True, kw_only=True, slots=True)
class Limit(Event):
    """A usage limit stopped the session, or Claude changed what it will do about it.

    What sources say beside the failure itself: Claude's transcript "Usage limit reached · set to
    continue automatically at 10:40pm" (`auto_resume_at`), "Automatic continue cancelled"
    (`auto_resume_cancelled`), a background job's `blocked` with "rate limited — wait and retry"
    (no time: the wall alone). None means "not said here": the wall keeps what it knew."""

    kind: ClassVar[Kind] = Kind.LIMIT
    window: str | None = None
    resets_at: float | None = None
    auto_resume_at: float | None = None
    auto_resume_cancelled: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class Answer(Event):
    """Keys purplemux typed into a prompt for the user: who asked (`by`: page, push, cli, api),
    which prompt, and what was chosen (an option's label, free text, or cancel)."""

    kind: ClassVar[Kind] = Kind.ANSWER
    by: str = "api"
    prompt_id: str = ""
    prompt_kind: str = ""
    option: str | None = None
    text: str | None = None
    cancel: bool = False
    confirmed: bool = True


@dataclass(frozen=True, kw_only=True, slots=True)
class Resume(Event):
    """Resume at the reset of the wall `wall_at`: the user arms or cancels it (`by`: page, cli,
    api, or "setting" for PURPLEMUX_RESUME_AT_RESET), or the daemon ("resume-at-reset") is
    typing, typed the prompt, skipped it or stopped for the session (`reason`). Audit, and the
    session's `resume`."""

    kind: ClassVar[Kind] = Kind.RESUME
    wall_at: float = 0.0
    state: str = "armed"
    by: str = "api"
    reason: str | None = None
    text: str | None = None
    """What was typed (state "typed")."""
    confirmed: bool = True


EVENT_TYPES: dict[Kind, type[Event]] = {
    cls.kind: cls
    for cls in (
        SessionStart,
        Prompt,
        ToolStart,
        Question,
        Permission,
        Attention,
        Notice,
        ToolEnd,
        Stop,
        StopFailure,
        Interrupt,
        CompactStart,
        CompactEnd,
        StatusBusy,
        StatusWaiting,
        StatusIdle,
        Dismiss,
        SessionEnd,
        ProcessSeen,
        ProcessGone,
        Restart,
        Tick,
        TranscriptFacts,
        Subagent,
        Superseded,
        Other,
        Answer,
        Limit,
        Resume,
    )
}


def event_from_json(data: dict[str, Any]) -> Event:
    """Rebuild an event from Event.to_json (used by replays)."""
    data = dict(data)
    cls = EVENT_TYPES[Kind(data.pop("kind"))]
    names = {f.name for f in fields(cls)}
    kwargs = {k: v for k, v in data.items() if k in names}
    if kwargs.get("tmux"):
        kwargs["tmux"] = TmuxLocation(**kwargs["tmux"])
    if kwargs.get("tokens"):
        kwargs["tokens"] = Tokens(**kwargs["tokens"])
    if kwargs.get("rate_limits"):
        kwargs["rate_limits"] = RateLimits(**kwargs["rate_limits"])
    if kwargs.get("background_tasks") is not None:
        kwargs["background_tasks"] = tuple(BackgroundTask(**t) for t in kwargs["background_tasks"])
    if "source" in kwargs:
        kwargs["source"] = Source(kwargs["source"])
    return cls(**kwargs)


TEXT_CAPS: dict[str, int] = {
    "cwd": 4096,
    "transcript_path": 4096,
    "name": 100,
    "origin": 40,
    "model": 200,
    "prompt": 2000,
    "tool_name": 200,
    "tool_use_id": 200,
    "summary": 300,
    "question": 300,
    "waiting_for": 300,
    "notification_type": 100,
    "message": 300,
    "last_message": 2000,
    "error": 300,
    "reason": 100,
    "snippet": 200,
    "current_tool": 300,
    "by": 20,
    "prompt_id": 40,
    "prompt_kind": 20,
    "option": 300,
    "text": 2000,
    "permission_mode": 40,
    "task_done": 200,
    "background_task_id": 200,
    "background_description": 300,
    "error_kind": 100,
    "title": 200,
    "cost_source": 20,
    "agent_id": 200,
    "agent_type": 100,
    "limit_window": 40,
    "window": 40,
    "state": 20,
}
"""Longest text per event field: sources cap their own; this is the backstop for all of them."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean(text: str) -> str:
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def sanitize(event: Event) -> Event:
    """The event with text every sink can take: lone surrogates replaced, free text capped.

    JSON can carry a lone surrogate ("\\ud83d": a string cut through an emoji) and so can a path
    decoded with surrogateescape; SQLite, UTF-8 responses and the WebSocket feed cannot encode it.
    """
    changes: dict[str, Any] = {}
    for name in _names(type(event)):
        value = getattr(event, name)
        if isinstance(value, str):
            new = _clean(value)[: TEXT_CAPS.get(name)]
            if new != value:
                changes[name] = new
        elif isinstance(value, TmuxLocation):
            parts = [getattr(value, n) for n in _names(TmuxLocation)]
            loc = TmuxLocation(*(_clean(v) if isinstance(v, str) else v for v in parts))
            if loc != value:
                changes[name] = loc
    return replace(event, **changes) if changes else event
