"""Claude's background jobs, $CLAUDE_CONFIG_DIR/jobs/<id>/state.json, as typed events.

A session started with `claude --bg` (or from the agent view) runs in a pty of Claude's own
daemon: no tmux pane, hooks without $TMUX. Its job file says what the job is doing, and says it
first (~0.6 s before the PermissionRequest hook; ../shared/claude-code-bg-and-limits.md, A):

| state.json state / tempo | event                                                  |
|--------------------------|--------------------------------------------------------|
| working / active         | StatusBusy                                             |
| working / blocked        | StatusWaiting, waiting for `needs` ("approve Bash: …")  |
| working / idle           | nothing: the Stop hook and the session file say it     |
| done                     | Stop (the answer: `output.result`, else `detail`)      |
| blocked (an API error)   | StopFailure, its `error` from `needs` (ERROR_KINDS)     |
| failed                   | StopFailure                                            |
| stopped                  | SessionEnd (claude stop)                               |

The agent view's spare worker has a job folder with only tmp/ and no state.json: never an event.
"rate limited — wait and retry" is StopFailure `rate_limit`, as the hook says it: the limit wall
reads that, with the window and reset `detail` says for a subscription or a gateway ("You've hit
your 5-hour limit · resets 10:37pm (UTC)", read as the hook's text is). Each folder is watched
(inotify, no timer while nothing changes); an event comes only when (state, tempo, needs)
changes, so a rewrite of the tokens or the detail is not one. What the files said when the
daemon started is only remembered: a live worker's session file lists it, and a job finished (or
crashed) long ago must not come back as a row.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncGenerator
from datetime import datetime
from pathlib import Path
from typing import Any

from purplemux.agents.claude import limits
from purplemux.core.events import (
    Event,
    SessionEnd,
    Source,
    StatusBusy,
    StatusWaiting,
    Stop,
    StopFailure,
)
from purplemux.io.watch import watch_dirs

STATE_FILE = "state.json"
MAX_TEXT = 2000
ERROR_KINDS = (
    ("rate limited", "rate_limit"),
    ("usage limit reached", "billing_error"),
    ("login required", "authentication_failed"),
)
"""A blocked job's `needs` (Claude's fixed text per API error kind) -> StopFailure's `error`
as the hook names it (the wall reads `rate_limit`)."""
RATE_LIMIT = "rate_limit"


def _text(data: dict[str, Any], key: str, limit: int = MAX_TEXT) -> str | None:
    value = data.get(key)
    return value[:limit] if isinstance(value, str) and value else None


def _when(value: Any) -> float | None:
    """An ISO time of state.json (`updatedAt`) as unix seconds."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def error_kind(needs: str | None) -> str | None:
    """The hook's error name for a blocked job's `needs`, if Claude's text is a known one."""
    low = (needs or "").lower()
    return next((kind for prefix, kind in ERROR_KINDS if low.startswith(prefix)), None)


def reading(state: dict[str, Any]) -> tuple[str, str, str] | None:
    """(state, tempo, needs): what an event is made of; None for a file that is not a job's."""
    st = state.get("state")
    if not isinstance(st, str) or not isinstance(state.get("sessionId"), str):
        return None
    tempo = state.get("tempo")
    return st, tempo if isinstance(tempo, str) else "", _text(state, "needs") or ""


