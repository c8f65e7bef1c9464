"""Section 13. Start: `purplemux serve` exec -> its first answer to /api/health."""

from __future__ import annotations

from pathlib import Path

from benchmarks import (
    start,
)
from benchmarks.report import (
    Section,
    Sizes,
    table,
    verdict,
)

GOAL = 0.5
"""Seconds from exec to the first answer (issue 27)."""


def section_start(root: Path, sizes: Sizes) -> Section:
    r = start.run(root, start.baseline_tree(root), sizes.start_runs)
    sec = Section("13. Start: `serve` → its first answer")
    rows = []
    for tree, label in (
        ("this", "this tree"),
        ("baseline", f"before issue 27 ({start.BASELINE_REF})"),
    ):
        first, ready = r.stats(tree), r.ready_stats(tree)
        rows.append(
            [
                label,
                f"{first.min:.3f} / **{first.median:.3f}** / {first.max:.3f}",
                f"{ready.min:.3f} / **{ready.median:.3f}** / {ready.max:.3f}",
            ]
        )
    sec.lines += [
        "A daemon with nothing to follow (an empty home and Claude dir) started from each tree "
        f"in turn, interleaved, {sizes.start_runs} time(s) each after one unmeasured start of "
        "each; `/api/health` polled every 5 ms on a fresh connection. First answer: the first "
        '200; ready: the first `"status": "ok"` (the daemon\'s app and its parts started). Since '
        "issue 27 `serve` answers `starting` at once and loads the daemon's app behind it "
        "(`purplemux/server/starting.py`); before it, the first answer came once the app had "
        "loaded, so both columns are the same. `python -m benchmarks.start`.",
        "",
        *table(
            [
                "daemon",
                "exec → first answer, s (min / median / max)",
                "exec → ready, s (min / median / max)",
            ],
            rows,
        ),
    ]
    now, then = r.stats("this").median, r.stats("baseline").median
    sec.summary.append(
        [
            "13",
            "start: `serve` exec → first `/api/health` answer (→ ready)",
            f"{now:.3f} s (→ {r.ready_stats('this').median:.3f} s); before issue 27 {then:.3f} s",
            f"≤ {GOAL} s",
            verdict(now <= GOAL),
        ]
    )
    return sec
