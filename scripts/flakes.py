"""Run tests again and again on a machine kept busy, and report every run that failed.

A test that passes alone can fail when the machine is loaded (a full test run next to it, a CI
box with two cores): this is the proof that it does not. Each run is a separate pytest process;
meanwhile K processes spin in a busy loop so the tests never have a core to themselves. The
burners are killed at the end, whatever happens (a failure, Ctrl-C, SIGTERM).

    .venv/bin/python -m scripts.flakes [--runs N] [--burners K] [--e2e] [TEST_ID ...]
    make flakes FLAKES_ARGS="--runs 10 --burners 3 tests/test_cli.py::test_x"

Without test ids it runs the test files changed in the last 15 commits (`git diff --name-only
HEAD~15 -- tests/`) that still exist; `--e2e` adds `-m e2e` (the tier that drives the real CLIs).
Exit 0 when every run passed, 1 when any failed (each failure reported with its failing test ids
and the tail of pytest's output), 2 when there is nothing to run.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

REPO = Path(__file__).resolve().parent.parent
CHANGED_SINCE = "HEAD~15"
TAIL_LINES = 60
"""Lines of pytest's output shown for each failed run."""
FAILED_LINE = re.compile(r"^(FAILED|ERROR) (\S+)")


@dataclass
class Run:
    number: int
    code: int
    seconds: float
    output: str

    @property
    def failed(self) -> bool:
        # 5: no tests collected (the ids deselected by -m, say) is not a flake.
        return self.code not in (0, 5)

    def failing_ids(self) -> list[str]:
        """The test ids pytest's short summary (-rfE) names as failed or in error."""
        ids = [m.group(1) + " " + m.group(2) for m in map(FAILED_LINE.match, self.lines()) if m]
        return list(dict.fromkeys(ids))

    def lines(self) -> list[str]:
        return self.output.splitlines()


def changed_test_files(since: str = CHANGED_SINCE) -> list[str]:
    """Test files changed in the last commits (and since), that still exist."""
    done = subprocess.run(
        ["git", "diff", "--name-only", since, "--", "tests/"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"flakes: git diff {since} failed: {done.stderr.strip()}")
    names = [n for n in done.stdout.split() if n.endswith(".py")]
    return [n for n in names if Path(n).name.startswith("test_") and (REPO / n).is_file()]


@contextmanager
def burning(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`count` processes each spinning one core, for as long as the block runs; then killed."""
    burners: list[subprocess.Popen[bytes]] = []

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)  # so the `finally` below kills the burners

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        for _ in range(count):
            burners.append(
                subprocess.Popen(
                    [sys.executable, "-c", "while True: pass"],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        yield burners
    finally:
        for proc in burners:
            if proc.poll() is None:
                proc.kill()
        for proc in burners:
            proc.wait()
        signal.signal(signal.SIGTERM, previous)


def run_once(number: int, pytest_args: Sequence[str]) -> Run:
    started = time.monotonic()
    done = subprocess.run(
        # No cache: others may be running the suite in this checkout (its lastfailed is theirs).
        [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", *pytest_args],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        check=False,
    )
    return Run(number, done.returncode, time.monotonic() - started, done.stdout)


def report(failures: list[Run], runs: int, burners: int, out: Sequence[str]) -> None:
    print()
    for run in failures:
        print(f"===== run {run.number} of {runs} FAILED (pytest exit {run.code}) =====")
        for test_id in run.failing_ids() or ["(no failing test id in the summary)"]:
            print(f"  {test_id}")
        print(f"----- the last {TAIL_LINES} lines of its output -----")
        print("\n".join(run.lines()[-TAIL_LINES:]))
        print()
    verdict = "no failure" if not failures else f"{len(failures)} failed"
    print(f"flakes: {runs} runs with {burners} burners of {' '.join(out)}: {verdict}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.flakes",
        description="Run tests N times with K CPU burners; report every failed run.",
    )
    parser.add_argument(
        "tests", nargs="*", help=f"test ids (default: test files changed since {CHANGED_SINCE})"
    )
    parser.add_argument("--runs", type=int, default=10, help="pytest runs (default 10)")
    parser.add_argument("--burners", type=int, default=3, help="busy-loop processes (default 3)")
    parser.add_argument("--e2e", action="store_true", help="add -m e2e (the real-CLI tier)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.burners < 0:
        parser.error("--runs must be at least 1 and --burners at least 0")
    tests = list(args.tests) or changed_test_files()
    if not tests:
        print(f"flakes: no test file changed since {CHANGED_SINCE}: name the tests to run")
        return 2
    pytest_args = [*tests, *(["-m", "e2e"] if args.e2e else [])]
    print(f"flakes: {args.runs} runs with {args.burners} burners on {os.cpu_count()} cores")
    print(f"flakes: pytest {' '.join(pytest_args)}", flush=True)
    failures: list[Run] = []
    try:
        with burning(args.burners):
            for number in range(1, args.runs + 1):
                run = run_once(number, pytest_args)
                state = "FAILED" if run.failed else "passed"
                print(f"run {number}/{args.runs}: {state} in {run.seconds:.1f} s", flush=True)
                if run.failed:
                    failures.append(run)
    except KeyboardInterrupt:  # the burners are gone already (burning's finally)
        print("flakes: interrupted", file=sys.stderr)
        return 130
    report(failures, args.runs, args.burners, pytest_args)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
