"""Stop means stop: SIGTERM after a busy spell, while a 150 MB transcript is being read.

The scenario of issue 22: a tmux server with 20 panes, hook events from keep-alive clients
while WebSocket viewers follow the feed, then a SessionStart whose transcript is 150 MB; SIGTERM
while that transcript is read. Measured: seconds from SIGTERM to the process's exit (goal
<= 2 s), and whether the next start resumed the transcript (not read again).

    .venv/bin/python -m benchmarks.shutdown            # the issue's sizes
    .venv/bin/python -m benchmarks.shutdown --quick    # the test's sizes
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import signal
import subprocess
import tempfile
import threading
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets

from benchmarks.common import bench_daemon, hook_headers
from benchmarks.fixtures import project_dir, write_transcript
from tests.support import Daemon, wait_for
from tests.support.hosts import RedisServer

GOAL = 2.0
"""Seconds from SIGTERM to the process's exit (issue 22)."""
HARD_LIMIT = 10.0
"""Past this the daemon did not stop at all (a failure, not a slow stop)."""


@dataclass
class Sizes:
    """How big the busy spell is."""

    panes: int = 20
    hook_events: int = 6000
    hook_clients: int = 8
    viewers: int = 10
    transcript_mb: int = 150
    broker: bool = True
    """Linked to a real redis-server (--broker), as the reviewed daemon was."""
    summed_first: float = 0.2
    """The share of the transcript's history summed before SIGTERM (it is still being read):
    enough that the next start's resume shows in the bytes it reads."""


QUICK = Sizes(panes=20, hook_events=800, hook_clients=8, viewers=10, transcript_mb=150)


@dataclass
class Result:
    """What one run measured."""

    exit_seconds: float | None
    """SIGTERM to exit; None if it had not exited within HARD_LIMIT (then it was killed)."""
    exit_code: int | None
    reading_at_sigterm: dict[str, Any]
    """/api/health's transcript counters just before SIGTERM (what was being read)."""
    after_restart: dict[str, Any]
    """The same counters once the next start has read the transcript again."""
    transcript_bytes: int = 0
    hooks_sent: int = 0
    viewers_messages: int = 0
    log: str = field(default="", repr=False)


