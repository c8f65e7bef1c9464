"""Shared pieces of the hardening tests: field caps, hostile-value strategies, route walking."""

from __future__ import annotations

import hmac
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import strategies as st
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute

from purplemux.agents.claude.install import HOOK_EVENTS
from purplemux.server.app import create_app
from tests.support import settings_for

# Caps on the public Session JSON (purplemux/sources/hooks.py, machine.py, events.sanitize).
SESSION_CAPS: dict[str, int] = {
    "id": 200,
    "cwd": 4096,
    "project": 4096,
    "transcript_path": 4096,
    "current_tool": 300,
    "waiting_for": 300,
    "snippet": 200,
    "error": 300,
    "model": 200,
}
TMUX_CAPS = {"pane": 200, "socket": 1024}
LAST_EVENT_NAME_CAP = 100
EVENT_FIELD_CAP = 4096
"""No field of a logged event is longer than this (prompts and messages are capped at 2000)."""

HOOK_NAMES = list(HOOK_EVENTS)


NO_NETWORK = {
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "",
}
"""Environment that fails every outgoing HTTP request at once (a closed local proxy port): Web
Push sends to the random endpoints fuzzing subscribes cannot hang a test or its shutdown."""


def encodable(text: str) -> bool:
    """True when text can be written as UTF-8: it holds no surrogate code point (U+D800..U+DFFF),
    the only ones strict UTF-8 refuses."""
    return not any("\ud800" <= ch <= "\udfff" for ch in text)


def assert_session_capped(session: Mapping[str, Any]) -> None:
    """Every text field of a public Session is within its cap and is valid Unicode."""
    for name, cap in SESSION_CAPS.items():
        value = session.get(name)
        if value is not None:
            assert isinstance(value, str), (name, type(value))
            assert len(value) <= cap, (name, len(value), cap)
            assert encodable(value), (name, value)
    tmux = session.get("tmux")
    if tmux:
        for name, cap in TMUX_CAPS.items():
            value = tmux.get(name)
            assert value is None or len(value) <= cap, (name, len(value))
    last = session.get("last_event")
    if last:
        assert len(last["name"]) <= LAST_EVENT_NAME_CAP


def assert_event_capped(event: Mapping[str, Any]) -> None:
    """A logged event: no string field past EVENT_FIELD_CAP."""
    for name, value in event.items():
        if isinstance(value, str):
            assert len(value) <= EVENT_FIELD_CAP, (name, len(value))


# --- hostile values -----------------------------------------------------------------------------

# Any code point, lone surrogates included: JSON can carry them ("\ud83d", a cut emoji) and
# JavaScript's JSON.stringify writes exactly that for a string sliced through a pair.
any_char = st.one_of(
    st.characters(),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, categories=["Cs"]),
)
hostile_text = st.one_of(
    st.text(any_char, max_size=40),
    st.sampled_from(["", " ", "\x00", "a\nb", "<script>x</script>", "../../etc/passwd", "%0"]),
    st.integers(1, 5000).map(lambda n: "x" * n),
)
json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    hostile_text,
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(hostile_text, inner, max_size=4)
    ),
    max_leaves=12,
)
# A latin-1 header value an HTTP client will send (no control characters).
header_text = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
    max_size=2000,
)


HOOK_TEXT_FIELDS = (
    "cwd",
    "transcript_path",
    "source",
    "model",
    "prompt",
    "tool_name",
    "tool_use_id",
    "notification_type",
    "message",
    "last_assistant_message",
    "error",
)
"""The text fields of a hook payload (besides session_id and hook_event_name)."""


def hook_payloads() -> st.SearchStrategy[dict[str, Any]]:
    """Payloads shaped like Claude's, with every value possibly of the wrong type or size."""
    name = st.one_of(st.sampled_from(HOOK_NAMES), json_value)
    sid = st.one_of(st.uuids().map(str), st.text(any_char, min_size=1, max_size=250), json_value)
    optional = {key: json_value for key in (*HOOK_TEXT_FIELDS, "tool_input", "reason")}
    long_text = st.integers(300, 20_000).map(lambda n: "é" * n)
    optional["cwd"] = st.one_of(json_value, long_text)
    optional["last_assistant_message"] = st.one_of(json_value, long_text)
    optional["message"] = st.one_of(json_value, long_text)
    optional["tool_input"] = st.one_of(
        json_value,
        st.fixed_dictionaries(
            {"command": st.one_of(hostile_text, long_text)},
            optional={"questions": st.lists(st.fixed_dictionaries({"question": long_text}))},
        ),
    )
    return st.fixed_dictionaries({"session_id": sid, "hook_event_name": name}, optional=optional)


# --- routes -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Endpoint:
    """One method on one path of the app (kind "http" or "websocket")."""

    kind: str
    method: str
    path: str


def _flatten(routes: list[BaseRoute], prefix: str = "") -> Iterator[BaseRoute | tuple[str, Any]]:
    for route in routes:
        included = getattr(route, "original_router", None)  # FastAPI >= 0.16x wraps routers
        if included is not None:
            context = getattr(route, "include_context", None)
            sub = prefix + (getattr(context, "prefix", "") or "")
            yield from _flatten(list(included.routes), sub)
        elif isinstance(route, Mount):
            yield ("mount", prefix + route.path)
        else:
            yield (prefix, route)


def endpoints(app: Any) -> list[Endpoint]:
    """Every HTTP method and WebSocket path the app serves, static mounts as "MOUNT"."""
    out: list[Endpoint] = []
    for item in _flatten(list(app.routes)):
        if isinstance(item, tuple) and item[0] == "mount":
            out.append(Endpoint("mount", "MOUNT", str(item[1])))
            continue
        assert isinstance(item, tuple)
        prefix, route = item
        if isinstance(route, WebSocketRoute) or type(route).__name__ == "APIWebSocketRoute":
            out.append(Endpoint("websocket", "WS", prefix + route.path))
        elif isinstance(route, Route):
            for method in sorted(route.methods or ()):
                if method != "HEAD":
                    out.append(Endpoint("http", method, prefix + route.path))
        else:
            raise AssertionError(f"a route of unknown kind: {route!r}")
    return out


def concrete(path: str) -> str:
    """A path template with each {param} filled in."""
    out, depth = [], 0
    for ch in path:
        if ch == "{":
            depth += 1
            out.append("x")
        elif ch == "}":
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


class ErrorLog(logging.Handler):
    """Collects ERROR records (an engine batch failing, an unhandled exception)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def messages(self) -> list[str]:
        return [f"{r.name}: {r.getMessage()}" for r in self.records]


def spy_compare_digest(monkeypatch: pytest.MonkeyPatch, module: str) -> list[tuple[Any, Any]]:
    """Every hmac.compare_digest call `module` makes from now on, as (a, b); it still compares."""
    calls: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(f"{module}.hmac.compare_digest", spy)
    return calls


@contextmanager
def client_and_token(tmp_path: Path) -> Iterator[tuple[TestClient, str]]:
    """The app in a TestClient with no credentials (a home under TMP_PATH), and its token."""
    with TestClient(create_app(settings_for(tmp_path))) as c:
        yield c, (tmp_path / "home" / "token").read_text().strip()
