"""Where the time went, through the real hook script and a real daemon: spans match the waits,
the summary adds them up, a restart changes nothing, and `purplemux report` prints the same."""

from __future__ import annotations

import io
import itertools
import json
import time
from typing import Any

import pytest

from purplemux.cli import main
from tests.support import Daemon, cli_sees
from tests.support.browser import hook, wait_state
from tests.support.screens import call

SID = "hist-1"
TOOL = {"tool_name": "Bash", "tool_input": {"command": "make deploy"}}
TOLERANCE = 0.5
"""Seconds a span may differ from the wait measured around the hook calls (a correctness check:
the hook script stamps the time when it starts, a few milliseconds after we do)."""


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def drive(d: Daemon, waits: dict[str, float]) -> list[float]:
    """idle → busy → needs-input → busy → review → dismissed; the time each change was made."""
    at: list[float] = []

    def step(name: str, state: str, **extra: Any) -> None:
        at.append(time.time())
        hook(d, SID, name, cwd="/w/history-demo", **extra)
        wait_state(d, SID, state)

    step("SessionStart", "idle", source="startup")
    time.sleep(waits["idle"])
    step("UserPromptSubmit", "busy", prompt="deploy it")
    hook(d, SID, "PreToolUse", cwd="/w/history-demo", tool_use_id="tu-1", **TOOL)
    time.sleep(waits["busy"])
    step("PermissionRequest", "needs-input", **TOOL)
    time.sleep(waits["needs-input"])
    step("PostToolUse", "busy", tool_use_id="tu-1", tool_response={}, **TOOL)
    time.sleep(waits["busy-2"])
    step("Stop", "review", last_assistant_message="Deployed.")
    time.sleep(waits["review"])
    at.append(time.time())
    assert d.api("POST", f"/api/sessions/{SID}/dismiss")["state"] == "idle"
    return at


def test_spans_match_the_waits_and_survive_a_restart(daemon: Daemon) -> None:
    waits = {"idle": 0.8, "busy": 0.6, "needs-input": 1.6, "busy-2": 0.7, "review": 1.2}
    at = drive(daemon, waits)
    measured = [b - a for a, b in itertools.pairwise(at)]

    spans = daemon.api("GET", f"/api/sessions/{SID}/timeline")["spans"]
    states = [s["state"] for s in spans]
    assert states == ["idle", "busy", "needs-input", "busy", "review", "idle"]
    assert spans[-1]["to"] is None
    for a, b in itertools.pairwise(spans):
        assert a["to"] == b["from"]  # consecutive, no gap
    durations = [s["to"] - s["from"] for s in spans[:-1]]
    for state, got, want in zip(states, durations, measured, strict=False):
        assert abs(got - want) <= TOLERANCE, (state, got, want)
    # The dismiss is stamped by the daemon when it took it.
    assert abs(spans[-1]["from"] - at[-1]) <= TOLERANCE

    since = at[0] - 5
    summary = daemon.api("GET", f"/api/summary?since={since}")
    row = next(s for s in summary["sessions"] if s["id"] == SID)
    needs, review = durations[2], durations[4]
    assert row["waited_on_you_s"] == pytest.approx(needs + review, abs=0.002)
    assert row["seconds"]["needs-input"] == pytest.approx(needs, abs=0.002)
    assert row["seconds"]["review"] == pytest.approx(review, abs=0.002)
    assert row["seconds"]["busy"] == pytest.approx(durations[1] + durations[3], abs=0.002)
    assert (row["prompts"], row["reviews"], row["needed_you"]) == (1, 1, 2)
    assert row["answer_median_s"] == pytest.approx(needs, abs=0.002)
    assert row["project"] == "history-demo"
    assert summary["totals"]["waited_on_you_s"] == pytest.approx(needs + review, abs=0.002)
    assert summary["totals"]["prompts"] == 1

    daemon.stop()
    again = Daemon(home=daemon.home, claude_dir=daemon.claude_dir, port=daemon.port).start()
    try:
        assert again.api("GET", f"/api/sessions/{SID}/timeline")["spans"] == spans
        after = again.api("GET", f"/api/summary?since={since}")
        assert after["totals"]["waited_on_you_s"] == summary["totals"]["waited_on_you_s"]
        assert after["totals"]["answer_median_s"] == summary["totals"]["answer_median_s"]
    finally:
        again.stop()


def test_bad_queries_get_a_reason(daemon: Daemon) -> None:
    hook(daemon, SID, "SessionStart", source="startup")
    wait_state(daemon, SID, "idle")
    assert call(daemon, "GET", "/api/sessions/nope/timeline") == (
        404,
        {"error": "no session 'nope'"},
    )
    for query in (
        "since=yesterday",
        "since=nan",
        "since=inf",
        "since=1e30",
        "since=1700000000000",  # milliseconds
        "since=1800000000&until=1700000000",
        "until=12",
    ):
        status, body = call(daemon, "GET", f"/api/summary?{query}")
        assert status == 400, query
        assert body["error"], query
    status, body = call(daemon, "GET", "/history?day=2024-13-40")
    assert status == 400 and "YYYY-MM-DD" in body["error"]
    # Nothing changed: the session is still there, as it was.
    assert daemon.api("GET", f"/api/sessions/{SID}/timeline")["spans"][0]["state"] == "idle"


def test_report_prints_the_summary_as_a_table(
    daemon: Daemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli_sees(daemon, monkeypatch)
    evil = "/w/evil\x1b[2J\x07name\u202e"
    hook(daemon, "r-1", "UserPromptSubmit", pane="%3", cwd=evil, prompt="go")
    hook(daemon, "r-1", "PermissionRequest", pane="%3", cwd=evil, **TOOL)
    wait_state(daemon, "r-1", "needs-input")
    hook(daemon, "r-2", "UserPromptSubmit", pane="%4", cwd="/w/quiet", prompt="go")
    wait_state(daemon, "r-2", "busy")

    out = io.StringIO()
    assert main(["report", "--json"], out=out) == 0
    data = json.loads(out.getvalue())
    assert {s["id"] for s in data["sessions"]} == {"r-1", "r-2"}
    assert data["totals"]["prompts"] == 1

    out = io.StringIO()
    assert main(["report", "--since", "1h"], out=out) == 0
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    lines = text.splitlines()
    assert lines[1].startswith("Claude waited on you ") and "1 prompt" in lines[1]
    head = lines[3].split()
    assert head[:5] == ["SESSION", "PANE", "WAITED", "PROMPTS", "MEDIAN"]
    rows = {line.split()[0]: line.split() for line in lines[4:]}
    assert rows["evilname"][1] == "%3"  # the whole escape sequence is gone, the text stays
    assert rows["evilname"][3] == "1"
    assert rows["quiet"][3] == "0"
    assert rows["total"][3] == "1"

    tty = Tty()
    assert main(["report"], out=tty) == 0
    assert "\033[1mSESSION" in tty.getvalue() and "\033[33;1m" in tty.getvalue()

    assert main(["report", "--since", "last tuesday"], out=io.StringIO()) == 2
