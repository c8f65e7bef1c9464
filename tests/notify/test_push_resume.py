"""Resume at the reset tells the user's devices what it did: a push when it typed "continue",
and one when it did not and why (Web Push through a real daemon and a real tmux pane)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import Daemon, wait_for
from tests.support.input_pane import input_pane
from tests.support.screens import call
from tests.support.walls import at_wall, walled

from .fake_push_service import FakePushService
from .test_push_daemon import subscribe


@pytest.fixture
def service() -> Iterator[FakePushService]:
    with FakePushService() as s:
        yield s


def by_tag(service: FakePushService, sub: Any, tag: str) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        pushed = [d.json for d in service.for_subscription(sub) if d.json.get("tag") == tag]
        return pushed[-1] if pushed else None

    return wait_for(found, timeout=30, what=f"a push tagged {tag}")


def test_a_push_says_it_resumed_and_another_says_why_it_did_not(
    tmp_path: Path,
    service: FakePushService,
) -> None:
    past = time.time() - 120
    with (
        input_pane(tmp_path / "a") as quiet,
        input_pane(tmp_path / "b", typed="wait, not yet") as busy_box,
    ):
        d = Daemon.under(tmp_path).start()
        try:
            sub = service.subscribe()
            subscribe(d, sub)
            at_wall(d, "s1", quiet, past, tmp_path)
            at_wall(d, "s2", busy_box, past, tmp_path)
            walled(d, "s1", past)
            walled(d, "s2", past)
            for sid in ("s1", "s2"):
                assert call(d, "POST", f"/api/sessions/{sid}/resume", {"at_reset": True})[0] == 200
            typed = by_tag(service, sub, "purplemux-s1-resume")
            assert typed["title"] == "Claude · proj · resumed after the usage limit's reset"
            assert typed["body"].startswith("typed “continue” in proj")
            skipped = by_tag(service, sub, "purplemux-s2-resume")
            assert skipped["title"] == "Claude · proj · not resumed at the reset"
            assert skipped["body"].startswith("text is typed in its input box")
            assert quiet.lines_sent() == ["continue"] and busy_box.lines_sent() == []
        finally:
            d.stop()
