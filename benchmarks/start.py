"""Start: `purplemux serve` exec -> its first answer to GET /api/health, this tree and a baseline.

A daemon with an empty home and Claude dir (nothing to follow) is started from each tree in
turn, interleaved, and /api/health is polled every 5 ms (a fresh connection each time) until it
answers 200 (the first answer), then until it says `"status": "ok"` (ready: the daemon's app and
its parts started; since issue 27 the first answer is `"starting"` while the app loads, see
purplemux.server.starting; before it, both were the same answer). Each daemon runs with its
tree first on sys.path (`cwd` and PYTHONPATH), with the same interpreter and libraries. The
time counts Python's start, the imports, opening the store and uvicorn binding its socket: what
a user (or a service manager) waits before the daemon answers. The baseline is the commit
before issue 27's work (BASELINE_REF).

    python -m benchmarks.start [-n 10] [--baseline-ref REF]
"""

from __future__ import annotations

import argparse
import http.client
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import REPO, Stats, bench_daemon, tempdir

BASELINE_REF = "8512e9a"
"""The commit before issue 27 (the daemon's cost at the floor): what its sections compare with."""
POLL = 0.005


def baseline_tree(root: Path) -> Path:
    """The tree of BASELINE_REF, exported once into `root` (the sections of a run share it)."""
    into = root / f"baseline-{BASELINE_REF}"
    if not (into / "purplemux").is_dir():
        from benchmarks import idle

        idle.export(BASELINE_REF, into)
    return into


@dataclass
class StartResult:
    """Seconds from exec to the first 200 of /api/health, and to "status": "ok", per tree
    ("this", "baseline")."""

    times: dict[str, list[float]] = field(default_factory=lambda: {"this": [], "baseline": []})
    ready: dict[str, list[float]] = field(default_factory=lambda: {"this": [], "baseline": []})

    def stats(self, tree: str) -> Stats:
        return Stats.of(self.times[tree])

    def ready_stats(self, tree: str) -> Stats:
        return Stats.of(self.ready[tree])


def _health(port: int) -> str | None:
    """The status /api/health answers (None: no answer yet)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        conn.request("GET", "/api/health")
        resp = conn.getresponse()
        body = resp.read()
        return str(json.loads(body).get("status")) if resp.status == 200 else None
    except (OSError, ValueError):
        return None
    finally:
        conn.close()


def one(root: Path, name: str, tree: Path, timeout: float = 60) -> tuple[float, float]:
    """Seconds from starting `python -m purplemux serve` (from `tree`) to its first answer, and
    to its answer saying it is ready."""
    daemon = bench_daemon(root, name)
    t0 = time.perf_counter()
    proc = daemon.spawn(
        log_path=daemon.home.parent / f"{name}.log",
        env={**daemon.env, "PYTHONPATH": str(tree)},
        cwd=tree,  # `-m` puts the working directory first on sys.path
    )
    first: float | None = None
    try:
        while (status := _health(daemon.port)) != "ok":
            if status is not None and first is None:
                first = time.perf_counter() - t0
            if proc.poll() is not None:
                raise RuntimeError(f"daemon exited: {daemon.logs()}")
            if time.perf_counter() - t0 > timeout:
                raise RuntimeError("daemon did not answer /api/health")
            time.sleep(POLL)
        ready = time.perf_counter() - t0
        return (ready if first is None else first), ready
    finally:
        daemon.stop()


def run(root: Path, baseline: Path, rounds: int) -> StartResult:
    result = StartResult()
    # One unmeasured start of each first: bytecode compiled, files in the page cache.
    for label, tree in (("this", REPO), ("baseline", baseline)):
        one(root, f"warm-{label}", tree)
    for i in range(rounds):
        for label, tree in (("this", REPO), ("baseline", baseline)):
            first, ready = one(root, f"{label}-{i}", tree)
            result.times[label].append(first)
            result.ready[label].append(ready)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("-n", type=int, default=10, help="starts per tree")
    parser.add_argument("--baseline-ref", default=BASELINE_REF)
    args = parser.parse_args()
    with tempdir("purplemux-bench-start-") as name:
        root = Path(name)
        from benchmarks import idle

        base = idle.export(args.baseline_ref, root / "baseline-tree")
        res = run(root, base, args.n)
    for tree in res.times:
        s, r = res.stats(tree), res.ready_stats(tree)
        print(
            f"{tree:8}  exec -> first answer: {s.min:.3f} / {s.median:.3f} / {s.max:.3f} s; "
            f"-> ready: {r.min:.3f} / {r.median:.3f} / {r.max:.3f} s"
        )


if __name__ == "__main__":
    main()
