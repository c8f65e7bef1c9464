"""Whose a pane is: before a key is typed into it, the agent's process in front of the pane must
be that session's own (safe to act, round three) — not just "an agent". A real daemon and a
real tmux pane (private socket) showing a captured Claude Code dialog under a program named
`claude`; Claude's own sessions/<pid>.json says which session that process is."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import Daemon, wait_for
from tests.support.hooks import run_hook
from tests.support.screens import HOOKS_ASKING, asking, call, capture, dialog_pane, own_pane_in


def claims(daemon: Daemon, sid: str, sock: str, pane: str) -> None:
    """Hooks of session `sid` naming that pane, with no session file of its own there."""
    for name, extra in HOOKS_ASKING:
        payload = {"session_id": sid, "hook_event_name": name, "cwd": "/w/proj", **extra}
        run_hook(daemon.home, payload, pane=pane, tmux=f"{sock},1,0")


def asked(daemon: Daemon, sid: str) -> dict[str, object]:
    def shown() -> dict[str, object] | None:
        found = daemon.session(sid)
        if not found or found["state"] != "needs-input":
            return None
        status, body = call(daemon, "GET", f"/api/sessions/{sid}/screen")
        return body["prompt"] if status == 200 and body.get("prompt") else None

    return wait_for(shown)


def test_an_answer_to_a_session_whose_pane_shows_another_claude_types_nothing(
    tmp_path: Path,
) -> None:
    with dialog_pane(tmp_path) as (sock, pane):
        daemon = Daemon(home=tmp_path / "pmx", claude_dir=tmp_path / "claude").start()
        try:
            asking(daemon, "mine", sock, pane)  # the program in front is session "mine"'s
            claims(daemon, "other", sock, pane)  # another session's hooks name the same pane
            prompt = asked(daemon, "other")
            before = capture(sock, pane)
            body = {"prompt_id": prompt["id"], "option": "Yes"}
            status, reply = call(daemon, "POST", "/api/sessions/other/answer", body)
            assert status == 409, reply
            assert "is another session's" in reply["error"]
            assert "nothing was typed" in reply["error"]
            assert capture(sock, pane) == before
            # Its own session is answered: the digit of "Yes" is typed (the stand-in is not
            # really Claude, so the dialog stays: 504, typed but not confirmed).
            prompt = asked(daemon, "mine")
            status, reply = call(
                daemon, "POST", "/api/sessions/mine/answer", {**body, "prompt_id": prompt["id"]}
            )
            assert status == 504 and reply["keys"] == ["1"], reply
        finally:
            daemon.stop()


def test_a_pane_whose_program_says_no_session_is_not_typed_into(tmp_path: Path) -> None:
    """A program named like Claude that wrote no session file (or a stale one of an earlier
    process of that pid): nothing confirms the pane is the session's."""
    with dialog_pane(tmp_path) as (sock, pane):
        daemon = Daemon(home=tmp_path / "pmx", claude_dir=tmp_path / "claude").start()
        try:
            claims(daemon, "s1", sock, pane)
            prompt = asked(daemon, "s1")
            body = {"prompt_id": prompt["id"], "option": "Yes"}
            status, reply = call(daemon, "POST", "/api/sessions/s1/answer", body)
            assert status == 409 and "cannot tell" in reply["error"], reply
            # A file left by an earlier process of that pid (its start differs): still no.
            own_pane_in(daemon.claude_dir, "s1", sock, pane)
            (path,) = (daemon.claude_dir / "sessions").glob("*.json")
            path.write_text(json.dumps({**json.loads(path.read_text()), "procStart": "1"}))
            status, reply = call(daemon, "POST", "/api/sessions/s1/answer", body)
            assert status == 409 and "cannot tell" in reply["error"], reply
        finally:
            daemon.stop()
