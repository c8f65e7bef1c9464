"""Other hosts' sessions as this daemon serves them: merged, marked stale, pruned (no I/O)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from purplemux.model import Session, State
from purplemux.notify.once import LiveEntries
from purplemux.present import Origin, SessionView, present

Row = dict[str, Any]


@dataclass
class Sink:
    """Where the view's changes go: the feed (session, removed) and the notifier."""

    session: Callable[[Row], None]
    removed: Callable[[str], None]
    notify: Callable[[Row], None]


@dataclass
class HostState:
    """One other host: its sessions (owner's JSON plus host and stale) and its presence."""

    sessions: dict[str, Row] = field(default_factory=dict)
    views: dict[str, SessionView] = field(default_factory=dict)
    """Each row's view, as this daemon presents it (host first, stale marked)."""
    last_beat: float | None = None
    offline_since: float | None = None

    @property
    def stale(self) -> bool:
        return self.offline_since is not None


class RemoteView:
    """Sessions owned by other hosts; only their owners change them, through the broker."""

    def __init__(self, me: str, sink: Sink, live_since: float, window: int | None = None) -> None:
        self.me = me
        self.sink = sink
        self.live_since = live_since
        self.window = window
        """The context window setting our views of other hosts' rows are made with."""
        self.hosts: dict[str, HostState] = {}
        self.entries = LiveEntries(live_since)
        """Which of the other hosts' entries notify here: the rule of this host's own."""

    # --- reading ---------------------------------------------------------------------------

    def snapshot(self, include_ended: bool) -> list[Row]:
        """Every remote row (ended ones only with include_ended)."""
        return [
            row
            for hs in self.hosts.values()
            for row in hs.sessions.values()
            if include_ended or not row.get("ended")
        ]

    def views(self, include_ended: bool) -> list[SessionView]:
        """Every remote row's view (the page's rows)."""
        return [
            v
            for hs in self.hosts.values()
            for v in hs.views.values()
            if include_ended or not v.ended
        ]

    def get(self, session_id: str) -> Row | None:
        """A remote row by session id."""
        for hs in self.hosts.values():
            row = hs.sessions.get(session_id)
            if row is not None:
                return row
        return None

    def host_names(self) -> list[str]:
        return sorted(self.hosts)

    # --- changes from the broker -----------------------------------------------------------

    def apply(self, host: str, data: Mapping[str, Any], notify: bool = False) -> bool:
        """One session change from its owner's stream; older than what we hold is ignored."""
        if host == self.me or not isinstance(data.get("id"), str):
            return False
        hs = self.hosts.setdefault(host, HostState())
        prev = hs.sessions.get(data["id"])
        if prev is not None and _seq(prev) > _seq(data):
            return False
        changed = self._put(host, hs, data)
        if notify:
            self._maybe_notify(host, hs.sessions[data["id"]])
        return changed

    def remove(self, host: str, session_id: str) -> bool:
        """The owner dropped a session from its list."""
        hs = self.hosts.get(host)
        if hs is None or hs.sessions.pop(session_id, None) is None:
            return False
        hs.views.pop(session_id, None)
        self.sink.removed(session_id)
        return True

    def replace_host(self, host: str, sessions: Mapping[str, Mapping[str, Any]]) -> None:
        """A host's whole current list (it republished, or we resynced): never notifies."""
        if host == self.me:
            return
        hs = self.hosts.setdefault(host, HostState())
        for sid in [sid for sid in hs.sessions if sid not in sessions]:
            self.remove(host, sid)
        for data in sessions.values():
            if isinstance(data.get("id"), str):
                self._put(host, hs, data)

    def presence(self, host: str, beat: float | None, now: float) -> None:
        """A host's heartbeat (None: its key expired); flips its rows' `stale`."""
        if host == self.me:
            return
        hs = self.hosts.setdefault(host, HostState())
        if beat is None:
            if not hs.stale:
                hs.offline_since = hs.last_beat if hs.last_beat is not None else now
                self._restamp(host, hs)
            return
        hs.last_beat = beat
        if hs.stale:
            hs.offline_since = None
            self._restamp(host, hs)

    def prune(self, now: float, after: float) -> list[str]:
        """Drop hosts offline for longer than `after` seconds, with their rows."""
        gone = [
            h
            for h, hs in self.hosts.items()
            if hs.offline_since is not None and now - hs.offline_since > after
        ]
        for host in gone:
            for sid in list(self.hosts[host].sessions):
                self.remove(host, sid)
            del self.hosts[host]
        return gone

    # --- internals -------------------------------------------------------------------------

    def _put(self, host: str, hs: HostState, data: Mapping[str, Any]) -> bool:
        row = self._row(host, hs, data)
        if row is None or hs.sessions.get(row["id"]) == row:
            return False
        hs.sessions[row["id"]] = row
        self.sink.session(row)
        return True

    def _restamp(self, host: str, hs: HostState) -> None:
        for sid, row in list(hs.sessions.items()):
            new = self._row(host, hs, row)
            if new is not None:
                hs.sessions[sid] = new
                self.sink.session(new)

    def _row(self, host: str, hs: HostState, data: Mapping[str, Any]) -> Row | None:
        """The owner's JSON as served here: its host, whether stale, and our view of it."""
        origin = Origin(host, hs.stale, hs.offline_since, grouped=True)
        try:
            session = Session.from_record(dict(data))
        except (KeyError, TypeError, ValueError):
            return None  # a row this version cannot read (a newer host's fields)
        view = present(session, origin, self.window)
        hs.views[session.id] = view
        return {
            **data,
            "host": host,
            "stale": hs.stale,
            "offline_since": view.offline_since,
            "view": view.to_json(),
        }

    def _maybe_notify(self, host: str, row: Row) -> None:
        """A live entry into needs-input or review on another host notifies once, as a local one."""
        try:
            state = State(str(row.get("state")))
            since = float(row.get("state_since") or 0.0)
        except (TypeError, ValueError):
            return
        if self.entries.first((host, str(row["id"]), state.value, since), state, since):
            self.sink.notify(row)


def _seq(data: Mapping[str, Any]) -> int:
    try:
        return int(data.get("seq") or 0)
    except (TypeError, ValueError):
        return 0
