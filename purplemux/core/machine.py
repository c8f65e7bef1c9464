"""The state machine: the transition table (data) and step(), the only home of status rules.

step(session, event) -> (session', effects) is pure: no I/O, no clock, no asyncio. The table says,
for every (event kind, state) pair, where the badge goes; a pair that changes nothing is listed
with the reason. A rule may carry a guard: a named predicate over (session, event); when it
fails, the state is unchanged. Field updates that do not depend on the state (cwd, the current
tool, the pending dialog, tokens...) live in the field rules (`FIELD_RULES`), beside the table.

Rules that make the badge trustworthy, and where they live:
- A late PostToolUse of a parallel tool must not end a dialog: guard `answers_pending`.
- The session file turns idle ~60 ms after the Stop hook, sometimes before our POST lands: the
  file's idle only arms a short grace (`IDLE_GRACE`), and a TICK turns it into idle if nothing
  else (a Stop, a new prompt) came by then: a normal turn is exactly busy -> review.
- A Notification that arrives after the turn ended does not reopen needs-input: ATTENTION only
  applies from busy / unknown / needs-input.
- An ended session stays settled: the session file's busy of the /clear that ended it (written
  under the old id just after SessionEnd) does not move it (guard `not_ended_by_this_process`).
- A pane title lags its turn: Codex's spinner can still be in the title a moment after the
  turn's Stop (seen under load: the title read busy 40 ms after the Stop, idle 10 ms later). A
  title's busy within `TITLE_LAG` of entering review is that spinner, not a new turn (guard
  `not_a_lagging_title`); a new turn comes with its prompt's hook.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from purplemux.core import events as ev
from purplemux.core.events import Event, Kind, Source
from purplemux.core.facts import FILE_WAITING
from purplemux.core.model import (
    ATTENTION_STATES,
    BackgroundTask,
    LastEvent,
    LimitWall,
    PendingTool,
    ResumeAtReset,
    Session,
    State,
    evolve,
)

IDLE_GRACE = 0.35
"""Seconds a session file's `idle` waits for a Stop hook before it counts as idle."""

TITLE_LAG = 2.0
"""Seconds after a turn ended (review) in which a pane title's busy is the old turn's spinner."""

RECENT_TOOLS = 8
"""How many recent PreToolUse calls are remembered to pair a PermissionRequest with its id."""

RATE_LIMIT = "rate_limit"
"""A failure's kind that is a usage limit whoever reports it (Claude's StopFailure `error`, a
background job's "rate limited" need): the wall, even from a source that sets no limit_hit."""

MAX_TASKS = 32
"""Background tasks kept per session (a runaway loop must not grow the record without end)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """Where a (kind, state) pair leads: `to` (None = unchanged), under an optional guard."""

    to: State | None
    guard: str | None = None
    why: str = ""


def go(to: State, guard: str | None = None) -> Rule:
    return Rule(to, guard)


def stay(why: str) -> Rule:
    return Rule(None, None, why)


# --- effects -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Persist:
    """Store the session's new record."""


@dataclass(frozen=True, slots=True)
class Broadcast:
    """Send the session to feed subscribers."""


@dataclass(frozen=True, slots=True)
class Notify:
    """A live entry into needs-input or review: tell the user (engine drops it on replay)."""

    state: State
    since: float


@dataclass(frozen=True, slots=True)
class ScheduleTick:
    """Deliver a TICK for this session at source time `at`."""

    at: float


@dataclass(frozen=True, slots=True)
class Watch:
    """Start following this session's transcript file."""

    path: str


@dataclass(frozen=True, slots=True)
class Unwatch:
    """Stop following this session's transcript file."""


Effect: TypeAlias = Persist | Broadcast | Notify | ScheduleTick | Watch | Unwatch

# --- the table ---------------------------------------------------------------------------------

IDLE, BUSY, NEEDS, REVIEW, UNKNOWN = (
    State.IDLE,
    State.BUSY,
    State.NEEDS_INPUT,
    State.REVIEW,
    State.UNKNOWN,
)
ALL = tuple(State)


def _row(default: Rule, **per_state: Rule) -> dict[State, Rule]:
    names = {"idle": IDLE, "busy": BUSY, "needs_input": NEEDS, "review": REVIEW, "unknown": UNKNOWN}
    row = dict.fromkeys(ALL, default)
    for key, rule in per_state.items():
        row[names[key]] = rule
    return row


