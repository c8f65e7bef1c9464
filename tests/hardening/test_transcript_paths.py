"""A hook payload's transcript_path is text from outside: only files under projects/ are read.

Through the real hook script and a real daemon: a path outside Claude's projects folder (or a
symlink out of it) is ignored with one log line per session and never becomes a snippet; a FIFO
never blocks the tailer; a NUL byte is refused; and other sessions' transcripts keep being read.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import Daemon, run_hook, wait_for

SECRET = "TOP-SECRET-" + uuid.uuid4().hex[:8]


def answer_line(text: str) -> str:
    """One assistant entry as Claude writes it: its text becomes the session's snippet."""
    entry = {
        "type": "assistant",
        "uuid": uuid.uuid4().hex,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "sessionId": "x",
        "message": {
            "id": f"msg_{uuid.uuid4().hex}",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    }
    return json.dumps(entry) + "\n"


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    (tmp_path / "claude" / "projects").mkdir(parents=True)
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude").start()
    yield d
    d.stop()


def hooks(d: Daemon, sid: str, transcript: str) -> None:
    """A session's start and a prompt, through the real hook script."""
    base: dict[str, Any] = {"session_id": sid, "cwd": "/w/proj", "transcript_path": transcript}
    run_hook(d.home, {**base, "hook_event_name": "SessionStart", "source": "startup"})
    run_hook(d.home, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "hi"})


def good_session(d: Daemon, name: str, text: str) -> None:
    """A session with a real transcript under projects/: its answer must become the snippet."""
    path = d.claude_dir / "projects" / "-w-proj" / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(answer_line(text))
    hooks(d, name, str(path))
    wait_for(lambda: (d.session(name) or {}).get("snippet") == text, timeout=15)


def ignored_lines(d: Daemon, sid: str) -> list[str]:
    return [
        line
        for line in d.logs().splitlines()
        if "ignoring the transcript" in line and f"session {sid}:" in line
    ]


def test_a_transcript_outside_projects_is_never_read(daemon: Daemon, tmp_path: Path) -> None:
    secret = tmp_path / "elsewhere" / "notes.jsonl"
    secret.parent.mkdir()
    secret.write_text(answer_line(SECRET))
    link = daemon.claude_dir / "projects" / "-w-link" / "link.jsonl"
    link.parent.mkdir(parents=True)
    link.symlink_to(secret)  # inside projects/ by name, outside once resolved
    dotdot = str(daemon.claude_dir / "projects" / ".." / ".." / "elsewhere" / "notes.jsonl")
    cases = {"outside": str(secret), "via-link": str(link), "dotdot": dotdot}
    for sid, path in cases.items():
        hooks(daemon, sid, path)
        hooks(daemon, sid, path)  # the same path again: still one log line
    good_session(daemon, "good", "the tailer still works")
    for sid in cases:
        session = daemon.session(sid)
        assert session is not None and session["state"] == "busy"
        assert SECRET not in json.dumps(session)
        assert SECRET not in json.dumps(daemon.api("GET", f"/api/sessions/{sid}/events"))
        assert len(ignored_lines(daemon, sid)) == 1, daemon.logs()
    assert SECRET not in json.dumps(daemon.sessions())
    assert SECRET not in daemon.logs()


def test_a_fifo_as_transcript_blocks_nothing_even_after_a_restart(
    daemon: Daemon, tmp_path: Path
) -> None:
    fifo = daemon.claude_dir / "projects" / "-w-fifo" / "fifo.jsonl"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    hooks(daemon, "fifo", str(fifo))
    good_session(daemon, "after-fifo", "read while a FIFO is named")
    assert len(ignored_lines(daemon, "fifo")) == 1, daemon.logs()
    daemon.stop()
    again = Daemon(home=daemon.home, claude_dir=daemon.claude_dir, port=daemon.port).start()
    try:  # the FIFO session is loaded from the database and watched again at start
        good_session(again, "after-restart", "read after a restart too")
    finally:
        again.stop()


def test_a_nul_byte_in_the_path_is_refused_and_the_watcher_lives(daemon: Daemon) -> None:
    folder = daemon.claude_dir / "projects" / "-w-nul"
    folder.mkdir(parents=True)
    (folder / "a").write_text(answer_line(SECRET))
    hooks(daemon, "nul", str(folder / "a\x00b.jsonl"))
    good_session(daemon, "after-nul", "the watcher survived a NUL byte")
    session = daemon.session("nul")
    assert session is not None and SECRET not in json.dumps(session)
    assert len(ignored_lines(daemon, "nul")) == 1, daemon.logs()
    # and later sessions are still followed, not only the first one after the bad path
    good_session(daemon, "later", "still followed later")
