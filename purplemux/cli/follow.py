"""Following the change feed (purplemux.daemon.feed), in Python: the twin of web/static/follow.js.

A `Follower` holds what a client knows (the sessions, the dashboard's list, the broker's badge)
and takes the feed's messages one by one: a snapshot starts over, the next seq applies, a replayed
seq is ignored, a gap asks for a resync (a new connection, so a fresh snapshot). Pure: the caller
reads the socket (`purplemux status --watch`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Step(enum.Enum):
    """What taking one message did."""

    CHANGED = "changed"
    """What the client knows changed: redraw."""
    SAME = "same"
    """Nothing to do (a replay, a message before the snapshot, a kind it does not follow)."""
    RESYNC = "resync"
    """A message was missed: reconnect for a fresh snapshot."""


@dataclass
class Follower:
    """One client's copy of the feed's state, kept by seq."""

    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    listing: dict[str, Any] | None = None
    """The dashboard's list (core.listing.Board as JSON), its layout kept across messages."""
    badge: dict[str, Any] | None = None
    limits: list[dict[str, Any]] = field(default_factory=list)
    """The usage-limit readings per account (the snapshot's `limits`, then `limits` messages)."""
    seq: int | None = None
    protocol: int | None = None

    def reset(self) -> None:
        """A new connection: wait for its snapshot (what is held stays until it comes)."""
        self.seq = None

    def take(self, msg: Any) -> Step:
        """Apply one message (already decoded from JSON)."""
        if not isinstance(msg, dict):
            return Step.SAME
        kind = msg.get("type")
        seq = msg.get("seq")
        if not isinstance(seq, int):
            return Step.SAME
        if kind == "snapshot":
            self.seq = seq
            self.protocol = msg.get("protocol") if isinstance(msg.get("protocol"), int) else None
            self.sessions = {s["id"]: s for s in msg.get("sessions") or [] if _row(s)}
            self.listing = msg.get("list") if isinstance(msg.get("list"), dict) else None
            if isinstance(msg.get("badge"), dict):
                self.badge = msg["badge"]
            limits = msg.get("limits")
            self.limits = (
                [r for r in limits if isinstance(r, dict)] if isinstance(limits, list) else []
            )
            return Step.CHANGED
        if self.seq is None or seq <= self.seq:
            return Step.SAME
        if seq != self.seq + 1:
            return Step.RESYNC
        self.seq = seq
        if kind == "sessions":  # what changed together
            self.sessions.update((s["id"], s) for s in msg.get("sessions") or [] if _row(s))
            for sid in msg.get("removed") or []:
                self.sessions.pop(sid, None)
            if isinstance(msg.get("list"), dict):
                layout = (self.listing or {}).get("layout")
                self.listing = {"layout": layout, **msg["list"]}
            return Step.CHANGED
        if kind == "limits" and isinstance(msg.get("limits"), list):
            self.limits = [r for r in msg["limits"] if isinstance(r, dict)]
            return Step.CHANGED
        if kind == "broker" and isinstance(msg.get("badge"), dict):
            self.badge = msg["badge"]
            return Step.CHANGED
        return Step.SAME


def _row(s: Any) -> bool:
    return isinstance(s, dict) and isinstance(s.get("id"), str)
