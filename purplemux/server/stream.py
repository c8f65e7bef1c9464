"""WS /api/stream: a snapshot, then one message per change; clients may report page visibility."""

from __future__ import annotations

import asyncio
import contextlib
import json
from urllib.parse import urlsplit

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from purplemux.server.runtime import is_authenticated, runtime

router = APIRouter()


def same_origin(ws: WebSocket) -> bool:
    """A browser's upgrade must come from a page of this daemon (no Origin: not a browser)."""
    origin = ws.headers.get("origin")
    if not origin:
        return True
    return urlsplit(origin).netloc == ws.headers.get("host", "")


@router.websocket("/api/stream")
async def stream(ws: WebSocket) -> None:
    if not same_origin(ws) or not is_authenticated(ws):
        await ws.close(code=4401 if same_origin(ws) else 4403)
        return
    rt = runtime(ws)
    await ws.accept()
    feed = rt.engine.feed
    sub, snapshot = feed.subscribe()

    async def reader() -> None:
        # Clients may tell us whether the page is visible and focused (push policy uses it).
        while True:
            raw = await ws.receive_text()
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if isinstance(msg, dict) and msg.get("type") == "visibility":
                sub.visible = bool(msg.get("visible")) and bool(msg.get("focused", True))

    reading = asyncio.create_task(reader())
    try:
        await ws.send_json(snapshot)
        while True:
            getter = asyncio.ensure_future(sub.queue.get())
            done, _ = await asyncio.wait({getter, reading}, return_when=asyncio.FIRST_COMPLETED)
            if reading in done:
                getter.cancel()
                break
            message = getter.result()
            if message is None:
                break
            await ws.send_json(message)
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        feed.unsubscribe(sub)
        reading.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await reading
        with contextlib.suppress(Exception):
            await ws.close()
