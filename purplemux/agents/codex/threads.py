"""Codex's own thread records under CODEX_HOME, read read-only: which threads exist, where their
rollouts are, how their newest turn ended, and which threads a TUI has opened.

Verified on 0.171.0 (a real TUI in tmux, 2026-12-02):
- `state_5.sqlite` table `threads`: one row per thread, written at the thread's **first prompt**,
  together with the rollout file and thread_history_1.sqlite (which does not exist before). A
  TUI started and never prompted has no row: 0 rows with `mode=ro` and with a read-write
  connection alike (the WAL is read either way; the main file stays 4 KB, all in the WAL). A
  never-prompted thread got no row when the daemon unloaded it (~60 s after its TUI quit), nor
  at `daemon stop` (which did write its rollout, session_meta only); the a_start_idle capture
  did show such a row after daemon stop, so do not count on either.
- `thread_history_1.sqlite` table `thread_turns`: a turn's status, inProgress (also while an
  approval waits) then completed / interrupted / failed (with error_json, camelCase keys).
- `tui-thread-reference-capabilities/<thread id>`: an empty file written when a TUI creates a
  thread (at TUI start, ~5 s before the pane title is ready; at /new), ~50 ms after the id is
  minted. It stays after the TUI quits: the only on-disk trace of a thread before its first
  prompt, and its mtime says when it was opened (not which pane opened it).
- `thread-writer-locks/<id>.lock`: created with the id; the daemon holds a flock on it while
  the thread is loaded and released it at the idle unload (not read here).
- A thread id is a UUIDv7: its first 48 bits are the creation time in ms (created_at_ms to 3 ms).

Both databases are WAL-mode and written often by the daemon. Each read opens its own read-only
connection (`file:…?mode=ro`, never creating a file) and closes it before returning: nothing is
held open between reads. Any failure (no file, locked, not a database, no such table, an older
schema) returns no rows and the reason, never raises.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STATE_DB = "state_5.sqlite"
HISTORY_DB = "thread_history_1.sqlite"
OPENED_DIR = "tui-thread-reference-capabilities"
BUSY_TIMEOUT = 0.5
"""Seconds a read waits on a lock before it gives up with "database is locked"."""
MAX_ROWS = 500
TURN_STATUSES = frozenset({"inProgress", "completed", "interrupted", "failed"})
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_THREAD_COLUMNS = (
    "id",
    "rollout_path",
    "cwd",
    "title",
    "source",
    "originator",
    "created_at",
    "created_at_ms",
    "updated_at",
    "updated_at_ms",
    "archived",
    "first_user_message",
    "model",
    "cli_version",
)
_TURN_COLUMNS = (
    "thread_id",
    "turn_id",
    "status",
    "error_json",
    "started_at",
    "completed_at",
    "rollout_ordinal",
)


@dataclass(frozen=True, slots=True)
class Thread:
    """One row of `threads` (None: the column is missing or empty)."""

    id: str
    rollout_path: str | None = None
    cwd: str | None = None
    title: str | None = None
    source: str | None = None
    """The TUI: "vscode" (sic) through the app-server daemon, "cli" with --no-daemon."""
    originator: str | None = None
    """"codex-tui", "codex_exec"."""
    created_at: float | None = None
    """Unix seconds (created_at_ms when there is one)."""
    updated_at: float | None = None
    archived: bool = False
    first_user_message: str | None = None
    model: str | None = None
    cli_version: str | None = None


@dataclass(frozen=True, slots=True)
class TurnStatus:
    """A thread's newest row of `thread_turns`."""

    thread_id: str
    turn_id: str
    status: str
    """inProgress | completed | interrupted | failed (as Codex writes it)."""
    error: str | None = None
    """error_json's message, for a failed turn."""
    error_kind: str | None = None
    """error_json's codexErrorInfo as the rollout spells it (internal_server_error, ...)."""
    started_at: float | None = None
    completed_at: float | None = None


@dataclass(frozen=True, slots=True)
class ThreadsRead:
    rows: tuple[Thread, ...] = ()
    reason: str | None = None
    """Why nothing could be read (None: the read worked, even if it found no rows)."""


@dataclass(frozen=True, slots=True)
class TurnsRead:
    rows: tuple[TurnStatus, ...] = ()
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class OpenedThread:
    """A thread a TUI created or opened (tui-thread-reference-capabilities/<id>)."""

    id: str
    opened_at: float
    """The file's mtime: when the TUI opened the thread."""


def uuid7_time(thread_id: str) -> float | None:
    """When a UUIDv7 (Codex's thread and turn ids) was minted: unix seconds from its first 48
    bits (milliseconds). None if it is not a version-7 UUID.

    Matches threads.created_at_ms within a few ms (verified: 1796173697.441 vs .444).
    """
    text = thread_id.strip().lower()
    if not _UUID.match(text) or text[14] != "7":
        return None
    return int(text[:8] + text[9:13], 16) / 1000.0


def thread_id_of_rollout(path: str | Path) -> str | None:
    """The thread id at the end of a rollout file's name (rollout-<ts>-<id>.jsonl), or None."""
    name = Path(path).name
    if not (name.startswith("rollout-") and name.endswith(".jsonl")):
        return None
    candidate = "-".join(name[: -len(".jsonl")].split("-")[-5:]).lower()
    return candidate if _UUID.match(candidate) else None


class _Unreadable(Exception):
    """Why a read found nothing (its message is the reason)."""


@contextmanager
def _connect(path: Path, timeout: float) -> Iterator[sqlite3.Connection]:
    if not path.is_file():
        raise _Unreadable(f"no {path.name}")
    uri = f"{path.absolute().as_uri()}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=timeout, check_same_thread=False)
    except sqlite3.Error as exc:
        raise _Unreadable(f"{path.name}: {exc}") from exc
    try:
        yield conn
    except sqlite3.Error as exc:
        raise _Unreadable(f"{path.name}: {exc}") from exc
    finally:
        conn.close()


