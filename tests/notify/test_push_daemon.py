"""Web Push through a real daemon: subscribe over the API, hooks in, verified pushes out.

The fake push service checks the VAPID JWT and decrypts each message, so what is asserted is
what a phone would show. Absence is proven by order: a later push arrives and nothing else did.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect

from tests.support import Daemon, fake_command, run_hook, wait_for

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


def changed(msg: dict[str, Any], sid: str, state: str) -> bool:
    """A feed message that shows session `sid` in `state`."""
    return any(s["id"] == sid and s["state"] == state for s in msg.get("sessions", []))


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
    wants = "Claude · shop-api · needs your approval: Bash kubectl apply -f prod.yaml"
    assert first["title"] == wants
    assert "pane %7" in first["body"]
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
        wait_for(lambda: changed(json.loads(ws.recv(timeout=5)), "f1", "busy"))
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
    """With the setting on, the daemon runs notify-send with the session's title and body; with
    no push subscriber it makes no VAPID key for it."""
    record = tmp_path / "notify-send.args"
    path = fake_command(tmp_path / "bin", "notify-send", f'printf "%s\\n" "$@" >> "{record}"\n')
    env = {"PURPLEMUX_DESKTOP_NOTIFY": "1", "PATH": path}
    d = Daemon.under(tmp_path, **env).start()
    try:
        hook(d, "d1", "UserPromptSubmit")
        hook(d, "d1", "Stop", last_assistant_message="Tests are green.")
        args = wait_for(lambda: record.exists() and record.read_text().splitlines())
        assert any("shop-api" in a for a in args)
        assert "Tests are green." in args
        # Nobody subscribed to push: the notifier never made (or loaded) a signing key, nor the
        # crypto behind it. The first page asking for the key makes it.
        key_file = d.home / "vapid_private.pem"
        assert not key_file.exists()
        assert d.api("GET", "/api/push/key")["key"]
        assert key_file.exists()
    finally:
        d.stop()


def _reply(sid: str, n: int, input_tokens: int) -> str:
    """One main-chain assistant reply with its usage, as Claude writes it to the transcript."""
    message = {
        "id": f"msg_{n}",
        "model": "claude-opus-4-1",
        "role": "assistant",
        "content": [{"type": "text", "text": f"reply {n}"}],
        "usage": {"input_tokens": input_tokens, "output_tokens": 10},
    }
    entry = {
        "type": "assistant",
        "uuid": f"u{n}",
        "sessionId": sid,
        "isSidechain": False,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        + f".{int(time.time() * 1000) % 1000:03d}Z",
        "message": message,
    }
    return json.dumps(entry) + "\n"


def test_opt_in_push_once_per_entry_into_the_critical_context_band(
    tmp_path: Path, service: FakePushService
) -> None:
    d = Daemon.under(tmp_path, PURPLEMUX_NOTIFY_CONTEXT="1").start()
    try:
        sub = service.subscribe()
        subscribe(d, sub)
        transcript = d.claude_dir / "projects" / "-w-shop" / "c1.jsonl"  # read only under projects/
        transcript.parent.mkdir(parents=True, exist_ok=True)
        transcript.write_text("")
        hook(d, "c1", "UserPromptSubmit", prompt="go", transcript_path=str(transcript))

        def band_is(band: str) -> bool:
            s = d.session("c1") or {}
            return (s.get("context") or {}).get("band") == band

        for n, tokens, band in [
            (1, 150_000, "warning"),
            (2, 175_000, "critical"),  # an entry: one push
            (3, 180_000, "critical"),  # still critical: nothing
            (4, 100_000, "healthy"),  # compacted
            (5, 172_000, "critical"),  # a second entry: a second push
        ]:
            with transcript.open("a") as f:
                f.write(_reply("c1", n, tokens))
            wait_for(lambda b=band: band_is(b))  # type: ignore[misc]
        first, second = pushes(service, sub, 2)  # in order: the phone shows the newest on top
        assert first["title"] == "context critical: shop-api · %7"
        assert first["body"].startswith("ctx 88% — 175000 of 200000 tokens in context")
        assert second["body"].startswith("ctx 86%")
        # Nothing else came in between: the turn's end pushes next, as the third.
        hook(d, "c1", "Stop", last_assistant_message="Done.", transcript_path=str(transcript))
        *_, third = pushes(service, sub, 3)
        assert third["state"] == "review" and len(service.for_subscription(sub)) == 3
        assert not service.errors
    finally:
        d.stop()


def test_context_push_is_off_by_default(
    daemon: Daemon, service: FakePushService, tmp_path: Path
) -> None:
    sub = service.subscribe()
    subscribe(daemon, sub)
    transcript = daemon.claude_dir / "projects" / "-w-shop" / "c2.jsonl"  # read under projects/
    transcript.parent.mkdir(parents=True, exist_ok=True)
    transcript.write_text("")
    hook(daemon, "c2", "UserPromptSubmit", prompt="go", transcript_path=str(transcript))
    transcript.write_text(_reply("c2", 1, 180_000))
    wait_for(lambda: ((daemon.session("c2") or {}).get("context") or {}).get("band") == "critical")
    hook(daemon, "c2", "Stop", last_assistant_message="Done.", transcript_path=str(transcript))
    (only,) = pushes(service, sub, 1)
    assert only["state"] == "review"
