"""Fixtures every test folder may use (registered by tests/conftest.py's pytest_plugins)."""

from __future__ import annotations

import http.server
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from purplemux.server.app import create_app
from tests.support.daemon import Daemon
from tests.support.fake_daemon import FakeDaemon, start_daemon
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


@pytest.fixture
def serve() -> Iterator[Callable[..., FakeDaemon]]:
    """Start fake daemons (tiny HTTP servers taking the hook script's POSTs); stopped afterwards."""
    servers: list[http.server.ThreadingHTTPServer] = []

    def make(status: int = 200, delay: float = 0.0) -> FakeDaemon:
        daemon = FakeDaemon(status=status, delay=delay)
        servers.append(start_daemon(daemon))
        return daemon

    yield make
    for server in servers:
        server.shutdown()
        server.server_close()
