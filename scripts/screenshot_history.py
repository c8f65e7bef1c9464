"""Regenerate docs/history.png: a real daemon, a working day of sessions, /history in Chromium.

The day is made through POST /api/hooks with the hook script's headers, stamped in the past
(seeded, so it looks the same each time): today from 08:30 when it is past 11:00, else yesterday.

Usage: .venv/bin/python -m scripts.screenshot_history [--out docs/history.png] [--width 1280]
       [--dark] [--phone PATH]
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from scripts.screenshot import DEFAULT, HOME, WORK, post_hook, run
from tests.support import Daemon

if TYPE_CHECKING:
    from playwright.sync_api import Page

# (session id, cwd, tmux socket or None, pane, first hour, last hour or None, how often it asks)
CAST: list[tuple[str, str, str | None, str, float, float | None, float]] = [
    ("d-pmx", f"{HOME}/purplemux", DEFAULT, "%0", 8.5, None, 0.35),
    ("d-api", f"{HOME}/api-server", DEFAULT, "%1", 8.8, None, 0.5),
    ("d-infra", f"{HOME}/infra", DEFAULT, "%2", 9.5, 12.2, 0.6),
    ("d-web", f"{HOME}/web-frontend", WORK, "%4", 9.0, None, 0.25),
    ("d-mobile", f"{HOME}/mobile-app", WORK, "%5", 10.2, None, 0.45),
    ("d-notes", "/home/dev/notes", None, "", 8.6, None, 0.2),
]
BASH = {"command": "pytest -q && git push"}


def day_start(now: float) -> float:
    today = datetime.fromtimestamp(now)
    day = today.date() if today.hour >= 11 else today.date() - timedelta(days=1)
    return datetime.combine(day, datetime.min.time()).timestamp()


def seed(d: Daemon, now: float) -> str:
    """Post a day of work for every session; return the day (YYYY-MM-DD)."""
    rng = random.Random(17)
    base = day_start(now)
    horizon = min(now - 20, base + 18.5 * 3600)
    n = 0
    for sid, cwd, socket, pane, first, last, asks in CAST:
        end = min(horizon, base + last * 3600) if last else horizon
        t = base + first * 3600 + rng.uniform(0, 600)

        where = (sid, cwd, pane, socket)

        def send(name: str, at: float, where: tuple[Any, ...] = where, **fields: Any) -> None:
            nonlocal n
            n += 1
            sid, cwd, pane, socket = where
            payload = {"session_id": sid, "hook_event_name": name, "cwd": cwd, **fields}
            post_hook(d, 10_000 + n, at, pane, socket, payload)

        send("SessionStart", t, source="startup")
        t += rng.uniform(60, 900)
        k = 0
        while t < end - 120:
            send("UserPromptSubmit", t, prompt="next step")
            t += rng.uniform(120, 1500)
            if rng.random() < asks and t < end:
                k += 1
                tool = {"tool_name": "Bash", "tool_input": BASH, "tool_use_id": f"{sid}-{k}"}
                send("PreToolUse", t, **tool)
                send("PermissionRequest", t + 0.5, tool_name="Bash", tool_input=BASH)
                t += rng.choice([10, 25, 45, 120, 400]) * rng.uniform(0.7, 1.3)
                if t >= end:
                    break
                send("PostToolUse", t, tool_response={}, **tool)
                t += rng.uniform(120, 1500)
            if t >= end:
                break
            send("Stop", t, last_assistant_message="Done.")
            # The review waits until it is read: a minute, or a meeting.
            t += rng.choice([15, 30, 60, 180, 600, 1500]) * rng.uniform(0.6, 1.4)
        if last:
            send("SessionEnd", min(t, end), reason="prompt_input_exit")
    return datetime.fromtimestamp(base).date().isoformat()


def stage(d: Daemon) -> Callable[[Page], None]:
    day = seed(d, time.time())

    def show_history(page: Page) -> None:
        """That day's /history, once every lane is drawn."""
        from playwright.sync_api import expect

        page.goto(f"{d.url}/history?day={day}")
        expect(page.locator(".lane")).to_have_count(len(CAST))

    return show_history


def main(argv: list[str] | None = None) -> int:
    return run(argv, __doc__ or "", "history.png", 700, stage)


if __name__ == "__main__":
    sys.exit(main())
