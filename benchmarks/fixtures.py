"""Synthetic but realistic Claude Code inputs: transcript JSONL files, session files.

Transcript lines follow the entries captured from a real Claude Code 2.1.197 (tests/samples):
a prompt, assistant text and tool_use entries with usage, a tool_result of a realistic size,
the closing answer, then stop_hook_summary and turn_duration. Every uuid and message id is unique.
"""

from __future__ import annotations

import json
import os
import random
import re
import uuid
from pathlib import Path
from typing import Any

VERSION = "2.1.197"
_TEXT = (
    "the function returns a list of sessions sorted by their last update and the tests check "
    "that every state is reachable from idle while the hook script spools events when the "
    "daemon is down so nothing is lost and the transcript tailer follows each file from its "
    "offset without reading it again"
)
_WORDS = _TEXT.split()


def filler(rng: random.Random, size: int) -> str:
    """About `size` characters of plain words (tool output, file contents)."""
    out: list[str] = []
    n = 0
    while n < size:
        w = rng.choice(_WORDS)
        out.append(w)
        n += len(w) + 1
    return " ".join(out)


def _iso(t: float) -> str:
    from datetime import UTC, datetime

    return (
        datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.")
        + f"{int(t * 1000) % 1000:03d}Z"
    )


class TurnWriter:
    """Writes turns of one session's transcript; each call of turn() gives a few KB of lines."""

    def __init__(self, session_id: str, cwd: str, seed: int, t0: float = 1_790_000_000.0) -> None:
        self.sid = session_id
        self.cwd = cwd
        self.rng = random.Random(seed)
        self.t = t0
        self.n = 0
        self.parent: str | None = None
        self._pool = [filler(self.rng, s) for s in (150, 600, 1500, 3000, 6000)]

    def _entry(self, kind: str, **fields: Any) -> str:
        self.t += self.rng.uniform(0.05, 2.0)
        uid = str(uuid.UUID(int=self.rng.getrandbits(128)))
        entry = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": VERSION,
            "gitBranch": "main",
            "type": kind,
            **fields,
            "uuid": uid,
            "timestamp": _iso(self.t),
        }
        self.parent = uid
        return json.dumps(entry, separators=(",", ":"))

    def _assistant(self, mid: str, content: list[dict[str, Any]], out_tokens: int) -> str:
        return self._entry(
            "assistant",
            requestId=f"req_{mid[4:]}",
            message={
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": content,
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": self.rng.randint(3, 40),
                    "cache_creation_input_tokens": self.rng.randint(0, 3000),
                    "cache_read_input_tokens": self.rng.randint(10_000, 60_000),
                    "output_tokens": out_tokens,
                    "service_tier": "standard",
                },
            },
        )

    def assistant_text(self, text: str) -> str:
        """One assistant text entry with usage (what an appended answer looks like)."""
        self.n += 1
        mid = f"msg_{self.sid[:8]}{self.n:012x}"
        return self._assistant(mid, [{"type": "text", "text": text}], self.rng.randint(5, 500))

    def turn(self) -> list[str]:
        """The lines of one finished turn with a tool call."""
        self.n += 1
        rng = self.rng
        mid = f"msg_{self.sid[:8]}{self.n:012x}"
        tool_id = f"toolu_{self.sid[:8]}{self.n:012x}"
        lines = [
            self._entry(
                "user",
                message={"role": "user", "content": f"please {filler(rng, rng.randint(20, 300))}"},
                promptId=str(uuid.UUID(int=rng.getrandbits(128))),
            ),
            self._assistant(mid, [{"type": "text", "text": "I will look at it."}], 12),
            self._assistant(
                mid,
                [
                    {
                        "type": "tool_use",
                        "id": tool_id,
                        "name": rng.choice(("Bash", "Read", "Grep", "Edit")),
                        "input": {"command": "grep -rn session purplemux | head -50"},
                    }
                ],
                rng.randint(20, 200),
            ),
            self._entry(
                "user",
                message={
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": tool_id,
                            "type": "tool_result",
                            "content": rng.choice(self._pool),
                            "is_error": False,
                        }
                    ],
                },
                toolUseResult={"stdout": "(see content)", "stderr": "", "interrupted": False},
            ),
        ]
        self.n += 1
        lines.append(self.assistant_text(f"Done: {filler(rng, rng.randint(40, 400))}"))
        lines.append(
            self._entry(
                "system",
                subtype="stop_hook_summary",
                hookCount=1,
                hookInfos=[{"command": "status-hook.sh"}],
                hookErrors=[],
                preventedContinuation=False,
                stopReason="",
                hasOutput=False,
                level="suggestion",
            )
        )
        lines.append(
            self._entry("system", subtype="turn_duration", durationMs=rng.randint(500, 90_000))
        )
        return lines


def write_transcript(path: Path, size: int, session_id: str, cwd: str, seed: int) -> int:
    """Write whole turns until the file is at least `size` bytes; returns its size."""
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = TurnWriter(session_id, cwd, seed)
    head = [
        json.dumps(
            {"type": "permission-mode", "permissionMode": "default", "sessionId": session_id}
        ),
    ]
    written = 0
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "w", encoding="utf-8") as f:
        chunk = "\n".join(head) + "\n"
        while True:
            f.write(chunk)
            written += len(chunk)  # json.dumps writes ASCII only
            if written >= size:
                break
            block: list[str] = []
            block_size = 0
            # Write in blocks of ~1 MB (or what is left), always whole turns.
            while block_size < min(1 << 20, size - written):
                lines = writer.turn()
                block += lines
                block_size += sum(len(x) + 1 for x in lines)
            chunk = "\n".join(block) + "\n"
    os.replace(tmp, path)
    return path.stat().st_size


def project_dir(claude_dir: Path, cwd: str) -> Path:
    return claude_dir / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", cwd)


def proc_start_ticks(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat, as Claude writes it in procStart."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return data.rpartition(b")")[2].split()[19].decode()


def session_file(
    pid: int, session_id: str, cwd: str, started_ms: int, status: str, updated_ms: int
) -> dict[str, Any]:
    """A sessions/<pid>.json body as Claude 2.1.197 writes it."""
    data: dict[str, Any] = {
        "pid": pid,
        "sessionId": session_id,
        "cwd": cwd,
        "startedAt": started_ms,
        "version": VERSION,
        "peerProtocol": 1,
        "kind": "interactive",
        "entrypoint": "cli",
        "name": f"{cwd.rsplit('/', 1)[-1]}-{session_id[:2]}",
        "nameSource": "derived",
        "status": status,
        "updatedAt": updated_ms,
        "statusUpdatedAt": updated_ms,
    }
    ticks = proc_start_ticks(pid)
    if ticks is not None:
        data["procStart"] = ticks
    if status == "waiting":
        data["waitingFor"] = "permission prompt"
    return data
