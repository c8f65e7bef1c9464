"""The limit wall through a real daemon with the real Claude Code 2.1.332 (issue #25).

Each test starts ``purplemux serve`` first, then the real Claude of one login (logins.py) in a
throw-away HOME whose settings run the daemon's own installed hook for every event, against
the fake Messages API's ``LIMIT:`` answers (fake_limits.py). What is checked is what a person
reads: the session's row (its view: the words, and the time the page writes in the viewer's
local time) and ``purplemux status``.

- gateway token: a 5-hour wall, then a weekly one, each with its reset time in the row;
- fake subscription: "continues at <time>" (Claude armed its own auto-continue), then the
  turn Claude starts by itself, which clears the wall and is not the user's prompt.

Retries are cut to one (``CLAUDE_CODE_MAX_RETRIES=1``, ``retry-after`` 2 s) so a wall comes in
seconds rather than three minutes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents import install
from purplemux.agents.claude import install as claude_install
from purplemux.core.timefmt import wall_clock
from tests.support import Daemon

from .fake_api import PLAIN_ANSWER, FakeAnthropicAPI
from .fake_limits import LimitControl, usage_headers
from .harness import TmuxClaude, make_claude_home, wait_until
from .versions import CURRENT

pytestmark = [pytest.mark.e2e, pytest.mark.claude_versions(CURRENT)]

RETRY_ENV = {"CLAUDE_CODE_MAX_RETRIES": "1"}
RESET_IN = 2 * 3600
WAIT = 90.0
"""A correctness bound on a loaded machine, not a speed target."""
AUTO_CONTINUE = 300.0
"""Claude's own auto-continue came 60-105 s after the reset in the captures; a bound, as WAIT."""


class Walled:
    """One login's Claude, hooked into this test's daemon."""

    def __init__(self, daemon: Daemon, claude: TmuxClaude) -> None:
        self.daemon = daemon
        self.claude = claude

    def session(
        self, ok: Callable[[dict[str, Any]], bool], what: str, timeout: float = WAIT
    ) -> dict[str, Any]:
        """The daemon's one Claude session once `ok` holds for it."""

        def probe() -> dict[str, Any] | None:
            live = [s for s in self.daemon.sessions() if s.get("agent") == "claude"]
            return live[0] if len(live) == 1 and ok(live[0]) else None

        return wait_until(
            probe, timeout=timeout, describe=lambda: f"{what}; sessions: {self.daemon.sessions()}"
        )

    def events(self, sid: str) -> list[dict[str, Any]]:
        return list(self.daemon.api("GET", f"/api/sessions/{sid}/events")["events"])


@pytest.fixture
def start_walled(
    tmp_path: Path, claude_bin: Path, fake_api: FakeAnthropicAPI
) -> Iterator[Callable[[str], Walled]]:
    started: list[tuple[Daemon, TmuxClaude]] = []

    def start(login: str) -> Walled:
        root = tmp_path / login
        root.mkdir()
        daemon = Daemon(home=root / "pmx", claude_dir=root / "home" / ".claude")
        daemon.start()
        script = install.install_script(daemon.home)
        home = make_claude_home(root, claude_install.hook_command(script, daemon.home), login=login)
        claude = TmuxClaude(claude_bin, home, fake_api.base_url, env=RETRY_ENV, login=login)
        started.append((daemon, claude))
        claude.start()
        claude.wait_ready(timeout=60)
        claude.wait_started(timeout=60)
        return Walled(daemon, claude)

    yield start
    for daemon, claude in started:
        claude.kill()
        daemon.stop()


def at_wall(w: Walled, window: str) -> dict[str, Any]:
    """The session once it sits at `window`'s wall with the transcript's exact reset (its
    quotaLimits.resetsAt, not the hook's text read back to the minute)."""

    def exact(s: dict[str, Any]) -> bool:
        wall = s.get("limit") or {}
        if s.get("state") != "review" or wall.get("window") != window:
            return False
        read = [
            e
            for e in w.events(s["id"])
            if e["kind"] == "stop_failure"
            and e["source"] == "transcript"
            and e.get("limit_window") == window
        ]
        return bool(read) and read[-1]["limit_resets_at"] == wall.get("resets_at")

    return w.session(exact, f"the {window} wall with the transcript's reset")


