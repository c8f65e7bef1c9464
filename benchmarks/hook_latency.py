"""How long Claude Code waits for the status hook: the script against a synchronous curl POST.

Runs each command N times with a real hook payload on stdin, the way Claude does (wait for the
exit and for stdout/stderr to close), with the daemon up (a tiny local HTTP server, or --url) and
down (a closed port), and prints min / median / max wall time in milliseconds. The first line is
the floor: starting a shell that does nothing, with the same harness.

    python benchmarks/hook_latency.py [-n 200] [--url http://127.0.0.1:8022 --auth-file FILE]
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "hooks" / "status-hook.sh"
SAMPLE = {
    "session_id": "054cd48c-887f-45cb-8bc0-ebcb7e4963ae",
    "transcript_path": "/home/dev/.claude/projects/-home-dev-proj/054cd48c.jsonl",
    "cwd": "/home/dev/proj",
    "permission_mode": "default",
    "hook_event_name": "PermissionRequest",
    "tool_name": "Bash",
    "tool_input": {"command": "touch hello.txt", "description": "Create a file"},
}
# What a naive hook does: POST and wait for the answer (the token is read from a file here too).
SYNC_CURL = (
    'curl -q -s -o /dev/null --noproxy "*" --connect-timeout 1 --max-time 3 '
    '-H @"$PURPLEMUX_HOME/auth-header" -H "Content-Type: application/json" '
    '--data-binary @- "http://127.0.0.1:$(cat "$PURPLEMUX_HOME/port")/api/hooks"'
)


class Handler(http.server.BaseHTTPRequestHandler):
    """Reads the POST and answers 204, as the daemon does when it took the event."""

    count = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        Handler.count += 1
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def make_home(root: Path, name: str, port: int, auth: str) -> Path:
    """A daemon home with the files the hook reads: port and auth-header."""
    home = root / name
    home.mkdir(mode=0o700)
    (home / "port").write_text(f"{port}\n")
    (home / "auth-header").write_text(auth)
    (home / "auth-header").chmod(0o600)
    return home


def settle(home: Path, timeout: float = 10.0) -> None:
    """Wait until the previous run's background delivery is done, so runs do not overlap."""
    tmp = home / "spool" / ".tmp"
    deadline = time.monotonic() + timeout
    while tmp.is_dir() and any(tmp.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.001)


def measure(argv: list[str], home: Path, payload: bytes, n: int, back_to_back: bool) -> list[float]:
    """Wall time in ms of n runs of argv, payload on stdin, until exit and stdout/stderr EOF."""
    env = {**os.environ, "PURPLEMUX_HOME": str(home), "TMUX_PANE": "%0"}
    env.pop("http_proxy", None)
    times = []
    for _ in range(n):
        if not back_to_back:
            settle(home)
        start = time.perf_counter()
        subprocess.run(argv, input=payload, capture_output=True, env=env, timeout=30)
        times.append((time.perf_counter() - start) * 1000)
    return times


def report(label: str, times: list[float]) -> None:
    print(
        f"{label:<34} min {min(times):7.2f}   median {statistics.median(times):7.2f}"
        f"   max {max(times):8.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200, help="runs per case (default 200)")
    parser.add_argument("--url", help="a running daemon to post to instead of the local server")
    parser.add_argument("--auth-file", type=Path, help="the daemon's auth-header file (--url)")
    parser.add_argument("--shell", default=shutil.which("dash") or "/bin/sh")
    parser.add_argument(
        "--back-to-back",
        action="store_true",
        help="do not wait for the previous run's background delivery (bursts of hooks)",
    )
    args = parser.parse_args()
    payload = json.dumps(SAMPLE).encode() + b"\n"

    server = None
    if args.url:
        port = urllib.parse.urlsplit(args.url).port or 80
        auth = args.auth_file.read_text() if args.auth_file else "Authorization: Bearer none\n"
    else:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.server_address[1]
        auth = "Authorization: Bearer benchmark\n"

    with tempfile.TemporaryDirectory(prefix="purplemux-bench-") as root_name:
        root = Path(root_name)
        print(f"{args.n} runs each, {args.shell}, times in ms (foreground: what Claude waits for)")
        floor = measure([args.shell, "-c", "exit 0"], root, payload, args.n, True)
        report("floor: a shell that does nothing", floor)
        for state, p in (("up", port), ("down", closed_port())):
            home = make_home(root, f"hook-{state}", p, auth)
            report(
                f"status-hook.sh, daemon {state}",
                measure([args.shell, str(SCRIPT)], home, payload, args.n, args.back_to_back),
            )
            settle(home)
            spooled = len(list((home / "spool").glob("*.spool")))
            print(f"{'':<34} ({spooled} spooled)")
            home = make_home(root, f"curl-{state}", p, auth)
            report(
                f"sh -c 'curl POST', daemon {state}",
                measure([args.shell, "-c", SYNC_CURL], home, payload, args.n, True),
            )
    if server is not None:
        print(f"the local server took {Handler.count} POSTs")
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    main()
