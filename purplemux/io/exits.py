"""Processes' exits, told on the event loop: a pidfd per followed process (Linux >= 5.3), readable
at its exit; elsewhere nothing is told and the caller's timer alone notices."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable


class ExitWatch:
    """A pidfd per followed process on the event loop: its exit wakes the poller (Linux >= 5.3;
    elsewhere the timer alone notices)."""

    def __init__(self, wake: Callable[[], None]) -> None:
        self._wake = wake
        self._fds: dict[int, int] = {}
        self._loop = asyncio.get_running_loop()
        self._usable = hasattr(os, "pidfd_open")

    def follow(self, pids: set[int]) -> None:
        for pid in set(self._fds) - pids:
            self._drop(pid)
        if not self._usable:
            return
        for pid in pids - set(self._fds):
            try:
                fd = os.pidfd_open(pid)
            except ProcessLookupError:
                self._wake()  # gone already: the next poll says so
                continue
            except OSError:
                self._usable = False  # an old kernel, or not allowed: the timer it is
                return
            self._fds[pid] = fd
            self._loop.add_reader(fd, self._exited, pid)

    def _exited(self, pid: int) -> None:
        self._drop(pid)
        self._wake()

    def _drop(self, pid: int) -> None:
        fd = self._fds.pop(pid, None)
        if fd is not None:
            self._loop.remove_reader(fd)
            os.close(fd)

    def close(self) -> None:
        for pid in list(self._fds):
            self._drop(pid)
