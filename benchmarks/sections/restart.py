"""Section 12. A start with a big live transcript: the last answer shown."""

from __future__ import annotations

from pathlib import Path

from benchmarks import (
    idle,
    restart,
)
from benchmarks.report import (
    QUICK,
    Section,
    Sizes,
    table,
    verdict,
)


def section_restart(root: Path, sizes: Sizes, cache: Path) -> Section:
    world = restart.QUICK if sizes is QUICK else restart.WORLD
    base = idle.export(idle.BASELINE_REF, root / "restart-baseline-tree")
    r = restart.run(root, world, base, cache=cache)
    sec = Section("12. A start with a big live transcript: the last answer shown")
    rows = []
    for tree, label in (("this", "this tree"), ("baseline", f"baseline ({idle.BASELINE_REF})")):
        for case, what in (("fresh", "fresh database"), ("restart", "restart (same database)")):
            total, after = r.stats(tree, case), r.stats(tree, f"{case}_ready")
            rows.append(
                [
                    label,
                    what,
                    f"{total.min:.2f} / **{total.median:.2f}** / {total.max:.2f}",
                    f"{after.min:.2f} / **{after.median:.2f}** / {after.max:.2f}",
                ]
            )
    sec.lines += [
        f"One live session (a process called `claude`, outside tmux) whose transcript is "
        f"{r.transcript_bytes / 2**20:,.0f} MB. Before each start, while no daemon runs, a new "
        "turn is appended (a prompt and an answer with a text of its own); a WebSocket client "
        "of the feed times the start until the session shows that answer. fresh: a new "
        "database; restart: the database the fresh start left (with the file's stored offset). "
        f"The baseline is the commit before issue 14 ({idle.BASELINE_REF}), which read a "
        f"transcript from its first byte; interleaved, {world.runs} round(s). "
        "`python -m benchmarks.restart`.",
        "",
        *table(
            [
                "daemon",
                "start",
                "from `serve`: s (min / median / max)",
                "from answering `/api/health`: s",
            ],
            rows,
        ),
    ]
    fresh, again = r.stats("this", "fresh").median, r.stats("this", "restart").median
    b_fresh = r.stats("baseline", "fresh").median
    ready = r.stats("this", "restart").median - r.stats("this", "restart_ready").median
    sec.summary.append(
        [
            "12",
            f"start with a {r.transcript_bytes / 2**20:,.0f} MB live transcript → its last answer "
            "shown (restart / fresh)",
            f"{again:.2f} s / {fresh:.2f} s from `serve`; "
            f"{r.stats('this', 'restart_ready').median:.2f} s / "
            f"{r.stats('this', 'fresh_ready').median:.2f} s once it answers "
            f"(baseline fresh {b_fresh:.2f} s / {r.stats('baseline', 'fresh_ready').median:.2f} s)",
            "≤ 1 s",
            verdict(again <= 1),
        ]
    )
    if again > 1:
        sec.lines += [
            "",
            f"**Why the goal is missed.** The daemon itself answers {ready:.2f} s after `serve` "
            "starts (the median of the restarts): Python's start and the imports (FastAPI, "
            "uvicorn, pydantic and purplemux's own modules) on this machine. From there, the "
            "answer shows in the time in the last column: a restart reads only what was "
            "appended since its stored offset, a fresh start the file's tail.",
        ]
    return sec
