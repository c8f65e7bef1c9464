"""`purplemux serve` answers /api/health while the daemon's app loads (server/starting.py): other
requests wait for the app, none is refused; a failed start is a 503 and a stop, not a hang.

Driven through ASGI as uvicorn drives it (lifespan, then requests), with the real daemon's app
(create_app, no live sources); the seam is when the app's build returns (held by an Event)."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from purplemux.io.settings import Settings
from purplemux.server.app import create_app
from purplemux.server.starting import Starting
from tests.support.hooks import settings_for

HOST = [(b"host", b"127.0.0.1")]


async def get(app: Starting, path: str, headers: list[tuple[bytes, bytes]] = HOST) -> Any:
    """(status, JSON body) of one GET."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "server": ("127.0.0.1", 8022),
        "client": ("127.0.0.1", 50000),
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    status = sent[0]["status"]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return status, json.loads(body) if body else None


class Lifespan:
    """uvicorn's side of the lifespan protocol."""

    def __init__(self, app: Starting) -> None:
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.task = asyncio.create_task(app({"type": "lifespan"}, self.inbox.get, self.outbox.put))

    async def say(self, what: str) -> str:
        await self.inbox.put({"type": f"lifespan.{what}"})
        return str((await self.outbox.get())["type"])


def test_health_answers_while_the_app_loads_and_other_requests_wait_for_it(
    tmp_path: Path,
) -> None:
    gate = threading.Event()

    def build(settings: Settings) -> Any:
        gate.wait(10)
        return create_app(settings, components=[])

    async def go() -> None:
        app = Starting(settings_for(tmp_path, allowed_hosts=()), build=build)
        life = Lifespan(app)
        assert await life.say("startup") == "lifespan.startup.complete"  # at once
        status, body = await get(app, "/api/health")
        assert status == 200 and body["status"] == "starting" and body["transcripts"] is None
        # Not ours (DNS rebinding): no answer of the starting app's.
        waiting_foreign = asyncio.create_task(get(app, "/api/health", [(b"host", b"evil.test")]))
        waiting = asyncio.create_task(get(app, "/api/sessions"))
        await asyncio.sleep(0.05)
        assert not waiting.done() and not waiting_foreign.done()
        gate.set()
        status, _ = await asyncio.wait_for(waiting, 10)
        assert status == 401  # the daemon's app answered it: no token given
        assert (await waiting_foreign)[0] == 400
        status, body = await get(app, "/api/health")
        assert status == 200 and body["status"] == "ok"
        assert await life.say("shutdown") == "lifespan.shutdown.complete"
        await life.task

    asyncio.run(go())


def test_a_failed_start_is_a_503_and_asks_the_server_to_stop(tmp_path: Path) -> None:
    stopped: list[bool] = []

    def build(settings: Settings) -> Any:
        raise RuntimeError("the database is locked")

    async def go() -> tuple[int, int]:
        app = Starting(settings_for(tmp_path), on_failure=lambda: stopped.append(True), build=build)
        life = Lifespan(app)
        await life.say("startup")
        waiting = await get(app, "/api/sessions")
        health = await get(app, "/api/health")
        assert await life.say("shutdown") == "lifespan.shutdown.complete"
        return waiting[0], health[0]

    assert asyncio.run(go()) == (503, 503)
    assert stopped == [True]
