"""A real uvicorn daemon fed by the real hook script: the captured scenario, SIGKILL mid-burst."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support import Daemon, run_hook, wait_for
from tests.support.samples import EXPECTED, load_hooks


def test_captured_scenario_through_the_real_hook_script(daemon: Daemon) -> None:
    lines = load_hooks()
    for n, (line, (name, _prefix, expected)) in enumerate(zip(lines, EXPECTED, strict=True)):
        payload = line["payload"]
        run_hook(daemon.home, payload, line["tmux_pane"])
        sid = payload["session_id"]

        def applied(sid: str = sid, n: int = n) -> dict[str, Any] | None:
            count = sum(1 for x in lines[: n + 1] if x["payload"]["session_id"] == sid)
            if daemon.session(sid) is None:
                return None
            if len(daemon.api("GET", f"/api/sessions/{sid}/events")["events"]) != count:
                return None
            return daemon.session(sid)  # read after the log: it includes that event

        session = wait_for(applied, timeout=10)
        assert session["state"] == expected.value, (n, name)
        assert session["last_event"]["name"] == name
    first, second = (daemon.session(x["payload"]["session_id"]) for x in (lines[0], lines[-1]))
    assert first and second and first["id"] != second["id"]
    assert first["ended"] and second["ended"]
    assert first["tmux"] == second["tmux"]
    assert first["tmux"]["pane"] == "%0"
    total = sum(
        len(daemon.api("GET", f"/api/sessions/{s}/events")["events"])
        for s in (first["id"], second["id"])
    )
    assert first["superseded"] and not second["superseded"]  # /clear: one pane, one row
    assert total == len(lines) + 1  # the hooks, and the daemon's note that the row moved on
    assert list((daemon.home / "spool").glob("*.spool")) == []


def test_sigkill_during_a_burst_loses_nothing(tmp_path: Path) -> None:
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude").start()
    sid = "burst-1"
    base = {"session_id": sid, "cwd": "/w/burst", "transcript_path": "/w/t.jsonl"}
    payloads: list[dict[str, Any]] = [
        {**base, "hook_event_name": "SessionStart", "source": "startup"}
    ]
    for i in range(28):
        name = "UserPromptSubmit" if i % 2 == 0 else "Stop"
        payloads.append({**base, "hook_event_name": name, "prompt": f"p{i}"})
    payloads.append(
        {
            **base,
            "hook_event_name": "Notification",
            "notification_type": "idle_prompt",
            "prompt": "p28",
        }
    )
    try:
        for i, payload in enumerate(payloads):
            if i == 10:
                d.kill()  # SIGKILL while the first deliveries may still be in flight
            run_hook(d.home, payload)  # exits 0, silent (checked inside), daemon up or not
        d2 = Daemon(home=d.home, claude_dir=d.claude_dir, port=d.port).start()
        try:

            def hook_events() -> list[dict[str, Any]] | None:
                log = d2.api("GET", f"/api/sessions/{sid}/events")["events"]
                hooks = [e for e in log if e["source"] == "hook"]
                return hooks if len(hooks) >= 30 else None

            events = wait_for(hook_events, timeout=20)
            assert [e["name"] for e in events] == [p["hook_event_name"] for p in payloads]
            prompts = [e["prompt"] for e in events if e["name"] == "UserPromptSubmit"]
            assert prompts == [f"p{i}" for i in range(0, 28, 2)]
            assert [e["at"] for e in events] == sorted(e["at"] for e in events)
            session = d2.session(sid)
            assert session is not None
            assert session["state"] == "review"  # the last turn ended; idle_prompt changes nothing
            wait_for(lambda: not list((d.home / "spool").glob("*.spool")))
        finally:
            d2.stop()
    finally:
        d.kill()
