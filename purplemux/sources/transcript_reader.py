"""Claude's transcript JSONL, parsed incrementally: turns, interrupts, snippet, tokens."""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from purplemux import session_facts
from purplemux.events import Event, Interrupt, Source, Stop, StopFailure, TranscriptFacts
from purplemux.model import Tokens

USAGE_MEMORY = 64
"""Message ids remembered to count repeated usage once: a message's entries are written
together, so the newest few suffice; bounded, since every followed transcript keeps them."""
SNAPSHOT_USAGE = 16
"""Message ids a stored snapshot keeps: a message's entries are written together, so only the
newest few can straddle the offset it resumes from."""
SNAPSHOT_VERSION = 1
# A summing-only reader parses just the lines that can change a total or a last value.
TOTALS_MARKS = (b'"assistant"', b"cost-state", b'title"', b"compact_boundary")
MAX_LINE = 1 << 20
"""Longer lines are skipped unread: a pasted 10 MB blob must not be buffered."""

READ_BLOCK = 1 << 20
INTERRUPT_MARK = "[Request interrupted by user"
END_OF_TURN = frozenset({"turn_duration", "stop_hook_summary"})
# User entries that wrap local commands or their output: not prompts, no turn.
NOT_PROMPTS = ("<local-command-", "<command-message>", "<command-args>", "<bash-", "<user-memory-")


class Turn(StrEnum):
    """What the newest turn of a transcript looks like."""

    NONE = "none"
    IN_PROGRESS = "in_progress"
    FINISHED = "finished"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


