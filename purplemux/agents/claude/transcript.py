"""Claude's transcript JSONL, parsed incrementally: turns, interrupts, snippet, tokens."""

from __future__ import annotations

import json
import os
import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from purplemux.agents.claude import limits

# MAX_LINE and READ_BLOCK are re-exported: sources/transcripts.py reads them from here.
from purplemux.agents.jsonl import MAX_LINE as MAX_LINE
from purplemux.agents.jsonl import READ_BLOCK as READ_BLOCK
from purplemux.agents.jsonl import JsonlReader, Turn, timestamp
from purplemux.core import facts as session_facts
from purplemux.core.events import (
    Event,
    Interrupt,
    Limit,
    Source,
    Stop,
    StopFailure,
    TranscriptFacts,
)
from purplemux.core.model import Tokens

USAGE_MEMORY = 8
"""Message ids remembered to count repeated usage once: a message's entries are written
together, so the newest few suffice; bounded, since every followed transcript keeps them (in
the 161 real transcripts under ../shared/samples no line of another message ever comes between
two of one message's; 64 ids, with their costs and snapshots, were ~5 MB of the 10k world's
resident memory, for its 500 followed transcripts)."""
SNAPSHOT_USAGE = 8
"""Message ids a stored snapshot keeps: a message's entries are written together, so only the
newest few can straddle the offset it resumes from."""
SNAPSHOT_VERSION = 1
# A summing-only reader parses just the lines that can change a total or a last value.
TOTALS_MARKS = (b'"assistant"', b"cost-state", b'title"', b"compact_boundary")
INTERRUPT_MARK = "[Request interrupted by user"
END_OF_TURN = frozenset({"turn_duration", "stop_hook_summary"})
# User entries that wrap local commands or their output: not prompts, no turn.
NOT_PROMPTS = ("<local-command-", "<command-message>", "<command-args>", "<bash-", "<user-memory-")


def transcript_path(claude_dir: Path, cwd: str, session_id: str) -> Path:
    """Where Claude writes a session's transcript."""
    return claude_dir / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", cwd) / f"{session_id}.jsonl"


def _count(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _texts(content: object) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


_T = TypeVar("_T")


def _opt(value: object, kind: type[_T]) -> _T | None:
    """A stored optional value of the given type (ints are floats too), else ValueError."""
    if value is None:
        return None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)  # type: ignore[return-value]
    if isinstance(value, kind) and not isinstance(value, bool):
        return value
    raise ValueError(f"not a {kind.__name__}: {value!r}")


NO_TOKENS = Tokens()


# A field a person sees (TranscriptFacts carries it): a last value (when a tail adopts its
# history, the tail's own value wins) or a total of the whole file.
_LAST: dict[str, bool] = {"fact": True, "newest": True}
_TOTAL: dict[str, bool] = {"fact": True, "newest": False}


