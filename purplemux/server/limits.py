"""Usage limits per account: POST /api/statusline (Claude's statusLine input) and GET /api/limits.

The statusLine wrapper (hooks/statusline.sh) posts Claude's statusLine input here with the hook
script's token header. Only `session_id`, `transcript_path` and `rate_limits` are read; an input
without `rate_limits` (an API-key login, or a session before its first answer) is fine and
changes nothing. A body Claude would never send gets a 4xx with the reason, and changes nothing.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse

from purplemux.agents import registry
from purplemux.core.limits import ReadingError
from purplemux.daemon.limit_keeper import account_for
from purplemux.server.api import read_json
from purplemux.server.runtime import Runtime, current_runtime, require_auth, require_token

router = APIRouter()


@router.post("/api/statusline", dependencies=[Depends(require_token)])
async def post_statusline(request: Request, rt: Runtime = Depends(current_runtime)) -> JSONResponse:
    """One statusLine input: 200 `{"ok", "changed"}`; 400/413/422 with `error` when it is not
    one."""
    data = await read_json(request)
    agent = registry.with_statusline()
    if agent is None or agent.statusline is None:
        raise HTTPException(404, "no agent here has a statusLine")
    try:
        sid, _ = agent.statusline(data, "", 0.0)  # checks the input before anything
    except ReadingError as exc:
        raise HTTPException(422, str(exc)) from None
    session = rt.engine.sessions.get(sid) if sid else None
    path = data.get("transcript_path")  # the check above: a string or None
    account = account_for(rt.settings, session, agent.name, path)
    _, reading = agent.statusline(data, account, time.time())
    changed = await rt.limits.take(reading, sid) if reading is not None else False
    return JSONResponse({"ok": True, "changed": changed, "account": account})


@router.get("/api/limits", dependencies=[Depends(require_auth)])
async def get_limits(rt: Runtime = Depends(current_runtime)) -> list[dict[str, Any]]:
    """Every account's newest reading: `[{agent, account, five_hour, seven_day, at}]` (a window:
    `{used_percent, resets_at, reset}`, or null), by agent then account."""
    return rt.limits.to_json()
