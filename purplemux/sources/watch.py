"""watch_dirs(): one folder watch that survives its folders changing, vanishing or failing."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncGenerator, Callable
from pathlib import Path

from watchfiles import awatch

log = logging.getLogger(__name__)


async def watch_dirs(
    dirs: Callable[[], set[Path]],
    *,
    name: str,
    debounce_ms: int,
    step_ms: int,
    recheck_ms: int,
    changed: asyncio.Event | None = None,
) -> AsyncGenerator[set[str] | None, None]:
    """Watch the folders `dirs()` names (not recursively), forever.

    Yields None each time a watch starts (its watcher is registered: a catch-up read now misses
    no write), then the set of paths that changed, or an empty set after `recheck_ms` of quiet
    (re-check everything: nothing is missed). The watch starts anew when `dirs()` answers
    differently after a yield or when `changed` is set (the caller's list of files changed);
    with no folders it waits for `changed`. A failure (a folder vanished mid-watch, permissions,
    inotify limits) is logged once, and the watch retried after `recheck_ms`.
    """
    failing = False
    while True:
        if changed is not None:
            changed.clear()
        current = dirs()
        if not current:
            if changed is None:
                await asyncio.sleep(recheck_ms / 1000)
            else:
                await changed.wait()
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
            if changed is None:
                await asyncio.sleep(recheck_ms / 1000)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), recheck_ms / 1000)


def _set(event: asyncio.Event, _: object) -> None:
    event.set()
