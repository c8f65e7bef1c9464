"""Hook start -> a WebSocket client sees the session's new state, with 1 and with 50 clients.

Every client is a `websockets` asyncio client on /api/stream with `Authorization: Bearer`, in this
process. A sample runs the installed hook script (as Claude would: `sh -c '<command>'`, payload on
stdin) from a worker thread; its clock starts just before the script starts, and each client's
receipt time is taken as its `session` message with the awaited state arrives. Samples alternate
UserPromptSubmit (-> busy) and Stop (-> review), so every sample is a real state change.

    python -m benchmarks.ws_latency [--clients 1 50] [-n 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from websockets.asyncio.client import ClientConnection, connect

from benchmarks.common import (
    Daemon,
    Stats,
    bench_daemon,
    percentile,
    settle_spool,
    tempdir,
)
from purplemux.agents.claude.install import hook_command

SID = "7a1c0f4e-5b2d-4e8a-9c3f-1d2e3f4a5b6c"
BASE = {
    "session_id": SID,
    "transcript_path": "/home/dev/.claude/projects/-home-dev-proj/7a1c0f4e.jsonl",
    "cwd": "/home/dev/proj",
    "permission_mode": "default",
}
STEPS = (
    ({**BASE, "hook_event_name": "UserPromptSubmit", "prompt": "run the tests"}, "busy"),
    ({**BASE, "hook_event_name": "Stop", "last_assistant_message": "All green."}, "review"),
)
TIMEOUT = 5.0


@dataclass
class WsResult:
    """Per-client latencies (ms), the slowest client's per sample, and samples that timed out."""

    clients: int
    per_client: list[float]
    slowest: list[float]
    timeouts: int

    @property
    def p50(self) -> float:
        return percentile(self.per_client, 50)

    @property
    def p99(self) -> float:
        return percentile(self.per_client, 99)

    def stats(self) -> Stats:
        return Stats.of(self.per_client)


class Watch:
    """What the clients wait for now, and when each saw it."""

    def __init__(self, clients: int) -> None:
        self.want: str | None = None
        self.seen: dict[int, float] = {}
        self.clients = clients
        self.all_seen = asyncio.Event()

    def arm(self, want: str) -> None:
        self.want = want
        self.seen = {}
        self.all_seen.clear()

    def saw(self, client: int, state: str, at: float) -> None:
        if state == self.want and client not in self.seen:
            self.seen[client] = at
            if len(self.seen) == self.clients:
                self.all_seen.set()


async def _reader(index: int, conn: ClientConnection, watch: Watch) -> None:
    async for raw in conn:
        at = time.perf_counter()
        msg = json.loads(raw)
        for session in msg.get("sessions", []) if msg.get("type") == "sessions" else []:
            if session["id"] == SID:
                watch.saw(index, session["state"], at)


def _run_hook(command: str, payload: bytes, env: dict[str, str]) -> float:
    """Run the hook in the foreground (this is a worker thread); return its start time."""
    start = time.perf_counter()
    subprocess.run(["/bin/sh", "-c", command], input=payload, capture_output=True, env=env)
    return start


async def measure(daemon: Daemon, clients: int, samples: int) -> WsResult:
    """Connect `clients` clients, then time `samples` hook-driven state changes."""
    url = daemon.url.replace("http://", "ws://") + "/api/stream"
    headers = {"Authorization": f"Bearer {daemon.token}"}
    conns: list[ClientConnection] = []
    for _ in range(clients):
        conn = await connect(url, additional_headers=headers, max_size=None, open_timeout=10)
        snapshot = json.loads(await conn.recv())
        assert snapshot["type"] == "snapshot", snapshot
        conns.append(conn)
    watch = Watch(clients)
    readers = [asyncio.create_task(_reader(i, c, watch)) for i, c in enumerate(conns)]
    command = hook_command(daemon.home / "status-hook.sh", daemon.home)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(daemon.home.parent),
        "TMUX_PANE": "%1",
        "TMUX": f"{daemon.home.parent}/tmux-0/default,4242,0",
    }
    per_client: list[float] = []
    slowest: list[float] = []
    timeouts = 0
    loop = asyncio.get_running_loop()
    try:
        # One unmeasured turn first: the session exists and the clients know it.
        for i in range(samples + 2):
            payload, want = STEPS[i % 2]
            watch.arm(want)
            body = json.dumps(payload).encode()
            start = await loop.run_in_executor(None, _run_hook, command, body, env)
            try:
                await asyncio.wait_for(watch.all_seen.wait(), TIMEOUT)
            except TimeoutError:
                timeouts += 1
            if i >= 2:
                got = [(t - start) * 1000 for t in watch.seen.values()]
                per_client += got
                if len(got) == clients:
                    slowest.append(max(got))
            await loop.run_in_executor(None, settle_spool, daemon.home)
            await asyncio.sleep(0.005)
    finally:
        for task in readers:
            task.cancel()
        for conn in conns:
            await conn.close()
        await asyncio.gather(*readers, return_exceptions=True)
    return WsResult(clients, per_client, slowest, timeouts)


def run(
    root: Path, client_counts: list[int], samples: int, tree: Path | None = None
) -> list[WsResult]:
    """One daemon (from `tree`, default this checkout); a measurement per client count."""
    # Every client from one address: past the default feed cap (16 per address).
    feeds = str(max(client_counts, default=1) + 14)
    name = "ws" if tree is None else f"ws-{tree.name}"
    daemon = bench_daemon(root, name, PURPLEMUX_MAX_FEEDS=feeds)
    where = {} if tree is None else {"env": {**daemon.env, "PYTHONPATH": str(tree)}, "cwd": tree}
    try:
        d = daemon.start(**where)
        return [asyncio.run(measure(d, n, samples)) for n in client_counts]
    finally:
        daemon.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 50])
    parser.add_argument("-n", type=int, default=200, help="samples per client count")
    args = parser.parse_args()
    with tempdir("purplemux-bench-ws-") as name:
        for r in run(Path(name), args.clients, args.n):
            s = r.stats()
            print(
                f"{r.clients:3d} clients: p50 {r.p50:6.2f} ms  p99 {r.p99:6.2f} ms  "
                f"(min {s.min:.2f}, max {s.max:.2f}, n {s.n}; slowest client p99 "
                f"{percentile(r.slowest, 99):.2f}; timeouts {r.timeouts})"
            )


if __name__ == "__main__":
    main()
