"""Ingest: keep-alive HTTP clients POST hook payloads at 1 / 4 / 16 concurrency, 50 WS clients on.

The load generator is a raw asyncio HTTP/1.1 client (one keep-alive connection per worker; it
costs far less CPU per request than httpx, and this machine's cores are shared with the daemon).
Requests are built before the clock starts. Each worker owns its sessions and posts their events
in source-time order: UserPromptSubmit, PreToolUse, PostToolUse, Stop — each one changes what
the dashboard shows, so each is broadcast to the 50 WebSocket clients, which run in a separate
process and count what they receive. Each POST is answered only once its event is stored.
Afterwards every session's event log is read back: lost = sent - logged.

    python -m benchmarks.ingest [--events 10000] [--concurrency 1 4 16] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from benchmarks.common import REPO, Daemon, Stats, api, bench_daemon, tempdir

SESSION_EVENTS = 400
"""Events per session and run: below the 1,000 that /api/sessions/{id}/events returns."""
WS_CLIENTS = 50
UNREACHABLE_TMUX = "/tmp/purplemux-bench-no-such-tmux/default"
SEQ_HEAD = re.compile(r'\{"type":"[a-z]+","seq":(\d+)[,}]')


def _payloads(sid: str, n: int) -> list[dict[str, object]]:
    base = {
        "session_id": sid,
        "transcript_path": f"/home/dev/.claude/projects/-home-dev-load/{sid}.jsonl",
        "cwd": "/home/dev/load",
        "permission_mode": "default",
    }
    out: list[dict[str, object]] = []
    for i in range(n):
        call = {
            "tool_name": "Bash",
            "tool_use_id": f"toolu_{i // 4:08d}",
            "tool_input": {"command": f"pytest -q tests/test_{i}.py", "timeout": 120000},
        }
        turn = [  # a turn is these four hooks, in this order
            {"hook_event_name": "UserPromptSubmit", "prompt": f"task {i}"},
            {"hook_event_name": "PreToolUse", **call},
            {
                "hook_event_name": "PostToolUse",
                **call,
                "tool_response": {"stdout": "1 passed in 0.01s", "stderr": ""},
            },
            {"hook_event_name": "Stop", "last_assistant_message": "Done."},
        ]
        out.append({**base, **turn[i % 4]})
    return out


def _request(port: int, token: str, payload: dict[str, object], n: int, pane: str) -> bytes:
    """What the hook script sends; `pane` is the pane id ("" outside tmux)."""
    body = json.dumps(payload).encode()
    tmux = f"{UNREACHABLE_TMUX},4242,0" if pane else ""
    head = (
        f"POST /api/hooks HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"X-Purplemux-Event-Id: {time.time_ns()}-{n}\r\nX-Purplemux-Ts: {time.time_ns()}\r\n"
        f"X-Purplemux-Pane: {pane}\r\nX-Purplemux-Tmux: {tmux}\r\n\r\n"
    )
    return head.encode() + body


async def _worker(port: int, requests: list[bytes], statuses: list[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for req in requests:
            writer.write(req)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            statuses.append(status)
    finally:
        writer.close()
        await writer.wait_closed()


@dataclass
class IngestRun:
    concurrency: int
    sent: int
    accepted: int
    logged: int
    seconds: float
    cpu_seconds: float
    started: float  # time.monotonic() when the first request went out
    delivered_seconds: float = float("nan")  # until every WS client had every message

    @property
    def cpu_per_event(self) -> float:
        """Microseconds of daemon CPU (all its threads) per event."""
        return self.cpu_seconds / self.sent * 1e6

    @property
    def rate(self) -> float:
        """Events acknowledged (stored) per second."""
        return self.sent / self.seconds

    @property
    def delivered_rate(self) -> float:
        """Events per second until the last WebSocket client had seen them all."""
        return self.sent / self.delivered_seconds

    @property
    def lost(self) -> int:
        return self.sent - self.logged


def one_run(daemon: Daemon, concurrency: int, events: int, panes: bool = False) -> IngestRun:
    """Post `events` events with `concurrency` workers; read the logs back.

    With `panes`, every session reports a pane on a tmux server the daemon cannot reach."""
    per_worker = math.ceil(events / concurrency)
    sessions_per_worker = max(1, math.ceil(per_worker / SESSION_EVENTS))
    token = daemon.token
    plans: list[list[bytes]] = []
    sessions: list[str] = []
    n = 0
    for _ in range(concurrency):
        sids = [str(uuid.uuid4()) for _ in range(sessions_per_worker)]
        pane_of = {sid: f"%{len(sessions) + i}" if panes else "" for i, sid in enumerate(sids)}
        sessions += sids
        per_session = [_payloads(s, math.ceil(per_worker / len(sids))) for s in sids]
        # Round-robin over the worker's sessions; each session's events stay in order.
        reqs: list[bytes] = []
        for i in range(per_worker):
            sid = sids[i % len(sids)]
            payload = per_session[i % len(sids)][i // len(sids)]
            reqs.append(_request(daemon.port, token, payload, n, pane_of[sid]))
            n += 1
        plans.append(reqs)
    statuses: list[int] = []
    started = 0.0

    async def go() -> float:
        nonlocal started
        started = time.monotonic()
        start = time.perf_counter()
        await asyncio.gather(*(_worker(daemon.port, reqs, statuses) for reqs in plans))
        return time.perf_counter() - start

    assert daemon.proc is not None
    proc = psutil.Process(daemon.proc.pid)
    cpu0 = proc.cpu_times()
    seconds = asyncio.run(go())
    cpu1 = proc.cpu_times()
    sent = sum(len(p) for p in plans)
    logged = sum(len(api(daemon, f"/api/sessions/{sid}/events")["events"]) for sid in sessions)
    return IngestRun(
        concurrency,
        sent,
        sum(1 for s in statuses if s == 202),
        logged,
        seconds,
        (cpu1.user + cpu1.system) - (cpu0.user + cpu0.system),
        started,
    )


@dataclass
class IngestResult:
    runs: list[IngestRun]
    ws_received: list[int]
    ws_dropped: int
    ws_gaps: int
    baseline: IngestRun | None = None
    with_panes: IngestRun | None = None
    ws_updates: int = 0
    """Session copies client 0 decoded (a message carries every session a batch changed)."""
    ws_disorder: int = 0
    """Copies of a session older than one client 0 already had (order per session broken)."""

    def by_concurrency(self) -> dict[int, list[IngestRun]]:
        out: dict[int, list[IngestRun]] = {}
        for r in self.runs:
            out.setdefault(r.concurrency, []).append(r)
        return out

    def rate_stats(self, concurrency: int) -> Stats:
        return Stats.of([r.rate for r in self.by_concurrency()[concurrency]])

    def delivered_stats(self, concurrency: int) -> Stats:
        return Stats.of([r.delivered_rate for r in self.by_concurrency()[concurrency]])


def _feed_seq(daemon: Daemon) -> int:
    """The feed's current seq: what a new client's snapshot says."""
    from websockets.sync.client import connect

    url = daemon.url.replace("http://", "ws://") + "/api/stream"
    with connect(url, additional_headers={"Authorization": f"Bearer {daemon.token}"}) as conn:
        return int(json.loads(conn.recv(timeout=30))["seq"])


class Clients:
    """The WebSocket clients' process: started attached, asked for reports over stdin."""

    def __init__(self, daemon: Daemon, n: int) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "benchmarks.ingest",
                "--ws-clients",
                str(n),
                "--url",
                daemon.url,
            ],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**daemon.env, "PURPLEMUX_BENCH_TOKEN": daemon.token},
        )
        ready = self._line()
        if ready.get("ready") is not True:
            raise RuntimeError(f"the WebSocket clients did not start: {ready}")

    def _line(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        raw = self.proc.stdout.readline()
        return dict(json.loads(raw)) if raw else {}

    def report(self) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"report\n")
        self.proc.stdin.flush()
        return self._line()

    def wait_for(self, seq: int, timeout: float = 120) -> dict[str, Any]:
        """Poll until every client has seen `seq` (or stopped: dropped) or the timeout."""
        deadline = time.monotonic() + timeout
        while True:
            rep = self.report()
            if all(
                s >= seq or not alive for s, alive in zip(rep["seq"], rep["alive"], strict=True)
            ):
                return rep
            if time.monotonic() > deadline:
                return rep
            time.sleep(0.05)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def run(
    root: Path,
    concurrency: list[int],
    events: int,
    repeat: int,
    tree: Path | None = None,
    extras: bool = True,
) -> IngestResult:
    """`tree`: the checkout the daemon runs from (default this one); without `extras`, only the
    runs with the clients attached (not the one before them, nor the one with panes)."""
    # 50 viewers from one address: past the default feed cap (16 per address).
    name = "ingest" if tree is None else f"ingest-{tree.name}"
    daemon = bench_daemon(root, name, PURPLEMUX_MAX_FEEDS=str(WS_CLIENTS + 14))
    where = {} if tree is None else {"env": {**daemon.env, "PYTHONPATH": str(tree)}, "cwd": tree}
    try:
        d = daemon.start(**where)
        # For comparison: the highest concurrency before any WebSocket client is attached.
        baseline = one_run(d, max(concurrency), events) if extras else None
        clients = Clients(d, WS_CLIENTS)
        try:
            runs: list[IngestRun] = []
            for _ in range(repeat):
                for c in concurrency:
                    r = one_run(d, c, events)
                    rep = clients.wait_for(_feed_seq(d))
                    r.delivered_seconds = max(rep["last"]) - r.started
                    runs.append(r)
            with_panes = None
            if extras:  # once with panes on a tmux server the daemon cannot reach (the report)
                with_panes = one_run(d, max(concurrency), events, panes=True)
                rep = clients.wait_for(_feed_seq(d))
                with_panes.delivered_seconds = max(rep["last"]) - with_panes.started
        finally:
            clients.close()
    finally:
        daemon.stop()
    return IngestResult(
        runs,
        rep["received"],
        rep["dropped"],
        rep["gaps"],
        baseline,
        with_panes,
        rep["updates"],
        rep["disorder"],
    )


