"""create_app(settings): the FastAPI app and its lifespan (start in order, stop in reverse)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from purplemux import __version__, session_facts
from purplemux.engine import Engine
from purplemux.pane_marker import pane_marker
from purplemux.paths import web_dir
from purplemux.server import api, notifications, page, sources, stream
from purplemux.server.auth import ensure_home, load_or_create_token, write_private
from purplemux.server.runtime import Runtime
from purplemux.server.security import SecurityMiddleware
from purplemux.settings import Settings
from purplemux.sources import spool
from purplemux.sources.hooks import PayloadError, to_event
from purplemux.store import AsyncStore

log = logging.getLogger("purplemux")

SPOOL_SWEEP = 10.0
"""Seconds between looks for hook bodies orphaned in the spool's .tmp folder."""

Component = Callable[[Runtime], Coroutine[Any, Any, None]]
"""A long-running part started by the lifespan (a source, a notifier), given the runtime."""


def default_components(settings: Settings) -> list[Component]:
    """The long-running parts of a daemon: live sources (unless disabled), notifications."""
    parts: list[Component] = list(sources.ALL) if settings.watch_sources else []
    parts.append(notifications.notifier)
    parts.append(pane_marker)
    return parts


def create_app(settings: Settings, components: list[Component] | None = None) -> FastAPI:
    """Build the daemon's app; nothing runs until its lifespan starts."""
    session_facts.window_override = settings.context_window
    if components is None:
        components = default_components(settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        rt = await _start(settings)
        app.state.runtime = rt
        tasks = [asyncio.create_task(rt.engine.run(), name="engine")]
        try:
            await drain_spool(rt)
            tasks.append(asyncio.create_task(_watch_spool(rt), name="spool"))
            for component in components:
                tasks.append(
                    asyncio.create_task(
                        component(rt), name=getattr(component, "__name__", "component")
                    )
                )
            if settings.port:
                write_private(settings.port_path, f"{settings.port}\n")
            yield
        finally:
            await _stop(rt, tasks)
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
    )
    app.include_router(api.router)
    app.include_router(stream.router)
    app.include_router(page.router)
    app.include_router(notifications.router)
    app.add_middleware(SecurityMiddleware)
    app.mount("/static", StaticFiles(directory=web_dir() / "static"), name="static")
    _install_error_handlers(app)
    return app


async def _start(settings: Settings) -> Runtime:
    ensure_home(settings.home)
    token = load_or_create_token(settings.home)
    _install_hook_script(settings)
    store = AsyncStore(settings.db_path)
    await store.open()
    engine = Engine(store)
    restarts = engine.load(await store.call(lambda s: s.load_sessions()))
    rt = Runtime(settings=settings, token=token, store=store, engine=engine)
    for event in restarts:
        engine.post(event, live=False)
    return rt


async def _stop(rt: Runtime, tasks: list[asyncio.Task[Any]]) -> None:
    """Stop sources first, then drain the engine, then close the feed and the store."""
    engine_task, others = tasks[0], tasks[1:]
    for task in others:
        task.cancel()
    for task in others:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(task, 2)
    await rt.engine.stop()
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(engine_task, 5)
    rt.engine.feed.close()
    await rt.store.close()


def _install_hook_script(settings: Settings) -> None:
    """Keep $PURPLEMUX_HOME/status-hook.sh current, so installed hooks run this version."""
    try:
        from purplemux.install import install_script

        install_script(settings.home)
    except Exception:
        log.warning("could not refresh the hook script in %s", settings.home, exc_info=True)


async def drain_spool(rt: Runtime) -> int:
    """Apply every spooled hook event in source-time order (not live: no notifications)."""
    files = await asyncio.to_thread(spool.pending_files, rt.settings.spool_dir)
    return await _apply_spooled(rt, files, live=False)


async def _apply_spooled(rt: Runtime, files: list[Any], live: bool) -> int:
    applied = 0
    for path in files:
        try:
            delivery = await asyncio.to_thread(spool.read_delivery, path)
            payload = json.loads(delivery.body)
            event = to_event(payload, delivery.headers, time.time())
        except FileNotFoundError:
            continue  # applied meanwhile by the other drain (the watcher and the sweep race)
        except (OSError, ValueError, RecursionError, PayloadError) as exc:
            log.warning("skipping unreadable spool file %s: %s", path.name, exc)
            await asyncio.to_thread(_quarantine, path)
            continue
        try:
            await rt.ingest(event, live=live)
        except Exception as exc:  # not stored (the database is locked?): keep it, and the order
            log.warning("cannot apply spooled events yet (%s); retrying later", exc)
            break
        await asyncio.to_thread(spool.remove, path)
        applied += 1
    return applied


def _quarantine(path: Any) -> None:
    with contextlib.suppress(OSError):
        path.rename(path.with_name(path.name + ".bad"))


async def _watch_spool(rt: Runtime) -> None:
    """Files the hook script spools while we run (we were slow, or briefly unreachable)."""
    rt.settings.spool_dir.mkdir(parents=True, exist_ok=True)

    async def sweep() -> None:
        # Bodies orphaned in .tmp by a killed hook announce nothing: look for them now and then.
        while True:
            await asyncio.sleep(SPOOL_SWEEP)
            files = await asyncio.to_thread(spool.pending_files, rt.settings.spool_dir)
            if files:
                await _apply_spooled(rt, files, live=False)

    sweeper = asyncio.create_task(sweep())
    try:
        async for _ in spool.watch_spool(rt.settings.spool_dir):
            files = await asyncio.to_thread(spool.pending_files, rt.settings.spool_dir)
            await _apply_spooled(rt, files, live=True)
    finally:
        sweeper.cancel()


def _install_error_handlers(app: FastAPI) -> None:
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