_ASKING = dict(busy=go(NEEDS), unknown=go(NEEDS), needs_input=go(NEEDS))

TABLE: Mapping[Kind, Mapping[State, Rule]] = {
    Kind.SESSION_START: _row(go(IDLE)),
    Kind.PROMPT: _row(go(BUSY)),
    Kind.PERMISSION: _row(stay("no turn is running: a stray dialog event"), **_ASKING),
    Kind.QUESTION: _row(stay("no turn is running: a stray question event"), **_ASKING),
    Kind.ATTENTION: _row(stay("late notification for a turn that already ended"), **_ASKING),
    Kind.NOTICE: _row(stay("informational notification (idle_prompt, auth_success, ...)")),
    Kind.TOOL_START: _row(
        stay("updates the current tool only"),
        needs_input=go(BUSY, "answers_pending"),
        unknown=go(BUSY),
    ),
    Kind.TOOL_END: _row(
        stay("updates the current tool only"),
        needs_input=go(BUSY, "answers_pending"),
        unknown=go(BUSY),
    ),
    Kind.STOP: _row(
        stay("no turn is running"), busy=go(REVIEW), needs_input=go(REVIEW), unknown=go(REVIEW)
    ),
    Kind.STOP_FAILURE: _row(
        stay("no turn is running"), busy=go(REVIEW), needs_input=go(REVIEW), unknown=go(REVIEW)
    ),
    Kind.INTERRUPT: _row(
        stay("no turn is running"), busy=go(IDLE), needs_input=go(IDLE), unknown=go(IDLE)
    ),
    Kind.COMPACT_START: _row(stay("sets compacting only")),
    Kind.COMPACT_END: _row(stay("clears compacting only")),
    Kind.STATUS_BUSY: _row(
        go(BUSY, "not_ended_by_this_process"),
        busy=stay("already busy"),
        review=go(BUSY, "not_a_lagging_title"),
    ),
    Kind.STATUS_WAITING: _row(go(NEEDS, "not_ended_by_this_process")),
    Kind.STATUS_IDLE: _row(
        stay("already settled"),
        busy=stay("arms the idle grace: a Stop may still land"),
        needs_input=stay("arms the idle grace: a Stop may still land"),
        unknown=stay("arms the idle grace: the transcript may show a finished turn"),
    ),
    Kind.DISMISS: _row(stay("nothing to dismiss"), review=go(IDLE)),
    Kind.SESSION_END: _row(go(IDLE)),
    Kind.PROCESS_SEEN: _row(stay("fills pid, pane and alive only")),
    Kind.PROCESS_GONE: _row(go(IDLE)),
    Kind.RESTART: _row(stay("a settled state survives a restart"), busy=go(UNKNOWN)),
    Kind.TICK: _row(
        stay("nothing is waiting on a timer"),
        busy=go(IDLE, "idle_grace_elapsed"),
        needs_input=go(IDLE, "idle_grace_elapsed"),
        unknown=go(IDLE, "idle_grace_elapsed"),
    ),
    Kind.TRANSCRIPT: _row(stay("fills snippet, tokens, model, current tool only")),
    Kind.SUBAGENT: _row(stay("counts running agents only")),
    Kind.SUPERSEDED: _row(stay("retires an ended session's row only")),
    Kind.OTHER: _row(stay("logged, no state meaning (PostToolBatch, MessageDisplay after Stop)")),
    # What answered the prompt is Claude's next hook (PostToolUse, Stop) or its session file.
    Kind.ANSWER: _row(stay("audit only")),
    # A wall ends the turn like its failure does (a background job's `blocked` may come first).
    Kind.LIMIT: _row(
        stay("the turn already ended: fills the wall only"),
        busy=go(REVIEW),
        needs_input=go(REVIEW),
        unknown=go(REVIEW),
    ),
    Kind.RESUME: _row(stay("sets the resume-at-reset request only (purplemux.core.resume)")),
}

# --- guards ------------------------------------------------------------------------------------


def _answers_pending(s: Session, e: Event) -> bool:
    """The tool event is about the call the dialog asked for (or no call is known), and a
    PreToolUse started after the wait began: one that started before it is a late hook of the
    call being asked about (a background job's state.json says "blocked" before the hooks of
    that call arrive), not an answer."""
    if e.kind is Kind.TOOL_START and e.at < s.state_since:
        return False
    pending = s.pending_tool
    if pending is None:
        return True
    assert isinstance(e, ev.ToolStart | ev.ToolEnd)
    if pending.tool_use_id and e.tool_use_id:
        return pending.tool_use_id == e.tool_use_id and isinstance(e, ev.ToolEnd)
    return pending.name == e.tool_name and pending.digest == e.digest


