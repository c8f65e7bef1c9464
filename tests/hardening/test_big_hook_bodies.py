"""Hook bodies past 1 MiB: Claude's own (an Edit of a big file carries the whole file) are
taken with their long strings cut; one that still does not fit is refused (413), and then
neither stored nor spooled, live or from the spool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support import Daemon, run_hook, wait_for

MiB = 1 << 20


def delivered(d: Daemon) -> bool:
    """Every delivery of the hook script has ended (its body left .tmp)."""
    return not list((d.home / "spool" / ".tmp").glob("*.json"))


def spool_files(d: Daemon) -> list[Path]:
    return [p for p in (d.home / "spool").iterdir() if p.name != ".tmp"]


def names(d: Daemon, sid: str) -> list[str]:
    return [str(e.get("name")) for e in d.api("GET", f"/api/sessions/{sid}/events")["events"]]


def big_edit(sid: str, size: int) -> dict[str, Any]:
    """A PostToolUse of an Edit on a big file, shaped as Claude sends it."""
    original = ('línea "citada"\\ 😀\n' * (size // 24 + 1))[:size]
    return {
        "session_id": sid,
        "hook_event_name": "PostToolUse",
        "cwd": "/w/big",
        "tool_name": "Edit",
        "tool_input": {"file_path": "/w/big/data.txt", "old_string": "a", "new_string": "b"},
        "tool_response": {"filePath": "/w/big/data.txt", "originalFile": original},
        "tool_use_id": "toolu_big",
    }


def test_an_oversized_body_from_claude_is_stored_trimmed(tmp_path: Path) -> None:
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude").start(timeout=20)
    try:
        run_hook(d.home, {"session_id": "big", "hook_event_name": "SessionStart", "cwd": "/w"})
        wait_for(lambda: d.session("big"), timeout=10)
        payload = big_edit("big", 3 * MiB)
        assert len(json.dumps(payload)) > 3 * MiB
        run_hook(d.home, payload)
        wait_for(lambda: "PostToolUse" in " ".join(names(d, "big")), timeout=15)
        wait_for(lambda: delivered(d), timeout=10)
        assert spool_files(d) == []  # taken live (202), not spooled
        assert len(json.dumps(d.api("GET", "/api/sessions/big/events"))) < MiB
    finally:
        d.stop()


def test_a_body_too_large_even_trimmed_is_neither_stored_nor_spooled(tmp_path: Path) -> None:
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude").start(timeout=20)
    try:
        many = {"session_id": "many", "hook_event_name": "SessionStart", "x": ["a"] * (MiB // 2)}
        huge = {"session_id": "huge", "hook_event_name": "SessionStart", "x": "a" * (17 * MiB)}
        for payload in (many, huge):  # 2.5 MiB of short strings; 17 MiB past any cut
            run_hook(d.home, payload)
        wait_for(lambda: delivered(d), timeout=20)
        assert spool_files(d) == []
        run_hook(d.home, {"session_id": "after", "hook_event_name": "SessionStart"})
        wait_for(lambda: d.session("after"), timeout=10)
        assert d.session("many") is None and d.session("huge") is None
    finally:
        d.stop()
    # Spooled while the daemon was down: the same rules at the next start.
    spool = d.home / "spool"
    for n, payload in enumerate((big_edit("spooled-big", 2 * MiB), {**many, "session_id": "m2"})):
        head = f"X-Purplemux-Event-Id: 100{n}-1\nX-Purplemux-Ts: 100{n}\n\n"
        (spool / f"100{n}-1.spool").write_bytes(head.encode() + json.dumps(payload).encode())
    again = Daemon(home=d.home, claude_dir=d.claude_dir).start(timeout=20)
    try:
        assert "PostToolUse" in " ".join(names(again, "spooled-big"))
        assert again.session("m2") is None
        assert spool_files(again) == []
    finally:
        again.stop()
