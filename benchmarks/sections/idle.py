"""Section 10. The daemon's own cost, side by side with the baseline."""

# ruff: noqa: RUF001  (the report is prose: its multiplication signs, dashes and mu are meant)
from __future__ import annotations

from pathlib import Path

from benchmarks import (
    idle,
    scale,
    start,
)
from benchmarks.common import Stats
from benchmarks.report import (
    FULL,
    Section,
    Sizes,
    table,
    verdict,
)


def section_idle(root: Path, sizes: Sizes) -> Section:
    world = idle.WORLD if sizes is FULL else scale.QUICK
    base = start.baseline_tree(root)  # the commit before issue 27, shared by the run's sections
    res = idle.run(
        base,
        world_size=world,
        idle=sizes.idle_seconds,
        events=sizes.idle_events,
        runs=sizes.idle_runs,
        codex_panes=idle.CODEX_PANES,
    )
    sec = Section("10. The daemon's own cost: idle, and per event with a tmux pane")
    rows: list[list[object]] = []
    figures: dict[str, tuple[float, float, float]] = {}
    for label, r in res.items():
        cpu = Stats.of([x * 100 for x in r.idle_cpu])
        pane, plain = Stats.of(r.us_per_event_pane), Stats.of(r.us_per_event_nopane)
        figures[label] = (cpu.median, pane.median, plain.median)
        rows.append(
            [
                f"before issue 27 ({start.BASELINE_REF})" if label == "baseline" else "this tree",
                f"{cpu.min:.2f} / {cpu.median:.2f} / {cpu.max:.2f}",
                f"{pane.median:,.0f}",
                f"{plain.median:,.0f}",
                f"{pane.median / plain.median:.2f}×",
            ]
        )
    n_codex = idle.CODEX_PANES
    this_placed, base_placed = res["this"].codex_placed, res["baseline"].codex_placed
    if idle.knows_codex(base):
        base_codex = (
            f"the baseline listed {min(base_placed, default=0)} of {n_codex} at each start too"
        )
    else:
        base_codex = (
            f"the baseline predates Codex support (issue 24: its tree has no agents/codex) and "
            f"listed {max(base_placed, default=0)} of them: to it the Codex panes are panes of "
            "the server running something else, and PURPLEMUX_CODEX_HOMES means nothing"
        )
    sec.lines += [
        f"A world of {world.transcripts} transcripts, {world.live_in_panes} live Claude "
        f"sessions in real tmux panes and {world.live_outside} outside tmux, and {n_codex} idle "
        "Codex TUIs in panes of the same tmux server, each in its own project folder. A Codex "
        "TUI is a stand-in (a copy of `sleep` named codex, run with CODEX_HOME set to the "
        "world's Codex home, which the daemon is told with PURPLEMUX_CODEX_HOMES); once it runs "
        "it opens a thread (the empty reference file a real TUI writes at its start) and its "
        "pane title is what Codex 0.171.0 draws with the run-state and thread-id items, "
        "`Ready | <thread id, first 29 characters>... | <project>`, so the daemon links the "
        "pane to its thread by the id in the title (the linker's strongest rung). The world is "
        "followed in turn by a daemon from this tree and one from the commit before issue 27 "
        f"({start.BASELINE_REF}, the baseline every section of this run compares with), "
        f"interleaved, {sizes.idle_runs} start(s) each. Before each idle spell this tree listed "
        f"{min(this_placed, default=0)} of the {n_codex} Codex threads (agent codex, idle, in "
        f"its pane) at every start; {base_codex}. Idle CPU: the daemon and its children "
        f"(running or reaped) over {sizes.idle_seconds:.0f} s, from 3 s after every session is "
        "listed, alive and in its pane (and, for a tree that knows Codex, every Codex thread "
        f"idle in its pane). Per event: {sizes.idle_events} hook POSTs one at a time "
        "(UserPromptSubmit and Stop alternating: each changes the state and the pane mark), to "
        "Claude sessions with a pane on the world's tmux server, then to sessions without one.",
        "",
        *table(
            [
                "daemon",
                "idle CPU, % of a core (min / median / max)",
                "CPU per event with a pane, µs",
                "without, µs",
                "ratio",
            ],
            rows,
        ),
    ]
    this_cpu, this_pane, this_plain = figures["this"]
    b_cpu, b_pane, b_plain = figures["baseline"]
    ratio = this_pane / this_plain
    if causes := idle_causes(this_cpu, this_pane, this_plain, b_plain):
        sec.lines += ["", "**Why goals are missed.**", "", *(f"- {c}" for c in causes)]
    sec.summary += [
        [
            "10",
            f"CPU while nothing happens ({world.transcripts} transcripts, "
            f"{world.live_in_panes} sessions in tmux panes, {n_codex} Codex panes)",
            f"{this_cpu:.2f} % of a core (baseline {b_cpu:.2f} %)",
            "≤ 0.2 %",
            verdict(this_cpu <= 0.2),
        ],
        [
            "10",
            "daemon CPU per event, session with a tmux pane vs without",
            f"{ratio:.2f}× ({this_pane:,.0f} vs {this_plain:,.0f} µs; "
            f"baseline {b_pane / b_plain:.2f}×)",
            "≤ 1.5×",
            verdict(ratio <= 1.5),
        ],
    ]
    return sec


def idle_causes(cpu: float, pane: float, plain: float, b_plain: float) -> list[str]:
    """Section 10's misses and their causes, from its figures (µs per event, % of a core)."""
    causes = []
    if cpu > 0.2:
        causes.append(
            f"Idle CPU ({cpu:.2f} %): nothing in the daemon ticks on a short period (inotify, "
            "pidfds and a tmux control client report changes), but the idle spell starts 3 s "
            "after the sessions are placed, while the safety-net polls still run at their first "
            "intervals (the process-table walk with `tmux list-panes` after 3, 6, 12 and 24 s, "
            "backing off to 60 s; the session-file and transcript re-checks likewise). The idle "
            "Codex panes add no timer: tmux tells of a title change through the control "
            "client's subscription. Section 4 times each poll per round and gives their share "
            "of a core at both intervals."
        )
    if pane / plain > 1.5:
        causes.append(
            f"Per event with a pane ({pane / plain:.2f}×): writing the pane's mark through the "
            f"tmux control client costs {pane - plain:,.0f} µs of CPU per change (the daemon's "
            "command and the reply, plus the `tmux -C` client it runs, which is counted with "
            f"it), against an event without a pane ({plain:,.0f} µs here, {b_plain:,.0f} µs "
            "in the baseline). The mark is "
            "one line on the client's stdin; what remains is tmux's own handling and the "
            "daemon's side of the exchange."
        )
    return causes
