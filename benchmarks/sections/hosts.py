"""Section 11. Several hosts: a change on one host to another host's WebSocket client."""

from __future__ import annotations

from pathlib import Path

from benchmarks import (
    hosts,
)
from benchmarks.report import (
    Section,
    Sizes,
    ms,
    table,
    verdict,
)


def section_hosts(root: Path, sizes: Sizes) -> Section:
    result = hosts.run(root / "hosts", sizes.hosts_samples)
    remote, local = result.stats()
    goal = 1500.0
    ok = remote.p99 <= goal and result.timeouts == 0
    sec = Section("11. Several hosts: a change on one host → another host's WebSocket client")
    sec.lines += [
        "A real `redis-server` (loopback, no persistence) and two daemons as if on two machines, "
        "each with its own home. A sample POSTs one hook event to the owner (UserPromptSubmit → "
        "busy, Stop → review, alternating) and ends when the other daemon's `/api/stream` "
        "client receives the new state; the owner's own feed, in the same sample, is the "
        f"baseline. {sizes.hosts_samples} samples (`benchmarks/hosts.py`).",
        "",
        *table(
            ["path", "samples", "p50 ms", "p99 ms", "min ms", "max ms", "timeouts", "goal"],
            [
                [
                    "POST → another host's feed (through Redis)",
                    remote.n,
                    ms(remote.median),
                    ms(remote.p99),
                    ms(remote.min),
                    ms(remote.max),
                    result.timeouts,
                    f"p99 ≤ {goal:.0f} ms: {verdict(ok)}",
                ],
                [
                    "POST → the owner's own feed (baseline)",
                    local.n,
                    ms(local.median),
                    ms(local.p99),
                    ms(local.min),
                    ms(local.max),
                    result.timeouts,
                    "",
                ],
            ],
        ),
    ]
    sec.summary.append(
        [
            "11",
            "a change on one host → another host's feed, p99",
            f"{ms(remote.p99)} ms (p50 {ms(remote.median)})",
            f"p99 ≤ {goal:.0f} ms",
            verdict(ok),
        ]
    )
    return sec
