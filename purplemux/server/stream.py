"""WS /api/stream: a snapshot, then one message per batch of changes (daemon.feed); clients
may report page visibility.

A login cookie alone may follow the feed (what the dashboard shows) but its visibility reports
count for nothing: only a page that sends its page key with them (`{"type": "visibility",
"visible", "focused", "key"}`), or a client with the token, holds back pushes, and only those to
its own login's devices, while it stays connected.

A page whose login ended (`purplemux logout-all`, a new token, its age) is told so: its open feed
is closed, and a new one accepted and closed at once, with SIGNED_OUT and nothing before it (a
handshake refused with HTTP 403 reaches a page only as a bare 1006), so it deletes the rows it
saved for offline use. Any login cookie that is not live gets that same close, whether it ever
was one or not; a foreign origin, and a client with no credential at all, are refused at the
handshake."""

from __future__ import annotations

import asyncio
import contextlib
import json
from urllib.parse import urlsplit

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from purplemux.daemon.feed import encode, text_frame
from purplemux.io.logins import COOKIE
from purplemux.server import feedcap, wsframes
from purplemux.server.runtime import Runtime, actor_of, has_token, is_authenticated, runtime

router = APIRouter()

SIGNED_OUT = 4401
"""The close code (and "signed out" its only reason) of a feed whose login is not live."""
LOGIN_CHECK = 2.0
"""Seconds between two checks that an open feed's login is still live."""


def same_origin(ws: WebSocket) -> bool:
    """A browser's upgrade must come from a page of this daemon (no Origin: not a browser)."""
    origin = ws.headers.get("origin")
    if not origin:
        return True
    return urlsplit(origin).netloc == ws.headers.get("host", "")


@router.websocket("/api/stream")
async def stream(ws: WebSocket) -> None:
    if not same_origin(ws) or not is_authenticated(ws):
        if same_origin(ws) and ws.cookies.get(COOKIE):
            # A login that ended (or never was: the same close, so it tells nothing).
            await ws.accept()
            await ws.close(code=SIGNED_OUT, reason="signed out")
            return
        await ws.close(code=SIGNED_OUT if same_origin(ws) else 4403)
        return
    rt = runtime(ws)
    client = ws.client.host if ws.client else "?"
    # The login a page's feed lives on (the token's feed has none: it ends with the daemon).
    secret = None if has_token(ws) else ws.cookies.get(COOKIE)
    await ws.accept()
    slots: feedcap.FeedSlots = ws.app.state.feeds  # create_app: from the connection cap
    refused = slots.take(client)
    if refused is not None:
        await ws.close(code=feedcap.TRY_AGAIN, reason=refused)
        return
    try:
        await _serve(ws, rt, secret)
    finally:
        slots.give_back(client)


async def _login_ends(rt: Runtime, secret: str) -> None:
    """Returns once the login whose cookie holds `secret` is no longer live."""
    while rt.logins.valid(secret):
        await asyncio.sleep(LOGIN_CHECK)


async def _serve(ws: WebSocket, rt: Runtime, secret: str | None) -> None:
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
    ended: asyncio.Task[object] | None = None
    if secret is not None:
        ended = asyncio.create_task(_login_ends(rt, secret))
        tasks.append(ended)
    try:
        if writer is None:
            await ws.send_text(encode(snapshot).decode())
            tasks.append(asyncio.create_task(sender()))
        else:  # the feed writes the frames itself; this waits until it is done with us
            tasks.append(asyncio.create_task(sub.ended.wait()))
        # One wait per connection (not per message): ends when the client goes, the feed ends
        # or the page's login does.
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
        signed_out = (
            ended is not None
            and ended.done()
            and not ended.cancelled()
            and ended.exception() is None
        )
        with contextlib.suppress(Exception):
            if signed_out:
                await ws.close(code=SIGNED_OUT, reason="signed out")
            else:
                await ws.close()
