"""Claude's transcript JSONL, parsed incrementally: turns, interrupts, snippet, tokens."""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from purplemux import session_facts
from purplemux.events import Event, Interrupt, Source, Stop, StopFailure, TranscriptFacts
from purplemux.model import Tokens

USAGE_MEMORY = 256
"""Message ids remembered to count repeated usage once."""
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


class TranscriptReader:
    """Incremental parser of one transcript: feed it bytes, get events (pure: no I/O)."""

    def __init__(self, session_id: str, *, max_line: int = MAX_LINE) -> None:
        self.session_id = session_id
        self.max_line = max_line
        self.identity: tuple[int, int] | None = None
        self.reset()

    def reset(self) -> None:
        """Forget everything read: the file was truncated or replaced."""
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

    # --- one line ------------------------------------------------------------------------------

    def _key(self, entry: dict[str, Any], start: int) -> str:
        uuid = entry.get("uuid")
        if isinstance(uuid, str) and uuid:
            return uuid
        return f"@{self.identity[1] if self.identity else 0}:{start}"

    def _line(self, line: bytes, start: int) -> None:
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
            return
        if head.startswith(NOT_PROMPTS):
            return
        self._anchor, self._anchor_stopped = key, False
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
        content = message.get("content")
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
        self._anchor_stopped = True
        self.turn = Turn.FINISHED
        self._emit(Stop, at, f"stop:{self._anchor or 'start'}")

    # --- helpers -------------------------------------------------------------------------------

    def _emit(self, cls: type[Event], at: float, key: str, **extra: Any) -> None:
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
        if not self._dirty:
            return
        d = self._dirty
        self._out.append(
            TranscriptFacts(
                session_id=self.session_id,
                at=self._facts_at if self._facts_at is not None else (self._last_ts or 0.0),
                id=f"tx:{self.session_id}:facts:{self.identity[1] if self.identity else 0}:"
                f"{self._line_start}",
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
        self._dirty = set()


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
