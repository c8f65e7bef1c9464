"""Claude's background jobs, jobs/<id>/state.json (agents/claude/jobs.py): the translation on
the real 2.1.332 captures, and the watcher on real files (inotify, no timer)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents.claude.jobs import JobWatcher, error_kind, job_event
from purplemux.agents.claude.sessions import parse_session_file, status_event
from purplemux.core import events as ev
from tests.support import wait_for_async
from tests.support.transcripts import collect

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "claude-code-2.1.332" / "bg"


def states() -> list[tuple[str, dict[str, Any]]]:
    """(job id, state.json) for every change captured, in order."""
    out = []
    for line in (SAMPLES / "jobs-files-over-time.jsonl").read_text().splitlines():
        row = json.loads(line)
        if isinstance(row.get("content"), dict) and "state" in row["content"]:
            out.append((row["file"].split("/")[-2], row["content"]))
    return out


def first(job: str, **want: str) -> dict[str, Any]:
    return next(c for j, c in states() if j == job and all(c.get(k) == v for k, v in want.items()))


def test_a_permission_dialog_is_needs_input_for_the_tool_it_asks_about() -> None:
    e = job_event("4c5f61e3", first("4c5f61e3", tempo="blocked"))
    assert isinstance(e, ev.StatusWaiting)
    assert (e.waiting_for, e.job_id, e.source) == ("approve Bash: touch x.txt", "4c5f61e3", "job")
    assert e.session_id == "4c5f61e3-ea97-4eb0-b032-7b77830348c6" and e.cwd == "/home/user/proj"


def test_a_question_is_needs_input_for_the_question() -> None:
    e = job_event("ffa4bf08", first("ffa4bf08", tempo="blocked"))
    assert isinstance(e, ev.StatusWaiting)
    assert e.waiting_for is not None and e.waiting_for.startswith("answer: Which colour")


def test_a_running_turn_is_busy_and_a_plain_answers_idle_says_nothing() -> None:
    assert isinstance(job_event("4c5f61e3", first("4c5f61e3", tempo="active")), ev.StatusBusy)
    # working / idle: the Stop hook and the session file say the turn ended (review or idle).
    assert job_event("20eafdc2", first("20eafdc2", tempo="idle")) is None


def test_done_is_the_end_of_the_turn_with_its_result() -> None:
    e = job_event("b79e31e6", first("b79e31e6", state="done"))
    assert isinstance(e, ev.Stop) and e.last_message == "the scripted task is finished"


def test_a_rate_limited_job_is_a_stop_failure_rate_limit_for_the_wall() -> None:
    e = job_event("098b2380", first("098b2380", state="blocked"))
    assert isinstance(e, ev.StopFailure)
    assert e.error_kind == "rate_limit"
    assert e.error.startswith("rate limited — wait and retry")


LIMITS = SAMPLES.parent / "bg-and-limits" / "files"


def gateway_job_at_its_wall() -> dict[str, Any]:
    """The gateway login's bg job at the 5-hour limit: its state.json with what its timeline
    recorded when it blocked (the final file says stopped)."""
    state = json.loads((LIMITS / "state-json-final-gateway-jwt-2f1401e2.json").read_text())
    blocked = json.loads((LIMITS / "timeline-gateway-jwt-2f1401e2.jsonl").read_text())
    state.update(
        state="blocked", tempo="blocked", detail=blocked["detail"], updatedAt=blocked["at"]
    )
    return state


def test_a_gateway_jobs_wall_carries_its_window_and_reset_from_the_detail() -> None:
    e = job_event("2f1401e2", gateway_job_at_its_wall())
    assert isinstance(e, ev.StopFailure)
    assert e.last_message == "You've hit your 5-hour limit · resets 10:37pm (UTC)"
    assert (e.limit_hit, e.limit_window) == (True, "five_hour")
    # Blocked at 20:37:36 UTC; "resets 10:37pm (UTC)" is 22:37 that day.
    assert e.limit_resets_at == datetime(2026, 12, 1, 22, 37, tzinfo=UTC).timestamp()


def test_an_api_keys_rate_limit_is_a_wall_with_no_reset() -> None:
    e = job_event("098b2380", first("098b2380", state="blocked"))
    assert isinstance(e, ev.StopFailure)
    assert (e.limit_hit, e.limit_window, e.limit_resets_at) == (True, None, None)


def test_the_api_errors_claude_names_in_needs() -> None:
    assert error_kind("usage limit reached — check plan") == "billing_error"
    assert error_kind("login required — run /login") == "authentication_failed"
    assert error_kind("approve Bash: ls") is None


def test_a_stopped_job_ends_its_session() -> None:
    e = job_event("20eafdc2", first("20eafdc2", state="stopped"))
    assert isinstance(e, ev.SessionEnd) and e.reason == "stopped"


def test_every_captured_change_reads_and_a_file_that_is_no_job_says_nothing() -> None:
    kinds = {type(job_event(j, c)).__name__ for j, c in states()}
    assert kinds == {"StatusBusy", "StatusWaiting", "NoneType", "Stop", "StopFailure", "SessionEnd"}
    assert job_event("x", {"state": "working"}) is None  # no sessionId
    assert job_event("x", {"sessionId": "s"}) is None


def session_files() -> list[dict[str, Any]]:
    text = (SAMPLES / "sessions-pid-files-over-time.jsonl").read_text()
    rows = [json.loads(line) for line in text.splitlines()]
    return [r["content"] for r in rows if isinstance(r.get("content"), dict)]


def test_a_spare_workers_session_file_is_no_session_until_a_job_claims_it() -> None:
    spare = [c for c in session_files() if c["sessionId"].startswith("b7fe7c69")]
    readings = [
        (c.get("spare") is True, status_event(sf) is not None)
        for c in spare
        if (sf := parse_session_file(json.dumps(c).encode())) is not None and c.get("status")
    ]
    assert (True, False) in readings  # the spare: no event
    assert (False, True) in readings  # claimed (the flag went): its status counts


def test_a_background_session_file_names_its_job_and_no_pane() -> None:
    bg = next(c for c in session_files() if c.get("kind") == "bg" and c.get("status"))
    sf = parse_session_file(json.dumps(bg).encode())
    assert sf is not None
    e = status_event(sf)
    assert e is not None and e.job_id == bg["jobId"] and e.tmux is None


def write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)


@pytest.mark.asyncio
async def test_the_watcher_reports_changes_of_a_jobs_reading_only(tmp_path: Path) -> None:
    jobs = tmp_path / "claude" / "jobs"
    old = first("20eafdc2", state="stopped")
    write(jobs / "20eafdc2" / "state.json", old)  # finished before the daemon started
    (jobs / "b7fe7c69" / "tmp").mkdir(parents=True)  # a spare's folder: only tmp/
    watcher = JobWatcher(jobs, recheck_ms=60_000)  # inotify alone must do it
    agen = watcher.events()
    try:
        pending = asyncio.ensure_future(
            collect(agen, lambda es: any(isinstance(e, ev.StatusWaiting) for e in es))
        )
        await wait_for_async(lambda: watcher.primed, what="the watcher's first pass")
        blocked = first("4c5f61e3", tempo="blocked")
        write(jobs / "4c5f61e3" / "state.json", blocked)  # a new job's folder, then its file
        got = await pending
        assert [type(e).__name__ for e in got] == ["StatusWaiting"]  # not the old stopped one
        # Rewritten with the same reading (tokens, detail): no event; a new reading: one.
        write(jobs / "4c5f61e3" / "state.json", {**blocked, "detail": "still asking"})
        write(jobs / "4c5f61e3" / "state.json", first("4c5f61e3", tempo="active"))
        got = await collect(agen, lambda es: bool(es))
        assert [type(e).__name__ for e in got] == ["StatusBusy"]
    finally:
        await agen.aclose()
