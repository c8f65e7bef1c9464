"""Transcript lines as Claude writes them, and a reader of a tailer's batches."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

from purplemux.core.events import Event, Stop


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


def _ts(n: int) -> str:
    return f"2026-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z"


def turns(count: int, seed: int, first: int = 0, answer_size: int = 200) -> tuple[bytes, str]:
    """Transcript lines of `count` turns as Claude writes them: a message's blocks as entries
    repeating its usage (which grows), tool calls and their results, now and then a cost-state
    or a title; (the bytes, the last answer)."""
    rng = random.Random(seed)
    out, answer = bytearray(), ""
    for t in range(first, first + count):
        n = t * 10
        out += prompt(f"p{t}", f"task {t}", ts=_ts(n))
        if t % 7 == 3:
            out += line(type="custom-title", customTitle=f"title {t}", timestamp=_ts(n))
        for m in range(rng.randint(1, 3)):
            mid = f"msg-{t}-{m}"
            usage = {
                "input_tokens": rng.randint(1, 50),
                "output_tokens": rng.randint(1, 500),
                "cache_read_input_tokens": rng.randint(0, 9000),
                "cache_creation_input_tokens": rng.randint(0, 900),
            }
            answer = f"answer {t}.{m} " + "x" * rng.randint(0, answer_size)
            blocks: list[dict[str, Any]] = [{"type": "text", "text": answer}]
            if m == 0:
                blocks.append({"type": "tool_use", "id": f"tool-{t}", "name": "Bash"})
            for b, block in enumerate(blocks):
                usage = {**usage, "output_tokens": usage["output_tokens"] + b * 7}
                message = {
                    "id": mid,
                    "model": "claude-sonnet-4-5",
                    "role": "assistant",
                    "content": [block],
                    "usage": usage,
                }
                out += line(
                    type="assistant", uuid=f"a{t}-{m}-{b}", timestamp=_ts(n + 1), message=message
                )
            if m == 0:
                result = {"type": "tool_result", "tool_use_id": f"tool-{t}", "content": "ok"}
                out += line(
                    type="user",
                    uuid=f"r{t}",
                    timestamp=_ts(n + 2),
                    message={"role": "user", "content": [result]},
                )
        if t % 5 == 4:
            out += line(type="cost-state", totalCostUSD=0.25 * t, timestamp=_ts(n + 3))
        out += end(f"e{t}")
    return bytes(out), answer
