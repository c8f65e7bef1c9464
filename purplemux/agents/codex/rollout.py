"""Codex's rollout JSONL, parsed incrementally: turn ends, snippet, tokens, context, rate limits.

The rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<thread id>.jsonl`, the hooks'
`transcript_path`) is Codex's transcript: one `{"timestamp", "ordinal", "type", "payload"}` per
line, appended by the app-server daemon. It becomes the same event kinds Claude's transcript
does (agents/claude/transcript.py), so the core stays agent-neutral:

- `event_msg` task_complete without `error` -> Stop (last_message = last_agent_message);
- task_complete with `error` -> StopFailure: this is what ends a failed turn, since Codex has
  no Stop and no failure hook for an API error (its PostModelRequest(failed) is one attempt);
- turn_aborted -> Interrupt (Esc, and a denied approval);
- everything else -> TranscriptFacts: snippet (AgentMessage), model, tokens, context used and
  window, rate limits, the running tool, cwd (session_meta).

A turn's start (task_started) emits nothing, as a Claude prompt line emits nothing: the
UserPromptSubmit hook says busy; the reader's `state.turn` says IN_PROGRESS for recovery (after a
daemon restart, `read_tail_state`). Every event id names its line (the ordinal Codex writes, else
the byte offset), so a replay or a second reader of the same file changes nothing.

Pure: no I/O except `read_tail_state`.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from purplemux.agents.jsonl import MAX_LINE, READ_BLOCK, JsonlReader, Turn, timestamp
from purplemux.core.events import Event, Interrupt, Source, Stop, StopFailure, TranscriptFacts
from purplemux.core.model import RateLimits, Tokens

AGENT = "codex"
"""The agent every event of a rollout speaks for."""

SNAPSHOT_VERSION = 1
CONTEXT_BASELINE = 12_000
"""Tokens Codex keeps out of its own "% left" (codex-rs: BASELINE_TOKENS; one data point fits)."""
TOOL_NAMES = {"exec_command": "Bash"}
"""Codex's tool names as its hooks say them (PreToolUse tool_name "Bash" for exec_command)."""


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _num(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def _text(value: object, cap: int) -> str | None:
    return value.strip()[:cap] or None if isinstance(value, str) else None


def tokens_of(usage: object) -> Tokens | None:
    """A Codex usage object as Tokens, the way Claude's are counted.

    Codex (OpenAI) counts cached tokens inside input_tokens and reasoning inside output_tokens
    (total = input + output). Claude's input excludes its cache reads and writes, so here
    input = input_tokens - cached - cache_write (never below 0), cache_read = cached_input_tokens,
    cache_creation = cache_write_input_tokens, output = output_tokens (reasoning included).
    """
    if not isinstance(usage, dict):
        return None
    total_in = _int(usage.get("input_tokens")) or 0
    cached = _int(usage.get("cached_input_tokens")) or 0
    written = _int(usage.get("cache_write_input_tokens")) or 0
    return Tokens(
        input=max(0, total_in - cached - written),
        output=_int(usage.get("output_tokens")) or 0,
        cache_read=cached,
        cache_creation=written,
    )


def rate_limits_of(limits: object) -> RateLimits | None:
    """token_count's `rate_limits` as RateLimits (None if it says nothing usable)."""
    if not isinstance(limits, dict):
        return None
    windows: dict[str, Any] = {}
    for name in ("primary", "secondary"):
        w = limits.get(name)
        w = w if isinstance(w, dict) else {}
        windows[f"{name}_percent"] = _num(w.get("used_percent"))
        windows[f"{name}_window_minutes"] = _int(w.get("window_minutes"))
        windows[f"{name}_resets_at"] = _num(w.get("resets_at"))
    reached = limits.get("rate_limit_reached_type")
    out = RateLimits(**windows, reached_type=reached[:100] if isinstance(reached, str) else None)
    return None if out == RateLimits() else out


WINDOW_NAMES = {300: "five_hour", 10080: "seven_day"}
"""Codex's window lengths (minutes) as the limit wall names them."""


def _is_429(error: object, text: str) -> bool:
    """A turn that failed on a usage limit (codex_error_info "usage_limit_exceeded") or HTTP
    429: "exceeded retry limit, last status: 429 Too Many
    Requests", codex_error_info {"response_too_many_failed_attempts": {"http_status_code": 429}}."""
    if isinstance(error, dict):
        info = error.get("codex_error_info")
        if info == "usage_limit_exceeded":  # "You've hit your usage limit. … try again at …"
            return True
        if isinstance(info, dict):
            for detail in info.values():
                if isinstance(detail, dict) and detail.get("http_status_code") == 429:
                    return True
    return "429 Too Many Requests" in text


def _wall_window(limits: RateLimits | None) -> tuple[bool, str | None, float | None]:
    """Whether Codex says a limit was reached (rate_limit_reached_type), and the window a
    failed turn hit: the one at 100 % (a window can sit at 100 % while turns still succeed,
    k2_limit: so that alone is no wall), its name ("five_hour", "seven_day") and reset."""
    if limits is None:
        return False, None, None
    windows = (
        (limits.primary_percent, limits.primary_window_minutes, limits.primary_resets_at),
        (limits.secondary_percent, limits.secondary_window_minutes, limits.secondary_resets_at),
    )
    full = [w for w in windows if w[0] is not None and w[0] >= 100]
    reached = limits.reached_type is not None
    if not full:
        return reached, None, None
    _, minutes, resets = full[-1]
    return reached, WINDOW_NAMES.get(minutes) if minutes is not None else None, resets


def context_percent(used: int | None, window: int | None) -> float | None:
    """Percent of the window used, as purplemux shows Claude's: 100 * used / window."""
    if used is None or not window:
        return None
    return round(100.0 * used / window, 1)


def codex_left_percent(used: int | None, window: int | None) -> float | None:
    """Percent left as Codex's own /status says it: the first 12000 tokens do not count.

    (258400 - 200010) / (258400 - 12000) = 23.7 -> "24% left", where purplemux's own percent
    says 77.4 used (22.6 left): the two differ by a few points near the top.
    """
    if used is None or not window or window <= CONTEXT_BASELINE:
        return None
    left = (window - used) / (window - CONTEXT_BASELINE)
    return round(100.0 * min(1.0, max(0.0, left)), 1)


@dataclass(slots=True)
class ReaderState:
    """What a reader knows of its rollout: blank on a reset, stored whole by a snapshot."""

    turn: Turn = Turn.NONE
    turn_id: str | None = None
    """The newest task_started's turn_id."""
    turn_seen: bool = False
    """The newest turn's start was read (a tail may begin inside a turn)."""
    turn_prompted: bool = False
    """The newest turn had a user message (a /compact turn has none, and no Stop)."""
    last_prompt_seen: float | None = None
    thread_id: str | None = None
    cwd: str | None = None
    originator: str | None = None
    cli_version: str | None = None
    snippet: str | None = None
    model: str | None = None
    tokens: Tokens | None = None
    context_tokens: int | None = None
    context_window: int | None = None
    rate_limits: RateLimits | None = None
    compacted: bool = False
    last_ts: float | None = None
    tools: dict[str, str] = field(default_factory=dict)
    """Tool calls without an output yet, by call_id."""

    def encode(self) -> dict[str, Any]:
        """The fields as JSON-able values."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Tokens | RateLimits):
                value = {g.name: getattr(value, g.name) for g in fields(value)}
            elif isinstance(value, dict):
                value = list(value.items())
            out[f.name] = value
        return out

    @classmethod
    def decode(cls, snap: dict[str, Any]) -> ReaderState:
        """The state from `encode`'s values: KeyError, TypeError or ValueError if unusable."""
        return cls(**{f.name: _DECODE[str(f.type)](snap[f.name]) for f in fields(cls)})


def _opt(kind: type[Any]) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if value is None:
            return None
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, kind) and not isinstance(value, bool):
            return value
        raise ValueError(f"not a {kind.__name__}: {value!r}")

    return check


