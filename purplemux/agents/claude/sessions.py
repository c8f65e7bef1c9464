"""Claude's own per-process files, $CLAUDE_CONFIG_DIR/sessions/<pid>.json, as status events."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]  # psutil ships no type hints; pyproject has no types-psutil

from purplemux.core import facts as session_facts
from purplemux.core.events import Event, Source, StatusBusy, StatusIdle, StatusWaiting
from purplemux.core.model import TmuxLocation
from purplemux.io.procinfo import start_ticks
from purplemux.io.watch import watch_dirs

log = logging.getLogger(__name__)

START_SLACK = 2.0
"""Seconds a process may seem to start after its file's startedAt (clock steps, rounding)."""
SETTLED_NS = 2_000_000_000
"""A file last written this long before we read it is known by its stat until that changes: a
later write gets a later mtime, even where file times are coarse."""


@dataclass(frozen=True, slots=True)
class SessionFile:
    """One parsed sessions/<pid>.json; times in unix seconds."""

    pid: int
    session_id: str
    cwd: str | None = None
    started_at: float | None = None
    proc_start: str | None = None
    status: str | None = None
    waiting_for: str | None = None
    status_updated_at: float | None = None
    status_updated_ms: int | None = None
    kind: str | None = None
    name: str | None = None
    version: str | None = None
    name_since: float | None = None
    tmux: str | None = None
    """2.1.332: Claude's own pane, "session:@window.%pane"."""
    account: str | None = None
    """The label of the config dir the file is in (set by its watcher, not in the file)."""
    job_id: str | None = None
    """2.1.332 background sessions (`kind: "bg"`): the job, ~/.claude/jobs/<jobId>."""
    spare: bool = False
    """A worker kept ready for a next job (the agent view's "new session"): not a session yet."""

    def started_as(self, create_time: float) -> bool:
        """Whether the process now at self.pid (created at create_time) is the file's writer."""
        ticks = start_ticks(self.pid)
        if self.proc_start is not None and self.proc_start.isdigit() and ticks is not None:
            # Verified on 2.1.197: procStart is /proc/<pid>/stat field 22 (clock ticks since
            # boot), so the comparison is exact.
            return int(self.proc_start) == ticks
        if self.started_at is not None:
            # The writer existed before it wrote startedAt; a process started later is a reuse.
            return create_time <= self.started_at + START_SLACK
        return True


