"""Section 5. Transcript tail: a big transcript followed from its end."""

# ruff: noqa: RUF001  (the report is prose: its multiplication signs, dashes and mu are meant)
from __future__ import annotations

from pathlib import Path

from benchmarks import (
    tail,
)
from benchmarks.common import Stats
from benchmarks.report import (
    Section,
    Sizes,
    ms,
    table,
    verdict,
)


def section_tail(root: Path, sizes: Sizes, cache: Path) -> Section:
    folder = cache / "tail"
    r = tail.run(folder, sizes.tail_big, sizes.tail_lines, sizes.tail_samples, sizes.long_line_runs)
    small, big = Stats.of(r.small), Stats.of(r.big)
    ts, tb, ll = Stats.of(r.tail_small), Stats.of(r.tail_big), Stats.of(r.long_line)
    mb = 2**20
    sec = Section("5. Transcript tail")
    sec.lines += [
        "A reader placed 64 KiB before the end of a real transcript catches up; then "
        f"{len(r.small)} lines (assistant answers with usage) are appended one at a time and "
        "each is read through the tailer's read step (open, fstat, seek to the offset, read, "
        "parse, events); the appended lines are cut off afterwards. End to end: append → the "
        "TranscriptTailer yields the event (inotify and the 10 ms debounce included), "
        f"{len(r.tail_small)} samples per file. Then one {r.long_bytes // mb} MB line (a pasted "
        "blob): the time to skip it and parse the line after it.",
        "",
        *table(
            ["figure", "min", "median", "max"],
            [
                [
                    f"per appended line, {r.small_bytes / mb:,.0f} MB transcript, µs",
                    ms(small.min),
                    ms(small.median),
                    ms(small.max),
                ],
                [
                    f"per appended line, {r.big_bytes / mb:,.0f} MB transcript, µs",
                    ms(big.min),
                    ms(big.median),
                    ms(big.max),
                ],
                [
                    f"append → tailer event, {r.small_bytes / mb:,.0f} MB, ms",
                    ms(ts.min),
                    ms(ts.median),
                    ms(ts.max),
                ],
                [
                    f"append → tailer event, {r.big_bytes / mb:,.0f} MB, ms",
                    ms(tb.min),
                    ms(tb.median),
                    ms(tb.max),
                ],
                [
                    f"skip a {r.long_bytes // mb} MB line and parse the next, ms",
                    ms(ll.min),
                    ms(ll.median),
                    ms(ll.max),
                ],
            ],
        ),
        "",
        f"- Ratio of the medians, {r.big_bytes / mb:,.0f} MB vs {r.small_bytes / mb:,.0f} MB: "
        f"**{r.ratio:.2f}**. Goal ≤ 1.5: {verdict(r.ratio <= 1.5)}.",
    ]
    sec.summary += [
        [
            "5",
            f"tail cost per line, {r.big_bytes / mb:,.0f} MB vs 1 MB transcript",
            f"{r.ratio:.2f}× ({ms(big.median)} vs {ms(small.median)} µs); 10 MB line "
            f"{ms(ll.median)} ms",
            "ratio ≤ 1.5",
            verdict(r.ratio <= 1.5),
        ],
    ]
    return sec
