"""One finding of `purplemux doctor`: what was checked, how it went, what was seen, how to fix it
(the doctor's own checks in cli/doctor.py, each agent's in agents/<agent>/doctor.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from purplemux.core.termtext import clean

Level = Literal["ok", "warn", "fail"]

LABELS = {"ok": "ok", "warn": "warn", "fail": "FAIL"}
COLOURS = {"ok": "\033[32m", "warn": "\033[33m", "fail": "\033[31;1m"}


@dataclass(frozen=True, slots=True)
class Check:
    """One finding: what was checked, how it went, what was seen, and how to fix it."""

    name: str
    level: Level
    detail: str
    fix: str = ""

    def line(self, colour: bool = False) -> str:
        """`ok|warn|FAIL  name: detail — fix` (the fix only when not ok)."""
        label = LABELS[self.level].ljust(4)
        if colour:
            label = f"{COLOURS[self.level]}{label}\033[0m"
        # Details quote paths, versions and answers from outside: plain text only.
        text = f"{label}  {clean(self.name)}: {clean(self.detail)}"
        if self.level != "ok" and self.fix:
            text += f" — {clean(self.fix)}"
        return text
