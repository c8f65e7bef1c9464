"""Where the time went, through the real hook script and a real daemon: spans match the waits,
the summary adds them up, a restart changes nothing, and `purplemux report` prints the same."""

from __future__ import annotations

import io
import itertools
import json
import shlex
import time
from pathlib import Path
from typing import Any

import pytest

from purplemux.cli import main
from tests.support import Daemon, cli_sees, fake_command, run_hook
from tests.support.browser import hook, wait_state
from tests.support.screens import call

SID = "hist-1"
TOOL = {"tool_name": "Bash", "tool_input": {"command": "make deploy"}}
TOLERANCE = 0.5
"""Seconds the dismiss's stamp (the daemon's own clock, when it took the request) may differ from
the time the test read just before sending it."""


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    """The hook script's clock, set by the test: a fake `date` first on the script's PATH prints
    the time it holds (the script stamps each event with `date +%s%N` as it starts)."""

    def __init__(self, folder: Path, at: float) -> None:
        self.file = folder / "now"
        self.path = fake_command(folder / "bin", "date", f"cat {shlex.quote(str(self.file))}\n")
        self.at = at
        self.file.write_text(f"{int(at * 1e9)}\n")

    def advance(self, seconds: float) -> float:
        self.at += seconds
        self.file.write_text(f"{int(self.at * 1e9)}\n")
        return self.at


def drive(d: Daemon, clock: Clock, waits: dict[str, float]) -> list[float]:
    """idle → busy → needs-input → busy → review → dismissed, each state held for its wait on the
    hook script's clock; the time each change was stamped (the dismiss: the daemon's own)."""
    at: list[float] = []

    def send(name: str, **extra: Any) -> None:
        payload = {"session_id": SID, "hook_event_name": name, "cwd": "/w/history-demo", **extra}
        run_hook(d.home, payload, path=clock.path)

    def step(name: str, state: str, **extra: Any) -> None:
        at.append(clock.at)
        send(name, **extra)
        wait_state(d, SID, state)

    step("SessionStart", "idle", source="startup")
    clock.advance(waits["idle"])
    step("UserPromptSubmit", "busy", prompt="deploy it")
    send("PreToolUse", tool_use_id="tu-1", **TOOL)
    clock.advance(waits["busy"])
    step("PermissionRequest", "needs-input", **TOOL)
    clock.advance(waits["needs-input"])
    step("PostToolUse", "busy", tool_use_id="tu-1", tool_response={}, **TOOL)
    clock.advance(waits["busy-2"])
    step("Stop", "review", last_assistant_message="Deployed.")
    at.append(time.time())
    assert d.api("POST", f"/api/sessions/{SID}/dismiss")["state"] == "idle"
    return at


def test_spans_match_the_waits_and_survive_a_restart(daemon: Daemon, tmp_path: Path) -> None:
    waits = {"idle": 0.8, "busy": 0.6, "needs-input": 1.6, "busy-2": 0.7, "review": 1.2}
    # The script's clock starts in the past, so that the review (ended by the daemon's own
    # clock, at the dismiss) has lasted at least its wait when the test dismisses it.
    clock = Clock(tmp_path / "clock", time.time() - sum(waits.values()))
    at = drive(daemon, clock, waits)
    measured = [b - a for a, b in itertools.pairwise(at)]
    assert measured[:4] == pytest.approx(list(waits.values())[:4], abs=1e-6)
    assert measured[4] >= waits["review"]

    spans = daemon.api("GET", f"/api/sessions/{SID}/timeline")["spans"]
    states = [s["state"] for s in spans]
    assert states == ["idle", "busy", "needs-input", "busy", "review", "idle"]
    assert spans[-1]["to"] is None
    for a, b in itertools.pairwise(spans):
        assert a["to"] == b["from"]  # consecutive, no gap
    durations = [s["to"] - s["from"] for s in spans[:-1]]
    # Stamped by the script on the test's clock: each span is exactly its wait.
    for state, got, want in zip(states[:4], durations, measured, strict=False):
        assert got == pytest.approx(want, abs=1e-6), (state, got, want)
    assert abs(durations[4] - measured[4]) <= TOLERANCE, ("review", durations[4], measured[4])
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
    assert head[:6] == ["SESSION", "AGENT", "PANE", "WAITED", "PROMPTS", "MEDIAN"]
    rows = {line.split()[0]: line.split() for line in lines[4:]}
    assert rows["evilname"][1:3] == ["Claude", "%3"]  # the escape sequence is gone, the text stays
    assert rows["evilname"][4] == "1"
    assert rows["quiet"][4] == "0"

    # A Codex session waiting too: the headline names each agent's wait, the rows their agent.
    hook(daemon, "cx-1", "UserPromptSubmit", agent="codex", cwd="/w/codexy", prompt="go")
    hook(daemon, "cx-1", "PermissionRequest", agent="codex", cwd="/w/codexy", **TOOL)
    wait_state(daemon, "cx-1", "needs-input")
    out = io.StringIO()
    assert main(["report", "--since", "1h"], out=out) == 0
    lines = out.getvalue().splitlines()
    assert lines[1].startswith("Your agents waited on you "), lines[1]
    each = lines[1].split("(", 1)[1].split(")", 1)[0]
    assert sorted(part.split()[0] for part in each.split(", ")) == ["Claude", "Codex"]
    rows = {line.split()[0]: line.split() for line in lines[4:]}
    assert rows["codexy"][1:3] == ["Codex", "-"]  # no pane: Codex hooks never name one
    out = io.StringIO()
    assert main(["report", "--json"], out=out) == 0
    agents = json.loads(out.getvalue())["agents"]
    assert set(agents) == {"claude", "codex"}, agents
    assert agents["codex"]["prompts"] == 1, agents
    assert rows["total"][3] == "2"  # (its AGENT cell is empty) one prompt of each agent

    tty = Tty()
    assert main(["report"], out=tty) == 0
    assert "\033[1mSESSION" in tty.getvalue() and "\033[33;1m" in tty.getvalue()

    assert main(["report", "--since", "last tuesday"], out=io.StringIO()) == 2
