"""The live sources inside a real daemon: a session file, a transcript and a process in tmux.

A stand-in Claude (a copy of `sleep` named `claude`) runs in a private tmux pane; its session
file and transcript are written as the real CLI writes them (see the samples). No hook is needed
for the session to be listed, and the badge follows the file and the transcript.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from purplemux.agents.claude.transcript import TranscriptReader
from tests.support import Daemon, run_hook, wait_for
from tests.support.fake_claude import CWD, FakeClaude
from tests.support.transcripts import turns


@pytest.fixture
def claude(tmp_path: Path) -> Iterator[FakeClaude]:
    fake = FakeClaude(tmp_path, tmp_path / "claude", f"live-{uuid.uuid4().hex[:8]}")
    yield fake
    fake.kill()


def state_of(d: Daemon, sid: str) -> str | None:
    s = d.session(sid)
    return s["state"] if s else None


def test_a_session_without_hooks_is_listed_and_followed(tmp_path: Path, claude: FakeClaude) -> None:
    claude.status("idle")
    d = Daemon(home=tmp_path / "home", claude_dir=claude.claude_dir).start()
    try:
        s = wait_for(lambda: d.session(claude.sid), timeout=10)
        assert s["cwd"] == CWD and s["pid"] == claude.pid
        wait_for(lambda: (d.session(claude.sid) or {}).get("alive") is True, timeout=10)
        # The file is the only witness: busy, then a permission prompt, then approved.
        claude.prompt("do it")
        claude.status("busy")
        wait_for(lambda: state_of(d, claude.sid) == "busy")
        claude.status("waiting", waitingFor="permission prompt")
        wait_for(lambda: state_of(d, claude.sid) == "needs-input")
        assert (d.session(claude.sid) or {})["waiting_for"] == "permission prompt"
        claude.status("busy")
        wait_for(lambda: state_of(d, claude.sid) == "busy")
        # The turn ends: the transcript's end-of-turn entries stand in for the Stop hook.
        claude.answer("All done here.")
        claude.status("idle")
        s = wait_for(
            lambda: (lambda x: x if x and x["state"] == "review" else None)(d.session(claude.sid))
        )
        assert s["snippet"] == "All done here."
        assert s["model"] == "claude-test-model"
        assert s["tokens"]["input"] == 10
        # Esc during the next turn: no hook, the transcript marks it and the file turns idle.
        claude.prompt("again")
        claude.status("busy")
        wait_for(lambda: state_of(d, claude.sid) == "busy")
        claude.interrupt()
        claude.status("idle")
        wait_for(lambda: state_of(d, claude.sid) == "idle")
        # A hook names the pane's tmux server: the row gets its tmux session and window.
        run_hook(
            d.home,
            {
                "session_id": claude.sid,
                "hook_event_name": "Notification",
                "cwd": CWD,
                "notification_type": "idle_prompt",
                "message": "waiting",
            },
            pane=claude.pane,
            tmux=f"{claude.socket},1,0",
        )
        s = wait_for(
            lambda: (lambda x: x if x and (x["tmux"] or {}).get("session") else None)(
                d.session(claude.sid)
            )
        )
        assert s["tmux"] == {
            "pane": claude.pane,
            "socket": claude.socket,
            "session": "work",
            "window": "0",
        }
        # The process exits: the session ends.
        claude.kill()
        s = wait_for(
            lambda: (lambda x: x if x and x["ended"] else None)(d.session(claude.sid)), timeout=15
        )
        assert s["alive"] is False
        assert all(x["id"] != claude.sid for x in d.sessions(all=False))
    finally:
        d.stop()


def test_restart_resolves_unknown_from_the_sources(tmp_path: Path, claude: FakeClaude) -> None:
    claude.status("busy")
    d = Daemon(home=tmp_path / "home", claude_dir=claude.claude_dir).start()
    run_hook(
        d.home,
        {
            "session_id": claude.sid,
            "hook_event_name": "UserPromptSubmit",
            "cwd": CWD,
            "transcript_path": str(claude.transcript),
            "prompt": "work",
        },
    )
    claude.prompt("work")
    wait_for(lambda: state_of(d, claude.sid) == "busy")
    d.kill()  # SIGKILL while the turn runs
    # While the daemon is down the turn ends; no Stop hook reaches anyone.
    claude.answer("Finished while you were away.")
    claude.status("idle")
    started = time.monotonic()
    d2 = Daemon(home=d.home, claude_dir=d.claude_dir, port=d.port).start()
    try:
        s = wait_for(
            lambda: (lambda x: x if x and x["state"] == "review" else None)(d2.session(claude.sid)),
            timeout=20,  # a deadline on a busy machine, not a speed target (benchmarks time it)
        )
        took = time.monotonic() - started
        assert s["snippet"] == "Finished while you were away."
        names = [e["name"] for e in d2.api("GET", f"/api/sessions/{claude.sid}/events")["events"]]
        assert "restart" in names
        print(f"\nrestart -> review resolved in {took:.2f}s (daemon start included)")
    finally:
        d2.stop()


def test_restart_with_a_big_transcript_shows_state_first_and_resumes(
    tmp_path: Path, claude: FakeClaude
) -> None:
    """The last answer shows before the history is summed; a restart reads only what is new."""
    data, answer = turns(1500, seed=11)
    claude.transcript.write_bytes(data)
    claude.status("idle")
    d = Daemon(home=tmp_path / "home", claude_dir=claude.claude_dir).start()
    try:
        full = TranscriptReader("x")
        full.feed(data)
        tokens = {
            "input": full.state.tokens.input,
            "output": full.state.tokens.output,
            "cache_read": full.state.tokens.cache_read,
            "cache_creation": full.state.tokens.cache_creation,
        }
        s = wait_for(
            lambda: (lambda x: x if x and x["tokens"] == tokens else None)(d.session(claude.sid)),
            timeout=30,
        )
        assert s["snippet"] == answer.strip()[:200] and s["cost_usd"] == full.state.cost_usd
        # By what was sent, not time: the last answer came in facts that held the totals back
        # (the tail's), the totals in others (the history summed in the background).
        log = d.api("GET", f"/api/sessions/{claude.sid}/events")["events"]
        facts = [e for e in log if e["kind"] == "transcript"]
        assert any(e["snippet"] == s["snippet"] and e["tokens"] is None for e in facts)
        assert any(e["tokens"] == tokens for e in facts)
        assert d.api("GET", "/api/health")["transcripts"]["history_bytes"] > 0
        state = s["state"]
    finally:
        d.stop()
    more, answer = turns(1, seed=12, first=1500)
    with claude.transcript.open("ab") as f:
        f.write(more)
    d2 = Daemon(home=d.home, claude_dir=d.claude_dir, port=d.port).start()
    try:
        full.feed(more)
        s = wait_for(
            lambda: (lambda x: x if x and x["snippet"] == answer.strip()[:200] else None)(
                d2.session(claude.sid)
            ),
            timeout=30,
        )
        assert (
            s["tokens"]["output"] == full.state.tokens.output
            and s["cost_usd"] == full.state.cost_usd
        )
        assert state == "idle" and s["state"] in ("idle", "review")
        read = d2.api("GET", "/api/health")["transcripts"]
        assert read["resumed"] == 1 and read["started_over"] == 0
        assert read["history_bytes"] == 0 and read["bytes_read"] == len(more)
    finally:
        d2.stop()
