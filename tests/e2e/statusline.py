"""A user's own statusLine command, recorded: what Claude sends it, and what it prints.

Why: Claude 2.1.332 hands a statusLine command ``rate_limits.five_hour/seven_day`` for the
gateway and subscription logins (claude-code-bg-and-limits.md, "statusLine"), and issue #25's
tests check both that purplemux can read it and that the user's own status line still shows
what it showed before. ``record_statusline.sh`` appends each call's stdin to a JSON-lines file
and prints ``SL-OK`` (:data:`STATUSLINE_OUTPUT`); register it with ``make_claude_home(...,
statusline_command=StatusLineLog(path).command)``.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .harness import DEFAULT_TIMEOUT, wait_until

RECORD_STATUSLINE = Path(__file__).resolve().parent / "record_statusline.sh"
#: What record_statusline.sh prints: Claude shows it under the input box.
STATUSLINE_OUTPUT = "SL-OK"


@dataclass(frozen=True)
class StatusLineLog:
    """The JSON-lines file record_statusline.sh appends to: one ``input`` per call."""

    path: Path

    @property
    def command(self) -> str:
        return f"{shlex.quote(str(RECORD_STATUSLINE))} {shlex.quote(str(self.path))}"

    def inputs(self) -> list[dict[str, Any]]:
        """Every call's stdin JSON, oldest first (a line still being written is skipped)."""
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return []
        found: list[dict[str, Any]] = []
        for line in text.splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and isinstance(row.get("input"), dict):
                found.append(row["input"])
        return found

    def rate_limits(self) -> list[dict[str, Any]]:
        """The ``rate_limits`` objects Claude sent, in order (calls without one left out)."""
        return [i["rate_limits"] for i in self.inputs() if isinstance(i.get("rate_limits"), dict)]

    def wait_for_rate_limits(
        self, window: str = "five_hour", timeout: float = DEFAULT_TIMEOUT
    ) -> dict[str, Any]:
        """The first ``rate_limits`` that has ``window``; TimeoutError shows what came."""

        def probe() -> dict[str, Any] | None:
            return next((r for r in self.rate_limits() if window in r), None)

        return wait_until(
            probe,
            timeout,
            describe=lambda: f"statusLine input with rate_limits.{window}; got {self.inputs()}",
        )
