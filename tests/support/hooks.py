"""Hook calls as Claude makes them: through the real script, or posted in-process."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from purplemux.settings import Settings
from tests.support.daemon import REPO, Daemon, wait_for

HOOK = REPO / "hooks" / "status-hook.sh"


def settings_for(root: Path, **overrides: Any) -> Settings:
    """An in-process daemon's settings: its own home, no live sources, no port file."""
    values: dict[str, Any] = {"port": 0, "watch_sources": False, **overrides}
    return Settings(home=root / "home", claude_dir=root / "claude", **values)


def run_hook(
    home: Path,
    payload: dict[str, Any],
    pane: str = "%0",
    tmux: str = "/tmp/tmux-test/default,1,0",
) -> float:
    """Run the installed hook script as Claude would; return its wall time in seconds."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home.parent),
        "PURPLEMUX_HOME": str(home),
        "TMUX_PANE": pane,
        "TMUX": tmux,
    }
    start = time.perf_counter()
    out = subprocess.run(
        ["/bin/sh", str(HOOK)],
        input=json.dumps(payload).encode(),
        env=env,
        capture_output=True,
        timeout=10,
    )
    took = time.perf_counter() - start
    assert out.returncode == 0
    assert out.stdout == b"" and out.stderr == b""
    return took


def hook(d: Daemon, sid: str, name: str, pane: str = "%0", **extra: Any) -> dict[str, Any]:
    """Send one hook event through the script; wait until the daemon has stored it."""
    before = len(d.api("GET", f"/api/sessions/{sid}/events")["events"]) if d.session(sid) else 0
    payload = {"session_id": sid, "hook_event_name": name, "cwd": f"/w/{sid}", **extra}
    run_hook(d.home, payload, pane)

    def stored() -> dict[str, Any] | None:
        if d.session(sid) is None:
            return None
        if len(d.api("GET", f"/api/sessions/{sid}/events")["events"]) <= before:
            return None
        return d.session(sid)

    found = wait_for(stored)
    assert found is not None
    return found


def post_hook(c: TestClient, payload: dict[str, Any], n: int, ts: float, pane: str = "%0") -> Any:
    return c.post(
        "/api/hooks",
        content=json.dumps(payload),
        headers={
            "X-Purplemux-Event-Id": f"ev-{n}",
            "X-Purplemux-Ts": str(int(ts * 1e9)),
            "X-Purplemux-Pane": pane,
            "X-Purplemux-Tmux": "/tmp/tmux-1000/default,123,0",
        },
    )
