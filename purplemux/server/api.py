"""JSON endpoints: health, hooks, sessions, dismiss, events."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import time
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse
from starlette.requests import ClientDisconnect

from purplemux import __version__
from purplemux.core import facts as session_facts
from purplemux.core.listing import ENDED_LIMIT, ENDED_PAGE, ended_page
from purplemux.daemon.actions import outcome
from purplemux.io.log_once import RateLimitedLog
from purplemux.io.settings import MAX_BODY, MAX_HOOK_BODY
from purplemux.server import hosts
from purplemux.server.runtime import (
    Runtime,
    current_runtime,
    require_auth,
    require_token,
)
from purplemux.sources.hooks import PayloadError, to_event
from purplemux.sources.trim import trim_strings

router = APIRouter()
HOOKS = "/api/hooks"
log = logging.getLogger(__name__)
cut_short = RateLimitedLog(log, interval=600)
"""A body cut short is expected (a hook script killed, a client timing out): one short line
per path and ten minutes, the rest counted in the next one."""


async def read_body(request: Request, limit: int = MAX_BODY) -> bytes:
    """The request body: 413 past `limit` bytes; 400 when the client closed before sending it
    all (nothing is read from it, and the answer goes nowhere)."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"body larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise HTTPException(413, f"body larger than {limit} bytes")
            chunks.append(chunk)
    except ClientDisconnect:
        path = getattr(request.scope.get("route"), "path", HOOKS)  # its template: few keys
        cut_short.warning(
            path, "a request body to %s was cut short (the client closed): ignored", path
        )
        raise HTTPException(400, "the body was cut short: the client closed first") from None
    return b"".join(chunks)


async def read_json(request: Request, limit: int = MAX_BODY) -> Any:
    """The request body as JSON: 413 past `limit` bytes, 400 when it is not JSON."""
    return parse_json(await read_body(request, limit))


async def read_hook(request: Request) -> Any:
    """A hook body as JSON. Past MAX_BODY (and up to MAX_HOOK_BODY) its long strings are cut
    (purplemux.sources.trim): 413 only when even that leaves it past MAX_BODY. A 413 is final:
    the script does not spool it."""
    declared = request.headers.get("content-length") or ""
    if not (declared.isdigit() and int(declared) > MAX_BODY):
        try:
            return parse_json(await read_body(request, MAX_BODY))
        except HTTPException as exc:
            if exc.status_code != 413:
                raise
            # No length given (chunked) and over the limit: the rest cannot be read again.
            raise HTTPException(413, f"a chunked hook body larger than {MAX_BODY} bytes") from None
    global _oversized
    if _oversized >= OVERSIZED_AT_ONCE:  # each holds up to MAX_HOOK_BODY in memory
        raise HTTPException(503, "busy with other large hook bodies: spool it, it is applied soon")
    _oversized += 1
    try:
        raw = await read_body(request, MAX_HOOK_BODY)
        fitted = await asyncio.to_thread(trim_strings, raw)
    finally:
        _oversized -= 1
    if len(fitted) > MAX_BODY:
        raise HTTPException(
            413, f"hook body larger than {MAX_BODY} bytes even with its long strings cut"
        )
    return parse_json(fitted)


OVERSIZED_AT_ONCE = 2
_oversized = 0
"""Oversized hook bodies being read now."""


