"""The broker part (with --broker): shares this host's sessions, serves every host's."""

from __future__ import annotations

import asyncio
from typing import Any

from purplemux.core.listing import broker_badge
from purplemux.core.machine import Notify
from purplemux.core.model import Session, State
from purplemux.daemon.actions import Outcome
from purplemux.daemon.runtime import Runtime
from purplemux.hosts.broker import BrokerLink, read_password
from purplemux.hosts.commands import run_local
from purplemux.hosts.remote import RemoteView, Row, Sink


async def broker(rt: Runtime) -> None:
    """Run the link to the shared Redis until the daemon stops (the supervisor restarts it)."""
    settings = rt.settings
    if not settings.broker:
        return
    engine = rt.engine
    feed = engine.feed

    def on_remote_notify(row: Row) -> None:
        session = Session.from_record(row)
        engine.tell_notify(session, Notify(State(row["state"]), session.state_since))

    # Other hosts' changes go out together, once per turn of the loop (a host's resync of 1,000
    # rows is one feed message, and one list, not 1,000).
    rows: dict[str, Row] = {}
    gone: dict[str, None] = {}
    flushing: list[asyncio.Handle] = []

    def flush() -> None:
        flushing.clear()
        changed, removed = list(rows.values()), list(gone)
        rows.clear()
        gone.clear()
        feed.publish_changes(changed, removed)

    def later() -> None:
        if not flushing:
            flushing.append(asyncio.get_running_loop().call_soon(flush))

    def on_session(row: Row) -> None:
        gone.pop(str(row["id"]), None)
        rows[str(row["id"])] = row
        later()

    def on_removed(sid: str) -> None:
        rows.pop(sid, None)
        gone[sid] = None
        later()

    view = RemoteView(
        settings.host_name,
        Sink(session=on_session, removed=on_removed, notify=on_remote_notify),
        live_since=engine.live_since,
        window=settings.context_window,
        is_local=engine.sessions.__contains__,  # a local session always wins its id
    )

    def local() -> list[Row]:
        return [engine.public(s) for s in engine.listed()]

    async def execute(kind: str, session_id: str, args: dict[str, Any]) -> Outcome:
        return await run_local(rt, kind, session_id, args)

    link = BrokerLink(
        settings.broker,
        settings.host_name,
        view,
        local,
        execute,
        password=await asyncio.to_thread(read_password, settings.broker_password_file),
        ttl=settings.heartbeat_ttl,
        prune_after=settings.prune_after,
        on_state=lambda health: feed.publish(
            {"type": "broker", "broker": health, "badge": broker_badge(health).to_json()}
        ),
    )
    # A live entry (the engine's Notify) travels with the change, so other hosts notify it once.
    entries: dict[str, Notify] = {}

    def on_notify(session: Session, notify: Notify) -> None:
        if session.id in engine.sessions and view.get(session.id) is None:
            entries[session.id] = notify

    def on_change(session: Session) -> None:
        notify = entries.pop(session.id, None)
        if session.superseded:  # on_remove told the others
            return
        live = notify is not None and notify.state is session.state
        link.publish_session(engine.public(session), notify=live)

    unsubscribe = engine.subscribe(notify=on_notify, change=on_change, remove=link.publish_removed)
    unserve = engine.serve_remote(view)
    detach = rt.attach_broker(link)
    unsnapshot = feed.add_to_snapshot(
        lambda: {"broker": link.health(), "badge": broker_badge(link.health()).to_json()}
    )
    try:
        await link.run()
    finally:
        for handle in flushing:
            handle.cancel()
        unsubscribe()
        unserve()
        detach()
        unsnapshot()
