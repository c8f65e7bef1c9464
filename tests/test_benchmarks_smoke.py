"""The benchmark runner works end to end (quick mode, tiny sizes); no timing is asserted."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import hook_latency, report
from benchmarks.sections import e2e as e2e_section

REPO = Path(__file__).resolve().parent.parent
RUN = ["-m", "benchmarks.run"]  # run from the repository, as `make bench` does
SECTIONS = (
    "1. What Claude waits per hook",
    "2. Hook start → a WebSocket client sees the change",
    "3. Ingest",
    "4. Scale",
    "5. Transcript tail",
    "6. Real CLI signal latencies (end-to-end tier)",
    "9. History: timelines and the day's summary",
    "11. Several hosts: a change on one host → another host's WebSocket client",
    "12. A start with a big live transcript: the last answer shown",
    "13. Start: `serve` → its first answer",
)
NUMBER = re.compile(r"\d+\.\d+|\d{2,}")


def sections(report: str) -> dict[str, str]:
    """Each `## ` section's body, by title."""
    parts = re.split(r"^## (.+)$", report, flags=re.M)
    return {title.strip(): body for title, body in zip(parts[1::2], parts[2::2], strict=True)}


def table_rows(body: str) -> list[str]:
    return [line for line in body.splitlines() if line.startswith("| ") and "---" not in line]


@pytest.mark.timeout(660)
def test_quick_run_writes_every_section_with_numbers(tmp_path: Path) -> None:
    e2e = tmp_path / "e2e-latencies.json"
    e2e.write_text(
        json.dumps(
            {
                "dialog_hook_to_needs_input": [0.05, 0.06, 0.04, 0.05, 0.07],
                "dialog_to_needs_input": [0.11, 0.12],
                "approval_to_busy": [0.2, 0.21, 0.19, 0.2, 0.22],
                "esc_to_idle": [0.3, 0.31, 0.29, 0.3, 0.32],
                "exit_to_ended": [1.1, 1.0, 1.2, 1.1, 1.1],
                "screen_poll_step_s": [0.02, 0.03],
            }
        )
    )
    out = tmp_path / "BENCHMARKS.md"
    done = subprocess.run(
        [sys.executable, *RUN, "--quick", "--output", str(out), "--e2e-json", str(e2e)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=640,
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
    # The header says what this run measured and what it only read.
    head = report.split("## The machine")[0]
    assert "sections 1, 2, 3, 4, 5, 7" in head
    assert f"section 6 from `{e2e}`" in head
    assert "kept by hand" in head
    # The goal is stated beside each figure, with its verdict.
    assert "≤ 3 ms" in report and "p99 ≤ 25 ms" in report and "≥ 3,000/s" in report
    assert "≤ 2 s" in report and "≤ 100 MB" in report and "≤ 1 %" in report
    assert "ratio ≤ 1.5" in report or "Goal ≤ 1.5" in report
    # The safety nets are timed for both trees: the baseline's column has numbers too.
    nets = [row for row in table_rows(found["4. Scale"]) if row.startswith("| sum |")]
    assert len(nets) == 1 and len(NUMBER.findall(nets[0])) == 4, nets
    assert "before issue 27" in found["4. Scale"] and "backed off in all" in found["4. Scale"]


def test_e2e_section_without_a_file_says_how_to_measure(tmp_path: Path) -> None:
    sec = e2e_section.section_e2e(tmp_path / "absent.json")
    text = "\n".join(sec.lines)
    assert "Not measured in this run" in text
    assert "pytest tests/e2e" in text
    assert sec.summary[0][2] == "not measured in this run"


def test_e2e_section_judges_the_hook_stamp_and_needs_five_samples(tmp_path: Path) -> None:
    e2e = tmp_path / "e2e.json"
    e2e.write_text(
        json.dumps(
            {
                "dialog_hook_to_needs_input": [0.05, 0.06, 0.04, 0.05, 0.3],
                "dialog_to_needs_input": [-0.02, 0.1],
                "approval_to_busy": [0.2, 0.3],
                "esc_to_idle": [0.2, 0.2, 0.2, 0.2, 0.2],
                "exit_to_ended": [1.0, 1.0, 1.0, 1.0, 1.0],
                "screen_poll_step_s": [0.02, 0.04, 0.03],
            }
        )
    )
    sec = e2e_section.section_e2e(e2e)
    rows = {r.split("|")[1].strip(): r for r in sec.lines if r.startswith("| ")}
    hook_row = rows["PermissionRequest hook start → needs-input"]
    assert "| 5 | 0.040 | 0.050 | 0.300 | ≤ 0.25 s | met |" in hook_row
    approval = next(r for k, r in rows.items() if k.startswith("dialog approved"))
    assert "too few to judge (n < 5)" in approval
    screen = next(r for k, r in rows.items() if "screen poll" in k)
    assert "step 30 ms" in screen and "not judged" in screen
    assert sec.source.startswith(f"`{e2e}` (written ")
    [summary] = sec.summary
    # From the targets in the code: Claude's, then Codex's (the same).
    assert summary[3] == "0.25 s / 0.5 s / 0.5 s / 2 s / 0.25 s / 0.5 s / 0.5 s / 2 s"
    assert "negative latency" in "\n".join(sec.lines)


def test_e2e_targets_are_the_e2e_tiers_targets() -> None:
    from tests.e2e.test_codex_daemon_e2e import CODEX_TARGETS
    from tests.e2e.test_daemon_e2e import TARGETS

    tiers = {**TARGETS, **CODEX_TARGETS}
    assert {k: t for k, (_, t) in e2e_section.E2E_TARGETS.items()} == {
        k: t for k, (_, t) in tiers.items() if k in e2e_section.E2E_TARGETS
    }
    assert set(tiers) >= set(e2e_section.E2E_TARGETS) | set(e2e_section.E2E_EXTRA)


def test_header_names_what_was_measured_read_and_hand_kept() -> None:
    sections = [
        report.Section("1. What Claude waits per hook"),
        report.Section("2. Hook start"),
        report.Section("tail", failed=True),
        report.Section("6. Real CLI", source="`e2e.json` (written 2026-01-01 10:00)"),
    ]
    meta = {"when": "2026-01-02 03:04 UTC", "mode": "full mode", "duration": "12.0 min"}
    text = report.header(sections, meta)
    assert "Measured in the run of 2026-01-02 03:04 UTC (full mode, 12.0 min): sections 1, 2," in (
        text
    )
    assert "Failed in this run: sections tail." in text
    assert "section 6 from `e2e.json` (written 2026-01-01 10:00)" in text
    assert "`benchmarks/changes.md`" in text
    assert "every figure" not in text


def test_facts_in_the_text_come_from_the_run() -> None:
    assert report.payload_bytes() == len(json.dumps(hook_latency.PAYLOAD).encode()) + 1
    libs = report.curl_libraries()
    assert libs is not None and libs > 0  # curl is installed by make test-deps
