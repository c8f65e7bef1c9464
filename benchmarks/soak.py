"""Soak: N simulated Claude sessions through the real hook script against a real daemon.

Starts `python -m purplemux serve` in a temporary home, runs --sessions threads that each play
turns (SessionStart, then UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, Stop,
Notification, ...) through hooks/status-hook.sh for --seconds, appending to a transcript as
Claude would, then waits until every event is in the daemon's event log. Reports the daemon's
memory (RSS), open file descriptors and threads at the start, at the peak and at the end, the
events sent and logged (they must be equal), the hook's wall time and any error in the log.

    python -m benchmarks.soak [--sessions 20] [--seconds 600] [--interval 1.0] [--json]

Exit status 0 when sent == logged, nothing is left in the spool and the log has no error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]  # psutil ships no type hints

from tests.support import Daemon, wait_for

REPO = Path(__file__).resolve().parent.parent
HOOK = REPO / "hooks" / "status-hook.sh"
SAMPLE_EVERY = 1.0
"""Seconds between samples of the daemon's RSS, fds and threads (for the peak)."""


@dataclass
class Usage:
    """One sample of the daemon process."""

    rss_mib: float
    fds: int
    threads: int
    cpu_seconds: float = 0.0

    @classmethod
    def of(cls, proc: psutil.Process) -> Usage:
        with proc.oneshot():
            cpu = proc.cpu_times()
            return cls(
                proc.memory_info().rss / 2**20,
                proc.num_fds(),
                proc.num_threads(),
                round(cpu.user + cpu.system, 2),
            )


@dataclass
class Report:
    """What a soak run found; `ok` is the verdict."""

    sessions: int
    seconds: float
    interval: float
    sent: int = 0
    logged: int = 0
    distinct_logged: int = 0
    hook_failures: int = 0
    spool_left: int = 0
    log_errors: int = 0
    log_warnings: int = 0
    daemon_exit: int | None = None
    start: Usage | None = None
    peak: Usage | None = None
    end: Usage | None = None
    hook_ms: dict[str, float] = field(default_factory=dict)
    settle_seconds: float = 0.0
    ok: bool = False


def wait_until(predicate: Any, timeout: float, interval: float = 0.05) -> bool:
    """Whether predicate() came true within timeout seconds (a soak reports, it does not fail)."""
    try:
        wait_for(predicate, timeout=timeout, interval=interval)
    except AssertionError:
        return False
    return True


