"""Shared fixtures: paths to the captured Claude Code samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent

pytest_plugins = ["tests.support.plugin"]
"""The shared fixtures (daemon, client) and helpers live in tests/support."""


def _samples_dir() -> Path:
    for base in (REPO / "tests" / "samples", REPO.parent / "shared" / "samples"):
        candidate = base / "claude-code-2.1.197"
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("claude-code-2.1.197 samples not found")


SAMPLES = _samples_dir()


def load_hooks(name: str = "hooks.jsonl") -> list[dict[str, Any]]:
    """Lines of a captured hook log: {"ts", "tmux_pane", "payload"}."""
    return [json.loads(line) for line in (SAMPLES / name).read_text().splitlines() if line.strip()]


@pytest.fixture
def samples() -> Path:
    return SAMPLES
