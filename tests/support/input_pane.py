"""A stand-in Claude at its prompt: a program named claude in a private tmux pane that draws a
captured 2.1.332 screen with its input box live (what is typed shows in the box, Enter sends
the line to a file and empties the box), so resume-at-reset tests see what a user would."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.daemon import REPO

LIMITS = REPO / "tests" / "samples" / "claude-code-2.1.332" / "bg-and-limits" / "screens"
WALL_SCREEN = "screen-gw-5h-final.txt"
"""The gateway login's 5-hour wall: the failed turn, then the empty input box."""

TUI = r"""
import os, sys, tty
screen, sent, typed = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(screen, encoding="utf-8").read().rstrip("\n").split("\n")
box = max(i for i, line in enumerate(lines) if line.startswith("\u276f"))
buf = typed
def draw():
    out = list(lines)
    out[box] = "\u276f " + (buf or "\u00a0")
    sys.stdout.write("\x1b[H\x1b[2J" + "\r\n".join(out))
    sys.stdout.flush()
fd = sys.stdin.fileno()
tty.setraw(fd)
draw()
while True:
    data = os.read(fd, 256).decode("utf-8", "replace")
    if not data:
        break
    for ch in data:
        if ch == "\r":
            with open(sent, "a", encoding="utf-8") as f:
                f.write(buf + "\n")
            buf = ""
        elif ch in "\x7f\x08":
            buf = buf[:-1]
        elif ch == "\x03":
            sys.exit(0)
        elif ch.isprintable():
            buf += ch
    draw()
"""


@dataclass
class InputPane:
    """The pane: its tmux socket and id, and the file of lines sent with Enter."""

    socket: str
    pane: str
    sent: Path

    def lines_sent(self) -> list[str]:
        return self.sent.read_text().splitlines() if self.sent.exists() else []

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "-S", self.socket, "capture-pane", "-p", "-t", self.pane],
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    def box_line(self) -> str:
        return [line for line in self.screen().splitlines() if line.startswith("\u276f")][-1]


@contextmanager
def input_pane(
    folder: Path, typed: str = "", shot: str = WALL_SCREEN, name: str = "claude"
) -> Iterator[InputPane]:
    """A 220x60 pane on a private tmux server under `folder` showing the screen `shot` with
    `typed` already in its input box; the program in front is named `name`."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "bin" / name
    program.parent.mkdir(parents=True, exist_ok=True)
    program.write_text(f"#!{sys.executable}\n{TUI}")
    program.chmod(0o755)
    sent = folder / "sent.txt"
    sock = str(folder / "tmux.sock")
    base = ["tmux", "-S", sock, "-f", "/dev/null"]
    screen = LIMITS / shot
    command = f"exec {program} {screen} {sent} '{typed}'"
    subprocess.run(
        [*base, "new-session", "-d", "-x", "220", "-y", "60", "-s", "w", command], check=True
    )
    pane_id = subprocess.run(
        [*base, "display-message", "-p", "-t", "w", "#{pane_id}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    found = InputPane(sock, pane_id, sent)
    deadline = time.monotonic() + 30
    while "\u276f" not in found.screen() and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield found
    finally:
        subprocess.run([*base, "kill-server"], check=False)
