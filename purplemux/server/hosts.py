"""The broker component: wires the engine, the feed and the notifier to other hosts."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from purplemux.hosts.broker import BrokerLink, BrokerUnavailable, Reply
from purplemux.hosts.commands import run_local
from purplemux.hosts.remote import RemoteView, Row, Sink
from purplemux.machine import Notify
from purplemux.model import Session, State
from purplemux.server.runtime import Runtime
from purplemux.settings import Settings

log = logging.getLogger(__name__)
KEY = "hosts"
"""Where the link lives in Runtime.extras."""


def broker_password(settings: Settings) -> str | None:
    """The broker's password, from the file named in the settings (first line)."""
    if settings.broker_password_file is None:
        return None
    text = settings.broker_password_file.read_text().splitlines()
    return text[0] if text else None


def link_of(rt: Runtime) -> BrokerLink | None:
    """The daemon's broker link, when it was started with one."""
    link = rt.extras.get(KEY)
    return link if isinstance(link, BrokerLink) else None


def broker_health(rt: Runtime | None) -> dict[str, Any]:
    """`{"state": "off"}` without a broker, else connected / connecting / down and since when."""
    link = link_of(rt) if rt is not None else None
    return link.health() if link is not None else {"state": "off"}


async def remote_command(rt: Runtime, kind: str, session_id: str) -> Reply | None:
    """Ask the owner of a remote session to act on it; None when no other host owns it."""
    link = link_of(rt)
    row = link.view.get(session_id) if link is not None else None
    if link is None or row is None:
        return None
    host = str(row["host"])
    if row.get("stale"):
        return Reply(503, {"error": f"host {host!r} is offline"})
    try:
        reply = await link.command(host, kind, session_id)
    except BrokerUnavailable as exc:
        return Reply(503, {"error": str(exc)})
    if reply.status == 200 and isinstance(reply.body.get("id"), str):
        link.view.apply(host, reply.body)  # the owner's answer is newer than the stream so far
    return reply


async def broker(rt: Runtime) -> None:
    """With --broker: share our sessions, serve everyone's, until the daemon stops."""
    settings = rt.settings
    if not settings.broker:
        return
    engine = rt.engine
    feed = engine.feed

    def on_remote_notify(row: Row) -> None:
        session = Session.from_record(row)
        engine._call(engine.on_notify, session, Notify(State(row["state"]), session.state_since))

    view = RemoteView(
        settings.host_name,
        Sink(
            session=lambda row: feed.publish({"type": "session", "session": row}),
            removed=lambda sid: feed.publish({"type": "removed", "id": sid}),
            notify=on_remote_notify,
        ),
        live_since=engine.live_since,
    )

    def local() -> list[Row]:
        return [engine.public(s) for s in engine.sessions.values()]

    async def execute(kind: str, session_id: str) -> Reply:
        return await run_local(engine, kind, session_id)

    link = BrokerLink(
        settings.broker,
        settings.host_name,
        view,
        local,
        execute,
        password=await asyncio.to_thread(broker_password, settings),
        ttl=settings.heartbeat_ttl,
        prune_after=settings.prune_after,
    )
    # A live entry (the engine's Notify) travels with the change, so other hosts notify it once.
    entries: dict[str, Notify] = {}

    def on_notify(session: Session, notify: Notify) -> None:
        if session.id in engine.sessions and view.get(session.id) is None:
            entries[session.id] = notify

    def on_change(session: Session) -> None:
        notify = entries.pop(session.id, None)
        live = notify is not None and notify.state is session.state
        link.publish_session(engine.public(session), notify=live)

    engine.on_notify.append(on_notify)
    engine.on_change.append(on_change)
    engine.on_remove.append(link.publish_removed)
    engine.remote = view
    rt.extras[KEY] = link
    try:
        await link.run()
    finally:
        engine.on_notify.remove(on_notify)
        engine.on_change.remove(on_change)
        engine.on_remove.remove(link.publish_removed)
        engine.remote = None