def _idle_grace_elapsed(s: Session, e: Event) -> bool:
    """The session file said idle IDLE_GRACE ago and nothing moved the state since."""
    return s.idle_armed_at is not None and e.at >= s.idle_armed_at + IDLE_GRACE - 1e-6


def _not_ended_by_this_process(s: Session, e: Event) -> bool:
    """The session file speaks for this session: it has not ended, or the status comes from
    another process (a resume). On /clear, Claude fires SessionEnd and then marks its file busy
    while it still carries the old session id (verified on 2.1.197): that busy belongs to the
    /clear, not to the session that just ended."""
    if not s.ended:
        return True
    pid = getattr(e, "pid", None)
    return pid is not None and s.pid is not None and pid != s.pid


def _not_a_lagging_title(s: Session, e: Event) -> bool:
    """`not_ended_by_this_process`, and not a pane title's busy read within TITLE_LAG of the
    turn's end: the title still showing the spinner of the turn that just stopped."""
    lagging = e.source is Source.PANE_TITLE and e.at < s.state_since + TITLE_LAG
    return _not_ended_by_this_process(s, e) and not lagging


GUARDS: Mapping[str, Callable[[Session, Event], bool]] = {
    "answers_pending": _answers_pending,
    "idle_grace_elapsed": _idle_grace_elapsed,
    "not_ended_by_this_process": _not_ended_by_this_process,
    "not_a_lagging_title": _not_a_lagging_title,
}

# --- field rules -------------------------------------------------------------------------------
# Facts an event carries, whatever the state does. Like the transition table, a table: a rule
# per event kind (FIELD_RULES), after the rules every event passes (EVERY_EVENT) and before the
# rules that look at what the others set (AFTER_EVENT). A rule reads the session and the event
# and adds to `changes` (step applies them all in one replace).

FieldRule: TypeAlias = Callable[[Session, Any, dict[str, Any]], None]
"""(session, event, changes) -> None: adds the fields the event sets to `changes`."""

_TURN_STARTS = dict(
    ended=False, compacting=False, error=None, error_kind=None, retries=0, limit=None
)
"""What a new session or a new prompt clears: the last turn's end, error, retries and wall."""


def _cwd(s: Session, e: Event, changes: dict[str, Any]) -> None:
    """The working directory, as the event names it."""
    if e.cwd and e.cwd != s.cwd:
        changes["cwd"] = e.cwd


def _transcript_path(s: Session, e: Event, changes: dict[str, Any]) -> None:
    """The transcript file, as the event names it."""
    if e.transcript_path and e.transcript_path != s.transcript_path:
        changes["transcript_path"] = e.transcript_path


def _tmux(s: Session, e: Event, changes: dict[str, Any]) -> None:
    """The pane, unless the event knows less of the same pane than the session does."""
    if e.tmux and e.tmux != s.tmux:
        # A hook knows only the pane id; keep what the poller learnt about the same pane.
        # The session file's `tmux` (2.1.332) names the pane and the tmux session, not the
        # server: it places a session nobody placed yet, and never undoes the poller's finding.
        from_file = e.source is ev.Source.SESSION_FILE
        if s.tmux and s.tmux.pane == e.tmux.pane and (e.tmux.session is None or from_file):
            pass
        else:
            changes["tmux"] = e.tmux


def _account(s: Session, e: Event, changes: dict[str, Any]) -> None:
    """The account, as a source that can tell names it."""
    if e.account and e.account != s.account:
        changes["account"] = e.account


def _background(s: Session, e: Event, changes: dict[str, Any]) -> None:
    """A source that knows the session's job (claude --bg): a background session, no pane."""
    if e.job_id and (e.job_id != s.job_id or not s.background):
        changes.update(background=True, job_id=e.job_id)


def _agent(s: Session, e: Event, changes: dict[str, Any]) -> None:
    """The agent, as a source that can tell names it (a session never changes agent twice)."""
    if e.agent and e.agent != s.agent:
        changes["agent"] = e.agent


