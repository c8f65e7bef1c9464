"""Web Push through a real daemon: subscribe over the API, hooks in, verified pushes out.

The fake push service checks the VAPID JWT and decrypts each message, so what is asserted is
what a phone would show. Absence is proven by order: a later push arrives and nothing else did.
"""

from __future__ import annotations

import base64
import json
import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect

from tests.support import Daemon, run_hook, wait_for

from .fake_push_service import BrowserSubscription, FakePushService


@pytest.fixture
def service() -> Iterator[FakePushService]:
    with FakePushService() as s:
        yield s


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude").start()
    yield d
    d.stop()


def subscribe(d: Daemon, sub: BrowserSubscription) -> None:
    req = urllib.request.Request(
        d.url + "/api/push/subscriptions",
        data=json.dumps(sub.to_json()).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {d.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        assert r.status == 201


def hook(d: Daemon, sid: str, name: str, **fields: Any) -> None:
    run_hook(
        d.home,
        {"session_id": sid, "hook_event_name": name, "cwd": "/w/shop-api", **fields},
        pane="%7",
    )


def pushes(service: FakePushService, sub: BrowserSubscription, n: int) -> list[dict[str, Any]]:
    got = wait_for(lambda: (lambda x: x if len(x) >= n else None)(service.for_subscription(sub)))
    return [d.json for d in got]


def test_key_is_a_p256_point(daemon: Daemon) -> None:
    key = daemon.api("GET", "/api/push/key")["key"]
    raw = base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))
    assert len(raw) == 65 and raw[0] == 4


def test_one_push_per_entry_naming_the_project_and_the_ask(
    daemon: Daemon, service: FakePushService
) -> None:
    sub = service.subscribe()
    subscribe(daemon, sub)
    hook(daemon, "p1", "UserPromptSubmit", prompt="deploy")
    tool = {"command": "kubectl apply -f prod.yaml", "description": "deploy"}
    hook(daemon, "p1", "PreToolUse", tool_name="Bash", tool_input=tool, tool_use_id="t1")
    hook(daemon, "p1", "PermissionRequest", tool_name="Bash", tool_input=tool)
    (first,) = pushes(service, sub, 1)
    assert first["state"] == "needs-input"
    assert "shop-api" in first["title"] and "%7" in first["title"]
    assert "kubectl apply -f prod.yaml" in first["body"]
    assert service.for_subscription(sub)[0].headers.get("urgency") == "high"
    # The late permission Notification for the same dialog pushes nothing; the end of the turn does.
    hook(daemon, "p1", "Notification", notification_type="permission_prompt", message="needs you")
    hook(daemon, "p1", "PostToolUse", tool_name="Bash", tool_input=tool, tool_use_id="t1")
    hook(daemon, "p1", "Stop", last_assistant_message="Deployed to prod, all pods healthy.")
    first, second = pushes(service, sub, 2)
    assert second["state"] == "review"
    assert second["body"].startswith("Deployed to prod")
    assert not service.errors


def test_no_push_while_a_dashboard_is_focused(daemon: Daemon, service: FakePushService) -> None:
    sub = service.subscribe()
    subscribe(daemon, sub)
    headers = {"Authorization": f"Bearer {daemon.token}"}
    with connect(f"ws://127.0.0.1:{daemon.port}/api/stream", additional_headers=headers) as ws:
        assert json.loads(ws.recv(timeout=5))["type"] == "snapshot"
        ws.send(json.dumps({"type": "visibility", "visible": True, "focused": True}))
        # Wait until the daemon has the page's report: a change it broadcasts after it.
        hook(daemon, "f1", "UserPromptSubmit")
        wait_for(lambda: json.loads(ws.recv(timeout=5))["session"]["state"] == "busy")
        hook(daemon, "f1", "Stop", last_assistant_message="seen on screen")
        wait_for(lambda: (daemon.session("f1") or {}).get("state") == "review")
    # The page is gone: the next entry is pushed, and it is the only one.
    hook(daemon, "f1", "UserPromptSubmit")
    hook(daemon, "f1", "Stop", last_assistant_message="nobody was looking")
    (only,) = pushes(service, sub, 1)
    assert only["body"] == "nobody was looking"


def test_no_push_for_what_happened_while_the_daemon_was_down(
    tmp_path: Path, service: FakePushService
) -> None:
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude").start()
    sub = service.subscribe()
    subscribe(d, sub)
    hook(d, "r1", "UserPromptSubmit")
    wait_for(lambda: (d.session("r1") or {}).get("state") == "busy")
    d.kill()
    hook(d, "r1", "Stop", last_assistant_message="finished in the dark")  # spooled
    d2 = Daemon(home=d.home, claude_dir=d.claude_dir, port=d.port).start()
    try:
        wait_for(lambda: (d2.session("r1") or {}).get("state") == "review")
        hook(d2, "r2", "UserPromptSubmit")
        hook(d2, "r2", "Stop", last_assistant_message="live again")
        (only,) = pushes(service, sub, 1)
        assert only["session_id"] == "r2"
    finally:
        d2.stop()


def test_desktop_notification_through_the_daemon(tmp_path: Path) -> None:
    """With the setting on, the daemon runs notify-send with the session's title and body."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "notify-send.args"
    fake = bin_dir / "notify-send"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{record}"\n')
    fake.chmod(0o755)

    env = {"PURPLEMUX_DESKTOP_NOTIFY": "1", "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude", env_extra=env).start()
    try:
        hook(d, "d1", "UserPromptSubmit")
        hook(d, "d1", "Stop", last_assistant_message="Tests are green.")
        args = wait_for(lambda: record.exists() and record.read_text().splitlines())
        assert any("shop-api" in a for a in args)
        assert "Tests are green." in args
    finally:
        d.stop()
