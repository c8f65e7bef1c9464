"""Fixtures every test folder may use (registered by tests/conftest.py's pytest_plugins)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from purplemux.server.app import create_app
from tests.support.daemon import Daemon
from tests.support.hooks import settings_for


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    """A real daemon (uvicorn on a free port) with its own home and Claude dir."""
    d = Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude").start()
    yield d
    d.stop()


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    """An in-process app (no live sources), signed in with its token."""
    with TestClient(create_app(settings_for(tmp_path))) as c:
        token = (tmp_path / "home" / "token").read_text().strip()
        c.headers["Authorization"] = f"Bearer {token}"
        yield c
