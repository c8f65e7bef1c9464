"""Waiting on a condition (never a fixed sleep), and ports for tests: free and closed."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class _Deadline:
    """When a wait gives up, and what it then says."""

    def __init__(self, timeout: float, what: str) -> None:
        self.at, self.timeout, self.what = time.monotonic() + timeout, timeout, what

    def check(self, value: object) -> None:
        if time.monotonic() > self.at:
            about = f" for {self.what}" if self.what else ""
            raise AssertionError(
                f"condition not met{about} within {self.timeout}s (last: {value!r})"
            )


def wait_for(
    predicate: Callable[[], T], timeout: float = 10.0, interval: float = 0.02, what: str = ""
) -> T:
    """Poll until predicate() is truthy; return its value or fail with the last one."""
    deadline = _Deadline(timeout, what)
    while not (value := predicate()):
        deadline.check(value)
        time.sleep(interval)
    return value


async def wait_for_async(
    predicate: Callable[[], T], timeout: float = 10.0, interval: float = 0.01, what: str = ""
) -> T:
    """wait_for inside an event loop: the loop runs the code under test between the polls."""
    deadline = _Deadline(timeout, what)
    while not (value := predicate()):
        deadline.check(value)
        await asyncio.sleep(interval)
    return value


def free_port() -> int:
    """A port nothing listens on now, for a server to take."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def closed_port() -> int:
    """A port nothing listens on (bound, then released): a daemon that is down."""
    return free_port()
