"""GET /api/debug/memory on a real daemon: resident size always, allocation sites when traced."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support import Daemon, run_hook
from tests.support.screens import call


def test_memory_report_names_the_daemons_own_allocations_when_traced(tmp_path: Path) -> None:
    daemon = Daemon.under(tmp_path, "pmx", PYTHONTRACEMALLOC="1").start()
    try:
        for i in range(20):
            run_hook(daemon.home, {"session_id": f"s{i}", "hook_event_name": "UserPromptSubmit"})
        status, body = call(daemon, "GET", "/api/debug/memory?top=200")
        assert status == 200, body
        assert body["tracing"] is True
        assert body["rss_bytes"] > 0 and body["peak_rss_bytes"] >= body["rss_bytes"]
        traced = body["traced"]
        assert 0 < traced["current_bytes"] <= traced["peak_bytes"]
        assert len(body["top"]) == 200
        assert all(site["bytes"] > 0 and ":" in site["where"] for site in body["top"])
        packages = {p["package"] for p in body["packages"]}
        # What was traced is attributed to the code that allocated it, ours included.
        assert any(name.startswith("purplemux") for name in packages), packages
        assert "fastapi" in packages or "starlette" in packages or "pydantic" in packages
    finally:
        daemon.stop()


def test_memory_report_without_tracing_says_how_to_turn_it_on(tmp_path: Path) -> None:
    daemon = Daemon.under(tmp_path, "pmx").start()
    try:
        status, body = call(daemon, "GET", "/api/debug/memory")
        assert status == 200
        assert body["tracing"] is False and "top" not in body
        assert body["rss_bytes"] > 0
        assert "PYTHONTRACEMALLOC=1" in body["hint"]
        assert call(daemon, "GET", "/api/debug/memory?top=0")[0] == 422
        with pytest.raises(urllib.error.HTTPError) as refused:  # no token: nothing is told
            urllib.request.urlopen(daemon.url + "/api/debug/memory", timeout=10)
        assert refused.value.code == 401
        refused.value.close()
    finally:
        daemon.stop()
