"""A stand-in Claude: a copy of `sleep` named claude in a private tmux pane, with the session file
and transcript the real CLI writes for it."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from purplemux.agents.claude.transcript import transcript_path

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
