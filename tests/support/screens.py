"""Captured Claude Code screens (tests/samples/screens): input of the recogniser and fake panes."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.daemon import REPO, Daemon
from tests.support.hooks import run_hook

SCREENS = REPO / "tests" / "samples" / "screens"


def screens(name: str) -> list[tuple[str, str]]:
    """(screen name, text) in the order captured."""
    out = []
    for chunk in (SCREENS / name).read_text().split("\n-----\n"):
        if chunk.strip():
            head, _, text = chunk.partition("\n")
            out.append((head.split()[-1], text))
    return out


def screen(name: str, which: str, nth: int = -1) -> str:
    """The `nth` capture named `which` in the file `name`."""
    return [text for shot, text in screens(name) if shot == which][nth]


@contextmanager
def dialog_pane(
    folder: Path,
    program: str = "claude",
    shot: tuple[str, str] = ("claude-2.1.332-manual.screens.txt", "touch-dialog"),
) -> Iterator[tuple[str, str]]:
    """(socket path, pane id) of a 220x60 tmux pane on a private server showing 2.1.332's classic
    permission dialog (a captured screen), then waiting: a Claude pane for the act endpoints.

    The waiting process is `sleep` run under the name `program` (a symlink): "claude" stands in
    for Claude Code (the desk answers only a pane whose program in front is Claude); any other
    name is some other program printing a Claude-looking dialog."""
    shown = folder / "dialog.txt"
    shown.write_text(screen(*shot).rstrip("\n"))
    waiter = folder / "bin" / program
    waiter.parent.mkdir(parents=True, exist_ok=True)
    if not waiter.exists():
        waiter.symlink_to(shutil.which("sleep") or "/bin/sleep")
    sock = str(folder / "tmux.sock")
    base = ["tmux", "-S", sock, "-f", "/dev/null"]
    command = f"stty -echo; cat {shlex.quote(str(shown))}; exec {shlex.quote(str(waiter))} 600"
    subprocess.run(
        [*base, "new-session", "-d", "-x", "220", "-y", "60", "-s", "w", command], check=True
    )
    pane_id = subprocess.run(
        [*base, "display-message", "-p", "-t", "w", "#{pane_id}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        yield sock, pane_id
    finally:
        subprocess.run([*base, "kill-server"], check=False)


def capture(sock: str, pane: str) -> str:
    """The text a tmux pane shows now."""
    return subprocess.run(
        ["tmux", "-S", sock, "capture-pane", "-p", "-t", pane],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


TOOL = {"command": "touch b.txt", "description": "run the requested command"}
HOOKS_ASKING: tuple[tuple[str, dict[str, Any]], ...] = (
    ("SessionStart", {"source": "startup"}),
    ("UserPromptSubmit", {"prompt": "RUN:touch b.txt"}),
    ("PreToolUse", {"tool_name": "Bash", "tool_input": TOOL, "tool_use_id": "t1"}),
    ("PermissionRequest", {"tool_name": "Bash", "tool_input": TOOL}),
)


def asking(
    daemon: Daemon, sid: str, sock: str | None, pane: str, hooks: int = len(HOOKS_ASKING)
) -> None:
    """Hooks as Claude sends them for a permission dialog in that pane (on the tmux server at
    `sock`; None: outside tmux): the first `hooks` of them. The pane's program gets the session
    file Claude writes for itself (sessions/<pid>.json, naming `sid`): the desk types only into
    a pane whose Claude is that session's."""
    if sock:
        own_pane(daemon, sid, sock, pane)
    tmux = f"{sock},1,0" if sock else ""
    for name, extra in HOOKS_ASKING[:hooks]:
        payload = {"session_id": sid, "hook_event_name": name, "cwd": "/w/proj", **extra}
        run_hook(daemon.home, payload, pane=pane, tmux=tmux)


def own_pane(daemon: Daemon, sid: str, sock: str, pane: str) -> None:
    """Claude's own file for the program in that pane: it is session `sid`'s."""
    own_pane_in(daemon.claude_dir, sid, sock, pane)


def own_pane_in(claude_dir: Path, sid: str, sock: str, pane: str) -> None:
    """Claude's own file (under `claude_dir`) for the program in front of that pane: `sid`'s
    (Claude writes sessions/<pid>.json for itself; the stand-ins here do not)."""
    pid = subprocess.run(
        ["tmux", "-S", sock, "display-message", "-p", "-t", pane, "#{pane_pid}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if not pid.isdigit():
        return  # no such pane: nothing runs there
    front = int(pid)
    try:  # the foreground group's leader (field 8 of stat): the program in front
        stat = Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()
        front = int(stat[5]) if int(stat[5]) > 0 else front
    except (OSError, IndexError, ValueError):
        pass
    folder = claude_dir / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{front}.json").write_text(json.dumps({"pid": front, "sessionId": sid}))


def call(d: Daemon, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """One API call with the token: (status, JSON body), errors included."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(d.url + path, data=data, method=method)
    req.add_header("Authorization", f"Bearer {d.token}")
    try:
        with urllib.request.urlopen(req, timeout=40) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def window_active(sock: str, pane: str) -> bool:
    """Whether the pane's window is its tmux session's current one."""
    out = subprocess.run(
        ["tmux", "-S", sock, "display-message", "-p", "-t", pane, "#{window_active}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.strip() == "1"
