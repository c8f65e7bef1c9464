"""The supervisor: runs each long-running part, logs a crash with its cause, restarts it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from purplemux import fdlimit
from purplemux.runtime import Runtime

log = logging.getLogger("purplemux.parts")

Part = Callable[[Runtime], Coroutine[Any, Any, None]]
"""A long-running part (a source, the notifier...), given the runtime; it runs until cancelled."""

BACKOFF_START = 0.5
BACKOFF_MAX = 30.0
HEALTHY_AFTER = 60.0
"""Seconds a part must run before a crash counts as new (the backoff starts over)."""


@dataclass
class Crash:
    """What the supervisor knows of a part's crashes."""

    count: int = 0
    last: str = ""


class Supervisor:
    """Owns every part's task: a part that raises is logged and restarted with backoff."""

    def __init__(
        self,
        rt: Runtime,
        backoff_start: float = BACKOFF_START,
        backoff_max: float = BACKOFF_MAX,
        healthy_after: float = HEALTHY_AFTER,
    ) -> None:
        self.rt = rt
        self.backoff_start = backoff_start
        self.backoff_max = backoff_max
        self.healthy_after = healthy_after
        self.crashes: dict[str, Crash] = {}
        self._tasks: list[asyncio.Task[None]] = []

    def start(self, part: Part, name: str | None = None) -> None:
        """Run a part for the daemon's life."""
        called = name or str(getattr(part, "__name__", "part"))
        self._tasks.append(asyncio.create_task(self._keep(called, part), name=called))

    async def _keep(self, name: str, part: Part) -> None:
        loop = asyncio.get_running_loop()
        delay = self.backoff_start
        crash = self.crashes.setdefault(name, Crash())
        while True:
            began = loop.time()
            try:
                await part(self.rt)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    # Stopping: a part that turned its cancellation into an error is not run
                    # again (it would run until the daemon is killed).
                    log.info("%s ended with %s while stopping", name, type(exc).__name__)
                    raise asyncio.CancelledError from exc
                if fdlimit.exhausted(exc):  # not the part's fault: try again soon, quietly
                    fdlimit.say(name, exc)
                    await asyncio.sleep(fdlimit.RETRY)
                    continue
                crash.count += 1
                if loop.time() - began >= self.healthy_after:
                    delay = self.backoff_start
                said = f"{type(exc).__name__}: {exc}"
                if said != crash.last:  # the traceback once per cause, not once per retry
                    log.exception("%s crashed; restarting it in %.1fs", name, delay)
                else:
                    log.warning("%s crashed again (%s); restarting it in %.1fs", name, said, delay)
                crash.last = said
            else:
                log.info("%s finished", name)
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.backoff_max)

    async def stop(self, timeout: float = 2.0) -> None:
        """Cancel every part and give them `timeout` seconds, together, to clean up; one that
        takes longer is named in the log (the lifespan goes on closing the engine and store)."""
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            _, late = await asyncio.wait(self._tasks, timeout=timeout)
            for task in late:
                log.warning(
                    "%s did not stop within %.0fs; stopping without it", task.get_name(), timeout
                )
        for task in self._tasks:
            if task.done() and not task.cancelled():
                with contextlib.suppress(Exception):
                    task.result()  # retrieved: no "exception was never retrieved" at exit
        self._tasks.clear()
