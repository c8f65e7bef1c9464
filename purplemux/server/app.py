"""create_app(settings): the FastAPI app and its lifespan (start in order, stop in reverse)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from purplemux import __version__
from purplemux.daemon.actions import ActionError
from purplemux.daemon.engine import Engine
from purplemux.daemon.runtime import Adapters, Runtime, default_adapters
from purplemux.io.home import ensure_home, load_or_create_token, write_private
from purplemux.io.paths import web_dir
from purplemux.io.settings import Settings
from purplemux.io.store_thread import AsyncStore
from purplemux.parts import retention, sources
from purplemux.parts.broker import broker
from purplemux.parts.notifier import notifier
from purplemux.parts.pane_marker import pane_marker
from purplemux.parts.resumer import resumer
from purplemux.parts.spool import drain_spool, spool_sweeper, spool_watcher
from purplemux.parts.supervisor import STOP_ENGINE, STOP_PARTS, Part, Supervisor
from purplemux.parts.supervisor import engine as engine_part
from purplemux.server import (
    act,
    api,
    feedcap,
    history,
    limits,
    memory,
    notifications,
    page,
    stream,
    webapp,
)
from purplemux.server.connguard import default_limits
from purplemux.server.host_check import HostCheck
from purplemux.server.security import SecurityMiddleware

log = logging.getLogger("purplemux")
STOP_ATTACH = 0.5
"""Seconds the stop may spend detaching background sessions' attach windows."""


def default_parts(settings: Settings) -> list[Part]:
    """The long-running parts of a daemon: live sources (unless disabled), spool, notifier...,
    and the broker link to other hosts (with --broker)."""
    parts: list[Part] = sources.parts(settings) if settings.watch_sources else []
    parts += [spool_watcher, spool_sweeper, notifier, pane_marker, sources.tmux_clients, resumer]
    parts.append(retention.retention)
    if settings.broker:
        parts.append(broker)
    return parts


def create_app(
    settings: Settings,
    components: list[Part] | None = None,
    adapters: Callable[[Settings, str], Adapters] = default_adapters,
) -> FastAPI:
    """Build the daemon's app; nothing runs until its lifespan starts.

    `components`: the parts to run instead of the default ones (tests). `adapters`: makes the
    session-file watcher, the tmux control clients and the logins from the settings and the
    token, at start (a test may give its own)."""
    parts = default_parts(settings) if components is None else components

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        rt = await _start(settings, adapters)
        app.state.runtime = rt
        supervisor = Supervisor(rt)
        supervisor.start(engine_part, name="engine")
        try:
            await drain_spool(rt)
            for part in parts:
                supervisor.start(part)
            if settings.port:
                write_private(settings.port_path, f"{settings.port}\n")
            yield
        finally:
            # Each step bounded, so SIGTERM ends the process in about two seconds: the parts
            # first (they store what they must, e.g. the transcript offsets), then the engine
            # stores what is queued, then the store closes.
            await supervisor.stop(STOP_PARTS, keep=("engine",))
            for attacher in rt.actions.attachers.values():  # sessions' attach windows
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(attacher.shutdown(), STOP_ATTACH)
            rt.limits.stop()
            await rt.engine.stop()
            await supervisor.wait("engine", STOP_ENGINE)
            rt.engine.feed.close()
            await rt.store.close()
            app.state.runtime = None

    # No /docs, /redoc or /openapi.json: every route but health and static files needs the
    # token (app.openapi() still builds the schema, for tests and tools).
    app = FastAPI(
        title="purplemux",
        version=__version__,
        lifespan=lifespan,
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
        # No OpenTelemetry: FastAPI's native bridge asked the global providers on every request
        # whether one was configured (~1 % of the daemon's CPU per hook event); nothing here
        # exports traces, metrics or logs.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.include_router(api.router)
    app.include_router(act.router)
    app.include_router(limits.router)
    app.include_router(memory.router)
    app.include_router(stream.router)
    app.include_router(page.router)
    app.include_router(history.router)
    app.include_router(notifications.router)
    app.include_router(webapp.router)  # before /static: its sw.js is stamped
    app.add_middleware(SecurityMiddleware)
    app.add_middleware(HostCheck, settings=settings)  # outermost: before anything else runs
    app.mount("/static", StaticFiles(directory=web_dir() / "static"), name="static")
    # The live feeds this app admits: a share of the connection cap (PURPLEMUX_MAX_FEEDS).
    app.state.feeds = feedcap.for_connections(
        default_limits(settings.max_connections, settings.max_feeds).total, settings.max_feeds
    )
    _install_error_handlers(app)
    return app


async def _start(settings: Settings, adapters: Callable[[Settings, str], Adapters]) -> Runtime:
    ensure_home(settings.home)
    token = load_or_create_token(settings.home)
    _install_hook_script(settings)
    _create_private(settings.db_path)
    store = AsyncStore(settings.db_path)
    await store.open()
    await retention.prune(store, settings)  # before loading: old sessions are never served
    retention.tighten(settings.home)
    engine = Engine(
        store,
        host=settings.host_name,
        context_window=settings.context_window,
        named_accounts=frozenset(
            a.agent for a in settings.accounts if len(settings.accounts_of(a.agent)) > 1
        ),
    )
    restarts = engine.load(await store.call(lambda s: s.load_sessions()))
    rt = Runtime(
        settings=settings,
        token=token,
        store=store,
        engine=engine,
        adapters=adapters(settings, token),
    )
    await rt.limits.load()
    for event in restarts:
        engine.post(event, live=False)
    return rt


def _create_private(path: Path) -> None:
    """The database file made 0600 before SQLite opens it (its -wal and -shm take its mode)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _install_hook_script(settings: Settings) -> None:
    """Keep $PURPLEMUX_HOME/status-hook.sh current, so installed hooks run this version."""
    try:
        from purplemux.agents.install import install_script

        install_script(settings.home)
    except Exception:
        log.warning("could not refresh the hook script in %s", settings.home, exc_info=True)


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ActionError)
    async def action_error(request: Request, exc: ActionError) -> JSONResponse:
        return JSONResponse(exc.to_json(), status_code=exc.status)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        details = [
            {"loc": [str(p) for p in err.get("loc", ())], "msg": str(err.get("msg", ""))}
            for err in exc.errors()
        ]
        return JSONResponse({"error": "invalid request", "details": details}, status_code=422)
