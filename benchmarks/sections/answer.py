"""Section 8. Answering a permission prompt: the click to Claude running the tool."""

from __future__ import annotations

import json
import subprocess
import sys

from benchmarks.common import REPO, Stats
from benchmarks.report import (
    QUICK,
    Section,
    Sizes,
    table,
    verdict,
)

ANSWER_TARGET = 1.0
"""Seconds from answering a settled permission dialog to the tool having run (median)."""


def section_answer(sizes: Sizes) -> Section:
    """8. Answering a prompt (benchmarks/answer_latency.py): click to the tool having run."""
    sec = Section("8. Answering a permission prompt: the click to Claude running the tool")
    if sizes is QUICK:  # it drives the real Claude CLI: minutes, not a smoke run
        sec.lines.append(
            "Not measured in quick mode: run `.venv/bin/python -m benchmarks.answer_latency` "
            "or `make bench`."
        )
        return sec
    n = 5
    cmd = [sys.executable, "-m", "benchmarks.answer_latency", "-n", str(n), "--json"]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"answer_latency.py failed: {out.stderr.strip()[-500:]}")
    data = json.loads(out.stdout.strip().splitlines()[-1])
    rows: list[list[object]] = []
    labels = {
        "settled": "dialog on screen ≥ 2 s",
        "fresh": "answered as soon as /screen showed it",
    }
    for case, label in labels.items():
        for key, what in (("response", "answer call returned"), ("tool_ran", "PostToolUse")):
            s = Stats.of([float(x[key]) for x in data[case]])
            rows.append([label, what, s.n, f"{s.min:.3f}", f"{s.median:.3f}", f"{s.max:.3f}"])
    sec.lines += [
        f"The real daemon and the real Claude Code {data['version']} CLI in tmux (manual "
        "permission mode, the fake Messages API): `POST /api/sessions/{id}/answer` with the "
        'prompt id from `/screen` and option "Yes", timed from just before the call. '
        '"fresh" includes the wait for Claude\'s key guard (the daemon answers a dialog only '
        "once it has been on screen 1.5 s). `.venv/bin/python -m benchmarks.answer_latency`.",
        "",
        *table(["case", "until", "n", "min s", "median s", "max s"], rows),
    ]
    settled = Stats.of([float(x["tool_ran"]) for x in data["settled"]])
    sec.summary.append(
        [
            "8",
            "answer → tool ran (dialog on screen ≥ 2 s, median)",
            f"{settled.median:.3f} s",
            f"≤ {ANSWER_TARGET} s",
            verdict(settled.median <= ANSWER_TARGET),
        ]
    )
    return sec
