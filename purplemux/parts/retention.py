"""Retention: ended sessions and their events go after PURPLEMUX_RETENTION, and past the newest
PURPLEMUX_KEEP_ENDED; no log grows forever.

Run at start (before the sessions are loaded, so a home holding thousands of old sessions does
not serve them all in one page) and hourly. A live session's event log is capped too. When much
was deleted the database gives the pages back (incremental vacuum) and empties its WAL.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import time
from collections.abc import Mapping
from pathlib import Path

from purplemux.core.model import Session
from purplemux.daemon.runtime import Runtime
from purplemux.io.settings import Settings
from purplemux.io.store import Store
from purplemux.io.store_thread import AsyncStore

log = logging.getLogger(__name__)

EVERY = 3600.0
"""Seconds between two prunes while the daemon runs."""
MAX_EVENTS = 5000
"""Events kept per session (the newest); the API shows at most the last 1000."""
COMPACT_AFTER = 1000
"""Rows deleted in one prune past which the file is compacted."""


def _prune(store: Store, cutoff: float, keep_ended: int) -> tuple[list[str], float]:
    """Delete; the ids deleted and the newest last change among them."""
    ids, events = store.prune(cutoff, MAX_EVENTS, keep_ended)
    if len(ids) + events >= COMPACT_AFTER:
        store.compact()
    if ids or events:
        log.info("retention: deleted %d ended sessions and %d events", len(ids), events)
    return ids, cutoff


async def prune(
    store: AsyncStore, settings: Settings, now: float | None = None
) -> tuple[list[str], float]:
    """Delete what is past retention (by age, then by count); the ids of the sessions deleted,
    and the time before which a session the engine holds under such an id is as deleted."""
    cutoff = (time.time() if now is None else now) - settings.retention
    return await store.call(lambda s: _prune(s, cutoff, settings.keep_ended))


def newest(engine_sessions: Mapping[str, Session], ids: list[str], cutoff: float) -> float:
    """The forget cutoff for these ids: past every one's last change as the engine holds it
    (a session the count cap took may be newer than the age cutoff)."""
    times = [engine_sessions[i].updated_at for i in ids if i in engine_sessions]
    return max([cutoff, *(t + 1e-6 for t in times)])


async def retention(rt: Runtime) -> None:
    """The hourly prune; deleted sessions leave the engine (and every dashboard) too."""
    while True:
        await asyncio.sleep(EVERY)
        ids, cutoff = await prune(rt.store, rt.settings)
        rt.engine.forget(ids, newest(rt.engine.sessions, ids, cutoff))


def tighten(home: Path) -> None:
    """Files in the home are the owner's only: the database and its WAL, the spool."""
    for name in ("state.db", "state.db-wal", "state.db-shm"):
        _chmod(home / name, 0o600)
    spool = home / "spool"
    spool.mkdir(mode=0o700, exist_ok=True)
    _chmod(spool, 0o700)
    for folder in (spool, spool / ".tmp"):
        if folder.is_symlink():  # never followed: its target's files are not ours to change
            log.warning("%s is a symbolic link: not using it; remove it (it is made again)", folder)
            continue
        _chmod(folder, 0o700)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_file(follow_symlinks=False):
                _chmod(Path(entry.path), 0o600)


def _chmod(path: Path, mode: int) -> None:
    try:
        st = os.lstat(path)
    except OSError:
        return
    if not stat.S_ISLNK(st.st_mode) and stat.S_IMODE(st.st_mode) != mode:
        try:
            os.chmod(path, mode)
        except OSError as exc:
            log.warning("cannot make %s mode %o: %s", path, mode, exc)