@dataclass(slots=True)
class ReaderState:
    """What a reader knows of its transcript: blank on a reset, stored whole by a snapshot."""

    turn: Turn = Turn.NONE
    last_prompt_seen: float | None = None
    snippet: str | None = field(default=None, metadata=_LAST)
    model: str | None = field(default=None, metadata=_LAST)
    tokens: Tokens = field(default=NO_TOKENS, metadata=_TOTAL)
    context_tokens: int | None = field(default=None, metadata=_LAST)
    retries: int = field(default=0, metadata=_LAST)
    title: str | None = field(default=None, metadata=_LAST)
    cost_usd: float | None = field(default=None, metadata=_TOTAL)
    cost_source: str | None = field(default=None, metadata=_TOTAL)
    claude_cost: float | None = None
    """The newest cost-state's totalCostUSD."""
    cost_since: float = 0.0
    """The computed cost of the replies after it."""
    requests: int = 0
    """api-request entries since the last reply or prompt."""
    request_at: float | None = None
    """The newest api-request's time: 2.1.332 may write a prompt's first request before the
    prompt's own entry (stamped after it), which then still counts for the new turn."""
    compacted: bool = False
    quota_resets_at: float | None = None
    """The newest API error's quotaLimits.resetsAt: when "continue automatically at 10:40pm"
    (Claude's local time, to the minute) is, exactly."""
    last_ts: float | None = None
    anchor: str | None = None
    """The key of the entry the newest turn began with (its Stop's id)."""
    anchor_stopped: bool = False
    # Recent message ids only: a message's entries are written together, so a bounded
    # memory counts each once without keeping one record per message of a long transcript.
    usage: OrderedDict[str, Tokens] = field(default_factory=OrderedDict)
    costs: dict[str, float] = field(default_factory=dict)
    tools: dict[str, str] = field(default_factory=dict)
    """Tool calls without a result yet, by id."""
    touched: set[str] = field(default_factory=set)
    """Facts set at least once (a tail's own values win)."""

    def encode(self) -> dict[str, Any]:
        """The fields as JSON-able values (the usage memory cut to its newest entries)."""
        usage = list(self.usage.items())[-SNAPSHOT_USAGE:]
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "usage":
                value = [[k, *_tokens_list(u)] for k, u in usage]
            elif f.name == "costs":
                value = [[k, self.costs[k]] for k, _ in usage if k in self.costs]
            else:
                value = _ENCODE.get(f.type, _same)(value)
            out[f.name] = value
        return out

    @classmethod
    def decode(cls, snap: dict[str, Any]) -> ReaderState:
        """The state from `encode`'s values: KeyError, TypeError or ValueError if unusable (a
        field added since, ADDED, may be missing: it starts blank)."""
        return cls(
            **{
                f.name: _DECODE[f.type](snap[f.name])
                for f in fields(cls)
                if f.name in snap or f.name not in ADDED
            }
        )


ADDED = frozenset({"quota_resets_at", "request_at"})
"""Fields added after snapshot version 1 (issue 25): an older stored snapshot lacks them."""


def _same(value: Any) -> Any:
    return value


def _tokens_list(t: Tokens) -> list[int]:
    return [t.input, t.output, t.cache_read, t.cache_creation]


def _tokens(value: Any) -> Tokens:
    return Tokens(*(int(x) for x in value))


# A snapshot's form of each field, by the field's type (a field of another type is kept as is).
_ENCODE: dict[Any, Callable[[Any], Any]] = {
    "Turn": lambda v: v.value,
    "Tokens": _tokens_list,
    "dict[str, str]": lambda v: list(v.items()),
    "set[str]": sorted,
}
_DECODE: dict[Any, Callable[[Any], Any]] = {  # every field type has one: a new field needs one
    "Turn": Turn,
    "float | None": lambda v: _opt(v, float),
    "str | None": lambda v: _opt(v, str),
    "int | None": lambda v: _opt(v, int),
    "int": int,
    "float": float,
    "bool": bool,
    "Tokens": _tokens,
    "OrderedDict[str, Tokens]": lambda v: OrderedDict((str(k), _tokens(u)) for k, *u in v),
    "dict[str, float]": lambda v: {str(k): float(c) for k, c in v},
    "dict[str, str]": lambda v: {str(k): str(name) for k, name in v},
    "set[str]": lambda v: {str(x) for x in v},
}
FACTS = tuple(f.name for f in fields(ReaderState) if f.metadata.get("fact"))
"""The facts a person sees, in TranscriptFacts."""
NEWEST = tuple(f.name for f in fields(ReaderState) if f.metadata.get("newest"))
"""The facts that are a last value, not a total: a tail's own one wins over its history's."""
TOTALS = frozenset(FACTS) - frozenset(NEWEST)
"""The facts summed over the whole file (tokens, cost): a tail holds them for its history."""