def job_event(job_id: str, state: dict[str, Any], mtime: float = 0.0) -> Event | None:
    """The event one state.json stands for (see the module's table); None when it says nothing
    a hook or the session file does not say better."""
    key = reading(state)
    if key is None:
        return None
    st, tempo, needs = key
    session_id = str(state["sessionId"])[:200]
    at = _when(state.get("updatedAt")) or mtime
    common: dict[str, Any] = dict(
        session_id=session_id,
        at=at,
        id=f"job:{job_id}:{session_id}:{st}:{tempo}:{needs}:{at}",
        source=Source.JOB,
        name=f"job {st}" + (f" ({tempo})" if tempo else ""),
        cwd=_text(state, "cwd", 4096),
        transcript_path=_text(state, "linkScanPath", 4096),
        agent="claude",
        job_id=job_id,
    )
    detail = _text(state, "detail")
    if st == "working" and tempo == "blocked":
        return StatusWaiting(waiting_for=needs or "input", **common)
    if st == "working" and tempo == "active":
        return StatusBusy(**common)
    if st == "done":
        output = state.get("output")
        result = _text(output, "result") if isinstance(output, dict) else None
        return Stop(last_message=result or detail, **common)
    if st in ("blocked", "failed"):
        why = needs or detail or st
        kind = error_kind(needs)
        # A subscription's or gateway's wall: `detail` is the screen's "You've hit your 5-hour
        # limit · resets 10:37pm (UTC)", the reset the wall needs to be armed for resume.
        window, resets = limits.hit_message(detail or needs, at)
        return StopFailure(
            error=why,
            error_kind=kind,
            last_message=detail,
            limit_hit=kind == RATE_LIMIT or window is not None,
            limit_window=window,
            limit_resets_at=resets,
            **common,
        )
    if st == "stopped":
        return SessionEnd(reason="stopped", **common)
    return None


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None  # gone, or half-written (it is rewritten in place): the next write tells
    return data if isinstance(data, dict) else None


class JobWatcher:
    """Watches jobs/ and each job's folder; yields an event per change of a job's reading."""

    def __init__(self, jobs_dir: Path, *, debounce_ms: int = 10, recheck_ms: int = 5000) -> None:
        self.jobs_dir = Path(os.path.abspath(jobs_dir))
        self.debounce_ms, self.recheck_ms = debounce_ms, recheck_ms
        self._known: dict[str, tuple[tuple[int, int], tuple[str, str, str] | None]] = {}
        self._primed = False

    @property
    def primed(self) -> bool:
        """The first pass is done: from now on a change of a reading is an event."""
        return self._primed

    def _dirs(self) -> set[Path]:
        """jobs/ and every job folder in it; the nearest folder that exists while it does not."""
        if not self.jobs_dir.is_dir():
            folder = self.jobs_dir
            while not folder.is_dir() and folder != folder.parent:
                folder = folder.parent
            return {folder}
        try:
            subs = {Path(e.path) for e in os.scandir(self.jobs_dir) if e.is_dir()}
        except OSError:
            subs = set()
        return {self.jobs_dir, *subs}

    def update(self) -> list[Event]:
        """Read the job files that changed; events for the readings that changed since the
        first pass (blocking)."""
        out: list[Event] = []
        seen: set[str] = set()
        try:
            entries = [e for e in os.scandir(self.jobs_dir) if e.is_dir()]
        except OSError:
            entries = []
        for entry in entries:
            path = Path(entry.path) / STATE_FILE
            try:
                st = path.stat()
            except OSError:
                continue  # a spare's folder (only tmp/), or a job being removed
            job_id = entry.name[:64]
            seen.add(job_id)
            stamp = (st.st_mtime_ns, st.st_size)
            old = self._known.get(job_id)
            if old is not None and old[0] == stamp:
                continue
            data = _read(path)
            if data is None:
                continue
            key = reading(data)
            self._known[job_id] = (stamp, key)
            if (old is not None and old[1] == key) or not self._primed:
                continue
            event = job_event(job_id, data, st.st_mtime)
            if event is not None:
                out.append(event)
        for gone in set(self._known) - seen:
            del self._known[gone]
        self._primed = True
        out.sort(key=lambda e: e.at)
        return out

    async def events(self) -> AsyncGenerator[list[Event], None]:
        """Yield events: first for every job now, then as their files change."""
        async for _ in watch_dirs(
            self._dirs,
            name="claude jobs",
            debounce_ms=self.debounce_ms,
            step_ms=50,
            recheck_ms=self.recheck_ms,
        ):
            if batch := await asyncio.to_thread(self.update):
                yield batch
