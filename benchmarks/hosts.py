"""Several hosts: a change on one daemon -> a WebSocket client of another daemon sees it.

A real `redis-server` on a free loopback port (no persistence) and two daemons as if on two
machines ("alpha" owns the session, "bravo" shows it), each with its own home. A sample POSTs one
hook event to alpha (UserPromptSubmit -> busy, Stop -> review, alternating) and starts the clock
just before; it ends when bravo's `/api/stream` client receives the session with the new state.
The same sample's arrival on alpha's own feed is the baseline (one host, no broker in the path).

    python -m benchmarks.hosts [-n 200]
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from websockets.asyncio.client import ClientConnection, connect

from benchmarks.common import Daemon, Stats, bench_daemon, run_from_args, wait_for
from tests.support.hosts import RedisServer, boot, health, stop_all

SID = "b0571000-5b2d-4e8a-9c3f-1d2e3f4a5b6c"
STEPS = (("UserPromptSubmit", "busy"), ("Stop", "review"))


@dataclass
class Result:
    """Latencies in ms: to another host's feed, and to the owner's own feed (the baseline)."""

    remote: list[float]
    local: list[float]
    timeouts: int

    def stats(self) -> tuple[Stats, Stats]:
        return Stats.of(self.remote), Stats.of(self.local)


def _post(d: Daemon, n: int, name: str) -> None:
    payload = {"session_id": SID, "hook_event_name": name, "cwd": "/home/dev/proj"}
    payload.update(prompt="go", last_assistant_message="done")
    req = urllib.request.Request(d.url + "/api/hooks", data=json.dumps(payload).encode())
    req.add_header("Authorization", f"Bearer {d.token}")
    req.add_header("Content-Type", "application/json")
    req.add_header("X-Purplemux-Event-Id", f"bench-hosts-{n}")
    req.add_header("X-Purplemux-Ts", str(time.time_ns()))
    with urllib.request.urlopen(req, timeout=10):
        pass


async def _until(ws: ClientConnection, state: str, deadline: float) -> float | None:
    """perf_counter() when the session arrives in `state`, or None at the deadline."""
    while (left := deadline - time.perf_counter()) > 0:
        try:
            raw = await asyncio.wait_for(ws.recv(), left)
        except TimeoutError:
            return None
        msg = json.loads(raw)
        for session in msg.get("sessions", []) if msg.get("type") == "sessions" else []:
            if session["id"] == SID and session["state"] == state:
                return time.perf_counter()
    return None


async def _measure(owner: Daemon, other: Daemon, samples: int) -> Result:
    def auth(d: Daemon) -> dict[str, str]:
        return {"Authorization": f"Bearer {d.token}"}

    result = Result([], [], 0)
    url = "ws://127.0.0.1:{}/api/stream"
    async with (
        connect(url.format(owner.port), additional_headers=auth(owner)) as mine,
        connect(url.format(other.port), additional_headers=auth(other)) as theirs,
    ):
        await mine.recv()
        await theirs.recv()  # the snapshots
        await asyncio.to_thread(_post, owner, -1, "SessionStart")
        for n in range(samples):
            name, state = STEPS[n % 2]
            start = time.perf_counter()
            await asyncio.to_thread(_post, owner, n, name)
            deadline = start + 10
            local, remote = await asyncio.gather(
                _until(mine, state, deadline), _until(theirs, state, deadline)
            )
            if local is None or remote is None:
                result.timeouts += 1
                continue
            result.local.append((local - start) * 1000)
            result.remote.append((remote - start) * 1000)
    return result


def run(root: Path, samples: int) -> Result:
    """Redis and two daemons in `root`; `samples` state changes measured."""
    redis = RedisServer(root / "redis").start()
    env = {"PURPLEMUX_BROKER": redis.url, "PURPLEMUX_HEARTBEAT_TTL": "5"}
    alpha = bench_daemon(root, "alpha", PURPLEMUX_HOST_NAME="alpha", **env)
    bravo = bench_daemon(root, "bravo", PURPLEMUX_HOST_NAME="bravo", **env)
    try:
        for d in (alpha, bravo):
            boot(d)
        for d in (alpha, bravo):
            wait_for(lambda d=d: health(d)["broker"]["state"] == "connected", timeout=30)
        return asyncio.run(_measure(alpha, bravo, samples))
    finally:
        stop_all([alpha, bravo])
        redis.kill()


def main() -> None:
    _, result = run_from_args(__doc__, "samples (state changes)", "purplemux-bench-hosts-", run)
    remote, local = result.stats()
    print(f"samples {len(result.remote)}, timeouts {result.timeouts}")
    for label, s in (("another host's feed", remote), ("the owner's own feed", local)):
        print(
            f"{label:<22} p50 {s.median:7.2f} ms   p99 {s.p99:7.2f} ms   "
            f"min {s.min:7.2f}   max {s.max:7.2f}"
        )


if __name__ == "__main__":
    main()