class SoakDaemon(Daemon):
    """The tests' daemon (tests/support), with what the soak reads of it: its log, its process,
    the event log and the spool."""

    ps: Any = None
    """Its psutil.Process, for the memory, descriptor and thread counts."""

    @classmethod
    def started(cls, root: Path) -> SoakDaemon:
        """Start one in `root` (home, Claude dir, daemon.log); SystemExit with its log if not."""
        claude = root / "claude"
        for folder in (claude / "sessions", claude / "projects"):
            folder.mkdir(parents=True)
        d = cls(home=root / "home", claude_dir=claude)
        try:
            d.start(log_path=root / "daemon.log", timeout=30)
        except AssertionError:
            d.stop()
            raise SystemExit(f"soak: the daemon did not start:\n{d.logs()}") from None
        assert d.proc is not None
        d.ps = psutil.Process(d.proc.pid)
        return d

    def hook_events(self) -> tuple[int, int]:
        """(hook events, distinct ids) in the event log, read from the database directly
        (the API returns at most 1000 events per session)."""
        db = sqlite3.connect(f"file:{self.home / 'state.db'}?mode=ro", uri=True, timeout=5)
        try:
            row = db.execute(
                "SELECT count(*), count(DISTINCT id) FROM events"
                " WHERE source = 'hook' AND session_id LIKE 'soak-%'"
            ).fetchone()
        finally:
            db.close()
        return int(row[0]), int(row[1])

    def spooled(self) -> int:
        spool = self.home / "spool"
        return len(list(spool.glob("*.spool"))) + len(list((spool / ".tmp").glob("*")))

    def stopped(self) -> int | None:
        """Stop it (SIGTERM, SIGKILL if it hangs); its exit status."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.stop()
        self.kill()
        return self.proc.returncode if self.proc else None


class Session(threading.Thread):
    """One simulated Claude session: turns of hook calls until the deadline."""

    def __init__(
        self, n: int, daemon: SoakDaemon, shell: str, interval: float, until: float
    ) -> None:
        super().__init__(name=f"soak-{n}", daemon=True)
        self.sid = f"soak-{n:02d}-{uuid.uuid4().hex[:8]}"
        self.cwd = f"/work/soak/project-{n % 5}"
        self.transcript = daemon.claude_dir / "projects" / f"soak-{n % 5}" / f"{self.sid}.jsonl"
        self.transcript.parent.mkdir(parents=True, exist_ok=True)
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(daemon.home.parent),
            "PURPLEMUX_HOME": str(daemon.home),
            "TMUX_PANE": f"%{n}",
            "TMUX": f"/tmp/tmux-soak/default,{1000 + n},0",
        }
        self.shell, self.interval, self.until = shell, interval, until
        self.sent = 0
        self.failures = 0
        self.wall_ms: list[float] = []

    def payloads(self) -> Any:
        base = {"session_id": self.sid, "cwd": self.cwd, "transcript_path": str(self.transcript)}
        yield {**base, "hook_event_name": "SessionStart", "source": "startup", "model": "soak"}
        turn = 0
        while True:
            turn += 1
            command = {"command": f"echo turn {turn}", "description": "soak"}
            use_id = f"toolu_{self.sid}_{turn}"
            self.append({"type": "user", "message": {"content": f"prompt {turn}"}})
            yield {**base, "hook_event_name": "UserPromptSubmit", "prompt": f"prompt {turn}"}
            tool = {"tool_name": "Bash", "tool_input": command, "tool_use_id": use_id}
            yield {**base, "hook_event_name": "PreToolUse", **tool}
            if turn % 3 == 0:
                yield {**base, "hook_event_name": "PermissionRequest", **tool}
            yield {**base, "hook_event_name": "PostToolUse", **tool, "tool_response": "ok"}
            answer = f"done with turn {turn} " + "x" * random.randint(0, 400)
            self.append(
                {
                    "type": "assistant",
                    "message": {
                        "id": f"msg_{turn}",
                        "model": "soak",
                        "content": [{"type": "text", "text": answer}],
                        "usage": {"input_tokens": 10, "output_tokens": 20},
                    },
                }
            )
            self.append({"type": "system", "subtype": "turn_duration"})
            yield {**base, "hook_event_name": "Stop", "last_assistant_message": answer}
            if turn % 4 == 0:
                yield {
                    **base,
                    "hook_event_name": "Notification",
                    "notification_type": "idle_prompt",
                    "message": "Claude is waiting for your input",
                }

    def append(self, entry: dict[str, Any]) -> None:
        entry = {"uuid": uuid.uuid4().hex, "timestamp": _iso(time.time()), **entry}
        with self.transcript.open("a") as f:
            f.write(json.dumps(entry) + "\n")

    def run(self) -> None:
        time.sleep(random.uniform(0, self.interval))  # spread the sessions' phases
        next_at = time.monotonic()
        for payload in self.payloads():
            if time.monotonic() >= self.until:
                break
            started = time.perf_counter()
            done = subprocess.run(
                [self.shell, str(HOOK)],
                input=json.dumps(payload).encode(),
                env=self.env,
                capture_output=True,
                timeout=30,
            )
            self.wall_ms.append((time.perf_counter() - started) * 1000)
            self.sent += 1
            if done.returncode != 0 or done.stdout or done.stderr:
                self.failures += 1
            next_at += self.interval
            time.sleep(max(0.0, next_at - time.monotonic()))


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts % 1 * 1000):03d}Z"


def soak(args: argparse.Namespace, root: Path) -> Report:
    report = Report(sessions=args.sessions, seconds=args.seconds, interval=args.interval)
    daemon = SoakDaemon.started(root)
    try:
        report.start = report.peak = Usage.of(daemon.ps)
        until = time.monotonic() + args.seconds
        sessions = [
            Session(n, daemon, args.shell, args.interval, until) for n in range(args.sessions)
        ]
        for s in sessions:
            s.start()
        while any(s.is_alive() for s in sessions):
            sample = Usage.of(daemon.ps)
            report.peak = _peak(report.peak, sample)
            for s in sessions:
                s.join(timeout=SAMPLE_EVERY / max(1, len(sessions)))
        report.sent = sum(s.sent for s in sessions)
        report.hook_failures = sum(s.failures for s in sessions)
        wall = sorted(ms for s in sessions for ms in s.wall_ms)
        if wall:
            report.hook_ms = {
                "median": round(statistics.median(wall), 2),
                "p99": round(wall[min(len(wall) - 1, int(len(wall) * 0.99))], 2),
                "max": round(wall[-1], 2),
            }
        settle_start = time.monotonic()

        def settled() -> bool:
            report.logged, report.distinct_logged = daemon.hook_events()
            report.spool_left = daemon.spooled()
            return report.logged >= report.sent and report.spool_left == 0

        wait_until(settled, args.settle_timeout, interval=0.2)
        report.settle_seconds = round(time.monotonic() - settle_start, 2)
        report.end = Usage.of(daemon.ps)
        report.peak = _peak(report.peak, report.end)
    finally:
        report.daemon_exit = daemon.stopped()
    logs = daemon.logs()
    report.log_errors = sum(
        1 for line in logs.splitlines() if "Traceback" in line or " ERROR " in line
    )
    report.log_warnings = sum(1 for line in logs.splitlines() if " WARNING " in line)
    report.ok = (
        report.sent > 0
        and report.sent == report.logged == report.distinct_logged
        and report.spool_left == 0
        and report.hook_failures == 0
        and report.log_errors == 0
        # uvicorn re-raises the SIGTERM it handled once shut down: -15 is a clean stop too.
        and report.daemon_exit in (0, -signal.SIGTERM)
    )
    return report


def _peak(a: Usage | None, b: Usage) -> Usage:
    if a is None:
        return b
    return Usage(
        max(a.rss_mib, b.rss_mib),
        max(a.fds, b.fds),
        max(a.threads, b.threads),
        max(a.cpu_seconds, b.cpu_seconds),
    )


def print_table(r: Report) -> None:
    assert r.start and r.peak and r.end
    print(f"purplemux soak: {r.sessions} sessions, {r.seconds:g} s, a hook every {r.interval:g} s")
    print(f"{'':<22}{'start':>10}{'peak':>10}{'end':>10}")
    print(
        f"{'daemon RSS (MiB)':<22}{r.start.rss_mib:>10.1f}{r.peak.rss_mib:>10.1f}"
        f"{r.end.rss_mib:>10.1f}"
    )
    print(f"{'open fds':<22}{r.start.fds:>10}{r.peak.fds:>10}{r.end.fds:>10}")
    print(f"{'threads':<22}{r.start.threads:>10}{r.peak.threads:>10}{r.end.threads:>10}")
    busy = r.end.cpu_seconds - r.start.cpu_seconds
    print(
        f"{'daemon CPU (s)':<22}{r.start.cpu_seconds:>10.1f}{'':>10}{r.end.cpu_seconds:>10.1f}"
        f"   ({busy / max(r.seconds + r.settle_seconds, 1e-9):.0%} of one core)"
    )
    print(f"{'events sent':<22}{r.sent:>10}   ({r.sent / max(r.seconds, 1e-9):.1f}/s)")
    print(
        f"{'events logged':<22}{r.logged:>10}   (distinct ids {r.distinct_logged}, "
        f"settled in {r.settle_seconds:g} s)"
    )
    print(f"{'left in the spool':<22}{r.spool_left:>10}")
    if r.hook_ms:
        print(
            f"{'hook wall time (ms)':<22}   median {r.hook_ms['median']}   p99 "
            f"{r.hook_ms['p99']}   max {r.hook_ms['max']}"
        )
    print(f"{'hook failures':<22}{r.hook_failures:>10}")
    print(f"{'errors in daemon log':<22}{r.log_errors:>10}   ({r.log_warnings} warnings)")
    verdict = "OK: sent == logged" if r.ok else "FAILED"
    print(f"result: {verdict} (daemon exit {r.daemon_exit})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20, help="simulated sessions (20)")
    parser.add_argument("--seconds", type=float, default=600.0, help="how long to run (600)")
    parser.add_argument(
        "--interval", type=float, default=1.0, help="seconds between one session's hooks (1.0)"
    )
    parser.add_argument(
        "--settle-timeout",
        type=float,
        default=120.0,
        help="seconds to wait for the log to catch up at the end (120)",
    )
    parser.add_argument("--shell", default=shutil.which("dash") or "/bin/sh")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--keep", action="store_true", help="keep the run folder (logs, db)")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="purplemux-soak-"))
    try:
        report = soak(args, root)
    finally:
        if args.keep:
            print(f"run folder kept: {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps(asdict(report)))
    else:
        print_table(report)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