def _permission_mode(s: Session, e: Event, changes: dict[str, Any]) -> None:
    """The permission mode (default, plan, auto...), as the event names it."""
    if e.permission_mode and e.permission_mode != s.permission_mode:
        changes["permission_mode"] = e.permission_mode


def _session_start(s: Session, e: ev.SessionStart, changes: dict[str, Any]) -> None:
    """A (re)started session: a clean turn, and its model."""
    changes.update(_TURN_STARTS)
    if e.model:
        changes["model"] = e.model
        if e.model.lower().endswith("[1m]"):
            changes["long_context"] = True


def _prompt(s: Session, e: ev.Prompt, changes: dict[str, Any]) -> None:
    """A new turn: no tool, no dialog; a finished background task leaves the list."""
    changes.update(_TURN_STARTS, current_tool=None, pending_tool=None)
    if e.task_done:
        changes["background_tasks"] = tuple(t for t in s.background_tasks if t.id != e.task_done)


def _tool_start(s: Session, e: ev.ToolStart, changes: dict[str, Any]) -> None:
    """The call is remembered (a PermissionRequest pairs with it) and is the current tool."""
    call = PendingTool(e.tool_name, e.digest, e.tool_use_id, e.lookalike)
    changes["recent_tools"] = (*s.recent_tools, call)[-RECENT_TOOLS:]
    changes["current_tool"] = e.summary or e.tool_name


def _question(s: Session, e: ev.Question, changes: dict[str, Any]) -> None:
    """The question's call is remembered and pending; what it asks is what the session waits for."""
    call = PendingTool(e.tool_name, e.digest, e.tool_use_id, e.lookalike)
    changes["recent_tools"] = (*s.recent_tools, call)[-RECENT_TOOLS:]
    changes["pending_tool"] = call
    changes["waiting_for"] = e.question or "a question"


def _permission(s: Session, e: ev.Permission, changes: dict[str, Any]) -> None:
    """The dialog's call (paired with the PreToolUse that announced it) is pending."""
    match = next(
        (t for t in reversed(s.recent_tools) if t.name == e.tool_name and t.digest == e.digest),
        None,
    )
    call = match or PendingTool(e.tool_name, e.digest, lookalike=e.lookalike)
    if e.lookalike and not call.lookalike:  # the dialog's input imitates a dialog (prompts.py)
        call = PendingTool(call.name, call.digest, call.tool_use_id, True)
    changes["pending_tool"] = call
    changes["waiting_for"] = e.waiting_for or e.tool_name


def _attention(s: Session, e: ev.Attention, changes: dict[str, Any]) -> None:
    """The notification's message, when nothing better says what the session waits for."""
    if not s.waiting_for and e.message:
        changes["waiting_for"] = e.message


def _tool_end(s: Session, e: ev.ToolEnd, changes: dict[str, Any]) -> None:
    """The call is done; a call sent to the background becomes a background task."""
    changes["recent_tools"] = tuple(
        t for t in s.recent_tools if not (t.tool_use_id and t.tool_use_id == e.tool_use_id)
    )
    if e.background_task_id:
        task = BackgroundTask(e.background_task_id, "shell", e.background_description)
        changes["background_tasks"] = _with_task(s.background_tasks, task)


def _superseded(s: Session, e: ev.Superseded, changes: dict[str, Any]) -> None:
    """An ended session's row is retired."""
    if s.ended:
        changes["superseded"] = True


def _stop(s: Session, e: ev.Stop, changes: dict[str, Any]) -> None:
    """The turn ended: its last words, and the background tasks that still run."""
    changes.update(current_tool=None, retries=0)
    if e.last_message:
        changes["snippet"] = e.last_message[:200]
    if e.background_tasks is not None:
        # Stop lists what still runs: shells it lists replace ours, agents stay ours.
        agents = tuple(t for t in s.background_tasks if t.type == "agent")
        listed = tuple(t for t in e.background_tasks if t.status == "running")
        changes["background_tasks"] = (*listed, *agents)[-MAX_TASKS:]


