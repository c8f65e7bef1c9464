"""Transcript lines as Claude writes them, and a reader of a tailer's batches."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from purplemux.events import Event, Stop


def line(**entry: Any) -> bytes:
    return (json.dumps(entry) + "\n").encode()


def prompt(uuid: str, text: str = "do it", ts: str = "2026-01-01T00:00:00Z") -> bytes:
    return line(type="user", uuid=uuid, timestamp=ts, message={"role": "user", "content": text})


def end(uuid: str, subtype: str = "turn_duration") -> bytes:
    return line(type="system", subtype=subtype, uuid=uuid, timestamp="2026-01-01T00:00:02Z")


async def collect(
    agen: AsyncIterator[list[Event]], until: Callable[[list[Event]], bool], timeout: float = 10.0
) -> list[Event]:
    """Gather batches until the predicate holds over everything seen (fails at the deadline)."""
    seen: list[Event] = []

    async def run() -> None:
        while not until(seen):
            seen.extend(await agen.__anext__())

    await asyncio.wait_for(run(), timeout)
    return seen


def stops(events: list[Event]) -> list[str]:
    return [e.id for e in events if isinstance(e, Stop)]
