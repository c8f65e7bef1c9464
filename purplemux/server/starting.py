"""The app uvicorn serves: /api/health answers at once; the daemon's app loads behind it.

Python's start and the imports of the whole daemon (FastAPI, pydantic, the engine, the sources)
took about a second on a 2-core machine before anything answered (issue 27). The first answer a
user or a service manager waits for is /api/health, and it needs none of that: this app is all
uvicorn loads before it listens. Its lifespan starts the daemon's app (purplemux.server.app,
imported in a worker thread so the loop keeps answering while the modules load) and runs that
app's own lifespan; until it has, /api/health says `"status": "starting"` and every other
request waits for it (none is refused), then goes to it. Once started, everything — /api/health
included — is the daemon's app's, but for the usual hook call, taken in front of it
(purplemux.server.hookpath) with the same answer. If it fails to start, the failure is logged,
waiting requests get 503 and the server is told to stop (`serve` then exits 1).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from starlette.types import ASGIApp, Receive, Scope, Send

from purplemux import __version__
from purplemux.io.settings import Settings
from purplemux.server.host_check import allowed_names, host_name

if TYPE_CHECKING:
    from purplemux.server.hookpath import HookPath

log = logging.getLogger("purplemux")

HEADERS = [
    (b"content-type", b"application/json"),
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
]


def build_daemon_app(settings: Settings) -> ASGIApp:
    """The daemon's app (purplemux.server.app.create_app): the imports are most of the cost."""
    from purplemux.server.app import create_app

    return create_app(settings)


class Starting:
    """Answers /api/health while the daemon's app loads, then hands everything to it."""

    def __init__(
        self,
        settings: Settings,
        on_failure: Callable[[], None] = lambda: None,
        build: Callable[[Settings], ASGIApp] = build_daemon_app,
    ) -> None:
        self.settings = settings
        self.on_failure = on_failure
        self.build = build
        self.app: ASGIApp | None = None
        """The daemon's app, once its lifespan has started."""
        self.hooks: HookPath | None = None
        """Hook calls in front of it (purplemux.server.hookpath), once it has started."""
        self.failed = False
        self.allowed = allowed_names(settings)
        self._settled: asyncio.Event | None = None
        self._loading: asyncio.Task[None] | None = None
        self._lifespan: AbstractAsyncContextManager[Any] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._run_lifespan(receive, send)
            return
        if self.app is None and not self.failed:
            if scope["type"] == "http" and scope["path"] == "/api/health" and self._ours(scope):
                await self._answer(send, 200, self._starting())
                return
            if self._settled is not None:
                await self._settled.wait()
        if self.app is None:
            if scope["type"] == "http":
                await self._answer(send, 503, {"error": "the daemon failed to start"})
            else:
                await send({"type": "websocket.close", "code": 1011})
            return
        if self.hooks is not None and self.hooks.wants(scope):
            await self.hooks(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _ours(self, scope: Scope) -> bool:
        """The Host header names this daemon (purplemux.server.host_check; its app checks it
        on every request once started)."""
        hosts = [v for n, v in scope.get("headers") or [] if n == b"host"]
        return bool(hosts) and all(host_name(h.decode("latin-1")) in self.allowed for h in hosts)

    def _starting(self) -> dict[str, Any]:
        return {
            "status": "starting",
            "version": __version__,
            "broker": {"state": "connecting" if self.settings.broker else "off"},
            "transcripts": None,
        }

    @staticmethod
    async def _answer(send: Send, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        headers = [*HEADERS, (b"content-length", b"%d" % len(data))]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": data})

    async def _run_lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        self._settled = asyncio.Event()
        self._loading = asyncio.create_task(self._load())
        await send({"type": "lifespan.startup.complete"})
        message = await receive()  # lifespan.shutdown
        try:
            await self.stop()
        finally:
            await send({"type": "lifespan.shutdown.complete"})

    async def _load(self) -> None:
        assert self._settled is not None
        try:
            app = await asyncio.to_thread(self.build, self.settings)
            lifespan = app.router.lifespan_context(app)  # type: ignore[attr-defined]
            await lifespan.__aenter__()
            self._lifespan = lifespan
            from purplemux.server.hookpath import HookPath  # loaded with the app: no cost here

            self.hooks = HookPath(app, self.allowed)
            self.app = app
        except asyncio.CancelledError:
            raise
        except BaseException:
            log.exception("the daemon failed to start")
            self.failed = True
            self.on_failure()
        finally:
            self._settled.set()

    async def stop(self) -> None:
        """Stop the daemon's app (once it has started: a stop during the load waits for it)."""
        if self._loading is not None:
            with contextlib.suppress(Exception):
                await self._loading
        lifespan, self._lifespan = self._lifespan, None
        if lifespan is not None:
            await lifespan.__aexit__(None, None, None)