def _stop_failure(s: Session, e: ev.StopFailure, changes: dict[str, Any]) -> None:
    """The turn ended on an error: the error, and its last words; on a usage limit, the wall."""
    changes.update(current_tool=None, error=e.error, retries=0)
    if e.error_kind:
        changes["error_kind"] = e.error_kind
    if e.last_message:
        changes["snippet"] = e.last_message[:200]
    if e.limit_hit or e.error_kind == RATE_LIMIT:
        wall = s.limit or LimitWall(at=e.at)
        if e.limit_window:
            wall = replace(wall, window=e.limit_window)
        # A transcript's quotaLimits is to the second; a hook's text to the minute: the text
        # fills a wall the transcript has not reached yet and never overwrites its number.
        if e.limit_resets_at is not None and (e.limit_exact or wall.resets_at is None):
            wall = replace(wall, resets_at=e.limit_resets_at)
        changes["limit"] = wall


def _limit(s: Session, e: ev.Limit, changes: dict[str, Any]) -> None:
    """What the agent says of its wall: the window, the reset, whether it resumes by itself."""
    wall = s.limit or LimitWall(at=e.at)
    if e.window:
        wall = replace(wall, window=e.window)
    if e.resets_at is not None:
        wall = replace(wall, resets_at=e.resets_at)
    if e.auto_resume_at is not None:
        wall = replace(wall, auto_resume_at=e.auto_resume_at)
    if e.auto_resume_cancelled:
        wall = replace(wall, auto_resume_at=None)
    changes["limit"] = wall


def _compact_start(s: Session, e: ev.CompactStart, changes: dict[str, Any]) -> None:
    """Compacting began."""
    changes["compacting"] = True


def _compact_end(s: Session, e: ev.CompactEnd, changes: dict[str, Any]) -> None:
    """Compacting ended."""
    changes["compacting"] = False


def _status_waiting(s: Session, e: ev.StatusWaiting, changes: dict[str, Any]) -> None:
    """What the session file says it waits for, unless a hook said it better."""
    if e.waiting_for and (not s.waiting_for or s.waiting_for in FILE_WAITING):
        waiting = e.waiting_for
        if waiting == "permission prompt" and s.current_tool:
            # 2.1.332's auto-mode approval fires no PermissionRequest: name the tool
            # PreToolUse announced.
            waiting = s.current_tool
        changes["waiting_for"] = waiting


def _status_idle(s: Session, e: ev.StatusIdle, changes: dict[str, Any]) -> None:
    """The file left `shell`: no background shell runs any more."""
    if not e.shell and any(t.type == "shell" for t in s.background_tasks):
        changes["background_tasks"] = tuple(t for t in s.background_tasks if t.type != "shell")


def _subagent(s: Session, e: ev.Subagent, changes: dict[str, Any]) -> None:
    """A sub-agent starts (a background task) or stops (it leaves the list)."""
    if e.started and e.agent_id:
        task = BackgroundTask(e.agent_id, "agent", e.agent_type or None)
        changes["background_tasks"] = _with_task(s.background_tasks, task)
    elif e.agent_id:
        changes["background_tasks"] = tuple(t for t in s.background_tasks if t.id != e.agent_id)


def _ended(s: Session, e: Event, changes: dict[str, Any]) -> None:
    """The session ended (SessionEnd) or its process is gone: nothing runs any more."""
    changes.update(
        ended=True,
        alive=False,
        current_tool=None,
        compacting=False,
        retries=0,
        background_tasks=(),
        limit=None,
    )


def _process_seen(s: Session, e: ev.ProcessSeen, changes: dict[str, Any]) -> None:
    """The process runs: its pid and pane."""
    changes["alive"] = True
    if e.pid:
        changes["pid"] = e.pid
    if e.tmux:
        changes["tmux"] = e.tmux


def _transcript(s: Session, e: ev.TranscriptFacts, changes: dict[str, Any]) -> None:
    """What the transcript shows: the last words, tokens, model, cost, title, current tool."""
    for name in ("snippet", "tokens", "model", "cost_usd", "cost_source"):
        value = getattr(e, name)
        if value is not None:
            changes[name] = value
    if e.compacted:
        changes["context_tokens"] = None
    if e.context_tokens is not None:
        changes["context_tokens"] = e.context_tokens
    if e.context_window is not None:
        changes["context_window"] = e.context_window
    if e.retries is not None:
        # Retries only mean something while a turn runs (2.1.332: busy, no hook).
        busy = s.state in (State.BUSY, State.UNKNOWN)
        changes["retries"] = e.retries if busy else 0
    if e.title and e.at >= s.title_at:
        changes.update(title=e.title, title_at=e.at)
    if e.current_tool is not None and s.state in (State.BUSY, State.UNKNOWN):
        changes["current_tool"] = e.current_tool or None


