"""How long `purplemux tmux-status` takes, which tmux runs every `status-interval` seconds.

Starts a real daemon (`python -m purplemux serve`) in a temporary home, gives it --sessions
sessions through POST /api/hooks, then runs the command N times with the daemon up and N times
with it down (a closed port: the answer must be an empty line, fast), then a few times against a
silent daemon (accepts, never answers: bounded by the client's budget), and prints min / median /
max wall time in milliseconds. The first line is the floor: a Python that does nothing.

    python -m benchmarks.tmux_status [-n 50] [--sessions 30]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from purplemux.cli import tmux_status as ts
from tests.support import Daemon
from tests.support.hooks import send_hook

STATES = ("UserPromptSubmit", "Stop", "PermissionRequest")


def measure(argv: list[str], env: dict[str, str], n: int) -> tuple[list[float], bytes]:
    """Wall time in ms of n runs of argv, and the last run's stdout."""
    times = []
    out = b""
    for _ in range(n):
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, env=env, timeout=30, check=True)
        times.append((time.perf_counter() - start) * 1000)
        out = done.stdout
    return times, out


def report(label: str, times: list[float]) -> None:
    print(
        f"{label:<32} min {min(times):7.2f}   median {statistics.median(times):7.2f}"
        f"   max {max(times):8.2f}"
    )


def post_hook(url: str, token: str, n: int, payload: dict[str, Any]) -> None:
    send_hook(url, token, payload, f"bench-{n}", pane=f"%{n}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("-n", type=int, default=50, help="runs per case (default 50)")
    parser.add_argument("--sessions", type=int, default=30, help="live sessions (default 30)")
    args = parser.parse_args()

    command = [sys.executable, "-m", "purplemux", "tmux-status", "--tmux-colours"]
    with tempfile.TemporaryDirectory(prefix="purplemux-bench-") as root_name:
        root = Path(root_name)
        daemon = Daemon(home=root / "home", claude_dir=root / "claude")
        env, url = daemon.env, daemon.url
        daemon.start(timeout=20, log_path=root / "daemon.log")
        try:
            token = daemon.token
            for i in range(args.sessions):
                sid = f"bench-session-{i}"
                post_hook(url, token, 2 * i, {"session_id": sid, "hook_event_name": STATES[0]})
                name = STATES[i % len(STATES)]
                extra = {"tool_name": "Bash", "tool_input": {}} if "Permission" in name else {}
                post_hook(
                    url, token, 2 * i + 1, {"session_id": sid, "hook_event_name": name, **extra}
                )

            print(f"{args.n} runs each, {args.sessions} live sessions, times in ms")
            report("floor: python -c pass", measure([sys.executable, "-c", "pass"], env, args.n)[0])
            times, out = measure(command, env, args.n)
            report("tmux-status, daemon up", times)
            print(f"{'':<32} output: {out.decode().strip()!r}")
        finally:
            daemon.stop()
        times, out = measure(command, env, args.n)
        report("tmux-status, daemon down", times)
        print(f"{'':<32} output: {out.decode()!r}")
        # A daemon that accepts the connection and never answers: the client's own budget
        # (tmux_status.TIMEOUT) bounds the wait. tests/test_tmux.py checks that it gives up.
        with socket.socket() as silent:
            silent.bind(("127.0.0.1", 0))
            silent.listen()
            (root / "home" / "port").write_text(f"{silent.getsockname()[1]}\n")
            times, out = measure(command, env, min(args.n, 10))
        report("tmux-status, silent daemon", times)
        print(f"{'':<32} output: {out.decode()!r} (budget {ts.TIMEOUT * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
