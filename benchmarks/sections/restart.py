"""Section 12. A start with a big live transcript: the last answer shown."""

from __future__ import annotations

from pathlib import Path

from benchmarks import (
    idle,
    restart,
    start,
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
    r = restart.run(root, world, base, cache=cache, before=start.baseline_tree(root))
    sec = Section("12. A start with a big live transcript: the last answer shown")
    rows = []
    for tree, label in (
        ("this", "this tree"),
        ("before", f"before issue 27 ({start.BASELINE_REF})"),
        ("baseline", f"baseline ({idle.BASELINE_REF})"),
    ):
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
        f"Beside it the commit before issue 27 ({start.BASELINE_REF}), and the commit before "
        f"issue 14 ({idle.BASELINE_REF}), which read a transcript from its first byte; "
        f"interleaved, {world.runs} round(s). Since issue 27 the daemon answers `/api/health` "
        "(`starting`) before its app has loaded: the last column counts from its first "
        '`"status": "ok"`. `python -m benchmarks.restart`.',
        "",
        *table(
            [
                "daemon",
                "start",
                "from `serve`: s (min / median / max)",
                'from `/api/health` saying `"status": "ok"`: s',
            ],
            rows,
        ),
    ]
    fresh, again = r.stats("this", "fresh").median, r.stats("this", "restart").median
    b_fresh = r.stats("baseline", "fresh").median
    p_again = r.stats("before", "restart").median
    p_fresh = r.stats("before", "fresh").median
    ready = r.stats("this", "restart").median - r.stats("this", "restart_ready").median
    sec.summary.append(
        [
            "12",
            f"start with a {r.transcript_bytes / 2**20:,.0f} MB live transcript → its last answer "
            "shown (restart / fresh)",
            f"{again:.2f} s / {fresh:.2f} s from `serve`; "
            f"{r.stats('this', 'restart_ready').median:.2f} s / "
            f"{r.stats('this', 'fresh_ready').median:.2f} s once ready "
            f"(before issue 27: {p_again:.2f} s / {p_fresh:.2f} s; before issue 14: fresh "
            f"{b_fresh:.2f} s / {r.stats('baseline', 'fresh_ready').median:.2f} s)",
            "≤ 1 s",
            verdict(again <= 1),
        ]
    )
    if again > 1:
        sec.lines += [
            "",
            f"**Why the goal is missed.** The daemon's app is ready {ready:.2f} s after `serve` "
            "starts (the median of the restarts; `/api/health` answers `starting` well before, "
            "see section 13): Python's start and the imports (FastAPI, uvicorn, pydantic and "
            "purplemux's own modules) on this machine. From there, the "
            "answer shows in the time in the last column: a restart reads only what was "
            "appended since its stored offset, a fresh start the file's tail.",
        ]
    return sec
