"""The live sources inside a real daemon: a session file, a transcript and a process in tmux.

A stand-in Claude (a copy of `sleep` named `claude`) runs in a private tmux pane; its session
file and transcript are written as the real CLI writes them (see the samples). No hook is needed
for the session to be listed, and the badge follows the file and the transcript.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from purplemux.sources.transcripts import transcript_path
from tests.support import Daemon, run_hook, wait_for

CWD = "/w/live-proj"


class FakeClaude:
    """A process named claude in a private tmux pane, with Claude's session file for it."""

    def __init__(self, tmp: Path, claude_dir: Path, sid: str) -> None:
        self.name = f"pmx-live-{uuid.uuid4().hex[:8]}"
        self.sid = sid
        self.claude_dir = claude_dir
        binary = tmp / "bin" / "claude"
        binary.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shutil.which("sleep") or "/bin/sleep", binary)
        self.tmux("new-session", "-d", "-s", "work", "-x", "120", "-y", "30", f"exec {binary} 600")
        out = self.tmux("display", "-p", "-t", "work", "#{pane_id} #{pane_pid} #{socket_path}")
        pane, pid, self.socket = out.split()
        self.pane, self.pid = pane, int(pid)
        self.transcript = transcript_path(claude_dir, CWD, sid)
        self.transcript.parent.mkdir(parents=True, exist_ok=True)

    def tmux(self, *args: str) -> str:
        cmd = ["tmux", "-L", self.name, "-f", "/dev/null", *args]
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()

    def status(self, status: str, **extra: Any) -> None:
        ticks = Path(f"/proc/{self.pid}/stat").read_bytes().rpartition(b")")[2].split()[19]
        now_ms = int(time.time() * 1000)
        data = {
            "pid": self.pid,
            "sessionId": self.sid,
            "cwd": CWD,
            "startedAt": now_ms - 1000,
            "procStart": ticks.decode(),
            "version": "2.1.197",
            "kind": "interactive",
            "entrypoint": "cli",
            "status": status,
            "updatedAt": now_ms,
            "statusUpdatedAt": now_ms,
            **extra,
        }
        folder = self.claude_dir / "sessions"
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{self.pid}.tmp"
        tmp.write_text(json.dumps(data))
        tmp.replace(folder / f"{self.pid}.json")

    def append(self, *entries: dict[str, Any]) -> None:
        with self.transcript.open("a") as f:
            for entry in entries:
                stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
                base = {"sessionId": self.sid, "cwd": CWD, "isSidechain": False}
                f.write(json.dumps({**base, "timestamp": stamp.replace("+00:00", "Z"), **entry}))
                f.write("\n")

    def prompt(self, text: str) -> None:
        self.append(
            {"type": "user", "uuid": uuid.uuid4().hex, "message": {"role": "user", "content": text}}
        )

    def answer(self, text: str) -> None:
        self.append(
            {
                "type": "assistant",
                "uuid": uuid.uuid4().hex,
                "message": {
                    "id": f"msg_{uuid.uuid4().hex}",
                    "role": "assistant",
                    "model": "claude-test-model",
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                },
            },
            {"type": "system", "subtype": "stop_hook_summary", "uuid": uuid.uuid4().hex},
            {
                "type": "system",
                "subtype": "turn_duration",
                "durationMs": 5,
                "uuid": uuid.uuid4().hex,
            },
        )

    def interrupt(self) -> None:
        self.append(
            {
                "type": "user",
                "uuid": uuid.uuid4().hex,
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": "[Request interrupted by user]"}],
                },
            }
        )

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.name, "kill-server"], capture_output=True)


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
            timeout=5,
        )
        took = time.monotonic() - started
        assert s["snippet"] == "Finished while you were away."
        names = [e["name"] for e in d2.api("GET", f"/api/sessions/{claude.sid}/events")["events"]]
        assert "restart" in names
        print(f"\nrestart -> review resolved in {took:.2f}s (daemon start included)")
    finally:
        d2.stop()
