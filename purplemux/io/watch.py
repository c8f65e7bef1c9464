"""watch_dirs(): one folder watch that survives its folders changing, vanishing or failing.

On Linux the watch is an inotify descriptor on the event loop: nothing runs while nothing
changes. Elsewhere watchfiles' notifier (which wakes every `step_ms`) does it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
from collections.abc import AsyncGenerator, Callable
from pathlib import Path

from purplemux.core.spread import spread
from purplemux.io import inotify

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
    wake: asyncio.Event | None = None,
    recursive: Callable[[set[Path]], bool] | None = None,
    wake_names_dirs: bool = False,
) -> AsyncGenerator[set[str] | None, None]:
    """Watch the folders `dirs()` names, forever.

    Yields None each time a watch starts (its watcher is registered: a catch-up read now misses
    no write), then the set of paths that changed, or an empty set after a quiet spell
    (re-check everything: nothing is missed). The first quiet spell is `recheck_ms`, moved
    later by a share fixed by `name` (purplemux/core/spread.py: the watchers of one start do not
    re-check together); each further one with nothing changed doubles, up to `max_recheck_ms`.
    The watch starts anew when `dirs()` answers differently after a yield or when `changed` is
    set (the caller's list of files changed); with no folders it waits for `changed`. A
    failure (permissions, inotify limits) is logged once, and the watch retried after
    `recheck_ms`.
    `wake` keeps the running watch and yields an empty set (re-check everything): a caller
    whose new file lies in a folder already watched sets it instead of `changed`. A watch covers
    subfolders, and folders created in them later, when `recursive(folders)` says so (not by
    default): a new project folder then adds a watch, it never rebuilds the watch set.
    `wake_names_dirs`: `dirs()` answers differently only after the caller set `wake` (its own
    list of folders, not the file system's), so with no folders the watch waits for `wake`
    with no timer.
    """
    max_recheck_ms = max(recheck_ms, max_recheck_ms)
    recheck_ms = max(1, round(spread(recheck_ms, name)))
    if inotify.available():
        backend = _watch_inotify(
            dirs,
            name=name,
            debounce_ms=debounce_ms,
            recheck_ms=recheck_ms,
            max_recheck_ms=max_recheck_ms,
            changed=changed,
            wake=wake,
            recursive=recursive,
            wake_names_dirs=wake_names_dirs,
        )
    else:
        backend = _watch_polling(
            dirs,
            name=name,
            debounce_ms=debounce_ms,
            step_ms=step_ms,
            recheck_ms=recheck_ms,
            changed=changed,
            wake=wake,
            recursive=recursive,
            wake_names_dirs=wake_names_dirs,
        )
    try:
        async for item in backend:
            yield item
    finally:
        await backend.aclose()


async def _no_dirs(
    recheck_ms: int,
    changed: asyncio.Event | None,
    wake: asyncio.Event | None = None,
    wake_names_dirs: bool = False,
) -> None:
    signals = [e for e in (changed, wake) if e is not None]
    if not signals:
        await asyncio.sleep(recheck_ms / 1000)
    else:
        forever = changed is not None or (wake is not None and wake_names_dirs)
        await _wait_any(signals, None if forever else recheck_ms / 1000)
        if wake is not None:
            wake.clear()


def _add(watch: inotify.Inotify, folder: Path, deep: bool, watched: set[str]) -> None:
    """Watch a folder, and with `deep` every folder below it."""
    watch.add(folder)
    watched.add(str(folder))
    if deep:
        for root, subdirs, _ in os.walk(folder):
            for sub in subdirs:
                path = os.path.join(root, sub)
                if path not in watched:
                    watch.add(Path(path))
                    watched.add(path)


def _add_new_folders(watch: inotify.Inotify, paths: set[str], watched: set[str]) -> set[str]:
    """Under a deep watch: watch the folders that appeared, and name what they already hold
    (written before their watch existed, so no event will ever say so)."""
    found: set[str] = set()
    for path in paths:
        if path not in watched and os.path.isdir(path):
            try:
                _add(watch, Path(path), True, watched)
            except OSError:
                continue  # gone again, or a limit: the quiet re-check still covers it
            for root, _, files in os.walk(path):
                found.update(os.path.join(root, name) for name in files)
    return found


async def _pause_after_failure(recheck_ms: int, changed: asyncio.Event | None) -> None:
    if changed is None:
        await asyncio.sleep(recheck_ms / 1000)
    else:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), recheck_ms / 1000)


async def _wait_any(events: list[asyncio.Event], timeout: float | None) -> None:
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
    wake: asyncio.Event | None,
    recursive: Callable[[set[Path]], bool] | None,
    wake_names_dirs: bool,
) -> AsyncGenerator[set[str] | None, None]:
    loop = asyncio.get_running_loop()
    failing = False
    while True:
        if changed is not None:
            changed.clear()
        current = dirs()
        if not current:
            await _no_dirs(recheck_ms, changed, wake, wake_names_dirs)
            continue
        deep = recursive is not None and recursive(current)
        ready = asyncio.Event()
        wakers = [e for e in (ready, changed, wake) if e is not None]
        watch: inotify.Inotify | None = None
        broken = False
        try:
            watch = inotify.Inotify()
            watched: set[str] = set()
            for folder in sorted(current):
                _add(watch, folder, deep, watched)
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
                if wake is not None and wake.is_set():
                    wake.clear()
                    yield set()
                    continue
                if ready.is_set():
                    ready.clear()
                    paths = watch.read()
                    if paths and debounce_ms:
                        await asyncio.sleep(debounce_ms / 1000)  # let a burst of writes land
                        ready.clear()
                        paths |= watch.read()
                    if deep:
                        paths |= _add_new_folders(watch, paths, watched)
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
    wake: asyncio.Event | None,
    recursive: Callable[[set[Path]], bool] | None,
    wake_names_dirs: bool,
) -> AsyncGenerator[set[str] | None, None]:
    """watchfiles' notifier (systems without inotify): it wakes every step_ms. A `wake` starts
    the watch anew here (its None asks for a catch-up), simple and rare on such systems."""
    from watchfiles import awatch

    failing = False
    while True:
        if changed is not None:
            changed.clear()
        if wake is not None:
            wake.clear()
        current = dirs()
        if not current:
            await _no_dirs(recheck_ms, changed, wake, wake_names_dirs)
            continue
        stop = asyncio.Event()
        poke = asyncio.ensure_future(changed.wait()) if changed is not None else None
        if poke is not None:
            poke.add_done_callback(functools.partial(_set, stop))
        nudge = asyncio.ensure_future(wake.wait()) if wake is not None else None
        if nudge is not None:
            nudge.add_done_callback(functools.partial(_set, stop))
        changes_iter = awatch(
            *current,
            watch_filter=None,
            debounce=debounce_ms,
            step=step_ms,
            stop_event=stop,
            rust_timeout=recheck_ms,
            yield_on_timeout=True,
            recursive=recursive is not None and recursive(current),
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
            for task in (first, poke, nudge):
                if task is not None:
                    task.cancel()
            await asyncio.gather(
                *(t for t in (first, poke, nudge) if t is not None), return_exceptions=True
            )
            await changes_iter.aclose()
        if broken:
            await _pause_after_failure(recheck_ms, changed)


def _set(event: asyncio.Event, _: object) -> None:
    event.set()