def _resumed(s: Session, e: Event, changes: dict[str, Any]) -> None:
    """A superseded session that runs again (resumed) is no longer superseded."""
    if changes.get("ended") is False and s.superseded:
        changes["superseded"] = False


def _resume(s: Session, e: ev.Resume, changes: dict[str, Any]) -> None:
    """The resume-at-reset request of a wall, as the user or the daemon last set it."""
    changes["resume"] = ResumeAtReset(e.wall_at, e.state, e.by, e.at, e.reason)


def _session_file(s: Session, e: Event, changes: dict[str, Any]) -> None:
    """The session file (busy, waiting, idle) names the pid and the session's title."""
    if isinstance(e, ev.StatusBusy | ev.StatusWaiting | ev.StatusIdle):
        if e.pid:
            changes["pid"] = e.pid
        title_at = e.title_at if e.title_at is not None else e.at
        if e.title and e.title != s.title and title_at >= s.title_at:
            changes.update(title=e.title, title_at=title_at)


EVERY_EVENT: tuple[FieldRule, ...] = (
    _cwd,
    _transcript_path,
    _tmux,
    _permission_mode,
    _agent,
    _account,
    _background,
)
"""Rules for the fields any event may carry, run first."""

FIELD_RULES: Mapping[Kind, FieldRule] = {
    Kind.SESSION_START: _session_start,
    Kind.PROMPT: _prompt,
    Kind.TOOL_START: _tool_start,
    Kind.QUESTION: _question,
    Kind.PERMISSION: _permission,
    Kind.ATTENTION: _attention,
    Kind.TOOL_END: _tool_end,
    Kind.SUPERSEDED: _superseded,
    Kind.STOP: _stop,
    Kind.STOP_FAILURE: _stop_failure,
    Kind.COMPACT_START: _compact_start,
    Kind.COMPACT_END: _compact_end,
    Kind.STATUS_WAITING: _status_waiting,
    Kind.STATUS_IDLE: _status_idle,
    Kind.SUBAGENT: _subagent,
    Kind.SESSION_END: _ended,
    Kind.PROCESS_GONE: _ended,
    Kind.PROCESS_SEEN: _process_seen,
    Kind.TRANSCRIPT: _transcript,
    Kind.LIMIT: _limit,
    Kind.RESUME: _resume,
}
"""The rule of each event kind that sets fields of its own (a kind not listed sets none)."""

AFTER_EVENT: tuple[FieldRule, ...] = (_resumed, _session_file)
"""Rules that look at what the event kind's rule set, run last."""


def field_changes(s: Session, e: Event) -> dict[str, Any]:
    """The fields event `e` sets on `s`, as a dict (step applies them in one replace)."""
    changes: dict[str, Any] = {}
    for rule in EVERY_EVENT:
        rule(s, e, changes)
    own = FIELD_RULES.get(e.kind)
    if own is not None:
        own(s, e, changes)
    for rule in AFTER_EVENT:
        rule(s, e, changes)
    return changes


def _with_task(
    tasks: tuple[BackgroundTask, ...], task: BackgroundTask
) -> tuple[BackgroundTask, ...]:
    """The tasks with `task` added, or replacing the one with its id."""
    kept = tuple(t for t in tasks if t.id != task.id)
    return (*kept, task)[-MAX_TASKS:]


def _state_change_changes(old: State, new: State, at: float) -> dict[str, Any]:
    """The fields that belong to a state, cleared when it is left: set on entering `new`."""
    changes: dict[str, Any] = {"state_since": at, "idle_armed_at": None}
    if old is State.NEEDS_INPUT:
        changes["pending_tool"] = None
        changes["waiting_for"] = None
    if new is State.IDLE:
        changes["current_tool"] = None
    if new is not State.NEEDS_INPUT:
        changes["waiting_for"] = None
    return changes


def _differs(s: Session, changes: Mapping[str, Any]) -> bool:
    """Whether applying `changes` to `s` gives a session unequal to it (dataclass equality)."""
    for name, value in changes.items():
        old = getattr(s, name)
        if old is not value and old != value:
            return True
    return False


# --- step --------------------------------------------------------------------------------------


