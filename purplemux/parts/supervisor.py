"""The supervisor: runs each long-running part, logs a crash with its cause, restarts it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from purplemux.daemon.runtime import Runtime
from purplemux.io import fd_shortage as fdlimit

log = logging.getLogger("purplemux.parts")

Part = Callable[[Runtime], Coroutine[Any, Any, None]]
"""A long-running part (a source, the notifier...), given the runtime; it runs until cancelled."""

STOP_PARTS = 1.0
"""Seconds every part gets, together, to end once cancelled (the daemon stops)."""
STOP_ENGINE = 0.5
"""Seconds the engine gets to store what is queued once the parts are gone; then it is
cancelled (what a hook sent and was not told is stored is spooled by the hook script)."""

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
        self._fds = fdlimit.limiter()  # running out of descriptors, said once a while

    def start(self, part: Part, name: str | None = None) -> None:
        """Run a part for the daemon's life."""
        called = name or str(getattr(part, "__name__", "part"))
        self._tasks.append(asyncio.create_task(self._keep(called, part), name=called))

    def running(self) -> list[str]:
        """The names of the parts not ended (health, tests)."""
        return [t.get_name() for t in self._tasks if not t.done()]

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
                    fdlimit.say(name, exc, self._fds)
                    await asyncio.sleep(fdlimit.RETRY)
                    continue
                crash.count += 1
                if loop.time() - began >= self.healthy_after:
                    delay = self.backoff_start
                said = _cause(exc)
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

    async def stop(self, timeout: float = STOP_PARTS, keep: tuple[str, ...] = ()) -> None:
        """Cancel every part (but those named in `keep`) and give them `timeout` seconds,
        together, to clean up; one that takes longer is named in the log (the lifespan goes on
        closing the engine and store)."""
        tasks = [t for t in self._tasks if t.get_name() not in keep]
        await self._end(tasks, timeout, cancel=True)

    async def wait(self, name: str, timeout: float) -> bool:
        """Give a part that was told to finish (the engine, once stop() queued its end)
        `timeout` seconds to return on its own, then cancel it; True if it finished."""
        tasks = [t for t in self._tasks if t.get_name() == name]
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=timeout)
            if late:
                log.warning("%s did not finish within %.1fs; cancelling it", name, timeout)
                await self._end(list(late), timeout, cancel=True)
                return False
            await self._end(tasks, timeout, cancel=False)
        return True

    async def _end(self, tasks: list[asyncio.Task[None]], timeout: float, cancel: bool) -> None:
        if cancel:
            for task in tasks:
                task.cancel()
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=timeout)
            for task in late:
                log.warning(
                    "%s did not stop within %.1fs; stopping without it", task.get_name(), timeout
                )
        for task in tasks:
            if task.done() and not task.cancelled():
                with contextlib.suppress(Exception):
                    task.result()  # retrieved: no "exception was never retrieved" at exit
            if task.done():
                self._tasks.remove(task)


def _cause(exc: BaseException) -> str:
    """What a crash was, in a line: a TaskGroup's lone error is named itself (which of the
    part's own tasks failed, and how), not "unhandled errors in a TaskGroup"."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


async def engine(rt: Runtime) -> None:
    """The engine as a part: it applies the queue until the lifespan tells it to stop."""
    await rt.engine.run()
