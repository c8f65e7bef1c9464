"""watch_dirs(): one folder watch that survives its folders changing, vanishing or failing."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

from watchfiles import Change, awatch

log = logging.getLogger(__name__)


async def watch_dirs(
    dirs: Callable[[], set[Path]],
    *,
    name: str,
    debounce_ms: int,
    step_ms: int,
    recheck_ms: int,
    changed: asyncio.Event | None = None,
    wake: asyncio.Event | None = None,
    recursive: Callable[[set[Path]], bool] | None = None,
) -> AsyncGenerator[set[str] | None, None]:
    """Watch the folders `dirs()` names, forever.

    Yields None each time a watch starts (its watcher is registered: a catch-up read now misses
    no write), then the set of paths that changed, or an empty set after `recheck_ms` of quiet
    or when `wake` is set (re-check everything: nothing is missed). The watch starts anew when
    `dirs()` answers differently after a yield or when `changed` is set (the caller's list of
    files changed); `wake` keeps the running watch, so a caller whose new file lies in a folder
    already watched sets it instead. With no folders it waits for `changed` or `wake`. A watch
    covers subfolders when `recursive(folders)` says so (not recursive by default). A failure
    (a folder vanished mid-watch, permissions, inotify limits) is logged once, and the watch
    retried after `recheck_ms`.
    """
    failing = False
    signals = [e for e in (changed, wake) if e is not None]
    while True:
        if changed is not None:
            changed.clear()
        current = dirs()
        if not current:
            if not signals:
                await asyncio.sleep(recheck_ms / 1000)
            else:
                await _any(signals)
                if wake is not None:
                    wake.clear()
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
            recursive=recursive is not None and recursive(current),
            force_polling=False,
        )
        pending: asyncio.Future[set[tuple[Change, str]]] | None = asyncio.ensure_future(
            changes_iter.__anext__()
        )
        broken = False
        try:
            await asyncio.sleep(0)  # awatch registers its watcher in its first step
            if wake is not None:
                wake.clear()  # the catch-up read below covers what woke it
            yield None
            while True:
                if pending is None:
                    pending = asyncio.ensure_future(changes_iter.__anext__())
                woke = False
                if wake is None:
                    await asyncio.wait({pending})
                else:
                    woken = asyncio.ensure_future(wake.wait())
                    either: set[asyncio.Future[Any]] = {pending, woken}
                    await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
                    woken.cancel()
                    woke = wake.is_set()
                    wake.clear()
                found: set[str] = set()
                if pending.done():
                    changes, pending = pending.result(), None  # StopAsyncIteration: stopped
                    if failing:
                        log.info("%s watch recovered", name)
                        failing = False
                    found = {path for _, path in changes}
                # Woken: re-check everything (a new file may predate its folder's watch).
                yield set() if woke else found
                if (changed is not None and changed.is_set()) or dirs() != current:
                    break
        except StopAsyncIteration:
            pass  # stopped: `changed` was set
        except Exception as exc:
            broken = True
            if not failing:
                log.warning("%s watch failed: %s", name, exc)
                failing = True
        finally:
            stop.set()
            for task in (pending, poke):
                if task is not None:
                    task.cancel()
            await asyncio.gather(
                *(t for t in (pending, poke) if t is not None), return_exceptions=True
            )
            await changes_iter.aclose()
        if broken:
            if not signals:
                await asyncio.sleep(recheck_ms / 1000)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(_any(signals), recheck_ms / 1000)


async def _any(events: list[asyncio.Event]) -> None:
    """Wait until one of the events is set."""
    waits = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()


def _set(event: asyncio.Event, _: object) -> None:
    event.set()
