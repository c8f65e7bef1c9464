"""The supervisor: a part that raises is logged with its cause and restarted; stop ends all."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from purplemux.daemon.runtime import Runtime
from purplemux.server.app import create_app
from tests.support import settings_for, wait_for


def test_a_part_that_raises_is_logged_and_restarted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    runs: list[int] = []
    stopped: list[bool] = []

    async def flaky(rt: Runtime) -> None:
        runs.append(len(runs) + 1)
        if len(runs) < 3:
            raise ValueError(f"NUL byte in line {len(runs)}")
        try:
            await asyncio.Event().wait()  # healthy now: runs until the daemon stops
        finally:
            stopped.append(True)

    caplog.set_level(logging.INFO, logger="purplemux")
    with TestClient(create_app(settings_for(tmp_path), components=[flaky])) as c:
        wait_for(lambda: len(runs) == 3, timeout=10)
        assert c.get("/api/health").status_code == 200  # the daemon kept serving
    assert stopped == [True]  # stopping the daemon cancels the part, which cleans up
    crashes = [r for r in caplog.records if "flaky crashed" in r.getMessage()]
    assert len(crashes) == 2
    first, second = crashes
    assert first.exc_info is not None and "NUL byte in line 1" in str(first.exc_info[1])
    assert "restarting it in 0.5s" in first.getMessage()
    assert "restarting it in 1.0s" in second.getMessage()  # backoff doubles
    assert runs == [1, 2, 3]


def test_a_part_that_turns_its_cancellation_into_an_error_is_not_run_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Like a tmux call that reported its cancellation as a failure: stopping still stops."""
    runs: list[int] = []

    async def converts(rt: Runtime) -> None:
        runs.append(1)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise RuntimeError("tmux did not answer") from None

    caplog.set_level(logging.INFO, logger="purplemux")
    with TestClient(create_app(settings_for(tmp_path), components=[converts])):
        wait_for(lambda: runs == [1], timeout=10)
    assert runs == [1]  # not restarted once the daemon was stopping
    assert any(
        "converts ended with RuntimeError while stopping" in r.getMessage() for r in caplog.records
    )
    assert not any("converts crashed" in r.getMessage() for r in caplog.records)
