"""Captured Claude Code screens (tests/samples/screens): input of the recogniser and fake panes."""

from __future__ import annotations

from tests.support.daemon import REPO

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
