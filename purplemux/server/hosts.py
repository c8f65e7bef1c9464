"""What the routes ask of the broker link: its health, the owner of a session, a relayed command."""

from __future__ import annotations

from typing import Any

from purplemux.hosts.broker import BrokerLink, BrokerUnavailable, Reply
from purplemux.runtime import Runtime
from purplemux.settings import Settings


def broker_password(settings: Settings) -> str | None:
    """The broker's password, from the file named in the settings (first line)."""
    if settings.broker_password_file is None:
        return None
    text = settings.broker_password_file.read_text().splitlines()
    return text[0] if text else None


def link_of(rt: Runtime) -> BrokerLink | None:
    """The daemon's broker link, when it was started with one."""
    return rt.broker


def broker_health(rt: Runtime | None) -> dict[str, Any]:
    """`{"state": "off"}` without a broker, else connected / connecting / down and since when."""
    link = link_of(rt) if rt is not None else None
    return link.health() if link is not None else {"state": "off"}


def owner_of(rt: Runtime, session_id: str) -> str | None:
    """The other host that owns a session, or None (ours, or unknown)."""
    link = link_of(rt)
    row = link.view.get(session_id) if link is not None else None
    return str(row["host"]) if row is not None else None


async def remote_command(
    rt: Runtime, kind: str, session_id: str, args: dict[str, Any] | None = None
) -> Reply | None:
    """Ask the owner of a remote session to act on it; None when no other host owns it."""
    link = link_of(rt)
    row = link.view.get(session_id) if link is not None else None
    if link is None or row is None:
        return None
    host = str(row["host"])
    if row.get("stale"):
        return Reply(503, {"error": f"host {host!r} is offline"})
    try:
        reply = await link.command(host, kind, session_id, args)
    except BrokerUnavailable as exc:
        return Reply(503, {"error": str(exc)})
    if kind == "dismiss" and reply.status == 200 and isinstance(reply.body.get("id"), str):
        link.view.apply(host, reply.body)  # the owner's answer is newer than the stream so far
    return reply
