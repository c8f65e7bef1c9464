"""Section 4. Scale: many sessions and big transcripts at once."""

# ruff: noqa: RUF001  (the report is prose: its multiplication signs, dashes and mu are meant)
from __future__ import annotations

from pathlib import Path

from benchmarks import (
    scale,
    start,
)
from benchmarks.report import (
    Section,
    Sizes,
    ms,
    table,
    verdict,
)


def section_scale(root: Path, sizes: Sizes, cache: Path) -> Section:
    size = sizes.scale
    r = scale.run(root, size, cache, baseline=start.baseline_tree(root))
    mb = 2**20
    st = {
        k: r.stats(k)
        for k in (
            "listed",
            "located",
            "transcripts",
            "complete",
            "summed",
            "rss_complete",
            "rss_idle",
            "rss_peak",
            "idle_cpu",
        )
    }
    sec = Section("4. Scale")
    restart_rows: list[list[str]] = []
    if r.restart is not None:
        again = r.restart
        restart_rows = [
            [
                "restart (stored offsets): complete `/api/sessions`, s",
                *([ms(again.complete)] * 3),
                "≤ 2 s",
                verdict(again.complete <= 2),
            ],
            [
                "restart: transcript bytes read, MB (fresh start: "
                f"{r.runs[0].bytes_read / mb:,.0f} MB)",
                f"{again.bytes_read / mb:,.1f}",
                *([""] * 4),
            ],
        ]
    lo, hi = size.small_bytes
    sec.lines += [
        f"A Claude config dir with {size.session_files:,} session files and "
        f"{size.transcripts:,} transcripts ({size.big} of {size.big_bytes // mb} MB, the rest "
        f"{lo >> 10}–{hi >> 10} KB; {r.generated_bytes / 2**30:.2f} GiB, generated once into the "
        f"cache), and {size.live_in_panes} tmux panes (one private tmux server, a window each). "
        f"{r.live} session files name a live process called `claude` ({size.live_in_panes} in "
        f"the panes, {size.live_outside} outside tmux); {r.dead} name pids that are not running "
        "(left by a crashed Claude: the daemon must ignore them). The live sessions' transcripts "
        f"include the {size.big} big ones; the daemon reads each transcript's tail first (state "
        "and last answer), then sums its history (tokens, cost) in the background. Time is from "
        "starting `purplemux serve` (a fresh database) until `/api/sessions` is complete — a "
        "WebSocket client follows the feed, and one GET then confirms it — and until every "
        "history is summed (`/api/health` counts those left). Idle CPU: psutil `cpu_times` of "
        "the daemon and its children (the tmux clients it runs), over "
        f"{size.idle_seconds:.0f} s that start 3 s after the histories are summed. "
        f"{len(r.runs)} start(s) on a fresh database, then one restart on the first one's "
        "(which continues each transcript from its stored offset), warm page cache (every "
        "file of the world is read just before each start, this tree's and the baseline's: "
        "this VM's host takes back page cache left untouched for a few minutes).",
        "",
        *table(
            ["figure", "min", "median", "max", "goal", ""],
            [
                [
                    label,
                    *(ms(getattr(st[key], at) * factor) for at in ("min", "median", "max")),
                    *goal,
                ]
                for label, key, factor, goal in [
                    ("all live sessions listed, s", "listed", 1, ("", "")),
                    ("… alive, with their pane, s", "located", 1, ("", "")),
                    ("… transcripts read (last answer shown), s", "transcripts", 1, ("", "")),
                    (
                        "**complete `/api/sessions`**, s",
                        "complete",
                        1,
                        ("≤ 2 s", verdict(st["complete"].median <= 2)),
                    ),
                    ("… histories summed (tokens, cost final), s", "summed", 1, ("", "")),
                    ("RSS when complete, MB", "rss_complete", 1 / mb, ("", "")),
                    (
                        "RSS after the idle spell, MB",
                        "rss_idle",
                        1 / mb,
                        ("≤ 80 MB", verdict(st["rss_idle"].median <= 80 * mb)),
                    ),
                    (
                        "peak RSS (VmHWM), MB",
                        "rss_peak",
                        1 / mb,
                        ("≤ 100 MB", verdict(st["rss_peak"].median <= 100 * mb)),
                    ),
                    (
                        "CPU while idle, % of one core",
                        "idle_cpu",
                        100,
                        ("≤ 1 %", verdict(st["idle_cpu"].median <= 0.01)),
                    ),
                ]
            ]
            + restart_rows,
        ),
    ]
    causes: list[str] = []
    if st["complete"].median > 2:
        slowest = max(("listed", "located", "transcripts"), key=lambda k: st[k].median)
        if slowest == "transcripts":
            causes.append(
                f"Start-up: the last part to finish is reading the tails of the live sessions' "
                f"transcripts ({r.live} of them; the {r.live_bytes / mb:,.0f} MB in all are "
                "summed in the background after)."
            )
        else:
            causes.append(
                f"Start-up: the slowest part is '{slowest}' ({ms(st[slowest].median)} s)."
            )
    if st["rss_peak"].median > 100 * mb:
        causes.append(
            f"Memory: a daemon with nothing to follow has {r.empty_rss / mb:.0f} MB resident "
            "(Python with FastAPI, uvicorn and pydantic; push and Redis load only when used); "
            "the rest is what following the sessions holds (see where, below) and what the "
            "allocator keeps after the start-up peak."
        )
    if st["idle_cpu"].median > 0.01:
        causes.append(
            f"Idle CPU: a daemon with nothing to follow uses {r.empty_idle_cpu * 100:.2f} % of "
            "a core while idle. Nothing in it ticks on a short period any more (inotify, pidfds "
            "and a tmux control client tell it of changes); what remains are the safety-net "
            "polls below, which start often after a start and back off while they find nothing."
        )
    if causes:
        sec.lines += ["", "**Why goals are missed.**", "", *(f"- {c}" for c in causes)]
    if r.idle_parts:
        sec.lines += ["", *_safety_nets(r)]
    if r.memory:
        sec.lines += [
            "",
            "Where the memory is: a further start on the same database with "
            "`PYTHONTRACEMALLOC=1`, read from `GET /api/debug/memory` once its sessions were "
            f"complete ({r.memory['rss_bytes'] / mb:.0f} MB resident, "
            f"{r.memory['traced']['current_bytes'] / mb:.1f} MB allocated by Python code and "
            "traced; the rest is the interpreter, C extensions' own allocations and the "
            "allocator's free space). The largest, by package:",
            "",
            *table(
                ["package", "MB"],
                [
                    [f"`{p['package']}`", f"{p['bytes'] / mb:.1f}"]
                    for p in r.memory["packages"][:12]
                ],
            ),
            "",
            "The largest single sites: "
            + "; ".join(f"`{t['where']}` {t['bytes'] / mb:.1f} MB" for t in r.memory["top"][:6])
            + ".",
        ]
    if r.baseline is not None:
        b = r.baseline
        sec.lines += [
            "",
            f"Beside it, one fresh start of the tree before issue 27's work "
            f"({start.BASELINE_REF}) on the same world, after this tree's starts:",
            "",
            *table(
                ["figure", "this tree (median)", f"before issue 27 ({start.BASELINE_REF})"],
                [
                    ["all live sessions listed, s", ms(st["listed"].median), ms(b.listed)],
                    ["complete `/api/sessions`, s", ms(st["complete"].median), ms(b.complete)],
                    [
                        "RSS when complete, MB",
                        f"{st['rss_complete'].median / mb:.1f}",
                        f"{b.rss_complete / mb:.1f}",
                    ],
                    [
                        "RSS after the idle spell, MB",
                        f"{st['rss_idle'].median / mb:.1f}",
                        f"{b.rss_idle / mb:.1f}",
                    ],
                    [
                        "peak RSS (VmHWM), MB",
                        f"{st['rss_peak'].median / mb:.1f}",
                        f"{b.rss_peak / mb:.1f}",
                    ],
                ],
            ),
        ]
    sec.summary += [
        [
            "4",
            "scale: start → complete `/api/sessions`",
            f"{ms(st['complete'].median)} s"
            + (f" (before issue 27: {ms(r.baseline.complete)} s)" if r.baseline else ""),
            "≤ 2 s",
            verdict(st["complete"].median <= 2),
        ],
        [
            "4",
            "scale: RSS after the idle spell; peak",
            f"{st['rss_idle'].median / mb:.0f} MB; {st['rss_peak'].median / mb:.0f} MB"
            + (
                f" (before issue 27: {r.baseline.rss_idle / mb:.0f} MB; "
                f"{r.baseline.rss_peak / mb:.0f} MB)"
                if r.baseline
                else ""
            ),
            "≤ 80 MB",
            verdict(st["rss_idle"].median <= 80 * mb),
        ],
        [
            "4",
            "scale: CPU while idle",
            f"{st['idle_cpu'].median * 100:.2f} % of a core"
            + (f" (before issue 27: {r.baseline.idle_cpu * 100:.2f} %)" if r.baseline else ""),
            "≤ 1 %",
            verdict(st["idle_cpu"].median <= 0.01),
        ],
    ]
    if r.idle_parts:
        later = _shares(r.idle_parts)[1]
        before = r.baseline_idle_parts
        sec.summary.append(
            [
                "4",
                "scale: the safety-net polls, backed off",
                f"{later:.3f} % of a core"
                + (f" (before issue 27: {_shares(before)[1]:.3f} %)" if before else ""),
                f"≤ {SAFETY_NETS_GOAL} %",
                verdict(later <= SAFETY_NETS_GOAL),
            ]
        )
    return sec


