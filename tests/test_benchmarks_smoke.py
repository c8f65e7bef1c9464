"""The benchmark runner works end to end (quick mode, tiny sizes); no timing is asserted."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RUN = REPO / "benchmarks" / "run.py"
SECTIONS = (
    "1. What Claude waits per hook",
    "2. Hook start → a WebSocket client sees the change",
    "3. Ingest",
    "4. Scale",
    "5. Transcript tail",
    "6. Real CLI signal latencies (end-to-end tier)",
    "8. Several hosts: a change on one host → another host's WebSocket client",
)
NUMBER = re.compile(r"\d+\.\d+|\d{2,}")


def sections(report: str) -> dict[str, str]:
    """Each `## ` section's body, by title."""
    parts = re.split(r"^## (.+)$", report, flags=re.M)
    return {title.strip(): body for title, body in zip(parts[1::2], parts[2::2], strict=True)}


def table_rows(body: str) -> list[str]:
    return [line for line in body.splitlines() if line.startswith("| ") and "---" not in line]


@pytest.mark.timeout(240)
def test_quick_run_writes_every_section_with_numbers(tmp_path: Path) -> None:
    e2e = tmp_path / "e2e-latencies.json"
    e2e.write_text(
        json.dumps(
            {
                "dialog_to_needs_input": [0.11, 0.12],
                "approval_to_busy": [0.2],
                "esc_to_idle": [0.3, 0.31, 0.29],
                "exit_to_ended": [1.1],
            }
        )
    )
    out = tmp_path / "BENCHMARKS.md"
    done = subprocess.run(
        [sys.executable, str(RUN), "--quick", "--output", str(out), "--e2e-json", str(e2e)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=230,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = out.read_text()
    found = sections(report)
    assert "failed" not in report.lower(), report
    for key in ("The machine", "Summary", *SECTIONS, "What was changed, and what it bought"):
        assert key in found, f"missing section {key!r}"
    machine = found["The machine"]
    for field in ("CPU", "Cores", "RAM", "OS", "Python", "tmux"):
        assert f"| {field} |" in machine
    for title in SECTIONS:
        rows = table_rows(found[title])
        assert len(rows) >= 2, f"{title}: no table"
        assert any(NUMBER.search(row) for row in rows[1:]), f"{title}: no numbers"
    summary = table_rows(found["Summary"])[1:]
    assert {row.split("|")[1].strip() for row in summary} >= {"1", "2", "3", "4", "5", "6"}
    for row in summary:
        assert "met" in row or "missed" in row, row
    # The goal is stated beside each figure, with its verdict.
    assert "≤ 3 ms" in report and "p99 ≤ 25 ms" in report and "≥ 3,000/s" in report
    assert "≤ 2 s" in report and "≤ 100 MB" in report and "≤ 1 %" in report
    assert "ratio ≤ 1.5" in report or "Goal ≤ 1.5" in report


def test_e2e_section_without_a_file_says_how_to_measure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    import run as bench_run  # benchmarks/run.py

    sec = bench_run.section_e2e(tmp_path / "absent.json")
    text = "\n".join(sec.lines)
    assert "Not measured in this run" in text
    assert "pytest tests/e2e" in text
    assert sec.summary[0][2] == "not measured in this run"
