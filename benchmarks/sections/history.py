"""Section 9. History: timelines and the day's summary."""

# ruff: noqa: RUF001  (the report is prose: its multiplication signs, dashes and mu are meant)
from __future__ import annotations

import math
from pathlib import Path

from benchmarks import (
    history,
)
from benchmarks.report import (
    Section,
    Sizes,
    ms,
    table,
    verdict,
)


def section_history(root: Path, sizes: Sizes) -> Section:
    """9. Timelines and the day's summary, folded again from the event log."""
    r = history.run(root, sizes.history_sessions, sizes.history_events, runs=1)
    n = r.sessions * r.events
    warm = r.http_warm.median if r.http_warm else math.nan
    one = r.http_one_changed.median if r.http_one_changed else math.nan
    timeline = r.http_timeline.median if r.http_timeline else math.nan
    sec = Section("9. History: timelines and the day's summary")
    sec.lines += [
        f"`python -m benchmarks.history --sessions {r.sessions} --events {r.events}`: a seeded "
        "day of "
        f"{r.sessions:,} sessions × {r.events} events ({n:,} events: prompts, tools, permission "
        "dialogs, transcript token totals, stops, dismissals) in a real SQLite event log. Every "
        "timeline is the session's log folded again through the state machine (the same `step` "
        "as the live badge, so it is µs per event of the machine itself); a daemon keeps the "
        "replays and folds a session again only when its log changed. The first summary after "
        "a start folds everything (cold).",
        "",
        *table(
            ["what", "measured", "goal"],
            [
                [
                    "fold + summary, events already in memory",
                    f"{r.fold.median:.2f} s ({r.fold.median / n * 1e6:.0f} µs/event)",
                    "",
                ],
                ["read + decode + fold + summary from SQLite", f"{r.store.median:.2f} s", ""],
                [
                    "GET /api/summary, first after a start (cold)",
                    f"{r.http_cold:.2f} s",
                    f"≤ {history.GOAL_COLD_S:.0f} s",
                ],
                [
                    "GET /api/summary, nothing new",
                    f"{ms(warm * 1000)} ms",
                    f"≤ {history.GOAL_WARM_MS:.0f} ms",
                ],
                [
                    "POST one hook, then GET /api/summary (one session folded again)",
                    f"{ms(one * 1000)} ms",
                    f"≤ {history.GOAL_WARM_MS:.0f} ms",
                ],
                [
                    f"GET /api/sessions/{{id}}/timeline ({r.events} events)",
                    f"{ms(timeline * 1000)} ms",
                    f"≤ {history.GOAL_TIMELINE_MS:.0f} ms",
                ],
            ],
        ),
        "",
        f"The day's summary it computed: Claude waited on you {r.waited_s / 3600:.1f} h over "
        f"{r.prompts:,} prompts (a check that the fold did the work).",
    ]
    sec.summary.append(
        [
            "9",
            f"summary of {r.sessions:,} sessions × {r.events} events: cold / warm / timeline",
            f"{r.http_cold:.1f} s / {ms(warm * 1000)} ms / {ms(timeline * 1000)} ms",
            f"≤ {history.GOAL_COLD_S:.0f} s / {history.GOAL_WARM_MS:.0f} ms / "
            f"{history.GOAL_TIMELINE_MS:.0f} ms",
            verdict(
                r.http_cold <= history.GOAL_COLD_S
                and warm * 1000 <= history.GOAL_WARM_MS
                and one * 1000 <= history.GOAL_WARM_MS
                and timeline * 1000 <= history.GOAL_TIMELINE_MS
            ),
        ]
    )
    return sec