def parse_json(raw: bytes) -> Any:
    """JSON, or 400."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise HTTPException(400, "body is not valid JSON") from None


@router.get("/api/health")
async def health(request: Request) -> dict[str, Any]:
    rt: Runtime | None = getattr(request.app.state, "runtime", None)
    return {
        "status": "ok",
        "version": __version__,
        "broker": hosts.broker_health(rt),
        "transcripts": dataclasses.asdict(rt.transcripts) if rt is not None else None,
    }


@router.post("/api/hooks", dependencies=[Depends(require_token)])
async def post_hook(request: Request, rt: Runtime = Depends(current_runtime)) -> JSONResponse:
    """A hook call. The usual one is answered in front of the app, the same way
    (purplemux.server.hookpath); this route answers every other, and all of them where the
    app is served on its own (tests)."""
    return await accept_hook(request, rt)


async def accept_hook(request: Request, rt: Runtime) -> JSONResponse:
    """One hook call: 413/400 for the body, 422 for a payload Claude would never send, 503 when
    the store cannot take it, else 202 once its event is stored."""
    payload = await read_hook(request)
    # ASGI decodes headers as latin-1; the script sends UTF-8 (a tmux socket path may hold any).
    headers = {
        k: v.encode("latin-1").decode("utf-8", "replace") for k, v in request.headers.items()
    }
    try:
        event = to_event(payload, headers, time.time(), rt.settings.account_of)
    except PayloadError as exc:
        raise HTTPException(422, str(exc)) from None
    try:
        ignored = await rt.ingest(event, live=True)
    except Exception as exc:
        raise HTTPException(503, not_stored(exc)) from None
    return JSONResponse(accepted(event.id, ignored), status_code=202)


def not_stored(exc: Exception) -> str:
    """The 503's reason when the store could not take an event (the database is failing,
    locked, truncated): never acknowledged, so the script spools it, and the spool is applied
    once the store takes events again."""
    reason = " ".join(str(exc).split())[:300] or type(exc).__name__
    return f"the event was not stored: {reason}"


def accepted(event_id: str, ignored: str | None) -> dict[str, Any]:
    """The 202's body: the event's id, and why it made no row when it did not."""
    out: dict[str, Any] = {"ok": True, "id": event_id}
    if ignored is not None:
        out["ignored"] = ignored
    return out


@router.get("/api/sessions", dependencies=[Depends(require_auth)])
async def list_sessions(
    all: str | None = None,
    ended: str | None = None,
    before: str | None = None,
    limit: str | None = None,
    rt: Runtime = Depends(current_runtime),
) -> dict[str, Any]:
    """Listed sessions newest first: the live ones; with `all=1` the live ones and a page of
    ended ones; with `ended=1` only a page of ended ones. A page holds at most `limit` (default
    listing.ENDED_PAGE) last changed before `before` (seconds since the epoch), and says how
    many there are (`ended_total`), how many older ones it left out (`left_out`, `more`) and the
    `before` of the next page: the answer has a ceiling however many sessions ended."""
    only_ended = ended not in (None, "", "0", "false")
    if not only_ended and all in (None, "", "0", "false"):
        return {"sessions": rt.engine.snapshot(include_ended=False)}
    try:
        cut = float(before) if before else None
        count = int(limit) if limit else ENDED_PAGE
    except ValueError:
        raise HTTPException(
            400, "before must be a number of seconds and limit a whole number"
        ) from None
    if cut is not None and not math.isfinite(cut):
        raise HTTPException(400, "before must be a finite number of seconds")
    if not 1 <= count <= ENDED_LIMIT:
        raise HTTPException(400, f"limit must be between 1 and {ENDED_LIMIT}")
    rows = rt.engine.snapshot(include_ended=True)
    page = ended_page(rows, cut, count)
    if only_ended:
        return {"sessions": page.rows, **page.to_json()}
    shown = {id(r) for r in page.rows}
    listed = [r for r in rows if not r.get("ended") or id(r) in shown]
    return {"sessions": listed, **page.to_json()}


@router.get("/api/sessions/{session_id}", dependencies=[Depends(require_auth)])
async def get_session(session_id: str, rt: Runtime = Depends(current_runtime)) -> dict[str, Any]:
    session = rt.engine.sessions.get(session_id)
    if session is None:
        remote = rt.engine.remote.get(session_id) if rt.engine.remote is not None else None
        if remote is not None:
            return remote
        raise HTTPException(404, f"no session {session_id!r}")
    return rt.engine.public(session)


@router.post("/api/sessions/{session_id}/dismiss", dependencies=[Depends(require_auth)])
async def dismiss(session_id: str, rt: Runtime = Depends(current_runtime)) -> JSONResponse:
    # Another host owns it: it alone writes its sessions; we relay its answer.
    relayed = await rt.actions.relayed("dismiss", session_id, {})
    out = relayed if relayed is not None else outcome(await rt.actions.dismiss(session_id))
    return JSONResponse(out.body, status_code=out.status)


MAX_USAGE_DAYS = 366


@router.get("/api/usage", dependencies=[Depends(require_auth)])
async def usage(days: str = "7", rt: Runtime = Depends(current_runtime)) -> dict[str, Any]:
    """Spend per day and per project over the last `days` days (1..366)."""
    if not (days.isascii() and days.isdigit()) or not 1 <= int(days) <= MAX_USAGE_DAYS:
        raise HTTPException(400, f"days must be a whole number from 1 to {MAX_USAGE_DAYS}")
    n, now = int(days), time.time()
    out = await rt.store.call(lambda s: s.usage(n, now))
    out["window_days"] = n
    out["prices_as_of"] = session_facts.prices().as_of
    return out


@router.get("/api/sessions/{session_id}/events", dependencies=[Depends(require_auth)])
async def session_events(session_id: str, rt: Runtime = Depends(current_runtime)) -> dict[str, Any]:
    if session_id not in rt.engine.sessions:
        raise HTTPException(404, f"no session {session_id!r}")
    rows = await rt.store.call(lambda s: s.events_for(session_id))
    return {"events": rows}
