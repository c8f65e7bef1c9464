"""Push subscriptions as devices: names from User-Agents, the store's marks, the v4 → v6 steps."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from purplemux.io.store import MIGRATIONS, Store
from purplemux.notify.devices import device_name


@pytest.mark.parametrize(
    ("user_agent", "name"),
    [
        (
            "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/131.0.0.0 Mobile Safari/537.36",
            "Chrome on Android",
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 "
            "(KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
            "Safari on iPhone",
        ),
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
            "Edge on Windows",
        ),
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.1; rv:133.0) Gecko/20100101 Firefox/133.0",
            "Firefox on macOS",
        ),
        ("Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/156.0 Safari/537.36", "Chromium on Linux"),
        ("\x1b]0;evil\x07<script>", "A browser"),
        (None, "A browser"),
    ],
)
def test_a_device_is_named_from_a_fixed_vocabulary(user_agent: str | None, name: str) -> None:
    assert device_name(user_agent) == name


def sub(n: int) -> dict[str, object]:
    return {"endpoint": f"https://push.example/s/{n}", "keys": {"p256dh": "k", "auth": "a"}}


def test_subscriptions_of_schema_4_become_devices_with_ids(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    db = sqlite3.connect(path, isolation_level=None)
    for version in range(1, 5):
        db.executescript(f"BEGIN; {MIGRATIONS[version]} PRAGMA user_version={version}; COMMIT;")
    for n in (1, 2):
        db.execute(
            "INSERT INTO push_subscriptions VALUES (?, ?, ?)",
            (sub(n)["endpoint"], json.dumps(sub(n)), float(n)),
        )
    db.close()

    store = Store(path)
    devices = store.devices()
    assert [d["push_service"] for d in devices] == ["push.example", "push.example"]
    assert len({d["id"] for d in devices}) == 2 and all(d["id"] for d in devices)
    assert store.list_subscriptions() == [sub(1), sub(2)]

    assert store.mark_gone(str(sub(1)["endpoint"]), "gone (http 410)")
    assert store.list_subscriptions() == [sub(2)]  # no more sends to it
    gone = store.devices()[0]
    assert gone["gone_at"] and gone["last"]["result"] == "gone (http 410)"
    assert store.subscription(gone["id"]) is None
    # Subscribing again (the browser made it anew) makes it live, same id.
    assert store.add_subscription(sub(1), "login-1", "Chrome on Android") == gone["id"]
    assert store.list_subscriptions() == [sub(1), sub(2)]
    assert store.remove_device(gone["id"]) and store.list_subscriptions() == [sub(2)]
