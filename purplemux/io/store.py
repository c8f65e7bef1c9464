"""SQLite: sessions, the append-only event log, push subscriptions; one thread at a time uses it
(the store thread; the event loop for a lone event's commit: store_thread.AsyncStore)."""

from __future__ import annotations

import json
import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from purplemux.core import jsontext

if TYPE_CHECKING:  # `serve` opens the store before it answers; the models load with the app
    from purplemux.core.events import Event
    from purplemux.core.model import Session

log = logging.getLogger(__name__)

CACHE_KIB = 512
"""SQLite's page cache of the writer's connection (its default is 2 MiB): what commits touch
(the newest pages of the log, the sessions). Larger caches bought nothing measurable here; they
held ~4 MiB of the daemon's resident memory after a big start (the reader's: store_thread)."""

WAL_CHECKPOINT_BYTES = 4 << 20
"""The write-ahead log is copied into the database file and emptied once it holds this much
(about SQLite's own automatic checkpoint, 1,000 pages), by the store thread after one of its
calls: a checkpoint syncs both files, so it never runs in a commit made on the event loop
(AsyncStore.commit). SQLite's own automatic checkpoint is off."""
CHECKPOINT_RETRY = 1.0
"""Seconds before a checkpoint a reader kept from completing is tried again."""

SCHEMA_VERSION = 7

MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        record TEXT NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        at REAL NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        source TEXT NOT NULL,
        data TEXT NOT NULL,
        received_at REAL NOT NULL
    );
    CREATE INDEX events_by_session ON events (session_id, at);
    CREATE TABLE push_subscriptions (
        endpoint TEXT PRIMARY KEY,
        data TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    """,
    # purplemux.core.history's folds, kept so a restart or "nothing new" folds nothing again: each
    # session's fold covers its events up to history_meta.synced (the log's seq).
    2: """
    CREATE TABLE history_folds (
        session_id TEXT PRIMARY KEY,
        fold TEXT NOT NULL
    );
    CREATE TABLE history_meta (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        synced INTEGER NOT NULL,
        low INTEGER NOT NULL
    );
    """,
    # Per session and local day, the session's running totals at its last change that day.
    3: """
    CREATE TABLE usage (
        session_id TEXT NOT NULL,
        day TEXT NOT NULL,
        project TEXT,
        cost_usd REAL NOT NULL,
        tokens INTEGER NOT NULL,
        PRIMARY KEY (session_id, day)
    );
    """,
    # Per followed transcript, how far it was read and the reader's state there (totals, the
    # newest turn): a restart continues from the offset when the file is still the same.
    4: """
    CREATE TABLE transcript_offsets (
        session_id TEXT PRIMARY KEY,
        path TEXT NOT NULL,
        dev INTEGER NOT NULL,
        ino INTEGER NOT NULL,
        offset INTEGER NOT NULL,
        state TEXT NOT NULL,
        updated_at REAL NOT NULL
    );
    """,
    # Each push subscription belongs to the login that made it (purplemux/io/logins.py's login id)
    # and ends with it. Older rows have no owner (''): no live login, so they are dropped.
    5: """
    ALTER TABLE push_subscriptions ADD COLUMN login TEXT NOT NULL DEFAULT '';
    """,
    # A subscription as a device the user can see (the settings view): a short id for the API,
    # a name from the browser's User-Agent, the last delivery and its result, and when the push
    # service said it is gone (kept, marked, so the list can say so; no more sends to it).
    6: """
    ALTER TABLE push_subscriptions ADD COLUMN id TEXT;
    ALTER TABLE push_subscriptions ADD COLUMN name TEXT NOT NULL DEFAULT 'a browser';
    ALTER TABLE push_subscriptions ADD COLUMN last_at REAL;
    ALTER TABLE push_subscriptions ADD COLUMN last_result TEXT;
    ALTER TABLE push_subscriptions ADD COLUMN gone_at REAL;
    UPDATE push_subscriptions SET id = lower(hex(randomblob(6))) WHERE id IS NULL;
    CREATE UNIQUE INDEX push_subscriptions_by_id ON push_subscriptions (id);
    """,
    # The newest usage-limit reading per account (purplemux.core.limits.Reading.to_record), so the
    # header's gauges survive a restart: a reading comes only when the agent next reports.
    7: """
    CREATE TABLE limits (
        agent TEXT NOT NULL,
        account TEXT NOT NULL,
        reading TEXT NOT NULL,
        at REAL NOT NULL,
        PRIMARY KEY (agent, account)
    );
    """,
}
"""Each step runs once, in order, keyed by PRAGMA user_version. The usage table keeps, per
session and local day, the session's running totals at its last change that day."""


def local_day(ts: float) -> str:
    """The local calendar day of a unix time, "YYYY-MM-DD".

    Remembered for the quarter hour of `ts` (every zone's offset is a whole number of quarter
    hours, so a day never starts inside one): each commit asks it for every session with a cost,
    and `localtime` looks at the zone's file each time."""
    global _last_day
    quarter = (math.floor(ts / 900), time.timezone, time.altzone)  # (a tzset() moves them)
    kept = _last_day
    if kept[0] == quarter:
        return kept[1]
    day = time.strftime("%Y-%m-%d", time.localtime(ts))
    _last_day = (quarter, day)
    return day


_last_day: tuple[tuple[int, int, int] | None, str] = (None, "")


class StoreError(RuntimeError):
    """The database cannot be opened or used; the message says how to recover."""


def _unusable(path: Path, reason: object) -> str:
    """What to tell the user, in one paragraph: the file, why, and how to recover."""
    if "locked" in str(reason):
        return (
            f"the state database {path} is locked by another program (is another "
            "`purplemux serve` using the same PURPLEMUX_HOME?). Stop that program and start "
            "again; the file itself is fine, do not move it."
        )
    return (
        f"cannot use the state database {path}: {reason}. Stop the daemon, move the file "
        f"aside with its -wal and -shm files if they exist (mv {path} {path}.broken; "
        f"mv {path}-wal {path}-wal.broken; mv {path}-shm {path}-shm.broken) and start "
        "again: sessions are rebuilt from the live sources (Claude's session files, "
        "transcripts and processes); the event history and Web Push subscriptions start "
        "empty."
    )


SQLITE_MAGIC = b"SQLite format 3\x00"
WAL_MAGIC = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")


class StoreBroken(StoreError):
    """The database file changed under the running daemon (truncated, replaced, removed):
    nothing written now would survive, so nothing is acknowledged as stored."""


class Store:
    """Synchronous store; use it from one thread at a time (store_thread.AsyncStore)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: int | None = None
        self._wal: int | None = None
        self._verifying = threading.Lock()
        self._wal_path = f"{path}-wal"
        self._checkpoint_after = 0.0
        self.broken: str | None = None
        """Why the file can no longer be trusted, once verify() found it damaged."""
        """The database file as opened (read only): what verify() compares the path with."""
        try:
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA busy_timeout=2000")
            self.db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
            self.db.execute("PRAGMA wal_autocheckpoint=0")  # checkpoint(): the store thread's
            if int(self.db.execute("PRAGMA user_version").fetchone()[0]) == 0:
                # Before the first table: freed pages can then be given back (retention).
                self.db.execute("PRAGMA auto_vacuum=INCREMENTAL")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreError(_unusable(path, exc)) from exc
        try:
            self._file = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            log.warning("cannot watch %s for damage while running", path, exc_info=True)

    def verify(self) -> None:
        """StoreBroken unless the file at `path` is still the database written, whole: the
        same inode, an SQLite header, at least as long as the header says, a WAL that is one.
        Costs a stat and two short reads; run after every commit, before it is acknowledged,
        and before the log is asked which events it holds. Once broken, always broken (until a
        restart): what it holds can no longer be trusted."""
        if self.broken is not None:
            raise StoreBroken(self.broken)
        try:
            with self._verifying:  # the store thread and the loop's duplicate check both call it
                self._verify()
        except StoreBroken as exc:
            self.broken = f"{exc}: hook events wait in the spool. {_unusable(self.path, exc)}"
            log.error("%s", self.broken)
            raise StoreBroken(self.broken) from None

    def _verify(self) -> None:
        if self._file is None:
            return
        try:
            now, opened = os.stat(self.path), os.fstat(self._file)
            head = os.pread(self._file, 100, 0)
        except FileNotFoundError:
            raise StoreBroken(f"the state database {self.path} was removed") from None
        if (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino):
            raise StoreBroken(f"the state database {self.path} was replaced by another file")
        if len(head) < 100 or not head.startswith(SQLITE_MAGIC):
            raise StoreBroken(f"the state database {self.path} was truncated or overwritten")
        page = int.from_bytes(head[16:18], "big")
        pages = int.from_bytes(head[28:32], "big")
        # The header's page count is valid when its change counter matches (SQLite >= 3.7).
        if head[24:28] == head[92:96] and opened.st_size < pages * (65536 if page == 1 else page):
            raise StoreBroken(f"the state database {self.path} was truncated")
        wal_path = f"{self.path}-wal"
        try:
            now = os.stat(wal_path)
        except FileNotFoundError:
            return
        if self._wal is None:  # opened once and kept: a check per commit costs no descriptor
            self._wal = os.open(wal_path, os.O_RDONLY | os.O_CLOEXEC)
        kept = os.fstat(self._wal)
        if (now.st_dev, now.st_ino) != (kept.st_dev, kept.st_ino):
            raise StoreBroken(f"the write-ahead log {wal_path} was replaced or removed")
        magic = os.pread(self._wal, 4, 0)
        if magic and magic not in WAL_MAGIC:
            raise StoreBroken(f"the write-ahead log {self.path}-wal was truncated or overwritten")

    def checkpoint_due(self) -> bool:
        """The write-ahead log has grown past WAL_CHECKPOINT_BYTES (a stat)."""
        if time.monotonic() < self._checkpoint_after:
            return False
        try:
            return os.stat(self._wal_path).st_size >= WAL_CHECKPOINT_BYTES
        except OSError:
            return False

    def checkpoint(self) -> None:
        """Copy the write-ahead log into the database and empty it, when it is due. It syncs
        both files: the store thread's, never the event loop's."""
        if not self.checkpoint_due():
            return
        busy = self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        if busy:  # a reader still needs the log: it is copied later
            self._checkpoint_after = time.monotonic() + CHECKPOINT_RETRY

    def check(self) -> None:
        """Read every page once (PRAGMA quick_check): damage shows at start, not mid-run."""
        try:
            problem = self.db.execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise StoreError(_unusable(self.path, exc)) from exc
        if problem != "ok":
            raise StoreError(_unusable(self.path, " ".join(str(problem).split())[:200]))

    def _migrate(self) -> None:
        version = int(self.db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise sqlite3.DatabaseError(
                f"schema version {version} is newer than this purplemux ({SCHEMA_VERSION})"
            )
        for target in range(version + 1, SCHEMA_VERSION + 1):
            self.db.executescript(
                f"BEGIN; {MIGRATIONS[target]} PRAGMA user_version={target}; COMMIT;"
            )

    def close(self) -> None:
        self.db.close()
        for fd in (self._file, self._wal):
            if fd is not None:
                os.close(fd)
        self._file = self._wal = None

    # --- sessions and events -------------------------------------------------------------------

    def load_sessions(self) -> list[Session]:
        from purplemux.core.model import Session

        rows = self.db.execute("SELECT record FROM sessions").fetchall()
        out = []
        for (record,) in rows:
            try:
                out.append(Session.from_record(json.loads(record)))
            except (ValueError, KeyError, TypeError):
                continue  # a record from an incompatible version: the sources rebuild it
        return out

    def load_limits(self) -> list[dict[str, Any]]:
        """Every stored usage-limit reading (purplemux.core.limits.Reading records)."""
        out = []
        for (reading,) in self.db.execute("SELECT reading FROM limits ORDER BY agent, account"):
            try:
                out.append(json.loads(reading))
            except ValueError:
                continue
        return out

    def save_limit(self, record: dict[str, Any]) -> None:
        """Keep an account's newest reading (one row per agent and account)."""
        self.db.execute(
            "INSERT INTO limits (agent, account, reading, at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT(agent, account) DO UPDATE SET reading=excluded.reading, at=excluded.at",
            (record["agent"], record["account"], json.dumps(record), record["at"]),
        )

    def known_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of these event ids are already in the log."""
        return select_known_ids(self.db, ids)

    def commit(self, events: Iterable[Event], sessions: Iterable[Session]) -> None:
        """Append events and upsert sessions in one transaction."""
        now = time.time()
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany(
                "INSERT OR IGNORE INTO events (id, session_id, at, kind, name, source, data,"
                " received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        e.id,
                        e.session_id,
                        e.at,
                        e.kind.value,
                        e.label,
                        e.source.value,
                        jsontext.dumps(e.to_json()),
                        now,
                    )
                    for e in events
                ],
            )
            self.db.executemany(
                "INSERT INTO sessions (id, record, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET record=excluded.record,"
                " updated_at=excluded.updated_at",
                [(s.id, jsontext.dumps(s.to_record()), s.updated_at) for s in sessions],
            )
            self.db.executemany(
                "INSERT INTO usage (session_id, day, project, cost_usd, tokens)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT(session_id, day) DO UPDATE SET"
                " project=excluded.project, cost_usd=max(cost_usd, excluded.cost_usd),"
                " tokens=max(tokens, excluded.tokens)",
                [
                    (
                        s.id,
                        local_day(s.updated_at),
                        s.project,
                        s.cost_usd or 0.0,
                        s.tokens.input
                        + s.tokens.output
                        + s.tokens.cache_read
                        + s.tokens.cache_creation,
                    )
                    for s in sessions
                    if s.cost_usd is not None and s.updated_at > 0
                ],
            )
        self.verify()  # committed to a file that no longer holds the database: not stored

    def events_for(self, session_id: str, limit: int = 1000) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT data FROM (SELECT data, at, seq FROM events WHERE session_id = ?"
            " ORDER BY at DESC, seq DESC LIMIT ?) ORDER BY at, seq",
            (session_id, limit),
        ).fetchall()
        return [json.loads(r[0]) for r in rows]

    def event_bounds(self) -> tuple[int, int]:
        """(lowest, highest) seq in the event log, (0, 0) when it is empty (both O(1): SQLite
        reads a lone min() or max() off the key, while `SELECT min(seq), max(seq)` scans)."""
        lo, hi = self.db.execute(
            "SELECT (SELECT min(seq) FROM events), (SELECT max(seq) FROM events)"
        ).fetchone()
        return int(lo or 0), int(hi or 0)

    def events_after(self, seq: int, upto: int) -> list[dict[str, Any]]:
        """The logged events with seq in (seq, upto], as Event.to_json: what a fold adds."""
        rows = self.db.execute(
            "SELECT data FROM events WHERE seq > ? AND seq <= ? ORDER BY seq", (seq, upto)
        )
        return [json.loads(r[0]) for r in rows]

    def session_log(self, session_id: str, upto: int) -> list[dict[str, Any]]:
        """One session's whole log up to seq `upto` (a late event folds it again)."""
        rows = self.db.execute(
            "SELECT data FROM events WHERE session_id = ? AND seq <= ?", (session_id, upto)
        )
        return [json.loads(r[0]) for r in rows]

    def load_folds(self) -> tuple[int, int, dict[str, str]]:
        """The kept history folds: (synced seq, lowest seq then, {session id: fold JSON})."""
        meta = self.db.execute("SELECT synced, low FROM history_meta WHERE id = 1").fetchone()
        if meta is None:
            return 0, 0, {}
        rows = self.db.execute("SELECT session_id, fold FROM history_folds")
        return int(meta[0]), int(meta[1]), {str(r[0]): str(r[1]) for r in rows}

    def save_folds(self, synced: int, low: int, folds: dict[str, str], reset: bool) -> None:
        """Keep these folds (all of them when `reset`) as of seq `synced`, in one transaction."""
        with self.db:
            self.db.execute("BEGIN")
            if reset:
                self.db.execute("DELETE FROM history_folds")
            self.db.executemany(
                "INSERT INTO history_folds (session_id, fold) VALUES (?, ?)"
                " ON CONFLICT(session_id) DO UPDATE SET fold=excluded.fold",
                list(folds.items()),
            )
            self.db.execute(
                "INSERT INTO history_meta (id, synced, low) VALUES (1, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET synced=excluded.synced, low=excluded.low",
                (synced, low),
            )

    def prune(
        self, cutoff: float, max_events: int, keep_ended: int | None = None
    ) -> tuple[list[str], int]:
        """Delete ended sessions last changed before `cutoff`, and all but the newest
        `keep_ended` ended ones, with their events; and all but the newest `max_events` events of
        any session; (deleted session ids, deleted events)."""
        ids = [
            r[0]
            for r in self.db.execute(
                "SELECT id FROM sessions WHERE updated_at < ? AND json_extract(record, '$.ended')",
                (cutoff,),
            )
        ]
        if keep_ended is not None:
            old = {*ids}
            ids += [
                r[0]
                for r in self.db.execute(
                    "SELECT id FROM sessions WHERE json_extract(record, '$.ended')"
                    " ORDER BY updated_at DESC, id LIMIT -1 OFFSET ?",
                    (keep_ended,),
                )
                if r[0] not in old
            ]
        events = 0
        with self.db:
            self.db.execute("BEGIN")
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                marks = ",".join("?" * len(chunk))
                cur = self.db.execute(f"DELETE FROM events WHERE session_id IN ({marks})", chunk)
                events += max(cur.rowcount, 0)
                self.db.execute(f"DELETE FROM sessions WHERE id IN ({marks})", chunk)
                self.db.execute(f"DELETE FROM history_folds WHERE session_id IN ({marks})", chunk)
                self.db.execute(f"DELETE FROM usage WHERE session_id IN ({marks})", chunk)
                self.db.execute(
                    f"DELETE FROM transcript_offsets WHERE session_id IN ({marks})", chunk
                )
            # Events of sessions no longer stored (retired long ago), past the same age.
            cur = self.db.execute(
                "DELETE FROM events WHERE received_at < ? AND session_id NOT IN"
                " (SELECT id FROM sessions)",
                (cutoff,),
            )
            events += max(cur.rowcount, 0)
            long_logs = self.db.execute(
                "SELECT session_id FROM events GROUP BY session_id HAVING count(*) > ?",
                (max_events,),
            ).fetchall()
            for (sid,) in long_logs:
                cur = self.db.execute(
                    "DELETE FROM events WHERE session_id = ? AND seq NOT IN (SELECT seq FROM"
                    " events WHERE session_id = ? ORDER BY at DESC, seq DESC LIMIT ?)",
                    (sid, sid, max_events),
                )
                events += max(cur.rowcount, 0)
        return ids, events

    def load_transcript_offsets(self) -> dict[str, dict[str, Any]]:
        """Session id -> {path, dev, ino, state} of the stored transcript offsets (live sessions'
        only: an ended session's transcript is not followed again)."""
        rows = self.db.execute(
            "SELECT t.session_id, t.path, t.dev, t.ino, t.state FROM transcript_offsets t"
            " JOIN sessions s ON s.id = t.session_id"
            " WHERE NOT coalesce(json_extract(s.record, '$.ended'), 0)"
        )
        out: dict[str, dict[str, Any]] = {}
        for sid, path, dev, ino, state in rows:
            try:
                out[str(sid)] = {"path": path, "dev": dev, "ino": ino, "state": json.loads(state)}
            except ValueError:
                continue
        return out

    def save_transcript_offsets(self, rows: Iterable[tuple[str, str, dict[str, Any]]]) -> None:
        """Keep (session id, path, {dev, ino, state}) per transcript, in one transaction."""
        now = time.time()
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany(
                "INSERT INTO transcript_offsets (session_id, path, dev, ino, offset, state,"
                " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET"
                " path=excluded.path, dev=excluded.dev, ino=excluded.ino,"
                " offset=excluded.offset, state=excluded.state, updated_at=excluded.updated_at",
                [
                    (
                        sid,
                        path,
                        snap["dev"],
                        snap["ino"],
                        snap["state"]["offset"],
                        json.dumps(snap["state"]),
                        now,
                    )
                    for sid, path, snap in rows
                ],
            )

    def compact(self) -> None:
        """Give freed pages back to the file system and empty the WAL."""
        if int(self.db.execute("PRAGMA auto_vacuum").fetchone()[0]) == 2:
            self.db.execute("PRAGMA incremental_vacuum").fetchall()
        else:  # a database made before retention: converted once (VACUUM rewrites it)
            self.db.execute("PRAGMA auto_vacuum=INCREMENTAL")
            self.db.execute("VACUUM")
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def usage(self, days: int, now: float) -> dict[str, Any]:
        """Spend per local day and per project over the last `days` days (today included).

        A day's spend of a session is its running total at the end of that day minus its
        total at the end of the session's previous recorded day."""
        first = local_day(now - (days - 1) * 86400)
        rows = self.db.execute(
            "SELECT session_id, day, project, cost_usd, tokens FROM usage"
            " WHERE session_id IN (SELECT session_id FROM usage WHERE day >= ?)"
            " ORDER BY session_id, day",
            (first,),
        ).fetchall()
        per_day: dict[str, list[float]] = {}
        per_project: dict[str, list[float]] = {}
        last: dict[str, tuple[float, int]] = {}
        for sid, day, project, cost, tokens in rows:
            prev_cost, prev_tokens = last.get(sid, (0.0, 0))
            last[sid] = (max(cost, prev_cost), max(tokens, prev_tokens))
            if day < first:
                continue
            d_cost, d_tokens = max(0.0, cost - prev_cost), max(0, tokens - prev_tokens)
            for bucket, key in ((per_day, day), (per_project, project or "(no project)")):
                acc = bucket.setdefault(key, [0.0, 0.0])
                acc[0] += d_cost
                acc[1] += d_tokens
        all_days = [local_day(now - i * 86400) for i in range(days - 1, -1, -1)]
        return {
            "days": [
                {
                    "day": day,
                    "cost_usd": round(per_day.get(day, [0.0, 0.0])[0], 6),
                    "tokens": int(per_day.get(day, [0.0, 0.0])[1]),
                }
                for day in dict.fromkeys(all_days)
            ],
            "projects": sorted(
                (
                    {"project": p, "cost_usd": round(v[0], 6), "tokens": int(v[1])}
                    for p, v in per_project.items()
                ),
                key=lambda r: (-float(r["cost_usd"]), str(r["project"])),
            ),
            "total_usd": round(sum(v[0] for v in per_day.values()), 6),
        }

    def count_events(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM events").fetchone()[0])

    # --- push subscriptions --------------------------------------------------------------------

    subscriptions_version = 0
    """Grows with every change of the push subscriptions (a reader's cache of them is current
    while it holds the same number)."""

    def add_subscription(
        self, sub: dict[str, Any], login: str = "", name: str = "a browser"
    ) -> str:
        """Add or renew a subscription, kept under `login` (a login id; it takes the endpoint
        over from another login that had it) with a device `name`; its id. Renewing one the
        push service had dropped makes it live again."""
        self.subscriptions_version += 1
        self.db.execute(
            "INSERT INTO push_subscriptions (endpoint, data, created_at, login, id, name)"
            " VALUES (?, ?, ?, ?, lower(hex(randomblob(6))), ?)"
            " ON CONFLICT(endpoint) DO UPDATE SET data=excluded.data, login=excluded.login,"
            " name=excluded.name, gone_at=NULL",
            (sub["endpoint"], json.dumps(sub), time.time(), login, name),
        )
        row = self.db.execute(
            "SELECT id FROM push_subscriptions WHERE endpoint = ?", (sub["endpoint"],)
        ).fetchone()
        return str(row[0])

    def has_subscription(self, endpoint: str) -> bool:
        row = self.db.execute("SELECT 1 FROM push_subscriptions WHERE endpoint = ?", (endpoint,))
        return row.fetchone() is not None

    def count_subscriptions(self) -> int:
        return int(
            self.db.execute(
                "SELECT count(*) FROM push_subscriptions WHERE gone_at IS NULL"
            ).fetchone()[0]
        )

    def remove_subscription(self, endpoint: str, login: str | None = None) -> bool:
        """Forget one subscription (only if it is `login`'s, when given); True if it was there."""
        self.subscriptions_version += 1
        if login is None:
            cur = self.db.execute("DELETE FROM push_subscriptions WHERE endpoint = ?", (endpoint,))
        else:
            cur = self.db.execute(
                "DELETE FROM push_subscriptions WHERE endpoint = ? AND login = ?",
                (endpoint, login),
            )
        return cur.rowcount > 0

    def remove_device(self, device_id: str, login: str | None = None) -> bool:
        """Forget one subscription by its id (the settings view's Remove; only if it is
        `login`'s, when given); True if it was there."""
        self.subscriptions_version += 1
        mine, args = _owned_by(login)
        cur = self.db.execute(
            "DELETE FROM push_subscriptions WHERE id = ?" + mine, (device_id, *args)
        )
        return cur.rowcount > 0

    def mark_gone(self, endpoint: str, result: str) -> bool:
        """The push service said this subscription is gone (404/410): no more sends to it; it
        stays listed, marked, until the user removes it."""
        self.subscriptions_version += 1
        now = time.time()
        cur = self.db.execute(
            "UPDATE push_subscriptions SET gone_at = ?, last_at = ?, last_result = ?"
            " WHERE endpoint = ?",
            (now, now, result, endpoint),
        )
        return cur.rowcount > 0

    def record_deliveries(self, results: dict[str, str], at: float) -> None:
        """The result of the last send to each endpoint ("delivered", "http 500", …)."""
        self.db.executemany(
            "UPDATE push_subscriptions SET last_at = ?, last_result = ? WHERE endpoint = ?",
            [(at, result, endpoint) for endpoint, result in results.items()],
        )

    def keep_subscriptions_of(self, logins: Iterable[str]) -> int:
        """Delete every subscription whose login is not one of `logins`; returns how many."""
        live = sorted(set(logins))
        marks = ",".join("?" * len(live))
        where = f" WHERE login NOT IN ({marks})" if live else ""
        cur = self.db.execute("DELETE FROM push_subscriptions" + where, live)
        if cur.rowcount:
            self.subscriptions_version += 1
        return int(cur.rowcount)

    def owned_subscriptions(self) -> list[tuple[str, dict[str, Any]]]:
        """Every live subscription with the login it belongs to, oldest first."""
        rows = self.db.execute(
            "SELECT login, data FROM push_subscriptions WHERE gone_at IS NULL ORDER BY created_at"
        )
        return [(str(r[0]), json.loads(r[1])) for r in rows]

    def list_subscriptions(self) -> list[dict[str, Any]]:
        """The live subscriptions (the ones the push service has not dropped), oldest first."""
        rows = self.db.execute(
            "SELECT data FROM push_subscriptions WHERE gone_at IS NULL ORDER BY created_at"
        )
        return [json.loads(r[0]) for r in rows]

    def subscription(self, device_id: str, login: str | None = None) -> dict[str, Any] | None:
        """One live subscription's JSON by its id (only if it is `login`'s, when given); None
        when unknown, gone or another login's."""
        mine, args = _owned_by(login)
        row = self.db.execute(
            "SELECT data FROM push_subscriptions WHERE id = ? AND gone_at IS NULL" + mine,
            (device_id, *args),
        ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def devices(self, login: str | None = None) -> list[dict[str, Any]]:
        """Every subscription (only `login`'s, when given) as the settings view lists it: no
        keys, only the endpoint's host."""
        mine, args = _owned_by(login)
        rows = self.db.execute(
            "SELECT id, name, endpoint, created_at, last_at, last_result, gone_at"
            " FROM push_subscriptions WHERE 1" + mine + " ORDER BY created_at",
            args,
        )
        return [
            {
                "id": r[0],
                "name": r[1],
                "push_service": _host(r[2]),
                "added_at": r[3],
                "last": None if r[4] is None else {"at": r[4], "result": r[5]},
                "gone_at": r[6],
            }
            for r in rows
        ]

    def versioned_subscriptions(self) -> tuple[int, list[tuple[str, dict[str, Any]]]]:
        """The subscriptions and their logins, with the version they are of (see
        subscriptions_version)."""
        return self.subscriptions_version, self.owned_subscriptions()


def _owned_by(login: str | None) -> tuple[str, tuple[str, ...]]:
    """The clause and parameter that keep a subscription query to `login`'s rows (none for
    None: every row)."""
    return ("", ()) if login is None else (" AND login = ?", (login,))


def _host(endpoint: str) -> str:
    """An endpoint's host; "" for one urllib cannot split (kept from before it was checked)."""
    try:
        return urlsplit(endpoint).hostname or ""
    except ValueError:
        return ""


def select_known_ids(db: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        rows = db.execute(f"SELECT id FROM events WHERE id IN ({marks})", chunk)
        found.update(r[0] for r in rows)
    return found