def _columns(conn: sqlite3.Connection, table: str, wanted: Iterable[str]) -> list[str]:
    have = {str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")}
    if not have:
        raise _Unreadable(f"no table {table}")
    return [c for c in wanted if c in have]


def _placeholders(values: list[str]) -> str:
    return ",".join("?" * len(values))


def read_threads(
    codex_home: Path,
    ids: Iterable[str] | None = None,
    *,
    limit: int = MAX_ROWS,
    timeout: float = BUSY_TIMEOUT,
) -> ThreadsRead:
    """The `threads` rows (those of `ids` if given), newest first, at most `limit`."""
    wanted = None if ids is None else sorted(set(ids))[:limit]
    if wanted == []:
        return ThreadsRead()
    try:
        with _connect(codex_home / STATE_DB, timeout) as conn:
            cols = _columns(conn, "threads", _THREAD_COLUMNS)
            if "id" not in cols:
                raise _Unreadable("threads has no id column")
            order = next((c for c in ("created_at_ms", "created_at") if c in cols), "id")
            where = f" WHERE id IN ({_placeholders(wanted)})" if wanted else ""
            sql = (
                f"SELECT {', '.join(cols)} FROM threads{where} "
                f"ORDER BY {order} DESC, id DESC LIMIT ?"
            )
            rows = conn.execute(sql, [*(wanted or []), limit]).fetchall()
    except _Unreadable as exc:
        return ThreadsRead(reason=str(exc))
    return ThreadsRead(rows=tuple(_thread(dict(zip(cols, row, strict=True))) for row in rows))


def latest_turns(
    codex_home: Path, thread_ids: Iterable[str] | None = None, *, timeout: float = BUSY_TIMEOUT
) -> TurnsRead:
    """Each thread's newest `thread_turns` row (of `thread_ids` if given)."""
    wanted = None if thread_ids is None else sorted(set(thread_ids))[:MAX_ROWS]
    if wanted == []:
        return TurnsRead()
    try:
        with _connect(codex_home / HISTORY_DB, timeout) as conn:
            cols = _columns(conn, "thread_turns", _TURN_COLUMNS)
            if not {"thread_id", "turn_id", "status"} <= set(cols):
                raise _Unreadable("thread_turns lacks thread_id, turn_id or status")
            # The newest turn: the highest rollout ordinal (turns are written in order), else
            # the latest start; turn ids (UUIDv7) break ties in time order.
            order = [c for c in ("rollout_ordinal", "started_at") if c in cols] + ["turn_id"]
            where = f" WHERE thread_id IN ({_placeholders(wanted)})" if wanted else ""
            sql = f"SELECT {', '.join(cols)} FROM thread_turns{where} ORDER BY thread_id, " + (
                ", ".join(order)
            )
            newest: dict[str, dict[str, Any]] = {}
            for row in conn.execute(sql, wanted or []):
                record = dict(zip(cols, row, strict=True))
                newest[str(record["thread_id"])] = record
    except _Unreadable as exc:
        return TurnsRead(reason=str(exc))
    return TurnsRead(rows=tuple(_turn(r) for r in newest.values()))


def opened_threads(codex_home: Path) -> tuple[OpenedThread, ...]:
    """The threads TUIs have created or opened, oldest first (empty if the folder is missing)."""
    out = []
    try:
        with os.scandir(codex_home / OPENED_DIR) as entries:
            for entry in entries:
                if _UUID.match(entry.name) and entry.is_file(follow_symlinks=False):
                    out.append(OpenedThread(entry.name, entry.stat(follow_symlinks=False).st_mtime))
    except OSError:
        return ()
    return tuple(sorted(out, key=lambda t: (t.opened_at, t.id)))


# --- rows ----------------------------------------------------------------------------------------


def _str(value: object, cap: int = 4096) -> str | None:
    return value[:cap] if isinstance(value, str) and value else None


def _secs(seconds: object, millis: object = None) -> float | None:
    if isinstance(millis, int) and not isinstance(millis, bool) and millis > 0:
        return millis / 1000.0
    if isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds > 0:
        return float(seconds)
    return None


def _thread(r: dict[str, Any]) -> Thread:
    return Thread(
        id=str(r["id"]),
        rollout_path=_str(r.get("rollout_path")),
        cwd=_str(r.get("cwd")),
        title=_str(r.get("title"), 2000),
        source=_str(r.get("source"), 100),
        originator=_str(r.get("originator"), 100),
        created_at=_secs(r.get("created_at"), r.get("created_at_ms")),
        updated_at=_secs(r.get("updated_at"), r.get("updated_at_ms")),
        archived=bool(r.get("archived")),
        first_user_message=_str(r.get("first_user_message"), 2000),
        model=_str(r.get("model"), 200),
        cli_version=_str(r.get("cli_version"), 100),
    )


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _turn(r: dict[str, Any]) -> TurnStatus:
    error, kind = None, None
    raw = r.get("error_json")
    if isinstance(raw, str) and raw:
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
        if isinstance(data, dict):
            error = _str(data.get("message"), 300)
            info = data.get("codexErrorInfo")
            if isinstance(info, dict):  # {"responseTooManyFailedAttempts": {...}}
                info = next(iter(info), None)
            kind = _snake(info)[:100] if isinstance(info, str) and info else None
    return TurnStatus(
        thread_id=str(r["thread_id"]),
        turn_id=str(r["turn_id"]),
        status=str(r["status"])[:40],
        error=error,
        error_kind=kind,
        started_at=_secs(r.get("started_at")),
        completed_at=_secs(r.get("completed_at")),
    )