def _tokens(value: Any) -> Tokens | None:
    return None if value is None else Tokens(**{k: int(v) for k, v in value.items()})


def _limits(value: Any) -> RateLimits | None:
    return None if value is None else RateLimits(**value)


# Every field type has one: a new field needs one (decode raises KeyError otherwise).
_DECODE: dict[str, Callable[[Any], Any]] = {
    "Turn": Turn,
    "bool": bool,
    "str | None": _opt(str),
    "int | None": _opt(int),
    "float | None": _opt(float),
    "Tokens | None": _tokens,
    "RateLimits | None": _limits,
    "dict[str, str]": lambda v: {str(k): str(name) for k, name in v},
}


FACTS = (
    "snippet",
    "model",
    "tokens",
    "context_tokens",
    "context_window",
    "rate_limits",
    "cwd",
)
"""The state fields a TranscriptFacts carries (cwd as the event's own cwd)."""


class RolloutReader(JsonlReader):
    """Incremental parser of one rollout file: feed it bytes, get events (pure: no I/O).

    The same public shape as Claude's TranscriptReader: `feed`, `sync`, `reset`, `snapshot` /
    `restore`, `announce`, `offset`, `partial`, `state.turn`, `turn_mark`. Unlike Claude's
    transcript, every token_count repeats the thread's totals, so a tail read alone is whole: no
    history needs summing (`quiet`, `hold_totals` and `adopt` are not needed here).
    """

    def reset(self) -> None:
        """Forget everything read: the file was truncated or replaced."""
        super().reset()
        self.partial = False
        """Started mid-file (a tail): a turn whose start it never saw ends with a Stop only if
        it has a last_agent_message (a /compact turn has none)."""
        self.state = ReaderState()
        self._dirty: set[str] = set()
        self._facts_at: float | None = None
        self._tag = ""
        self.emitted = 0
        """Turn events (not facts) emitted so far."""
        self.turn_mark = 0
        """`emitted` when the newest turn began: the events after it are that turn's."""

    @property
    def current_tool(self) -> str:
        """The newest tool call without an output yet, or ""."""
        return next(reversed(self.state.tools.values()), "")

    def feed_lines(self, lines: list[str]) -> list[Event]:
        """Feed whole lines (tests, replays): each is one JSON object."""
        return self.feed("".join(line.rstrip("\n") + "\n" for line in lines).encode())

    # --- resuming --------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Everything a later reader needs to continue from the last complete line (JSON-able)."""
        return {
            "v": SNAPSHOT_VERSION,
            "offset": self._line_start,
            "partial": self.partial,
            **self.state.encode(),
        }

    def restore(self, snap: dict[str, Any], identity: tuple[int, int]) -> bool:
        """Continue from a snapshot of this file (False, and a blank reader, if it is unusable)."""
        self.reset()
        try:
            if snap.get("v") != SNAPSHOT_VERSION:
                raise ValueError("another snapshot version")
            offset, partial = int(snap["offset"]), bool(snap["partial"])
            state = ReaderState.decode(snap)
        except (KeyError, TypeError, ValueError):
            self.reset()
            return False
        self.offset = self._line_start = offset
        self.partial, self.state, self.identity = partial, state, identity
        return True

    def announce(self, tag: str) -> None:
        """Say every fact again on the next flush (a restored reader: the store may lag it)."""
        self._dirty |= {n for n in FACTS if getattr(self.state, n) is not None}
        self._dirty.add("current_tool")
        self._facts_at = self.state.last_ts
        self._tag = tag

    # --- one line ------------------------------------------------------------------------------

    def _key(self, entry: dict[str, Any], start: int) -> str:
        ordinal = _int(entry.get("ordinal"))
        return str(ordinal) if ordinal is not None else f"@{start}"

    def _line(self, line: bytes, start: int) -> None:
        if not line.strip():
            return
        try:
            entry = json.loads(line)
        except Exception:  # bad JSON, invalid UTF-8, absurd nesting: skip the line
            return
        if not isinstance(entry, dict):
            return
        payload = entry.get("payload")
        if not isinstance(payload, dict):
            return
        ts = timestamp(entry.get("timestamp"))
        if ts is not None:
            self.state.last_ts = ts
        at = ts if ts is not None else (self.state.last_ts or 0.0)
        kind = entry.get("type")
        if kind == "event_msg":
            self._event_msg(payload, self._key(entry, start), at)
        elif kind == "response_item":
            self._response_item(payload, at)
        elif kind == "session_meta":
            self._session_meta(payload, at)
        elif kind == "turn_context":
            self._model(payload.get("model"), at)
        elif kind == "compacted":
            self._set("context_tokens", None, at)
            self.state.compacted = True
            self._dirty.add("compacted")
            self._facts_at = at

    def _session_meta(self, p: dict[str, Any], at: float) -> None:
        for name in ("thread_id", "originator", "cli_version"):
            value = _text(p.get("id" if name == "thread_id" else name), 200)
            if value is not None:
                setattr(self.state, name, value)
        cwd = p.get("cwd")
        if isinstance(cwd, str) and cwd:
            self._set("cwd", cwd[:4096], at)
        base = p.get("base_instructions")
        provenance = base.get("provenance") if isinstance(base, dict) else None
        if isinstance(provenance, dict) and self.state.model is None:
            self._model(provenance.get("model"), at)

    def _model(self, model: object, at: float) -> None:
        name = _text(model, 200)
        if name is not None:
            self._set("model", name, at)

    def _event_msg(self, p: dict[str, Any], key: str, at: float) -> None:
        sub = p.get("type")
        if sub == "task_started":
            self.state.turn, self.state.turn_seen, self.state.turn_prompted = (
                Turn.IN_PROGRESS,
                True,
                False,
            )
            self.state.turn_id = _text(p.get("turn_id"), 200)
            self.state.last_prompt_seen = at
            self.turn_mark = self.emitted
            window = _int(p.get("model_context_window"))
            if window:
                self._set("context_window", window, at)
            self._clear_tools(at)
        elif sub == "item_completed":
            self._item(p.get("item"), at)
        elif sub == "thread_settings_applied":
            settings = p.get("thread_settings")
            if isinstance(settings, dict):
                self._model(settings.get("model"), at)
        elif sub == "token_count":
            self._token_count(p, at)
        elif sub == "task_complete":
            self._task_complete(p, key, at)
        elif sub == "turn_aborted":
            self._emit(Interrupt, at, key)
            self._end(Turn.INTERRUPTED, at)

    def _item(self, item: object, at: float) -> None:
        if not isinstance(item, dict):
            return
        kind = item.get("type")
        if kind == "UserMessage":
            self.state.turn_prompted = True
            if self.state.turn is not Turn.IN_PROGRESS:
                self.state.turn = Turn.IN_PROGRESS
                self.state.last_prompt_seen = at
        elif kind == "AgentMessage":
            content = item.get("content")
            texts = [
                c["text"]
                for c in (content if isinstance(content, list) else ())
                if isinstance(c, dict) and isinstance(c.get("text"), str) and c["text"].strip()
            ]
            if texts:
                self._set("snippet", texts[-1].strip()[:200], at)

    def _response_item(self, p: dict[str, Any], at: float) -> None:
        kind = p.get("type")
        call_id = p.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            return
        if kind in ("function_call", "custom_tool_call"):
            name = p.get("name")
            name = name[:200] if isinstance(name, str) and name else "tool"
            self.state.tools[call_id] = TOOL_NAMES.get(name, name)
            self._dirty.add("current_tool")
            self._facts_at = at
        elif (
            kind in ("function_call_output", "custom_tool_call_output")
            and self.state.tools.pop(call_id, None) is not None
        ):
            self._dirty.add("current_tool")
            self._facts_at = at

    def _token_count(self, p: dict[str, Any], at: float) -> None:
        info = p.get("info")
        if isinstance(info, dict):  # None while a turn failed before any reply: keep the last
            total = tokens_of(info.get("total_token_usage"))
            if total is not None:
                self._set("tokens", total, at)
            last = info.get("last_token_usage")
            used = _int(last.get("total_tokens")) if isinstance(last, dict) else None
            if used is not None:
                self._set("context_tokens", used, at)
                self.state.compacted = False
            window = _int(info.get("model_context_window"))
            if window:
                self._set("context_window", window, at)
        limits = rate_limits_of(p.get("rate_limits"))
        if limits is not None:
            self._set("rate_limits", limits, at)

    def _task_complete(self, p: dict[str, Any], key: str, at: float) -> None:
        error = p.get("error")
        last = _text(p.get("last_agent_message"), 2000)
        if isinstance(error, dict | str):
            message = error.get("message") if isinstance(error, dict) else error
            text = _text(message, 300) or "API error"
            info = error.get("codex_error_info") if isinstance(error, dict) else None
            if isinstance(info, dict):  # {"response_too_many_failed_attempts": {...}}
                info = next(iter(info), None)
            reached, window, resets = _wall_window(self.state.rate_limits)
            hit = reached or _is_429(error, text)
            self._emit(
                StopFailure,
                at,
                key,
                error=text,
                last_message=text,
                error_kind=info[:100] if isinstance(info, str) else None,
                limit_hit=hit,
                limit_window=window if hit else None,
                limit_resets_at=resets if hit else None,
                limit_exact=hit and resets is not None,
            )
            self._end(Turn.FAILED, at)
            return
        # A /compact turn (no user message, no answer) ends without a Stop, as its hooks do;
        # a tail that never saw the turn begin judges by the answer alone.
        prompted = self.state.turn_prompted if self.state.turn_seen else last is not None
        if prompted:
            self._emit(Stop, at, key, last_message=last)
        if last is not None:
            self._set("snippet", last.strip()[:200], at)
        self._end(Turn.FINISHED, at)

    # --- helpers -------------------------------------------------------------------------------

    def _end(self, turn: Turn, at: float) -> None:
        self.state.turn = turn
        self.state.turn_seen = self.state.turn_prompted = False
        self._clear_tools(at)

    def _emit(self, cls: type[Event], at: float, key: str, **extra: Any) -> None:
        self.emitted += 1
        self._out.append(
            cls(
                session_id=self.session_id,
                at=at,
                id=f"rollout:{self.session_id}:{key}",
                source=Source.TRANSCRIPT,
                agent=AGENT,
                **extra,
            )
        )

    def _set(self, name: str, value: object, at: float) -> None:
        if getattr(self.state, name) != value:
            setattr(self.state, name, value)
            self._dirty.add(name)
            self._facts_at = at

    def _clear_tools(self, at: float) -> None:
        if self.state.tools:
            self.state.tools.clear()
            self._dirty.add("current_tool")
            self._facts_at = at

    def _flush_facts(self) -> None:
        if not self._dirty:
            return
        d, self._dirty = self._dirty, set()
        tag, self._tag = self._tag, ""
        s = self.state
        self._out.append(
            TranscriptFacts(
                session_id=self.session_id,
                at=self._facts_at if self._facts_at is not None else (s.last_ts or 0.0),
                id=f"rollout:{self.session_id}:facts:"
                f"{self.identity[1] if self.identity else 0}:{self._line_start}{tag}",
                source=Source.TRANSCRIPT,
                agent=AGENT,
                cwd=s.cwd if "cwd" in d else None,
                snippet=s.snippet if "snippet" in d else None,
                model=s.model if "model" in d else None,
                tokens=s.tokens if "tokens" in d else None,
                context_tokens=s.context_tokens if "context_tokens" in d else None,
                context_window=s.context_window if "context_window" in d else None,
                rate_limits=s.rate_limits if "rate_limits" in d else None,
                current_tool=self.current_tool if "current_tool" in d else None,
                compacted="compacted" in d and s.context_tokens is None,
            )
        )


def read_tail_state(path: Path, session_id: str = "", tail: int = 4 * MAX_LINE) -> Turn:
    """How the newest turn looks, from the last `tail` bytes (blocking; NONE if unreadable).

    Only a regular file is read (never a FIFO, which would block).
    """
    reader = RolloutReader(session_id)
    reader.partial = True
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                return Turn.NONE
            if st.st_size > tail:
                f.seek(st.st_size - tail)
                # We landed inside a line: drop it, in bounded reads (it may be huge).
                while (part := f.readline(READ_BLOCK)) and not part.endswith(b"\n"):
                    pass
                reader.offset = reader._line_start = f.tell()
            while block := f.read(READ_BLOCK):
                reader.feed(block, flush=False)
    except (OSError, ValueError):
        return Turn.NONE
    return reader.state.turn