class Tmux:
    """A private tmux server (`-L name`) with N panes running sleep."""

    def __init__(self, panes: int, env: dict[str, str]) -> None:
        self.name = f"pmx-stop-{uuid.uuid4().hex[:8]}"
        self.env = env
        self("new-session", "-d", "-s", "busy", "-x", "200", "-y", "60", "sleep 600")
        for n in range(1, panes):
            if n % 4 == 0:
                self("new-window", "-d", "-t", "busy", "sleep 600")
            else:
                self("split-window", "-d", "-t", "busy", "sleep 600")
                self("select-layout", "-t", "busy", "tiled")
        self.socket = self("display", "-p", "#{socket_path}")

    def __call__(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.name, "-f", "/dev/null", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return out.stdout.strip()

    def panes(self) -> list[str]:
        return self("list-panes", "-a", "-F", "#{pane_id}").split()

    def kill(self) -> None:
        subprocess.run(
            ["tmux", "-L", self.name, "kill-server"], env=self.env, capture_output=True, timeout=10
        )


def health(d: Daemon) -> dict[str, Any]:
    with urllib.request.urlopen(d.url + "/api/health", timeout=5) as r:
        return dict(json.loads(r.read()))


def _hooks(
    d: Daemon,
    tmux: Tmux,
    panes: list[str],
    client: int,
    count: int,
    conns: list[http.client.HTTPConnection],
) -> int:
    """One keep-alive client posting `count` hook events as the script does; how many were
    accepted. Its connection stays open (in `conns`), as a keep-alive client's does."""
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
    conns.append(conn)
    names = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
    ok = 0
    for n in range(count):
        pane = panes[(client + n) % len(panes)]
        sid = f"busy-{pane.lstrip('%')}"
        name = names[n % len(names)]
        payload: dict[str, Any] = {"session_id": sid, "hook_event_name": name, "cwd": f"/w/{sid}"}
        if name != "UserPromptSubmit" and name != "Stop":
            payload.update(tool_name="Bash", tool_input={"command": f"echo {n}"})
        conn.request(
            "POST",
            "/api/hooks",
            body=json.dumps(payload),
            headers=hook_headers(d.token, f"stop-{client}-{n}", pane, f"{tmux.socket},1,0"),
        )
        resp = conn.getresponse()
        resp.read()
        ok += resp.status < 300
    return ok


class Viewers:
    """WebSocket clients following the feed in a thread of their own, until stopped."""

    def __init__(self, d: Daemon, count: int) -> None:
        self.url = f"ws://127.0.0.1:{d.port}/api/stream"
        self.headers = {"Authorization": f"Bearer {d.token}"}
        self.count = count
        self.messages = 0
        self.connected = 0
        self.errors: list[str] = []
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Viewers:
        self._thread.start()
        wait_for(lambda: self.connected == self.count or self.errors, timeout=60)
        assert self.connected == self.count, self.errors[:3]
        return self

    def _run(self) -> None:
        try:
            self._loop.run_until_complete(self._main())
        finally:
            self._loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        tasks = [asyncio.create_task(self._view()) for _ in range(self.count)]
        await self._stop.wait()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _view(self) -> None:
        try:
            async with websockets.connect(
                self.url, additional_headers=self.headers, max_size=None
            ) as ws:
                self.connected += 1
                async for _ in ws:
                    self.messages += 1
        except (OSError, websockets.WebSocketException) as exc:
            self.errors.append(repr(exc))  # the daemon went away (the point), or refused us

    def stop(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=10)


def transcript_size(sizes: Sizes) -> int:
    return sizes.transcript_mb << 20


def run(root: Path, sizes: Sizes) -> Result:
    """The scenario, once; the daemon and tmux are always stopped."""
    redis = RedisServer(root / "redis").start() if sizes.broker else None
    extra = {"PURPLEMUX_BROKER": redis.url, "PURPLEMUX_HOST_NAME": "here"} if redis else {}
    d = bench_daemon(root, "stop", **extra)
    tmux = Tmux(sizes.panes, {**d.env})
    panes = tmux.panes()
    cwd = "/w/huge"
    sid = "huge-" + uuid.uuid4().hex[:8]
    transcript = project_dir(d.claude_dir, cwd) / f"{sid}.jsonl"
    size = write_transcript(transcript, transcript_size(sizes), sid, cwd, seed=22)
    viewers: Viewers | None = None
    conns: list[http.client.HTTPConnection] = []
    try:
        d.start()
        viewers = Viewers(d, sizes.viewers).start()
        per = sizes.hook_events // sizes.hook_clients
        sent: list[int] = []
        threads = [
            threading.Thread(target=lambda c=c: sent.append(_hooks(d, tmux, panes, c, per, conns)))
            for c in range(sizes.hook_clients)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # The SessionStart whose transcript is 150 MB (from the pane Claude runs in).
        _start_session(d, tmux, panes[0], sid, cwd, transcript)
        # SIGTERM while it is read: its history is being summed in the background.
        enough = int((sizes.transcript_mb << 20) * sizes.summed_first)
        reading = wait_for(
            lambda: (
                lambda t: t if t["backfill_pending"] and t["history_bytes"] >= enough else None
            )(health(d)["transcripts"]),
            timeout=120,
            interval=0.01,
        )
        assert d.proc is not None
        began = time.monotonic()
        d.proc.send_signal(signal.SIGTERM)
        try:
            code: int | None = d.proc.wait(timeout=HARD_LIMIT)
            took: float | None = time.monotonic() - began
        except subprocess.TimeoutExpired:
            took, code = None, None
            d.proc.kill()
            d.proc.wait(timeout=10)
        for conn in conns:
            conn.close()
        viewers.stop()
        viewers_messages = viewers.messages
        viewers = None
        # The next start resumes from the stored offset: it does not read the file again.
        d.start()
        after = wait_for(
            lambda: (lambda t: t if t["backfill_pending"] == 0 and t["bytes_read"] else None)(
                health(d)["transcripts"]
            ),
            timeout=300,
        )
        return Result(
            exit_seconds=took,
            exit_code=code,
            reading_at_sigterm=reading,
            after_restart=after,
            hooks_sent=sum(sent),
            viewers_messages=viewers_messages,
            log=d.logs()[-4000:],
            transcript_bytes=size,
        )
    finally:
        if viewers is not None:
            viewers.stop()
        d.kill()  # stopped already; a daemon that hung is killed here
        tmux.kill()
        if redis is not None:
            redis.kill()
        transcript.unlink(missing_ok=True)


def _start_session(d: Daemon, tmux: Tmux, pane: str, sid: str, cwd: str, path: Path) -> None:
    payload = {
        "session_id": sid,
        "hook_event_name": "SessionStart",
        "source": "resume",
        "cwd": cwd,
        "transcript_path": str(path),
    }
    req = urllib.request.Request(
        d.url + "/api/hooks",
        data=json.dumps(payload).encode(),
        method="POST",
        headers={
            "Authorization": f"Bearer {d.token}",
            "X-Purplemux-Event-Id": f"start-{sid}",
            "X-Purplemux-Ts": str(time.time_ns()),
            "X-Purplemux-Pane": pane,
            "X-Purplemux-Tmux": f"{tmux.socket},1,0",
        },
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.status < 300


def report(r: Result, sizes: Sizes) -> str:
    """The figures as lines for a terminal or a test's output."""
    took = f"{r.exit_seconds:.2f} s" if r.exit_seconds is not None else f"> {HARD_LIMIT:.0f} s"
    met = r.exit_seconds is not None and r.exit_seconds <= GOAL
    mb = sizes.transcript_mb
    at = r.reading_at_sigterm
    again = r.after_restart
    return "\n".join(
        [
            f"busy spell{' (with a broker)' if sizes.broker else ''}: {sizes.panes} panes, "
            f"{r.hooks_sent} hook events from "
            f"{sizes.hook_clients} keep-alive clients, {sizes.viewers} WebSocket viewers "
            f"({r.viewers_messages} messages), then a {mb} MB transcript",
            f"at SIGTERM: {at['history_bytes'] >> 20} MB of its history summed, "
            f"{at['tail_bytes'] >> 10} KB of tail read",
            f"SIGTERM -> exit: {took} (goal <= {GOAL:.0f} s: {'met' if met else 'NOT met'}), "
            f"exit code {r.exit_code}",
            f"next start: resumed {again['resumed']}, started over {again['started_over']}, "
            f"read {again['bytes_read'] >> 20} MB of {mb} MB",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the test's sizes")
    parser.add_argument("--log", action="store_true", help="print the daemon's log's end")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else Sizes()
    with tempfile.TemporaryDirectory(prefix="pmx-stop-") as tmp:
        result = run(Path(tmp), sizes)
    print(report(result, sizes))
    if args.log:
        print(result.log)
    return 0 if result.exit_seconds is not None else 1


if __name__ == "__main__":
    raise SystemExit(main())
