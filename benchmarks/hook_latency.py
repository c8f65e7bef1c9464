"""How long Claude Code waits for the status hook: our script against a synchronous curl POST.

Each command runs the way Claude runs a command hook: `sh -c '<command>'`, the hook payload on
stdin, timed until the process exits and its stdout/stderr are closed. Against a real daemon
(`purplemux serve` on a free port) and with the daemon down (the port file names a closed port).
The cases are interleaved, so a busy spell of the machine hits them all alike; before each run the
previous run's background delivery is allowed to finish, so runs do not overlap.

    python -m benchmarks.hook_latency [-n 200]
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import Stats, bench_daemon, run_from_args, running, settle_spool
from purplemux.agents.claude.install import hook_command
from tests.support import closed_port

SHELL = "/bin/sh"
PAYLOAD = {
    "session_id": "054cd48c-887f-45cb-8bc0-ebcb7e4963ae",
    "transcript_path": "/home/dev/.claude/projects/-home-dev-proj/054cd48c.jsonl",
    "cwd": "/home/dev/proj",
    "permission_mode": "default",
    "hook_event_name": "PermissionRequest",
    "tool_name": "Bash",
    "tool_input": {"command": "touch hello.txt", "description": "Create a file"},
    "permission_suggestions": [
        {"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "allow"}
    ],
}


def curl_command(home: Path, port: int) -> str:
    """The usual hook: POST the payload with curl and wait for the answer (port written in)."""
    header = shlex.quote(str(home / "auth-header"))
    return (
        'curl -q -s -o /dev/null --noproxy "*" --connect-timeout 1 --max-time 3 '
        f"-H @{header} -H 'Content-Type: application/json' "
        f"--data-binary @- http://127.0.0.1:{port}/api/hooks"
    )


# The programs our script starts in the foreground (date for the timestamp, cat to save stdin,
# setsid for the detached delivery), with nothing else: the process floor of its design.
PROGRAMS = "ts=$(date +%s%N); cat >/dev/null; setsid /bin/true </dev/null >/dev/null 2>&1 & exit 0"


@dataclass
class Case:
    label: str
    command: str
    home: Path | None = None
    times: list[float] = field(default_factory=list)


@dataclass
class HookResult:
    """Wall times in ms per case label, and what the daemon-down runs spooled."""

    cases: dict[str, list[float]]
    spooled: int
    runs: int
    delivered: int

    def stats(self, key: str) -> Stats:
        return Stats.of(self.cases[key])


def _env(home: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home.parent),
        "TMUX_PANE": "%3",
        "TMUX": f"{home.parent}/tmux-0/default,4242,0",
    }
    return env


def measure(cases: list[Case], payload: bytes, n: int, homes: list[Path]) -> None:
    """n interleaved rounds over the cases; each run waits for the exit and for EOF."""
    for _ in range(n):
        for case in cases:
            for h in homes:
                settle_spool(h)
            env = _env(case.home or homes[0])
            start = time.perf_counter()
            done = subprocess.run(
                [SHELL, "-c", case.command], input=payload, capture_output=True, env=env, timeout=30
            )
            case.times.append((time.perf_counter() - start) * 1000)
            if done.stdout or done.stderr:
                raise RuntimeError(f"{case.label} printed: {done.stdout!r} {done.stderr!r}")


def run(root: Path, n: int) -> HookResult:
    """Measure every case n times against a real daemon started under root."""
    payload = json.dumps(PAYLOAD).encode() + b"\n"
    daemon = bench_daemon(root, "hooks")
    with running(daemon) as d:
        installed = d.home / "status-hook.sh"  # the daemon keeps this copy current
        down = root / "hooks-down" / "home"
        down.mkdir(parents=True)
        down.chmod(0o700)
        (down / "port").write_text(f"{closed_port()}\n")
        shutil.copy(d.home / "auth-header", down / "auth-header")
        cases = [
            Case("floor", "exit 0"),
            Case("programs", PROGRAMS),
            Case("hook_up", hook_command(installed, d.home), d.home),
            Case("curl_up", curl_command(d.home, d.port), d.home),
            Case("hook_down", hook_command(installed, down), down),
            Case("curl_down", curl_command(down, int((down / "port").read_text())), down),
        ]
        measure(cases, payload, n, [d.home, down])
        settle_spool(d.home)
        settle_spool(down)
        sid = str(PAYLOAD["session_id"])
        # Every hook run and every curl run (daemon up) is one event in the log (limit 1000).
        deadline = time.monotonic() + 10
        while True:
            got = len(d.api("GET", f"/api/sessions/{sid}/events")["events"])
            if got >= 2 * n or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    spooled = len(list((down / "spool").glob("*.spool")))
    return HookResult(
        cases={c.label: c.times for c in cases}, spooled=spooled, runs=n, delivered=got
    )


LABELS = {
    "floor": "floor: `sh -c 'exit 0'`",
    "programs": "floor of the script's design: date + cat + setsid &",
    "hook_up": "status-hook.sh (installed command), daemon up",
    "curl_up": "`sh -c 'curl … POST'`, daemon up",
    "hook_down": "status-hook.sh (installed command), daemon down",
    "curl_down": "`sh -c 'curl … POST'`, daemon down",
}


def main() -> None:
    n, result = run_from_args(__doc__, "runs per case (default 200)", "purplemux-bench-hooks-", run)
    print(f"{n} runs each, {os.path.realpath(SHELL)}, ms until exit and EOF")
    for key, label in LABELS.items():
        s = result.stats(key)
        print(f"{label:<52} min {s.min:7.2f}  median {s.median:7.2f}  max {s.max:8.2f}")
    print(f"daemon down: {result.spooled} of {n} spooled; daemon up: {result.delivered} logged")


if __name__ == "__main__":
    main()