class TranscriptReader(JsonlReader):
    """Incremental parser of one transcript: feed it bytes, get events (pure: no I/O)."""

    def reset(self) -> None:
        """Forget everything read: the file was truncated or replaced."""
        super().reset()
        self.partial = False
        """Started mid-file (a tail): a turn whose prompt it never saw emits no Stop."""
        self.quiet = False
        """Sums only (a transcript's history): no events, no facts, only the lines that count."""
        self.hold_totals = False
        """Leaves tokens and cost out of its facts (a history still being summed)."""
        self.state = ReaderState()
        self._dirty: set[str] = set()
        self._facts_at: float | None = None
        self._head: dict[str, None] = {}  # a partial reader's first usage keys
        self._tag = ""  # distinguishes the facts of a restore or a merge at the same offset
        self.emitted = 0
        """Turn events (not facts) emitted so far."""
        self.turn_mark = 0
        """`emitted` when the newest turn began: the events after it are that turn's."""

    @property
    def current_tool(self) -> str:
        """The newest tool call without a result yet, or ""."""
        return next(reversed(self.state.tools.values()), "")

    # --- resuming and merging --------------------------------------------------------------------

    def holds_newest_turn(self) -> bool:
        """Whether what was read holds the newest prompt and its answer (a tail that starts
        inside the newest turn cannot name, nor so emit, its Stop)."""
        return self.state.snippet is not None and self.state.anchor is not None

    def snapshot(self) -> dict[str, Any]:
        """Everything a later reader needs to continue from the last complete line (JSON-able)."""
        return {
            "v": SNAPSHOT_VERSION,
            "offset": self._line_start,
            "quiet": self.quiet,
            **self.state.encode(),
        }

    def restore(self, snap: dict[str, Any], identity: tuple[int, int]) -> bool:
        """Continue from a snapshot of this file (False, and a blank reader, if it is unusable)."""
        self.reset()
        try:
            if snap.get("v") != SNAPSHOT_VERSION:
                raise ValueError("another snapshot version")
            offset, quiet, state = (
                int(snap["offset"]),
                bool(snap["quiet"]),
                ReaderState.decode(snap),
            )
        except (KeyError, TypeError, ValueError):
            self.reset()
            return False
        self.offset = self._line_start = offset
        self.quiet, self.state, self.identity = quiet, state, identity
        return True

    def announce(self, tag: str) -> None:
        """Say every fact again on the next flush (a restored reader: the store may lag it)."""
        self._dirty |= {n for n in FACTS if getattr(self.state, n) is not None} | {"current_tool"}
        self._facts_at = self.state.last_ts
        self._tag = tag

    def adopt(self, history: TranscriptReader, tag: str) -> None:
        """Take in the history before this tail reader's start, summed by `history` up to it.

        The totals become what one reader over the whole file would have; the newest values
        (snippet, model, context, title) stay the tail's unless the tail never saw one."""
        overlap = [k for k in self._head if k in history.state.usage]
        t, h = self.state.tokens, history.state.tokens
        o = [history.state.usage[k] for k in overlap]
        self.state.tokens = Tokens(
            h.input + t.input - sum(x.input for x in o),
            h.output + t.output - sum(x.output for x in o),
            h.cache_read + t.cache_read - sum(x.cache_read for x in o),
            h.cache_creation + t.cache_creation - sum(x.cache_creation for x in o),
        )
        if self.state.claude_cost is None:
            self.state.claude_cost = history.state.claude_cost
            self.state.cost_since += history.state.cost_since - sum(
                history.state.costs.get(k, 0.0) for k in overlap
            )
        if "cost_usd" in self.state.touched or "cost_usd" in history.state.touched:
            self._update_cost(0.0)
        for name in NEWEST:
            if name not in self.state.touched and name in history.state.touched:
                setattr(self.state, name, getattr(history.state, name))
                self.state.touched.add(name)
        if "retries" not in self.state.touched:
            self.state.requests += history.state.requests
        if self.state.turn is Turn.NONE and not history.quiet:
            self.state.turn, self.state.last_prompt_seen = (
                history.state.turn,
                history.state.last_prompt_seen,
            )
            self.state.anchor, self.state.anchor_stopped = (
                history.state.anchor,
                history.state.anchor_stopped,
            )
        if self.state.last_ts is None:
            self.state.last_ts = history.state.last_ts
        self.state.compacted = self.state.compacted or history.state.compacted
        usage = OrderedDict(
            (k, u) for k, u in history.state.usage.items() if k not in self.state.usage
        )
        usage.update(self.state.usage)
        while len(usage) > USAGE_MEMORY:
            usage.popitem(last=False)
        costs = {k: c for k, c in history.state.costs.items() if k not in self.state.costs}
        costs.update(self.state.costs)
        self.state.usage, self.state.costs = usage, {k: costs[k] for k in usage if k in costs}
        self._head.clear()
        self.partial = self.hold_totals = False
        self.announce(tag)

    # --- one line ------------------------------------------------------------------------------

    def _key(self, entry: dict[str, Any], start: int) -> str:
        uuid = entry.get("uuid")
        if isinstance(uuid, str) and uuid:
            return uuid
        return f"@{self.identity[1] if self.identity else 0}:{start}"

    def _line(self, line: bytes, start: int) -> None:
        if self.quiet and not any(mark in line for mark in TOTALS_MARKS):
            return
        if not line.strip():
            return
        try:
            entry = json.loads(line)
        except Exception:  # bad JSON, invalid UTF-8, absurd nesting: skip the line
            return
        if not isinstance(entry, dict) or entry.get("isSidechain") is True:
            return
        ts = timestamp(entry.get("timestamp"))
        if ts is not None:
            self.state.last_ts = ts
        message = entry.get("message")
        message = message if isinstance(message, dict) else {}
        kind = entry.get("type")
        at = ts if ts is not None else (self.state.last_ts or 0.0)
        if kind == "user":
            self._user(entry, message, start, at)
        elif kind == "assistant":
            self._assistant(entry, message, start, at)
        elif kind == "system" and entry.get("subtype") in END_OF_TURN:
            self._end_of_turn(at)
        elif kind == "system" and entry.get("subtype") == "informational":
            self._informational(entry, start, at)
        elif kind == "system" and entry.get("subtype") == "compact_boundary":
            self._set("context_tokens", None, at)
            self.state.compacted = True
            self._dirty.add("compacted")
        elif kind == "cost-state":
            self._cost_state(entry, at)
        elif kind == "api-request":
            # 2.1.332 writes one per attempt: more than one with no reply between is a retry.
            if entry.get("querySource") in (None, "repl_main_thread"):
                self.state.requests += 1
                self.state.request_at = at
                self._set("retries", max(0, self.state.requests - 1), at)
        elif kind in ("custom-title", "ai-title"):
            title = entry.get("customTitle") or entry.get("aiTitle") or entry.get("title")
            if isinstance(title, str) and title.strip():
                self._set("title", title.strip()[:200], at)

    def _user(self, entry: dict[str, Any], message: dict[str, Any], start: int, at: float) -> None:
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self._tool_done(str(block.get("tool_use_id")), at)
        texts = _texts(content)
        if not texts:
            return
        text, key = texts[0], self._key(entry, start)
        if text.startswith(INTERRUPT_MARK):
            self._emit(Interrupt, at, key)
            self.state.turn = Turn.INTERRUPTED
            self.state.anchor_stopped = True
            self._clear_tools(at)
            return
        if entry.get("isMeta") or entry.get("isCompactSummary"):
            return
        head = text.lstrip()
        if head.startswith("<command-name>"):
            # A slash command can run a turn of its own (custom commands, skills): it anchors
            # the next end-of-turn, but is not a prompt (/compact, /clear never end a turn).
            self.state.anchor, self.state.anchor_stopped = key, False
            self.turn_mark = self.emitted
            return
        if head.startswith(NOT_PROMPTS):
            return
        self.state.anchor, self.state.anchor_stopped = key, False
        self.turn_mark = self.emitted
        self.state.turn = Turn.IN_PROGRESS
        self.state.last_prompt_seen = at
        early = self.state.request_at is not None and self.state.request_at >= at
        self.state.requests = 1 if early else 0
        self.state.quota_resets_at = None
        self._set("retries", 0, at)
        self._clear_tools(at)

    def _assistant(
        self, entry: dict[str, Any], message: dict[str, Any], start: int, at: float
    ) -> None:
        texts = [t for t in _texts(message.get("content")) if t.strip()]
        if texts:
            self._set("snippet", texts[-1].strip()[:200], at)
        if entry.get("isApiErrorMessage") is True:
            error = "\n".join(texts) or "API error"
            kind = entry.get("error")
            window, resets = _quota(entry.get("quotaLimits"))
            self.state.quota_resets_at = resets
            self._emit(
                StopFailure,
                at,
                self._key(entry, start),
                error=error,
                last_message=error,
                error_kind=kind[:100] if isinstance(kind, str) else None,
                limit_hit=kind == "rate_limit",
                limit_window=window,
                limit_resets_at=resets,
                limit_exact=resets is not None,
            )
            self.state.turn = Turn.FAILED
            self.state.requests = 0
            self._set("retries", 0, at)
            return
        self.state.requests = 0
        self._set("retries", 0, at)
        model = message.get("model")
        if isinstance(model, str) and model and not model.startswith("<"):
            self._set("model", model, at)
        usage = message.get("usage")
        if isinstance(usage, dict):
            # Claude writes one entry per content block, each repeating its message's usage:
            # count a message id once, its newest usage winning (streaming may grow it).
            mid = message.get("id")
            key = mid if isinstance(mid, str) and mid else self._key(entry, start)
            new = Tokens(
                _count(usage, "input_tokens"),
                _count(usage, "output_tokens"),
                _count(usage, "cache_read_input_tokens"),
                _count(usage, "cache_creation_input_tokens"),
            )
            old = self.state.usage.get(key, Tokens())
            if self.partial and len(self._head) < USAGE_MEMORY:
                self._head[key] = None
            if isinstance(model, str) and model and not model.startswith("<"):
                self._set("context_tokens", new.input + new.cache_read + new.cache_creation, at)
            if new != old:
                self.state.usage[key] = new
                self.state.usage.move_to_end(key)
                if len(self.state.usage) > USAGE_MEMORY:
                    self.state.usage.popitem(last=False)
                price = session_facts.cost(
                    model if isinstance(model, str) else None,
                    new.input,
                    new.output,
                    new.cache_read,
                    new.cache_creation,
                )
                self.state.cost_since += price - self.state.costs.get(key, 0.0)
                self.state.costs[key] = price
                if len(self.state.costs) > USAGE_MEMORY:
                    self.state.costs.pop(next(iter(self.state.costs)))
                self._update_cost(at)
                t = self.state.tokens
                self._set(
                    "tokens",
                    Tokens(
                        t.input + new.input - old.input,
                        t.output + new.output - old.output,
                        t.cache_read + new.cache_read - old.cache_read,
                        t.cache_creation + new.cache_creation - old.cache_creation,
                    ),
                    at,
                )
        content = message.get("content") if not self.quiet else None
        for i, block in enumerate(content if isinstance(content, list) else ()):
            if isinstance(block, dict) and block.get("type") == "tool_use":
                tool_id = block.get("id") or f"{self._key(entry, start)}:{i}"
                self.state.tools[str(tool_id)] = str(block.get("name") or "tool")
                self._dirty.add("current_tool")
                self._facts_at = at
        if self.state.turn is Turn.NONE:
            self.state.turn = Turn.IN_PROGRESS

    def _informational(self, entry: dict[str, Any], start: int, at: float) -> None:
        """Claude's notices about its wall: it will continue by itself, or no longer will."""
        content = entry.get("content")
        if not isinstance(content, str):
            return
        key = self._key(entry, start)
        if content.startswith(limits.AUTO_ARMED):
            # The time shown is the reset's, to the minute: the error entry before it has it
            # exactly; without one, read it in this machine's local time (Claude's own).
            when = self.state.quota_resets_at or limits.auto_resume_time(content, at)
            if when is not None:
                self._emit(Limit, at, key, auto_resume_at=when)
        elif content.startswith(limits.AUTO_CANCELLED):
            self._emit(Limit, at, key, auto_resume_cancelled=True)

    def _cost_state(self, entry: dict[str, Any], at: float) -> None:
        total = entry.get("totalCostUSD")
        if isinstance(total, int | float) and not isinstance(total, bool) and total >= 0:
            self.state.claude_cost = float(total)
            self.state.cost_since = 0.0
            self._update_cost(at)

    def _update_cost(self, at: float) -> None:
        if self.state.claude_cost is not None:
            self._set("cost_source", "claude", at)
            self._set("cost_usd", round(self.state.claude_cost + self.state.cost_since, 6), at)
        else:
            self._set("cost_source", "computed", at)
            self._set("cost_usd", round(self.state.cost_since, 6), at)

    def _end_of_turn(self, at: float) -> None:
        self._clear_tools(at)
        if self.state.anchor_stopped:
            return
        if self.state.anchor is None and self.partial:
            # A tail that starts inside this turn: its Stop's id (the prompt's) is unknown, and
            # a made-up one would replay an old turn's end as new.
            self.state.anchor_stopped = True
            self.state.turn = Turn.FINISHED
            return
        self.state.anchor_stopped = True
        self.state.turn = Turn.FINISHED
        self._emit(Stop, at, f"stop:{self.state.anchor or 'start'}")

    # --- helpers -------------------------------------------------------------------------------

    def _emit(self, cls: type[Event], at: float, key: str, **extra: Any) -> None:
        if self.quiet:
            return
        self.emitted += 1
        self._out.append(
            cls(
                session_id=self.session_id,
                at=at,
                id=f"tx:{self.session_id}:{key}",
                source=Source.TRANSCRIPT,
                **extra,
            )
        )

    def _set(self, name: str, value: object, at: float) -> None:
        self.state.touched.add(name)
        if getattr(self.state, name) != value:
            setattr(self.state, name, value)
            self._dirty.add(name)
            self._facts_at = at

    def _tool_done(self, tool_id: str, at: float) -> None:
        if self.state.tools.pop(tool_id, None) is not None:
            self._dirty.add("current_tool")
            self._facts_at = at

    def _clear_tools(self, at: float) -> None:
        if self.state.tools:
            self.state.tools.clear()
            self._dirty.add("current_tool")
            self._facts_at = at

    def _flush_facts(self) -> None:
        if self.quiet:
            self._dirty = set()
        if not self._dirty:
            return
        d = self._dirty - (TOTALS if self.hold_totals else set())
        if not d:
            return
        tag, self._tag = self._tag, ""
        facts: dict[str, Any] = {n: getattr(self.state, n) if n in d else None for n in FACTS}
        self._out.append(
            TranscriptFacts(
                session_id=self.session_id,
                at=self._facts_at if self._facts_at is not None else (self.state.last_ts or 0.0),
                id=f"tx:{self.session_id}:facts:{self.identity[1] if self.identity else 0}:"
                f"{self._line_start}{tag}",
                source=Source.TRANSCRIPT,
                current_tool=self.current_tool if "current_tool" in d else None,
                **facts,
                compacted="compacted" in d and self.state.context_tokens is None,
            )
        )
        self._dirty -= d


