"""`python -m benchmarks.soak`, smoked: a few seconds, a few sessions; each event sent is logged."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support import REPO

SOAK = ["-m", "benchmarks.soak"]  # run from the repository, as a package module


def test_soak_smoke_sent_equals_logged() -> None:
    done = subprocess.run(
        [sys.executable, *SOAK, "--seconds", "5", "--sessions", "3", "--json"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True
    assert report["sent"] > 0
    assert report["sent"] == report["logged"] == report["distinct_logged"]
    assert report["spool_left"] == 0 and report["hook_failures"] == 0
    assert report["log_errors"] == 0
    for when in ("start", "peak", "end"):
        assert report[when]["rss_mib"] > 0 and report[when]["fds"] > 0


def test_soak_table_output() -> None:
    done = subprocess.run(
        [sys.executable, *SOAK, "--seconds", "2", "--sessions", "2"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    sent = next(line for line in lines if line.startswith("events sent")).split()[2]
    logged = next(line for line in lines if line.startswith("events logged")).split()[2]
    assert sent == logged and int(sent) > 0
    assert any(line.startswith("daemon RSS (MiB)") for line in lines)
    assert any(line.startswith("open fds") for line in lines)
    assert lines[-1].startswith("result: OK")
