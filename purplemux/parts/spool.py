"""The spool part: hook events the script wrote to disk, applied in source-time order."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from pathlib import Path

from purplemux.core.spread import spread
from purplemux.daemon.runtime import Runtime
from purplemux.io import fd_shortage as fdlimit
from purplemux.io.settings import MAX_BODY
from purplemux.sources import spool
from purplemux.sources.hooks import PayloadError, to_event
from purplemux.sources.trim import trim_strings

log = logging.getLogger(__name__)

SPOOL_SWEEP = 10.0
"""Seconds between looks for hook bodies orphaned in the spool's .tmp folder..."""
SPOOL_SWEEP_MAX = 120.0
"""...doubling while none are found, up to this (only a killed hook leaves one)."""


async def _pending(rt: Runtime) -> list[Path]:
    """The spool's files in order, read off the loop, skips said with the daemon's limiter."""
    folder = rt.settings.spool_dir
    return await asyncio.to_thread(spool.pending_files, folder, 10.0, None, rt.spool_log)


async def drain_spool(rt: Runtime) -> int:
    """Apply every spooled hook event in source-time order (not live: no notifications)."""
    files = await _pending(rt)
    return await _apply_spooled(rt, files, live=False)


async def _apply_spooled(rt: Runtime, files: list[Path], live: bool) -> int:
    applied = 0
    for path in files:
        try:
            delivery = await asyncio.to_thread(spool.read_delivery, path)
            body = delivery.body
            if len(body) > MAX_BODY:  # as the daemon takes it live: long strings cut
                body = await asyncio.to_thread(trim_strings, body)
            if len(body) > MAX_BODY:
                raise spool.SpoolTooLarge(f"{path.name}: larger than {MAX_BODY} bytes, cut")
            payload = json.loads(body)
            event = to_event(payload, delivery.headers, time.time(), rt.settings.account_of)
        except FileNotFoundError:
            continue  # applied meanwhile by the other drain (the watcher and the sweep race)
        except spool.SpoolTooLarge as exc:
            # Refused, as a live delivery is (413, final): not stored, not kept.
            log.warning("refusing spooled hook event %s: %s", path.stem, exc)
            await asyncio.to_thread(spool.remove, path)
            continue
        except (OSError, ValueError, RecursionError, PayloadError) as exc:
            if fdlimit.exhausted(exc):
                raise  # the file is fine, we are not: keep it, the next pass applies it
            log.warning("skipping unreadable spool file %s: %s", path.name, exc)
            await asyncio.to_thread(_quarantine, path)
            continue
        try:
            await rt.ingest(event, live=live)
        except Exception as exc:  # not stored (the database is locked?): keep it, and the order
            rt.spool_log.warning(
                "store", "cannot apply spooled events yet (%s); retrying later", str(exc)[:300]
            )
            break
        await asyncio.to_thread(spool.remove, path)
        applied += 1
    return applied


def _quarantine(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.rename(path.with_name(path.name + ".bad"))


async def spool_sweeper(rt: Runtime) -> None:
    """Bodies orphaned in .tmp by a killed hook announce nothing: look for them now and then."""
    first = pause = spread(SPOOL_SWEEP, "spool sweep")
    while True:
        await asyncio.sleep(pause)
        files = await _pending(rt)
        if files:
            await _apply_spooled(rt, files, live=False)
        pause = first if files else min(pause * 2, SPOOL_SWEEP_MAX)


async def spool_watcher(rt: Runtime) -> None:
    """Files the hook script spools while we run (we were slow, or briefly unreachable)."""
    rt.settings.spool_dir.mkdir(parents=True, exist_ok=True)
    # Restarted after a crash (out of descriptors): what was spooled meanwhile announced itself
    # to no one, so it is applied now rather than at the sweeper's next look.
    files = await _pending(rt)
    await _apply_spooled(rt, files, live=True)
    async for _ in spool.watch_spool(rt.settings.spool_dir):
        files = await _pending(rt)
        await _apply_spooled(rt, files, live=True)
