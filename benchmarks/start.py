"""Start: `purplemux serve` exec -> its first answer to GET /api/health, this tree and a baseline.

A daemon with an empty home and Claude dir (nothing to follow) is started from each tree in
turn, interleaved, and /api/health is polled every 5 ms (a fresh connection each time) until it
answers 200. Each daemon runs with its tree first on sys.path (`cwd` and PYTHONPATH), with the
same interpreter and libraries. The time counts Python's start, the imports, opening the store
and uvicorn binding its socket: what a user (or a service manager) waits before the daemon
answers. The baseline is the commit before issue 27's work (BASELINE_REF).

    python -m benchmarks.start [-n 10] [--baseline-ref REF]
"""

from __future__ import annotations

import argparse
import http.client
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import REPO, Stats, bench_daemon, tempdir

BASELINE_REF = "8512e9a"
"""The commit before issue 27 (the daemon's cost at the floor): what its sections compare with."""
POLL = 0.005


@dataclass
class StartResult:
    """Seconds from exec to the first 200 of /api/health, per tree ("this", "baseline")."""

    times: dict[str, list[float]] = field(default_factory=lambda: {"this": [], "baseline": []})

    def stats(self, tree: str) -> Stats:
        return Stats.of(self.times[tree])


def _health(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        conn.request("GET", "/api/health")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


def one(root: Path, name: str, tree: Path, timeout: float = 60) -> float:
    """Seconds from starting `python -m purplemux serve` (from `tree`) to its first answer."""
    daemon = bench_daemon(root, name)
    t0 = time.perf_counter()
    proc = daemon.spawn(
        log_path=daemon.home.parent / f"{name}.log",
        env={**daemon.env, "PYTHONPATH": str(tree)},
        cwd=tree,  # `-m` puts the working directory first on sys.path
    )
    try:
        while not _health(daemon.port):
            if proc.poll() is not None:
                raise RuntimeError(f"daemon exited: {daemon.logs()}")
            if time.perf_counter() - t0 > timeout:
                raise RuntimeError("daemon did not answer /api/health")
            time.sleep(POLL)
        return time.perf_counter() - t0
    finally:
        daemon.stop()


def run(root: Path, baseline: Path, rounds: int) -> StartResult:
    result = StartResult()
    # One unmeasured start of each first: bytecode compiled, files in the page cache.
    for label, tree in (("this", REPO), ("baseline", baseline)):
        one(root, f"warm-{label}", tree)
    for i in range(rounds):
        for label, tree in (("this", REPO), ("baseline", baseline)):
            result.times[label].append(one(root, f"{label}-{i}", tree))
    return result


def main() -> None:
    from benchmarks import idle

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("-n", type=int, default=10, help="starts per tree")
    parser.add_argument("--baseline-ref", default=BASELINE_REF)
    args = parser.parse_args()
    with tempdir("purplemux-bench-start-") as name:
        root = Path(name)
        base = idle.export(args.baseline_ref, root / "baseline-tree")
        res = run(root, base, args.n)
    for tree in res.times:
        s = res.stats(tree)
        print(f"{tree:8}  exec -> /api/health: {s.min:.3f} / {s.median:.3f} / {s.max:.3f} s")


if __name__ == "__main__":
    main()
