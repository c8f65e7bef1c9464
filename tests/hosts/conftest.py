"""Fixtures: one real redis-server per test module, emptied before each test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.daemon import Daemon
from tests.support.hosts import RedisServer, stop_all


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.kill()


@pytest.fixture
def redis(redis_server: RedisServer) -> RedisServer:
    if not redis_server.ping():  # a test killed it
        redis_server.start()
    assert redis_server.command("FLUSHALL").startswith(b"+OK")
    return redis_server


@pytest.fixture
def daemons() -> Iterator[list[Daemon]]:
    """Daemons a test started; all stopped at its end."""
    started: list[Daemon] = []
    yield started
    stop_all(started)


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return tmp_path