def _timestamp(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


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


_FACTS = (
    "snippet",
    "tokens",
    "model",
    "context_tokens",
    "cost_usd",
    "cost_source",
    "retries",
    "title",
)


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


class TranscriptReader:
    """Incremental parser of one transcript: feed it bytes, get events (pure: no I/O)."""

    def __init__(self, session_id: str, *, max_line: int = MAX_LINE) -> None:
        self.session_id = session_id
        self.max_line = max_line
        self.identity: tuple[int, int] | None = None
        self.reset()

    def reset(self) -> None:
        """Forget everything read: the file was truncated or replaced."""
        self.partial = False
        """Started mid-file (a tail): a turn whose prompt it never saw emits no Stop."""
        self.quiet = False
        """Sums only (a transcript's history): no events, no facts, only the lines that count."""
        self.hold_totals = False
        """Leaves tokens and cost out of its facts (a history still being summed)."""
        self.offset = 0
        self.size = 0
        self.turn = Turn.NONE
        self.last_prompt_seen: float | None = None
        self.snippet: str | None = None
        self.model: str | None = None
        self.tokens = Tokens()
        self.context_tokens: int | None = None
        self.retries = 0
        self.title: str | None = None
        self.cost_usd: float | None = None
        self.cost_source: str | None = None
        self._claude_cost: float | None = None  # the newest cost-state's totalCostUSD
        self._cost_since = 0.0  # computed cost of replies after it
        self._requests = 0  # api-request entries since the last reply or prompt
        self._compacted = False
        self._line_start = 0
        self._buf = bytearray()
        self._skipping = False
        self._last_ts: float | None = None
        self._anchor: str | None = None
        self._anchor_stopped = False
        # Recent message ids only: a message's entries are written together, so a bounded
        # memory counts each once without keeping one record per message of a long transcript.
        self._usage: OrderedDict[str, Tokens] = OrderedDict()
        self._costs: dict[str, float] = {}
        self._tools: dict[str, str] = {}
        self._dirty: set[str] = set()
        self._facts_at: float | None = None
        self._out: list[Event] = []
        self._touched: set[str] = set()  # facts set at least once (a tail's own values win)
        self._head: dict[str, None] = {}  # a partial reader's first usage keys
        self._tag = ""  # distinguishes the facts of a restore or a merge at the same offset
        self.emitted = 0
        """Turn events (not facts) emitted so far."""
        self.turn_mark = 0
        """`emitted` when the newest turn began: the events after it are that turn's."""

    @property
    def current_tool(self) -> str:
        """The newest tool call without a result yet, or ""."""
        return next(reversed(self._tools.values()), "")

    def sync(self, st: os.stat_result) -> bool:
        """Note the file's identity and size; reset (and say so) on truncation or replacement."""
        ident = (st.st_dev, st.st_ino)
        replaced = self.identity is not None and ident != self.identity
        self.identity = ident
        self.size = st.st_size
        if replaced or st.st_size < self.offset:
            self.reset()
            self.size = st.st_size
            return True
        return False

    def feed(self, chunk: bytes, flush: bool = True) -> list[Event]:
        """Parse the complete lines in chunk (the partial last line waits for more)."""
        pos, end, base = 0, len(chunk), self.offset
        while pos < end:
            nl = chunk.find(b"\n", pos)
            if nl < 0:
                if not self._skipping:
                    if len(self._buf) + end - pos > self.max_line:
                        self._skipping = True
                        self._buf.clear()
                    else:
                        self._buf += chunk[pos:]
                break
            start, self._line_start = self._line_start, base + nl + 1
            if self._skipping:
                self._skipping = False
            elif len(self._buf) + nl - pos <= self.max_line:
                line = bytes(self._buf) + chunk[pos:nl] if self._buf else chunk[pos:nl]
                self._line(line, start)
            self._buf.clear()
            pos = nl + 1
        self.offset += end
        if flush:
            self._flush_facts()
        out, self._out = self._out, []
        return out

    # --- resuming and merging --------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Everything a later reader needs to continue from the last complete line (JSON-able)."""
        usage = list(self._usage.items())[-SNAPSHOT_USAGE:]
        t = self.tokens
        return {
            "v": SNAPSHOT_VERSION,
            "offset": self._line_start,
            "quiet": self.quiet,
            "turn": self.turn.value,
            "last_prompt_seen": self.last_prompt_seen,
            "snippet": self.snippet,
            "model": self.model,
            "tokens": [t.input, t.output, t.cache_read, t.cache_creation],
            "context_tokens": self.context_tokens,
            "retries": self.retries,
            "title": self.title,
            "cost_usd": self.cost_usd,
            "cost_source": self.cost_source,
            "claude_cost": self._claude_cost,
            "cost_since": self._cost_since,
            "requests": self._requests,
            "compacted": self._compacted,
            "last_ts": self._last_ts,
            "anchor": self._anchor,
            "anchor_stopped": self._anchor_stopped,
            "usage": [[k, u.input, u.output, u.cache_read, u.cache_creation] for k, u in usage],
            "costs": [[k, self._costs[k]] for k, _ in usage if k in self._costs],
            "tools": list(self._tools.items()),
            "touched": sorted(self._touched),
        }

    def restore(self, snap: dict[str, Any], identity: tuple[int, int]) -> bool:
        """Continue from a snapshot of this file (False, and a blank reader, if it is unusable)."""
        self.reset()
        try:
            if snap.get("v") != SNAPSHOT_VERSION:
                raise ValueError("another snapshot version")
            self.offset = self._line_start = int(snap["offset"])
            self.quiet = bool(snap["quiet"])
            self.turn = Turn(snap["turn"])
            self.last_prompt_seen = _opt(snap["last_prompt_seen"], float)
            self.snippet = _opt(snap["snippet"], str)
            self.model = _opt(snap["model"], str)
            self.tokens = Tokens(*(int(x) for x in snap["tokens"]))
            self.context_tokens = _opt(snap["context_tokens"], int)
            self.retries = int(snap["retries"])
            self.title = _opt(snap["title"], str)
            self.cost_usd = _opt(snap["cost_usd"], float)
            self.cost_source = _opt(snap["cost_source"], str)
            self._claude_cost = _opt(snap["claude_cost"], float)
            self._cost_since = float(snap["cost_since"])
            self._requests = int(snap["requests"])
            self._compacted = bool(snap["compacted"])
            self._last_ts = _opt(snap["last_ts"], float)
            self._anchor = _opt(snap["anchor"], str)
            self._anchor_stopped = bool(snap["anchor_stopped"])
            for k, *u in snap["usage"]:
                self._usage[str(k)] = Tokens(*(int(x) for x in u))
            for k, c in snap["costs"]:
                self._costs[str(k)] = float(c)
            for k, name in snap["tools"]:
                self._tools[str(k)] = str(name)
            self._touched = {str(x) for x in snap["touched"]}
        except (KeyError, TypeError, ValueError):
            self.reset()
            return False
        self.identity = identity
        return True

    def announce(self, tag: str) -> None:
        """Say every fact again on the next flush (a restored reader: the store may lag it)."""
        self._dirty |= {n for n in _FACTS if getattr(self, n) is not None} | {"current_tool"}
        self._facts_at = self._last_ts
        self._tag = tag

    def adopt(self, history: TranscriptReader, tag: str) -> None:
        """Take in the history before this tail reader's start, summed by `history` up to it.

        The totals become what one reader over the whole file would have; the newest values
        (snippet, model, context, title) stay the tail's unless the tail never saw one."""
        overlap = [k for k in self._head if k in history._usage]
        t, h = self.tokens, history.tokens
        o = [history._usage[k] for k in overlap]
        self.tokens = Tokens(
            h.input + t.input - sum(x.input for x in o),
            h.output + t.output - sum(x.output for x in o),
            h.cache_read + t.cache_read - sum(x.cache_read for x in o),
            h.cache_creation + t.cache_creation - sum(x.cache_creation for x in o),
        )
        if self._claude_cost is None:
            self._claude_cost = history._claude_cost
            self._cost_since += history._cost_since - sum(
                history._costs.get(k, 0.0) for k in overlap
            )
        if "cost_usd" in self._touched or "cost_usd" in history._touched:
            self._update_cost(0.0)
        for name in ("snippet", "model", "context_tokens", "title", "retries"):
            if name not in self._touched and name in history._touched:
                setattr(self, name, getattr(history, name))
                self._touched.add(name)
        if "retries" not in self._touched:
            self._requests += history._requests
        if self.turn is Turn.NONE and not history.quiet:
            self.turn, self.last_prompt_seen = history.turn, history.last_prompt_seen
            self._anchor, self._anchor_stopped = history._anchor, history._anchor_stopped
        if self._last_ts is None:
            self._last_ts = history._last_ts
        self._compacted = self._compacted or history._compacted
        usage = OrderedDict((k, u) for k, u in history._usage.items() if k not in self._usage)
        usage.update(self._usage)
        while len(usage) > USAGE_MEMORY:
            usage.popitem(last=False)
        costs = {k: c for k, c in history._costs.items() if k not in self._costs}
        costs.update(self._costs)
        self._usage, self._costs = usage, {k: costs[k] for k in usage if k in costs}
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
        ts = _timestamp(entry.get("timestamp"))
        if ts is not None:
            self._last_ts = ts
        message = entry.get("message")
        message = message if isinstance(message, dict) else {}
        kind = entry.get("type")
        at = ts if ts is not None else (self._last_ts or 0.0)
        if kind == "user":
            self._user(entry, message, start, at)
        elif kind == "assistant":
            self._assistant(entry, message, start, at)
        elif kind == "system" and entry.get("subtype") in END_OF_TURN:
            self._end_of_turn(at)
        elif kind == "system" and entry.get("subtype") == "compact_boundary":
            self._set("context_tokens", None, at)
            self._compacted = True
            self._dirty.add("compacted")
        elif kind == "cost-state":
            self._cost_state(entry, at)
        elif kind == "api-request":
            # 2.1.332 writes one per attempt: more than one with no reply between is a retry.
            if entry.get("querySource") in (None, "repl_main_thread"):
                self._requests += 1
                self._set("retries", max(0, self._requests - 1), at)
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
            self.turn = Turn.INTERRUPTED
            self._anchor_stopped = True
            self._clear_tools(at)
            return
        if entry.get("isMeta") or entry.get("isCompactSummary"):
            return
        head = text.lstrip()
        if head.startswith("<command-name>"):
            # A slash command can run a turn of its own (custom commands, skills): it anchors
            # the next end-of-turn, but is not a prompt (/compact, /clear never end a turn).
            self._anchor, self._anchor_stopped = key, False
            self.turn_mark = self.emitted
            return
        if head.startswith(NOT_PROMPTS):
            return
        self._anchor, self._anchor_stopped = key, False
        self.turn_mark = self.emitted
        self.turn = Turn.IN_PROGRESS
        self.last_prompt_seen = at
        self._requests = 0
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
            self._emit(
                StopFailure,
                at,
                self._key(entry, start),
                error=error,
                last_message=error,
                error_kind=kind[:100] if isinstance(kind, str) else None,
            )
            self.turn = Turn.FAILED
            self._requests = 0
            self._set("retries", 0, at)
            return
        self._requests = 0
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
            old = self._usage.get(key, Tokens())
            if self.partial and len(self._head) < USAGE_MEMORY:
                self._head[key] = None
            if isinstance(model, str) and model and not model.startswith("<"):
                self._set("context_tokens", new.input + new.cache_read + new.cache_creation, at)
            if new != old:
                self._usage[key] = new
                self._usage.move_to_end(key)
                if len(self._usage) > USAGE_MEMORY:
                    self._usage.popitem(last=False)
                price = session_facts.cost(
                    model if isinstance(model, str) else None,
                    new.input,
                    new.output,
                    new.cache_read,
                    new.cache_creation,
                )
                self._cost_since += price - self._costs.get(key, 0.0)
                self._costs[key] = price
                if len(self._costs) > USAGE_MEMORY:
                    self._costs.pop(next(iter(self._costs)))
                self._update_cost(at)
                t = self.tokens
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
                self._tools[str(tool_id)] = str(block.get("name") or "tool")
                self._dirty.add("current_tool")
                self._facts_at = at
        if self.turn is Turn.NONE:
            self.turn = Turn.IN_PROGRESS

    def _cost_state(self, entry: dict[str, Any], at: float) -> None:
        total = entry.get("totalCostUSD")
        if isinstance(total, int | float) and not isinstance(total, bool) and total >= 0:
            self._claude_cost = float(total)
            self._cost_since = 0.0
            self._update_cost(at)

    def _update_cost(self, at: float) -> None:
        if self._claude_cost is not None:
            self._set("cost_source", "claude", at)
            self._set("cost_usd", round(self._claude_cost + self._cost_since, 6), at)
        else:
            self._set("cost_source", "computed", at)
            self._set("cost_usd", round(self._cost_since, 6), at)

    def _end_of_turn(self, at: float) -> None:
        self._clear_tools(at)
        if self._anchor_stopped:
            return
        if self._anchor is None and self.partial:
            # A tail that starts inside this turn: its Stop's id (the prompt's) is unknown, and
            # a made-up one would replay an old turn's end as new.
            self._anchor_stopped = True
            self.turn = Turn.FINISHED
            return
        self._anchor_stopped = True
        self.turn = Turn.FINISHED
        self._emit(Stop, at, f"stop:{self._anchor or 'start'}")

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
        self._touched.add(name)
        if getattr(self, name) != value:
            setattr(self, name, value)
            self._dirty.add(name)
            self._facts_at = at

    def _tool_done(self, tool_id: str, at: float) -> None:
        if self._tools.pop(tool_id, None) is not None:
            self._dirty.add("current_tool")
            self._facts_at = at

    def _clear_tools(self, at: float) -> None:
        if self._tools:
            self._tools.clear()
            self._dirty.add("current_tool")
            self._facts_at = at

    def _flush_facts(self) -> None:
        if self.quiet:
            self._dirty = set()
        if not self._dirty:
            return
        d = self._dirty - ({"tokens", "cost_usd", "cost_source"} if self.hold_totals else set())
        if not d:
            return
        tag, self._tag = self._tag, ""
        self._out.append(
            TranscriptFacts(
                session_id=self.session_id,
                at=self._facts_at if self._facts_at is not None else (self._last_ts or 0.0),
                id=f"tx:{self.session_id}:facts:{self.identity[1] if self.identity else 0}:"
                f"{self._line_start}{tag}",
                source=Source.TRANSCRIPT,
                snippet=self.snippet if "snippet" in d else None,
                tokens=self.tokens if "tokens" in d else None,
                model=self.model if "model" in d else None,
                current_tool=self.current_tool if "current_tool" in d else None,
                context_tokens=self.context_tokens if "context_tokens" in d else None,
                cost_usd=self.cost_usd if "cost_usd" in d else None,
                cost_source=self.cost_source if "cost_source" in d else None,
                retries=self.retries if "retries" in d else None,
                title=self.title if "title" in d else None,
                compacted="compacted" in d and self.context_tokens is None,
            )
        )
        self._dirty -= d


def read_tail_state(
    path: Path, session_id: str = "", tail: int = 4 * MAX_LINE, root: Path | None = None
) -> Turn:
    """How the newest turn looks, from the last `tail` bytes (blocking; NONE if unreadable).

    With `root`, only a regular file under it is read (see transcript_files).
    """
    from purplemux.sources.transcript_files import open_transcript

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
    return reader.turn