SAFETY_NETS_GOAL = 0.05
"""Issue 27: the safety-net polls, backed off, cost at most this % of a core in all."""


def _shares(parts: dict[str, tuple[float, float, float]]) -> tuple[float, float]:
    """% of a core of all the polls: at their first interval, and backed off."""
    first = sum(ms_ / every / 10 for ms_, every, _ in parts.values())
    later = sum(ms_ / every / 10 for ms_, _, every in parts.values())
    return first, later


def _cells(part: tuple[float, float, float]) -> list[str]:
    ms_, a, b = part
    return [f"{ms_:.1f}", f"{a:g} s / {b:g} s", f"{ms_ / a / 10:.2f} / {ms_ / b / 10:.3f}"]


def _safety_nets(r: scale.ScaleResult) -> list[str]:
    """The safety-net polls' table: this tree, and the baseline's beside it when it ran."""
    first, later = _shares(r.idle_parts)
    base = r.baseline_idle_parts
    # The polls are the same four in both trees; their names carry counts of this machine.
    base_rows = list(base.values()) if len(base) == len(r.idle_parts) else []
    head = ["safety-net poll", "CPU ms per round", "every: first / backed off"]
    head.append("% of a core: first / backed off")
    if base_rows:
        head += [
            f"before issue 27 ({start.BASELINE_REF}): CPU ms per round",
            "every: first / backed off",
            "% of a core: first / backed off",
        ]
    rows: list[list[object]] = []
    for i, (name, part) in enumerate(r.idle_parts.items()):
        row: list[object] = [name, *_cells(part)]
        if base_rows:
            row += _cells(base_rows[i])
        rows.append(row)
    total: list[object] = ["sum", "", "", f"{first:.2f} / {later:.3f}"]
    if base_rows:
        bfirst, blater = _shares(base)
        total += ["", "", f"{bfirst:.2f} / {blater:.3f}"]
    ok = verdict(later <= SAFETY_NETS_GOAL)
    return [
        "The safety-net polls, each timed on its own on the same world in a process of its own "
        f"per tree ({r.processes} processes on the machine; `benchmarks/safety_nets.py`, with "
        "this tree or the baseline's first on the path; CPU per round: the least of 5 batches "
        "of 10 rounds, after one round); CPU per round ÷ the interval = its "
        "share of a core, at the first interval (right after a start or a change) and once "
        f"it has backed off (nothing changed for a few minutes). Goal: ≤ {SAFETY_NETS_GOAL} % "
        f"backed off in all: {later:.3f} %, {ok}.",
        "",
        *table(head, [*rows, total]),
        "",
        "The idle spell above starts 3 s after the histories are summed, so it includes "
        "the first, frequent rounds of these polls.",
    ]