# --- the WebSocket clients (a child process) ---------------------------------------------------


async def _clients(url: str, token: str, n: int) -> None:
    from websockets.asyncio.client import connect

    ws_url = url.replace("http://", "ws://") + "/api/stream"
    received = [0] * n
    seqs = [0] * n
    last = [0.0] * n
    alive = [True] * n
    gaps = 0
    updates = 0  # session copies client 0 decoded
    disorder = 0  # copies of a session older than one client 0 had before
    held: dict[str, int] = {}
    connected = 0
    all_connected = asyncio.Event()

    def seq_of(raw: str | bytes) -> int:
        """The message's seq, read off its head (the feed puts type and seq first): these 50
        clients share the load generator's 2 cores with the daemon, so only client 0 decodes
        every message."""
        text = raw if isinstance(raw, str) else raw.decode()
        head = SEQ_HEAD.match(text)
        return int(head.group(1)) if head else int(json.loads(text)["seq"])

    async def drain(i: int) -> None:
        nonlocal gaps, connected, updates, disorder
        try:
            async with connect(
                ws_url, additional_headers={"Authorization": f"Bearer {token}"}, max_size=None
            ) as conn:
                snapshot = json.loads(await conn.recv())
                seqs[i] = snapshot["seq"]
                if i == 0:
                    held.update((s["id"], s["seq"]) for s in snapshot["sessions"])
                connected += 1
                if connected == n:
                    all_connected.set()
                async for raw in conn:
                    last[i] = time.monotonic()
                    if i == 0:
                        msg = json.loads(raw)
                        seq = msg["seq"]
                        for s in msg.get("sessions", []):
                            updates += 1
                            if s["seq"] <= held.get(s["id"], 0):
                                disorder += 1
                            held[s["id"]] = s["seq"]
                    else:
                        seq = seq_of(raw)
                    received[i] += 1
                    if seq != seqs[i] + 1:
                        gaps += 1
                    seqs[i] = seq
        finally:
            alive[i] = False  # the server closed us (fell behind), or we are stopping

    def say(obj: object) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    tasks = [asyncio.create_task(drain(i)) for i in range(n)]
    await all_connected.wait()
    say({"ready": True})
    loop = asyncio.get_running_loop()
    while await loop.run_in_executor(None, sys.stdin.readline):
        say(
            {
                "seq": seqs,
                "last": last,
                "alive": alive,
                "received": received,
                "dropped": alive.count(False),
                "gaps": gaps,
                "updates": updates,
                "disorder": disorder,
            }
        )
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline-ref", help="also run a baseline tree (a git ref), interleaved")
    parser.add_argument("--ws-clients", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.ws_clients:
        import os

        asyncio.run(_clients(args.url, os.environ["PURPLEMUX_BENCH_TOKEN"], args.ws_clients))
        return
    with tempdir("purplemux-bench-ingest-") as name:
        results = {"this": run(Path(name), args.concurrency, args.events, args.repeat)}
        if args.baseline_ref:
            from benchmarks import idle

            base = idle.export(args.baseline_ref, Path(name) / "baseline-tree")
            results["baseline"] = run(
                Path(name), args.concurrency, args.events, args.repeat, base, extras=False
            )
    for label, result in results.items():
        print(f"--- {label}")
        _print(result)


def _print(result: IngestResult) -> None:
    for c, runs in result.by_concurrency().items():
        s = result.rate_stats(c)
        lost = sum(r.lost for r in runs)
        print(
            f"concurrency {c:2d}: {s.min:7.0f} / {s.median:7.0f} / {s.max:7.0f} events/s "
            f"(min/median/max of {len(runs)}), lost {lost}"
        )
    for c in result.by_concurrency():
        s = result.delivered_stats(c)
        cpu = Stats.of([r.cpu_per_event for r in result.by_concurrency()[c]]).median
        print(
            f"concurrency {c:2d}: delivered to every WS client: {s.median:7.0f} events/s, "
            f"daemon CPU {cpu:,.0f} µs/event"
        )
    print(
        f"WS clients: received {min(result.ws_received, default=0)}.."
        f"{max(result.ws_received, default=0)} messages each, dropped {result.ws_dropped}, "
        f"gaps {result.ws_gaps}; client 0 decoded {result.ws_updates} session copies, "
        f"{result.ws_disorder} out of order"
    )


if __name__ == "__main__":
    main()
