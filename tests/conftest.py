"""Shared fixtures: paths to the captured Claude Code samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.samples import SAMPLES, load_hooks

REPO = Path(__file__).resolve().parent.parent

pytest_plugins = ["tests.support.plugin"]
"""The shared fixtures (daemon, client, serve) and helpers live in tests/support."""

__all__ = ["REPO", "SAMPLES", "load_hooks"]


@pytest.fixture
def samples() -> Path:
    return SAMPLES
