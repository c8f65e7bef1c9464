"""Schemathesis against the app's own OpenAPI schema, on a real daemon: never a server error."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok

from purplemux.server.app import create_app
from tests.hardening.helpers import (
    HOOK_NAMES,
    HOOK_TEXT_FIELDS,
    NO_NETWORK,
    assert_session_capped,
)
from tests.support import REPO, Daemon, settings_for

HOOK_BODY = {
    "type": "object",
    "required": ["session_id", "hook_event_name"],
    "properties": {
        "session_id": {"type": "string", "minLength": 1, "maxLength": 200},
        "hook_event_name": {"enum": HOOK_NAMES},
        **{name: {"type": "string"} for name in HOOK_TEXT_FIELDS},
        "tool_input": {"type": "object"},
    },
}
HOOK_HEADERS = [
    {
        "name": "X-Purplemux-Ts",
        "in": "header",
        "schema": {"type": "string", "pattern": "^[0-9]{1,20}$"},
    },
    {
        "name": "X-Purplemux-Event-Id",
        "in": "header",
        "schema": {"type": "string", "maxLength": 200},
    },
    {"name": "X-Purplemux-Pane", "in": "header", "schema": {"type": "string"}},
    {"name": "X-Purplemux-Tmux", "in": "header", "schema": {"type": "string"}},
]
SUBSCRIPTION = {
    "type": "object",
    "required": ["endpoint", "keys"],
    "properties": {
        "endpoint": {"type": "string", "pattern": "^https://"},
        "keys": {
            "type": "object",
            "required": ["p256dh", "auth"],
            "properties": {
                "p256dh": {"type": "string", "minLength": 1, "maxLength": 256},
                "auth": {"type": "string", "minLength": 1, "maxLength": 256},
            },
        },
    },
}


def app_schema() -> dict[str, Any]:
    """The app's own OpenAPI document, built in process (the daemon serves no /openapi.json)."""
    return create_app(settings_for(Path("/nonexistent-purplemux-schema"))).openapi()


def with_bodies(raw: dict[str, Any]) -> dict[str, Any]:
    """The app's schema plus the bodies its raw-body endpoints read, so they get fuzzed too."""

    def body(schema: dict[str, Any]) -> dict[str, Any]:
        return {"required": True, "content": {"application/json": {"schema": schema}}}

    paths = raw["paths"]
    paths["/api/hooks"]["post"]["requestBody"] = body(HOOK_BODY)
    paths["/api/hooks"]["post"]["parameters"] = HOOK_HEADERS
    for method in ("post", "delete"):
        paths["/api/push/subscriptions"][method]["requestBody"] = body(SUBSCRIPTION)
    return raw


SCHEMA = schemathesis.openapi.from_dict(with_bodies(app_schema()))


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    root = tmp_path_factory.mktemp("schemathesis")
    d = Daemon(home=root / "home", claude_dir=root / "claude", env_extra=NO_NETWORK).start()
    yield d
    d.stop()
    logs = d.logs()
    assert "Exception in ASGI application" not in logs, logs
    assert f'File "{REPO / "purplemux"}' not in logs, logs


def test_the_schema_lists_every_api_operation() -> None:
    operations = schemathesis.openapi.from_dict(app_schema()).get_all_operations()
    labels = {op.ok().label for op in operations if isinstance(op, Ok)}
    assert {
        "POST /api/hooks",
        "GET /api/sessions",
        "GET /api/sessions/{session_id}",
        "POST /api/sessions/{session_id}/dismiss",
        "GET /api/sessions/{session_id}/events",
        "GET /api/push/key",
        "POST /api/push/subscriptions",
        "DELETE /api/push/subscriptions",
        "GET /",
        "GET /api/health",
    } <= labels


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_operation_gives_a_server_error(daemon: Daemon, mode: GenerationMode) -> None:
    auth = {"Authorization": f"Bearer {daemon.token}"}
    statuses: dict[str, set[int]] = {}

    @settings(
        max_examples=150,
        deadline=None,
        suppress_health_check=list(HealthCheck),  # generation cost is schemathesis's business
    )
    @given(case=SCHEMA.as_strategy(generation_mode=mode))
    def run(case: Any) -> None:  # a schemathesis.Case
        response = case.call(base_url=daemon.url, headers=auth, timeout=10)
        statuses.setdefault(case.operation.label, set()).add(response.status_code)
        case.validate_response(response, checks=[not_a_server_error])

    run()
    print(f"\n{mode.value}: " + ", ".join(f"{k} {sorted(v)}" for k, v in sorted(statuses.items())))
    if mode is GenerationMode.POSITIVE:
        assert len(statuses) >= 9, statuses  # it reached (nearly) every operation
        assert 202 in statuses["POST /api/hooks"], statuses  # and got hook events in
    assert daemon.api("GET", "/api/health")["status"] == "ok"
    for session in daemon.sessions():
        assert_session_capped(session)
