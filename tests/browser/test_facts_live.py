"""Issue 16's row parts (mode tag, context bar, cost, background tasks) change live over the
feed, from the session's view, without a reload."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support import Daemon
from tests.support.browser import hook, wait_state

pytestmark = pytest.mark.browser


def reply(sid: str, n: int, input_tokens: int) -> str:
    """One main-chain assistant reply as Claude writes it, with its usage."""
    return json.dumps(
        {
            "type": "assistant",
            "uuid": f"u{n}",
            "sessionId": sid,
            "isSidechain": False,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            "message": {
                "id": f"msg_{n}",
                "model": "claude-opus-4-1",
                "role": "assistant",
                "content": [{"type": "text", "text": f"reply {n}"}],
                "usage": {
                    "input_tokens": input_tokens,
                    "output_tokens": 20,
                    "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0,
                },
            },
        }
    )


def row(page: Page, sid: str) -> Any:
    return page.locator(f'[data-session-id="{sid}"]')


def test_mode_context_cost_and_tasks_update_live(
    dashboard: Page, daemon: Daemon, tmp_path: Path
) -> None:
    sid = "facts-live"
    # Transcripts are read only under Claude's projects/ folder (SECURITY.md).
    transcript = daemon.claude_dir / "projects" / "-w-shop" / f"{sid}.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    transcript.write_text("")
    common: dict[str, Any] = {"transcript_path": str(transcript)}
    hook(daemon, sid, "SessionStart", source="startup", permission_mode="auto", **common)
    wait_state(daemon, sid, "idle")
    r = row(dashboard, sid)
    expect(r.locator('[data-slot="mode"]')).to_have_text("auto")
    expect(r.locator('[data-slot="facts"]')).to_be_hidden()
    dashboard.evaluate("window.__sameDocument = true")

    # Bypass mode: the tag says so and the row is marked.
    hook(
        daemon, sid, "UserPromptSubmit", prompt="go", permission_mode="bypassPermissions", **common
    )
    expect(r.locator('[data-slot="mode"]')).to_have_text("BYPASS")
    expect(r.locator('[data-slot="mode"]')).to_have_attribute("data-bypass", "")

    # A reply with 150k tokens in context: the bar shows 75 %, warning, and a cost appears.
    with transcript.open("a") as f:
        f.write(reply(sid, 1, 150_000) + "\n")
    expect(r.locator('[data-slot="ctx-text"]')).to_have_text("ctx 75%")
    expect(r.locator('[data-slot="ctx"]')).to_have_attribute("data-band", "warning")
    expect(r.locator('[data-slot="cost"]')).to_contain_text("$")
    # Then 180k: critical.
    with transcript.open("a") as f:
        f.write(reply(sid, 2, 180_000) + "\n")
    expect(r.locator('[data-slot="ctx"]')).to_have_attribute("data-band", "critical")
    expect(r.locator('[data-slot="ctx-text"]')).to_have_text("ctx 90%")

    # The turn ends with a shell still running: the review row says so.
    task = {"id": "b1", "type": "shell", "status": "running", "description": "sleep 30"}
    hook(
        daemon, sid, "Stop", last_assistant_message="Started it.", background_tasks=[task], **common
    )
    expect(r).to_have_attribute("data-state", "review")
    expect(r.locator('[data-slot="tasks"]')).to_have_text("finished · 1 task still running")

    # Back to manual mode; the task ends (Stop lists none): both leave the row.
    hook(daemon, sid, "UserPromptSubmit", prompt="more", permission_mode="default", **common)
    expect(r.locator('[data-slot="mode"]')).to_have_text("manual")
    expect(r.locator('[data-slot="mode"]')).not_to_have_attribute("data-bypass", "")
    hook(daemon, sid, "Stop", last_assistant_message="Done.", background_tasks=[], **common)
    expect(r.locator('[data-slot="tasks"]')).to_be_hidden()
    assert dashboard.evaluate("window.__sameDocument") is True  # never reloaded

    # A reload (the server's render of the same view) shows the same parts.
    dashboard.reload()
    r = row(dashboard, sid)
    expect(r.locator('[data-slot="mode"]')).to_have_text("manual")
    expect(r.locator('[data-slot="ctx"]')).to_have_attribute("data-band", "critical")
    expect(r.locator('[data-slot="tasks"]')).to_be_hidden()