def _quota(value: object) -> tuple[str | None, float | None]:
    """(rateLimitType, resetsAt) of an API error entry's quotaLimits (gateway, subscription)."""
    if not isinstance(value, dict):
        return None, None
    window = value.get("rateLimitType")
    resets = value.get("resetsAt")
    if isinstance(resets, bool) or not isinstance(resets, int | float) or resets <= 0:
        resets = None
    return window if window in limits.QUOTA_WINDOWS else None, resets


def read_tail_state(
    path: Path, session_id: str = "", tail: int = 4 * MAX_LINE, root: Path | None = None
) -> Turn:
    """How the newest turn looks, from the last `tail` bytes (blocking; NONE if unreadable).

    With `root`, only a regular file under it is read (see transcript_files).
    """
    from purplemux.io.transcript_files import open_transcript

    reader = TranscriptReader(session_id)
    try:
        with open(open_transcript(path, root), "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > tail:
                f.seek(size - tail)
                # We landed inside a line: drop it, in bounded reads (it may be huge).
                while (part := f.readline(READ_BLOCK)) and not part.endswith(b"\n"):
                    pass
            while block := f.read(READ_BLOCK):
                reader.feed(block, flush=False)
    except (OSError, ValueError):  # ValueError: an unsafe path (transcript_files.UnsafePath)
        return Turn.NONE
    return reader.state.turn
