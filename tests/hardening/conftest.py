"""Fixtures: one in-process daemon per module (hypothesis runs many examples against it)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from purplemux.server.app import create_app
from tests.hardening.helpers import NO_NETWORK, ErrorLog
from tests.support import settings_for


@pytest.fixture(scope="module")
def home_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hardening")


@pytest.fixture(scope="module")
def error_log() -> Iterator[ErrorLog]:
    """ERROR records logged anywhere while the module runs (the root logger sees them all)."""
    handler = ErrorLog()
    root = logging.getLogger()
    root.addHandler(handler)
    yield handler
    root.removeHandler(handler)


@pytest.fixture(scope="module")
def api(home_root: Path, error_log: ErrorLog) -> Iterator[TestClient]:
    """An authenticated client of one app whose lifespan runs for the whole module.

    raise_server_exceptions stays on: an unhandled exception fails the example with its traceback.
    """
    with pytest.MonkeyPatch.context() as env:
        for name, value in NO_NETWORK.items():
            env.setenv(name, value)
        with TestClient(create_app(settings_for(home_root))) as client:
            token = (home_root / "home" / "token").read_text().strip()
            client.headers["Authorization"] = f"Bearer {token}"
            yield client


@pytest.fixture
def no_errors(error_log: ErrorLog) -> Iterator[ErrorLog]:
    """Fail the test if anything logged an ERROR while it ran."""
    error_log.records.clear()
    yield error_log
    assert error_log.messages() == []
