"""Waiting on a condition (never a fixed sleep), and ports for tests: free and closed."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    predicate: Callable[[], T], timeout: float = 10.0, interval: float = 0.02, what: str = ""
) -> T:
    """Poll until predicate() is truthy; return its value or fail with the last one."""
    deadline = time.monotonic() + timeout
    value = predicate()
    while not value:
        if time.monotonic() > deadline:
            about = f" for {what}" if what else ""
            raise AssertionError(f"condition not met{about} within {timeout}s (last: {value!r})")
        time.sleep(interval)
        value = predicate()
    return value


async def wait_for_async(
    predicate: Callable[[], T], timeout: float = 10.0, interval: float = 0.01, what: str = ""
) -> T:
    """wait_for inside an event loop: the loop runs the code under test between the polls."""
    deadline = time.monotonic() + timeout
    value = predicate()
    while not value:
        if time.monotonic() > deadline:
            about = f" for {what}" if what else ""
            raise AssertionError(f"condition not met{about} within {timeout}s (last: {value!r})")
        await asyncio.sleep(interval)
        value = predicate()
    return value


def free_port() -> int:
    """A port nothing listens on now, for a server to take."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def closed_port() -> int:
    """A port nothing listens on (bound, then released): a daemon that is down."""
    return free_port()