def step(s: Session, e: Event) -> tuple[Session, list[Effect]]:
    """Apply one event; return the new session and the effects to run.

    Every change is gathered in one dict and applied with one `replace` (a replace copies every
    field, and a replay folds many thousands of events)."""
    rule = TABLE[e.kind][s.state]
    allowed = rule.to is not None and (rule.guard is None or GUARDS[rule.guard](s, e))
    changes = field_changes(s, e)
    effects: list[Effect] = []
    if e.kind is Kind.STATUS_IDLE and s.state in (State.BUSY, State.NEEDS_INPUT, State.UNKNOWN):
        changes["idle_armed_at"] = e.at
        effects.append(ScheduleTick(e.at + IDLE_GRACE))
    elif e.kind in (Kind.PROMPT, Kind.STATUS_BUSY, Kind.STATUS_WAITING, Kind.TOOL_START):
        changes["idle_armed_at"] = None
    moved = allowed and rule.to is not None and rule.to is not s.state
    if moved and rule.to is not None:
        changes["state"] = rule.to
        changes.update(_state_change_changes(s.state, rule.to, e.at))
        if rule.to in ATTENTION_STATES:
            effects.append(Notify(rule.to, e.at))
    # A TICK that leaves the state alone leaves the last event and the update time alone too.
    if e.kind is not Kind.TICK or moved:
        changes["last_event"] = LastEvent(e.label, e.at)
        changes["updated_at"] = max(s.updated_at, e.at)
    changed = _differs(s, changes)
    new = evolve(s, **changes) if changed else s
    if new.transcript_path and new.transcript_path != s.transcript_path and not new.ended:
        effects.append(Watch(new.transcript_path))
    if new.ended and not s.ended:
        effects.append(Unwatch())
    if changed:
        effects = [Persist(), Broadcast(), *effects]
    return new, effects


def fold(s: Session, events: list[Event]) -> Session:
    """Apply events in order (effects dropped): a replay."""
    for e in events:
        s, _ = step(s, e)
    return s


# --- the table, printed ------------------------------------------------------------------------


def _cell(state: State, rule: Rule) -> str:
    if rule.to is None:
        return "·"
    target = "·" if rule.to is state else rule.to.value
    return f"{target} if {rule.guard}" if rule.guard else target


def render_markdown() -> str:
    """The table as Markdown: one row per event kind, one column per current state."""
    head = "| event \\ from | " + " | ".join(s.value for s in ALL) + " |"
    sep = "|" + "---|" * (len(ALL) + 1)
    lines = [head, sep]
    for kind, row in TABLE.items():
        lines.append(f"| {kind.value} | " + " | ".join(_cell(s, row[s]) for s in ALL) + " |")
    lines.append("")
    lines.append("`·` = unchanged. Why the unchanged pairs are unchanged:")
    lines.append("")
    for kind, row in TABLE.items():
        whys = sorted({r.why for r in row.values() if r.to is None and r.why})
        if whys:
            lines.append(f"- {kind.value}: " + "; ".join(whys))
    return "\n".join(lines)


def render_mermaid() -> str:
    """The table as a mermaid stateDiagram-v2 (self-loops left out)."""
    lines = ["stateDiagram-v2"]
    ids = {s: s.value.replace("-", "_") for s in ALL}
    lines.append(f"    [*] --> {ids[State.IDLE]}")
    edges: dict[tuple[State, State], list[str]] = {}
    for kind, row in TABLE.items():
        for state, rule in row.items():
            if rule.to is not None and rule.to is not state:
                label = kind.value + (f" [{rule.guard}]" if rule.guard else "")
                edges.setdefault((state, rule.to), []).append(label)
    for (a, b), labels in edges.items():
        lines.append(f"    {ids[a]} --> {ids[b]}: {', '.join(labels)}")
    return "\n".join(lines)


def describe() -> str:
    """Markdown and mermaid together, for `purplemux states`."""
    return (
        "# purplemux state machine\n\n"
        + render_markdown()
        + "\n\n```mermaid\n"
        + render_mermaid()
        + "\n```\n"
    )


__all__ = [
    "AFTER_EVENT",
    "EVERY_EVENT",
    "FIELD_RULES",
    "GUARDS",
    "IDLE_GRACE",
    "TABLE",
    "TITLE_LAG",
    "Broadcast",
    "Effect",
    "Notify",
    "Persist",
    "Rule",
    "ScheduleTick",
    "Unwatch",
    "Watch",
    "describe",
    "field_changes",
    "fold",
    "step",
]