def _str(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def _ms(data: dict[str, Any], key: str) -> int | None:
    value = data.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return int(value)
    return None


def parse_session_file(data: bytes, pid: int | None = None) -> SessionFile | None:
    """Parse a session file's bytes (pid from the name when the body lacks it); None on garbage."""
    try:
        raw = json.loads(data)
    except Exception:  # partial write, garbage, invalid UTF-8
        return None
    if not isinstance(raw, dict):
        return None
    file_pid = raw.get("pid", pid)
    session_id = _str(raw, "sessionId")
    if not isinstance(file_pid, int) or isinstance(file_pid, bool) or file_pid <= 0:
        return None
    if not session_id:
        return None
    proc_start = raw.get("procStart")
    updated = _ms(raw, "statusUpdatedAt")
    started = _ms(raw, "startedAt")
    return SessionFile(
        pid=file_pid,
        session_id=session_id,
        cwd=_str(raw, "cwd"),
        started_at=started / 1000 if started is not None else None,
        proc_start=str(proc_start) if isinstance(proc_start, str | int) else None,
        status=_str(raw, "status"),
        waiting_for=_str(raw, "waitingFor"),
        status_updated_at=updated / 1000 if updated is not None else None,
        status_updated_ms=updated,
        kind=_str(raw, "kind"),
        name=_str(raw, "name"),
        version=_str(raw, "version"),
        name_since=since / 1000 if (since := _ms(raw, "nameSince")) is not None else None,
        tmux=_str(raw, "tmux"),
        job_id=(_str(raw, "jobId") or "")[:64] or None,
        spare=raw.get("spare") is True,
    )


INTERACTIVE_KINDS = frozenset({"interactive"})


def file_location(sf: SessionFile) -> TmuxLocation | None:
    """The pane the file names (`tmux`: "session:@window.%pane"), for interactive sessions only:
    a background session (`claude --bg`) may carry another pane's environment."""
    if not sf.tmux or (sf.kind is not None and sf.kind not in INTERACTIVE_KINDS):
        return None
    head, _, pane = sf.tmux.rpartition(".")
    if not pane.startswith("%"):
        return None
    session = head.rpartition(":")[0] if ":" in head else None
    return TmuxLocation(pane=pane[:200], session=(session or None) and session[:200])


def status_event(sf: SessionFile) -> Event | None:
    """The status event a session file stands for; None for an unknown status or a spare
    worker (2.1.332: `spare: true` until a job claims it, then the flag goes)."""
    if sf.spare:
        return None
    kinds: dict[str | None, type[StatusBusy | StatusWaiting | StatusIdle]] = {
        "busy": StatusBusy,
        "waiting": StatusWaiting,
        "idle": StatusIdle,
        "shell": StatusIdle,  # 2.1.332: the turn is over, a background shell still runs
    }
    cls = kinds.get(sf.status)
    if cls is None:
        return None
    # The session id is part of the id: /clear gives the same pid a new session id while
    # status and statusUpdatedAt stay as they were (verified on 2.1.197).
    common: dict[str, Any] = dict(
        session_id=sf.session_id,
        at=sf.status_updated_at or sf.started_at or 0.0,
        id=f"sf:{sf.pid}:{sf.session_id}:{sf.status_updated_ms}:{sf.status}",
        source=Source.SESSION_FILE,
        cwd=sf.cwd,
        pid=sf.pid,
        title=sf.name,
        title_at=sf.name_since,
        tmux=file_location(sf),
        account=sf.account,
        job_id=sf.job_id,
    )
    if sf.name and sf.name_since and sf.status_updated_at and sf.name_since > sf.status_updated_at:
        # A rename changes neither status nor statusUpdatedAt: it gets an id of its own.
        common["id"] += f":n{sf.name_since}"
    if cls is StatusWaiting:
        waiting = session_facts.WAITING_FOR.get(sf.waiting_for or "", sf.waiting_for)
        return StatusWaiting(waiting_for=waiting, **common)
    if sf.status == "shell":
        return StatusIdle(shell=True, **common)
    return cls(**common)


def is_same_process(sf: SessionFile, proc: psutil.Process) -> bool:
    """Whether proc is the process that wrote sf (not a later one that reused its pid)."""
    if proc.pid != sf.pid:
        return False
    try:
        return bool(proc.is_running()) and sf.started_as(proc.create_time())
    except psutil.Error:
        return False


def _alive(sf: SessionFile) -> bool:
    """is_same_process(sf, the process now at sf.pid), false if there is none."""
    if sf.proc_start is not None and sf.proc_start.isdigit():
        # The exact witness: one read of /proc/<pid>/stat answers it (psutil read it three
        # times, and /proc/stat for the boot time: ~0.1 s for the 500 files of a start).
        # Unreadable (gone, no /proc, not allowed): psutil says, as before.
        ticks = start_ticks(sf.pid)
        if ticks is not None:
            return int(sf.proc_start) == ticks
    try:
        return is_same_process(sf, psutil.Process(sf.pid))
    except psutil.Error:
        return False


def _key(sf: SessionFile) -> tuple[object, ...]:
    return (
        sf.session_id,
        sf.status,
        sf.status_updated_ms,
        sf.waiting_for,
        sf.name,
        sf.tmux,
        sf.spare,
    )


class SessionFileWatcher:
    """Watches the sessions folder and yields status events for new or changed files."""

    def __init__(
        self,
        sessions_dir: Path,
        *,
        account: str | None = None,
        check_alive: bool = True,
        debounce_ms: int = 10,
        step_ms: int = 10,  # see TranscriptTailer: 1 ms cost ~1.2 % of a core while idle
        rescan_ms: int = 5000,
    ) -> None:
        self.sessions_dir = Path(os.path.abspath(sessions_dir))
        self.account = account
        """The label of the config dir: every file's events name it."""
        self.check_alive = check_alive
        self.debounce_ms, self.step_ms, self.rescan_ms = debounce_ms, step_ms, rescan_ms
        self._known: dict[int, SessionFile] = {}
        # pid -> (inode, size, mtime) and what the file said then, for files that had settled.
        self._parsed: dict[int, tuple[tuple[int, int, int], SessionFile | None]] = {}

    def _read_dir(self) -> tuple[dict[int, SessionFile], set[int]]:
        """Parsed files by pid, and the pids whose file exists (parsed or not)."""
        parsed: dict[int, SessionFile] = {}
        present: set[int] = set()
        try:
            entries = list(os.scandir(self.sessions_dir))
        except OSError:
            return parsed, present
        # The periodic rescan reads every file; one that has not changed since it had settled
        # is not read and parsed again (1,000 files every 5 s were ~0.9 % of a core).
        cache: dict[int, tuple[tuple[int, int, int], SessionFile | None]] = {}
        for entry in entries:
            stem, dot, ext = entry.name.partition(".")
            if not (stem.isdigit() and dot and ext == "json"):
                continue
            pid = int(stem)
            present.add(pid)
            try:
                st = entry.stat()
            except OSError:
                continue
            key = (st.st_ino, st.st_size, st.st_mtime_ns)
            hit = self._parsed.get(pid)
            if hit is not None and hit[0] == key:
                sf = hit[1]
                cache[pid] = hit
            else:
                try:
                    data = Path(entry.path).read_bytes()
                except OSError:
                    continue
                sf = parse_session_file(data, pid)
                if sf is not None and self.account is not None:
                    sf = replace(sf, account=self.account)
                if time.time_ns() - st.st_mtime_ns > SETTLED_NS:
                    cache[pid] = (key, sf)
            if sf is not None:
                parsed[sf.pid] = sf
        self._parsed = cache
        return parsed, present

    def scan(self) -> dict[int, SessionFile]:
        """Every parseable session file now, by pid (blocking)."""
        return self._read_dir()[0]

    def known(self) -> dict[int, SessionFile]:
        """The files seen by the last pass of events(), by pid."""
        return dict(self._known)

    def _update(self) -> list[Event]:
        """Rescan; return events for new or changed files and forget removed ones (blocking)."""
        parsed, present = self._read_dir()
        out: list[Event] = []
        new_known: dict[int, SessionFile] = {}
        for pid in present:
            sf = parsed.get(pid)
            old = self._known.get(pid)
            if sf is None:
                # Claude rewrites the file in place: a half-written one keeps the last good copy.
                if old is not None:
                    new_known[pid] = old
                continue
            new_known[pid] = sf
            if old is not None and _key(old) == _key(sf):
                continue
            # A file left behind by a crashed process must not drive a live session.
            if self.check_alive and not _alive(sf):
                continue
            event = status_event(sf)
            if event is not None:
                out.append(event)
        self._known = new_known
        out.sort(key=lambda e: e.at)
        return out

    def _watch_dir(self) -> Path:
        folder = self.sessions_dir
        while not folder.is_dir() and folder != folder.parent:
            folder = folder.parent
        return folder

    async def events(self) -> AsyncGenerator[list[Event], None]:
        """Yield status events: first for every current file, then as files change."""
        async for batch in SessionFiles((self,)).events():
            yield batch


class SessionFiles:
    """The session folders of every Claude config dir (one watcher each), as one source: one
    folder watch for all of them, and `known()` / `scan()` across them."""

    def __init__(self, watchers: tuple[SessionFileWatcher, ...]) -> None:
        self.watchers = watchers

    def scan(self) -> dict[int, SessionFile]:
        """Every parseable session file now, by pid (blocking)."""
        out: dict[int, SessionFile] = {}
        for watcher in self.watchers:
            out.update(watcher.scan())
        return out

    def known(self) -> dict[int, SessionFile]:
        """The files seen by the last pass of events(), by pid."""
        out: dict[int, SessionFile] = {}
        for watcher in self.watchers:
            out.update(watcher._known)
        return out

    def _update(self) -> list[Event]:
        out = [event for watcher in self.watchers for event in watcher._update()]
        out.sort(key=lambda e: e.at)
        return out

    async def events(self) -> AsyncGenerator[list[Event], None]:
        """Yield status events: first for every current file, then as files change."""
        first = self.watchers[0]
        async for _ in watch_dirs(
            lambda: {w._watch_dir() for w in self.watchers},
            name="session file",
            debounce_ms=first.debounce_ms,
            step_ms=first.step_ms,
            recheck_ms=first.rescan_ms,
        ):
            if batch := await asyncio.to_thread(self._update):
                yield batch