def test_gateway_5_hour_then_weekly_wall_with_the_reset_in_the_row(
    start_walled: Callable[[str], Walled], fake_api: FakeAnthropicAPI
) -> None:
    fake_api.limits = LimitControl(headers=usage_headers(0.42, 0.81), retry_after=2.0)
    fake_api.limits.reset_in = RESET_IN
    w = start_walled("gateway")
    w.claude.send_text("LIMIT:5h")
    s = at_wall(w, "five_hour")
    wall = s["limit"]
    view = s["view"]
    assert (view["wall"], view["wall_at"], view["wall_window"]) == (
        "limit hit · resets",
        wall["resets_at"],
        "5-hour limit",
    )
    resets = wall_clock(wall["resets_at"], wall["at"])
    assert view["detail"] == f"limit hit · resets {resets}"  # the row (the daemon's local time)
    assert view["headline"] == f"Claude · {view['name']} · limit hit · resets {resets}"
    status = w.daemon.cli("status", check=True).stdout
    assert f"limit hit · resets {wall_clock(wall['resets_at'], wall['at'])}" in status

    # The weekly wall: the next prompt clears the 5-hour one, its failure makes the new one.
    fake_api.limits.reset_in = 3 * 86400
    w.claude.send_text("LIMIT:7d")
    s = at_wall(w, "seven_day")
    assert s["limit"]["resets_at"] > wall["resets_at"] + 86400  # days out: the date is shown
    view = s["view"]
    assert view["wall_window"] == "weekly limit"
    day = wall_clock(s["limit"]["resets_at"], s["limit"]["at"])
    assert view["detail"] == f"limit hit · resets {day}" and len(day.split()) == 3
    prompts = [e for e in w.events(s["id"]) if e["kind"] == "prompt"]
    assert [p["by_agent"] for p in prompts] == [False, False]


def test_subscription_continues_by_itself_and_that_turn_is_not_the_users_prompt(
    start_walled: Callable[[str], Walled], fake_api: FakeAnthropicAPI
) -> None:
    # The reset 5 s out: Claude's own auto-continue fires about a minute and a half later.
    fake_api.limits = LimitControl(headers=usage_headers(0.42, 0.81), reset_in=5)
    w = start_walled("subscription")
    w.claude.send_text("LIMIT:5h then continue")

    s = w.session(
        lambda s: (s.get("limit") or {}).get("auto_resume_at") is not None,
        "the wall Claude will continue from by itself",
    )
    wall = s["limit"]
    assert s["state"] == "review" and wall["window"] == "five_hour"
    assert wall["auto_resume_at"] == wall["resets_at"]  # the reset, to the second
    view = s["view"]
    assert (view["wall"], view["wall_at"]) == ("continues at", wall["auto_resume_at"])
    assert view["detail"] == f"continues at {wall_clock(wall['auto_resume_at'], wall['at'])}"
    assert "continues at" in w.daemon.cli("status", check=True).stdout

    # Claude continues by itself: a turn starts, the wall goes, the answer is reviewed.
    s = w.session(
        lambda s: s.get("state") == "review" and s.get("limit") is None,
        "the auto-continued turn's review",
        timeout=AUTO_CONTINUE,
    )
    assert s["view"]["wall"] == "" and PLAIN_ANSWER in (s.get("snippet") or "")
    events = w.events(s["id"])
    fired = [e for e in events if e.get("notification_type") == "quota_auto_resume_fired"]
    assert fired and fired[0]["kind"] == "notice"
    prompts = [e for e in events if e["kind"] == "prompt"]
    # The user typed one prompt; Claude typed the other, and it is marked so.
    assert [(p["prompt"].split()[0], p["by_agent"]) for p in prompts] == [
        ("LIMIT:5h", False),
        ("Your", True),
    ]
