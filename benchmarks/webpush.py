"""How long a Web Push send takes when the push service is slow (moved out of the tests).

Against the tests' fake push service (a real HTTP server on 127.0.0.1 that verifies VAPID and
decrypts the payload), with a fixed answer delay:
- parallel: N subscriptions, each answered after `--delay` s: the whole send vs N x delay;
- timeout: one subscription answered after 5 s, the sender's timeout 0.2 s x 2 tries.
tests/notify/test_webpush.py checks the behaviour (all POSTs arrive before the first answer; a
timed-out send fails that endpoint); this prints the seconds.

    .venv/bin/python -m benchmarks.webpush [-n 6] [--delay 0.4] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from purplemux.notify.vapid import load_or_create_keys
from purplemux.notify.webpush import WebPushSender
from tests.notify.fake_push_service import FakePushService, MemoryStore


async def _send(sender: WebPushSender) -> float:
    started = time.perf_counter()
    await sender.send({"title": "t", "body": "b"}, "high")
    return time.perf_counter() - started


def measure(n: int, delay: float, runs: int) -> tuple[list[float], list[float]]:
    """Seconds per parallel send of n, and per timed-out send."""
    with tempfile.TemporaryDirectory(prefix="purplemux-bench-") as root:
        keys = load_or_create_keys(Path(root))
        parallel, timeout = [], []
        with FakePushService(delay=delay) as slow:
            store = MemoryStore([slow.subscribe().to_json() for _ in range(n)])
            sender = WebPushSender(keys, store, timeout=30.0)
            try:
                parallel = [asyncio.run(_send(sender)) for _ in range(runs)]
            finally:
                sender.close()
        with FakePushService(delay=5.0) as stuck:
            store = MemoryStore([stuck.subscribe().to_json()])
            sender = WebPushSender(keys, store, timeout=0.2, tries=2, backoff=0.01)
            try:
                timeout = [asyncio.run(_send(sender)) for _ in range(runs)]
            finally:
                sender.close()
    return parallel, timeout


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("-n", type=int, default=6, help="subscriptions (default 6)")
    parser.add_argument("--delay", type=float, default=0.4, help="answer delay, s (default 0.4)")
    parser.add_argument("--runs", type=int, default=3, help="sends per case (default 3)")
    args = parser.parse_args()
    parallel, timeout = measure(args.n, args.delay, args.runs)
    print(
        f"{args.n} pushes, each answered after {args.delay:.2f} s: median "
        f"{statistics.median(parallel):.2f} s per send (one after another: "
        f"{args.n * args.delay:.2f} s)"
    )
    print(
        "one push answered after 5 s, timeout 0.2 s x 2 tries: median "
        f"{statistics.median(timeout):.2f} s per send"
    )


if __name__ == "__main__":
    main()
