"""Shared fixtures: paths to the captured Claude Code samples."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from purplemux.io.store_thread import AsyncStore
from tests.support.samples import SAMPLES, load_hooks

REPO = Path(__file__).resolve().parent.parent

pytest_plugins = ["tests.support.plugin", "tests.support.e2e_report"]
"""The shared fixtures (daemon, client, serve) and helpers live in tests/support; e2e_report
sums up the e2e tier's timings at the end of the run (from every xdist worker)."""

__all__ = ["REPO", "SAMPLES", "load_hooks"]


@pytest.fixture
def samples() -> Path:
    return SAMPLES


@pytest_asyncio.fixture
async def store(tmp_path: Path) -> AsyncIterator[AsyncStore]:
    """A real store in a temporary folder, opened and closed around the test."""
    s = AsyncStore(tmp_path / "state.db")
    await s.open()
    yield s
    await s.close()
