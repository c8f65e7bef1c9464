"""Hook calls as Claude makes them: through the real script, or posted in-process."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from purplemux.io.settings import Settings
from tests.support.daemon import REPO, Daemon, wait_for

HOOK = REPO / "hooks" / "status-hook.sh"


def settings_for(root: Path, **overrides: Any) -> Settings:
    """An in-process daemon's settings: its own home, no live sources, no port file."""
    values: dict[str, Any] = {
        "port": 0,
        "watch_sources": False,
        "allowed_hosts": ("testserver",),  # the name TestClient sends
        **overrides,
    }
    return Settings(home=root / "home", claude_dir=root / "claude", **values)


def run_hook(
    home: Path,
    payload: dict[str, Any],
    pane: str = "%0",
    tmux: str = "/tmp/tmux-test/default,1,0",
    path: str | None = None,
    agent: str | None = None,
) -> float:
    """Run the installed hook script as Claude would; return its wall time in seconds. `path`:
    its PATH (e.g. a fake command first, see fake_command); `agent`: the PURPLEMUX_AGENT the
    installer puts in the agent's command (Codex: "codex")."""
    env = {
        "PATH": path or os.environ["PATH"],
        "HOME": str(home.parent),
        "PURPLEMUX_HOME": str(home),
        "TMUX_PANE": pane,
        "TMUX": tmux,
        **({"PURPLEMUX_AGENT": agent} if agent else {}),
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


def hook(
    d: Daemon, sid: str, name: str, pane: str = "%0", agent: str | None = None, **extra: Any
) -> dict[str, Any]:
    """Send one hook event through the script (as `agent`'s hook: Claude's by default); wait
    until the daemon has stored it."""
    before = len(d.api("GET", f"/api/sessions/{sid}/events")["events"]) if d.session(sid) else 0
    payload = {"session_id": sid, "hook_event_name": name, "cwd": f"/w/{sid}", **extra}
    run_hook(d.home, payload, pane, agent=agent)

    def stored() -> dict[str, Any] | None:
        if d.session(sid) is None:
            return None
        if len(d.api("GET", f"/api/sessions/{sid}/events")["events"]) <= before:
            return None
        return d.session(sid)

    found = wait_for(stored)
    assert found is not None
    return found


TMUX = "/tmp/tmux-1000/default,123,0"
"""A $TMUX value (socket, server pid, session index), as the script finds it in a pane."""


def hook_headers(
    event_id: str, ts_ns: int, pane: str | None = None, tmux: str | None = None
) -> dict[str, str]:
    """The headers the hook script sends with an event: its id, its start time, the pane."""
    headers = {"X-Purplemux-Event-Id": event_id, "X-Purplemux-Ts": str(ts_ns)}
    if pane:
        headers["X-Purplemux-Pane"] = pane
        headers["X-Purplemux-Tmux"] = tmux or TMUX
    return headers


def post_hook(
    c: TestClient, payload: dict[str, Any], n: int, ts: float, pane: str = "%0", tmux: str = TMUX
) -> Any:
    """POST one hook event in-process as the script does (event id `ev-N`, stamped `ts`)."""
    return c.post(
        "/api/hooks",
        content=json.dumps(payload),
        headers=hook_headers(f"ev-{n}", int(ts * 1e9), pane, tmux),
    )


def send_hook(
    url: str,
    token: str,
    payload: dict[str, Any],
    event_id: str,
    ts_ns: int | None = None,
    pane: str | None = None,
    tmux: str | None = None,
    timeout: float = 5.0,
) -> int:
    """POST one hook event to a running daemon at `url` as the script does; the HTTP status."""
    req = urllib.request.Request(
        url + "/api/hooks", data=json.dumps(payload).encode(), method="POST"
    )
    req.add_header("Authorization", f"Bearer {token}")
    req.add_header("Content-Type", "application/json")
    stamp = time.time_ns() if ts_ns is None else ts_ns
    for name, value in hook_headers(event_id, stamp, pane, tmux).items():
        req.add_header(name, value)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return int(r.status)
