"""The e2e tier's timings and latencies, summed up at the end of the run (registered by
tests/conftest.py's pytest_plugins, so the main process has it even when it collects nothing).

Under pytest-xdist the tests run in workers: each hands its timings and lines to the main
process through ``workeroutput``, and the main process prints them all once. The lists are
here, in a module imported under one name only: pytest imports tests/e2e's modules as
``e2e.harness`` and others import ``tests.e2e.harness``, two copies of that module."""

from __future__ import annotations

from typing import Any

import pytest

TIMINGS: list[tuple[str, float]] = []
"""(what, seconds) of this process's e2e tests (tests/e2e/harness.py's record_timing)."""
REPORT_LINES: list[str] = []
"""More lines for the summary (the latencies against their targets)."""


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: its results go to the main process
        workeroutput["e2e_timings"] = [[name, seconds] for name, seconds in TIMINGS]
        workeroutput["e2e_report_lines"] = list(REPORT_LINES)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist, in the main process: a worker finished; keep what it measured."""
    output = getattr(node, "workeroutput", None) or {}
    TIMINGS.extend((str(name), float(seconds)) for name, seconds in output.get("e2e_timings", []))
    REPORT_LINES.extend(output.get("e2e_report_lines", []))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if hasattr(terminalreporter.config, "workerinput"):
        return  # a worker: the main process prints everything once
    if REPORT_LINES:
        terminalreporter.write_sep("-", "e2e latencies")
        for line in REPORT_LINES:
            terminalreporter.write_line(line)
    if not TIMINGS:
        return
    by_name: dict[str, list[float]] = {}
    for name, seconds in TIMINGS:
        by_name.setdefault(name, []).append(seconds)
    terminalreporter.write_sep("-", "e2e timings (the real CLIs with the fake APIs)")
    for name, values in by_name.items():
        terminalreporter.write_line(
            f"{name}: n={len(values)} min={min(values):.2f}s "
            f"median={sorted(values)[len(values) // 2]:.2f}s max={max(values):.2f}s"
        )
