"""WS /api/stream: a snapshot, then one message per batch of changes (purplemux.feed); clients
may report page visibility.

A login cookie alone may follow the feed (what the dashboard shows) but its visibility reports
count for nothing: only a page that sends its page key with them (`{"type": "visibility",
"visible", "focused", "key"}`), or a client with the token, holds back pushes, and only those to
its own login's devices, while it stays connected."""

from __future__ import annotations

import asyncio
import contextlib
import json
from urllib.parse import urlsplit

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from purplemux.feed import encode, text_frame
from purplemux.server import feedcap, wsframes
from purplemux.server.runtime import Runtime, actor_of, is_authenticated, runtime

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
    client = ws.client.host if ws.client else "?"
    await ws.accept()
    slots: feedcap.FeedSlots = ws.app.state.feeds  # create_app: from the connection cap
    refused = slots.take(client)
    if refused is not None:
        await ws.close(code=feedcap.TRY_AGAIN, reason=refused)
        return
    try:
        await _serve(ws, rt)
    finally:
        slots.give_back(client)


async def _serve(ws: WebSocket, rt: Runtime) -> None:
    feed = rt.engine.feed
    writer = wsframes.writer_of(ws.scope)
    sub, snapshot = feed.subscribe(writer)
    if writer is not None:
        # Before anything else can run: no change may reach the socket ahead of the snapshot.
        writer.write(text_frame(encode(snapshot)))

    async def reader() -> None:
        # Clients may tell us whether the page is visible and focused (push policy uses it).
        while True:
            raw = await ws.receive_text()
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if isinstance(msg, dict) and msg.get("type") == "visibility":
                key = msg.get("key")
                actor = actor_of(ws, key if isinstance(key, str) else "")
                feed.report_visibility(
                    sub,
                    actor.login if actor is not None else None,
                    bool(msg.get("visible")) and bool(msg.get("focused", True)),
                )

    async def sender() -> None:
        # The feed ends, or drops a client that fell behind, with None.
        while (payload := await sub.queue.get()) is not None:
            await ws.send_text(payload.decode())

    tasks: list[asyncio.Task[object]] = [asyncio.create_task(reader())]
    try:
        if writer is None:
            await ws.send_text(encode(snapshot).decode())
            tasks.append(asyncio.create_task(sender()))
        else:  # the feed writes the frames itself; this waits until it is done with us
            tasks.append(asyncio.create_task(sub.ended.wait()))
        # One wait per connection (not per message): ends when the client goes or the feed ends.
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        feed.unsubscribe(sub)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        with contextlib.suppress(Exception):
            await ws.close()
