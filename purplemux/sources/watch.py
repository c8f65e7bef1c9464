"""watch_dirs(): one folder watch that survives its folders changing, vanishing or failing.

On Linux the watch is an inotify descriptor on the event loop: nothing runs while nothing
changes. Elsewhere watchfiles' notifier (which wakes every `step_ms`) does it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncGenerator, Callable
from pathlib import Path

from purplemux.sources import inotify

log = logging.getLogger(__name__)

MAX_RECHECK_MS = 60_000
"""The quiet re-check backs off (doubling) up to this while nothing changes."""


async def watch_dirs(
    dirs: Callable[[], set[Path]],
    *,
    name: str,
    debounce_ms: int,
    step_ms: int,
    recheck_ms: int,
    changed: asyncio.Event | None = None,
    max_recheck_ms: int = MAX_RECHECK_MS,
) -> AsyncGenerator[set[str] | None, None]:
    """Watch the folders `dirs()` names (not recursively), forever.

    Yields None each time a watch starts (its watcher is registered: a catch-up read now misses
    no write), then the set of paths that changed, or an empty set after a quiet spell
    (re-check everything: nothing is missed). The first quiet spell is `recheck_ms`; each
    further one with nothing changed doubles, up to `max_recheck_ms`. The watch starts anew
    when `dirs()` answers differently after a yield or when `changed` is set (the caller's
    list of files changed); with no folders it waits for `changed`. A failure (permissions,
    inotify limits) is logged once, and the watch retried after `recheck_ms`.
    """
    if inotify.available():
        backend = _watch_inotify(
            dirs,
            name=name,
            debounce_ms=debounce_ms,
            recheck_ms=recheck_ms,
            max_recheck_ms=max(recheck_ms, max_recheck_ms),
            changed=changed,
        )
    else:
        backend = _watch_polling(
            dirs,
            name=name,
            debounce_ms=debounce_ms,
            step_ms=step_ms,
            recheck_ms=recheck_ms,
            changed=changed,
        )
    try:
        async for item in backend:
            yield item
    finally:
        await backend.aclose()


async def _no_dirs(recheck_ms: int, changed: asyncio.Event | None) -> None:
    if changed is None:
        await asyncio.sleep(recheck_ms / 1000)
    else:
        await changed.wait()


async def _pause_after_failure(recheck_ms: int, changed: asyncio.Event | None) -> None:
    if changed is None:
        await asyncio.sleep(recheck_ms / 1000)
    else:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), recheck_ms / 1000)


async def _wait_any(events: list[asyncio.Event], timeout: float) -> None:
    """Until one of the events is set, or timeout seconds."""
    if any(e.is_set() for e in events):
        return
    waiters = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waiters:
            w.cancel()
        await asyncio.gather(*waiters, return_exceptions=True)


async def _watch_inotify(
    dirs: Callable[[], set[Path]],
    *,
    name: str,
    debounce_ms: int,
    recheck_ms: int,
    max_recheck_ms: int,
    changed: asyncio.Event | None,
) -> AsyncGenerator[set[str] | None, None]:
    loop = asyncio.get_running_loop()
    failing = False
    while True:
        if changed is not None:
            changed.clear()
        current = dirs()
        if not current:
            await _no_dirs(recheck_ms, changed)
            continue
        ready = asyncio.Event()
        wakers = [ready] if changed is None else [ready, changed]
        watch: inotify.Inotify | None = None
        broken = False
        try:
            watch = inotify.Inotify()
            for folder in sorted(current):
                watch.add(folder)
            loop.add_reader(watch.fd, ready.set)
            yield None
            if failing:
                log.info("%s watch recovered", name)
                failing = False
            quiet = recheck_ms
            while not ((changed is not None and changed.is_set()) or dirs() != current):
                await _wait_any(wakers, quiet / 1000)
                if changed is not None and changed.is_set():
                    break
                if ready.is_set():
                    ready.clear()
                    paths = watch.read()
                    if paths and debounce_ms:
                        await asyncio.sleep(debounce_ms / 1000)  # let a burst of writes land
                        ready.clear()
                        paths |= watch.read()
                    if not paths:
                        continue
                    quiet = recheck_ms
                    yield paths
                else:
                    quiet = min(quiet * 2, max_recheck_ms)
                    yield set()
        except (inotify.Overflow, inotify.FolderGone):
            pass  # start anew: the new watch's None means "catch up on everything"
        except OSError as exc:
            broken = True
            if not failing:
                log.warning("%s watch failed: %s", name, exc)
                failing = True
        finally:
            if watch is not None:
                if watch.fd >= 0:
                    loop.remove_reader(watch.fd)
                watch.close()
        if broken:
            await _pause_after_failure(recheck_ms, changed)


async def _watch_polling(
    dirs: Callable[[], set[Path]],
    *,
    name: str,
    debounce_ms: int,
    step_ms: int,
    recheck_ms: int,
    changed: asyncio.Event | None,
) -> AsyncGenerator[set[str] | None, None]:
    """watchfiles' notifier (systems without inotify): it wakes every step_ms."""
    from watchfiles import awatch

    failing = False
    while True:
        if changed is not None:
            changed.clear()
        current = dirs()
        if not current:
            await _no_dirs(recheck_ms, changed)
            continue
        stop = asyncio.Event()
        poke = asyncio.ensure_future(changed.wait()) if changed is not None else None
        if poke is not None:
            poke.add_done_callback(functools.partial(_set, stop))
        changes_iter = awatch(
            *current,
            watch_filter=None,
            debounce=debounce_ms,
            step=step_ms,
            stop_event=stop,
            rust_timeout=recheck_ms,
            yield_on_timeout=True,
            recursive=False,
            force_polling=False,
        )
        first = asyncio.ensure_future(changes_iter.__anext__())
        broken = False
        try:
            await asyncio.sleep(0)  # awatch registers its watcher in its first step
            yield None
            changes = await first
            while True:
                if failing:
                    log.info("%s watch recovered", name)
                    failing = False
                yield {path for _, path in changes}
                if (changed is not None and changed.is_set()) or dirs() != current:
                    break
                changes = await changes_iter.__anext__()
        except StopAsyncIteration:
            pass  # stopped: `changed` was set
        except Exception as exc:
            broken = True
            if not failing:
                log.warning("%s watch failed: %s", name, exc)
                failing = True
        finally:
            stop.set()
            for task in (first, poke):
                if task is not None:
                    task.cancel()
            await asyncio.gather(
                *(t for t in (first, poke) if t is not None), return_exceptions=True
            )
            await changes_iter.aclose()
        if broken:
            await _pause_after_failure(recheck_ms, changed)


def _set(event: asyncio.Event, _: object) -> None:
    event.set()
