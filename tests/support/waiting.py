"""Waiting on a condition (never a fixed sleep), and ports for tests: free and closed."""

from __future__ import annotations

import asyncio
import inspect
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def describe_probe(probe: Callable[..., object]) -> str:
    """What a wait polls, for its message when it gives up and the caller named nothing: a
    lambda's source line, else the function's name; and where it is written."""
    code = getattr(probe, "__code__", None)
    where = f" ({Path(code.co_filename).name}:{code.co_firstlineno})" if code is not None else ""
    text = getattr(probe, "__qualname__", None) or repr(probe)
    if getattr(probe, "__name__", "") == "<lambda>":
        try:
            lines, _ = inspect.getsourcelines(probe)
        except (OSError, TypeError):
            pass
        else:
            text = " ".join(" ".join(lines).split())
            text = text if len(text) <= 200 else text[:199] + "…"
    return text + where


class _Deadline:
    """When a wait gives up, and what it then says: `what`, else the predicate's own source."""

    def __init__(self, timeout: float, what: str, predicate: Callable[[], object]) -> None:
        self.at, self.timeout, self.what = time.monotonic() + timeout, timeout, what
        self.predicate = predicate

    def check(self, value: object) -> None:
        if time.monotonic() > self.at:
            about = self.what or describe_probe(self.predicate)
            raise AssertionError(
                f"condition not met for {about} within {self.timeout}s (last: {value!r})"
            )


def wait_for(
    predicate: Callable[[], T], timeout: float = 10.0, interval: float = 0.02, what: str = ""
) -> T:
    """Poll until predicate() is truthy; return its value or fail, saying what it waited for
    (`what`, else the predicate's source) and the last value."""
    deadline = _Deadline(timeout, what, predicate)
    while not (value := predicate()):
        deadline.check(value)
        time.sleep(interval)
    return value


async def wait_for_async(
    predicate: Callable[[], T], timeout: float = 10.0, interval: float = 0.01, what: str = ""
) -> T:
    """wait_for inside an event loop: the loop runs the code under test between the polls."""
    deadline = _Deadline(timeout, what, predicate)
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
