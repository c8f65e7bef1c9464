"""Other hosts' sessions as this daemon serves them: checked, merged, marked stale, capped and
pruned (no I/O but a log line, once, for what is refused)."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from purplemux.core.model import Session, State
from purplemux.core.present import Origin, SessionView, present
from purplemux.hosts.rows import BadRow, check_row, host_name_ok
from purplemux.notify.once import LiveEntries

log = logging.getLogger(__name__)

Row = dict[str, Any]
REMEMBER = 10_000
"""Refusals remembered as already logged."""
MAX_HOSTS = 64
"""Other hosts followed; rows from more are refused."""
MAX_HOST_ROWS = 2_000
"""Rows held for one other host (its newest by updated_at on a full load)."""
MAX_ROWS = 5_000
"""Rows held for all other hosts together."""
LOG_PER_HOST = 20
"""Refusals logged for one host (then one line says the rest are not)."""


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

    def __init__(
        self,
        me: str,
        sink: Sink,
        live_since: float,
        window: int | None = None,
        is_local: Callable[[str], bool] = lambda _sid: False,
    ) -> None:
        self.me = me
        self.sink = sink
        self.live_since = live_since
        self.window = window
        """The context window setting our views of other hosts' rows are made with."""
        self.is_local = is_local
        """Whether an id is one of this host's own sessions: those are never served from here."""
        self.hosts: dict[str, HostState] = {}
        self.entries = LiveEntries(live_since)
        """Which of the other hosts' entries notify here: the rule of this host's own."""
        self._owner: dict[str, str] = {}
        """Each held row's id -> the host that holds it (one owner per id)."""
        self._told: OrderedDict[tuple[str, str, str], None] = OrderedDict()
        self._logged: dict[str, int] = {}

    # --- reading ---------------------------------------------------------------------------

    def snapshot(self, include_ended: bool) -> list[Row]:
        """Every remote row (ended ones only with include_ended); a local session's id never."""
        local = self.is_local
        return [
            row
            for hs in self.hosts.values()
            for sid, row in hs.sessions.items()
            if (include_ended or not row.get("ended")) and not local(sid)
        ]

    def views(self, include_ended: bool) -> list[SessionView]:
        """Every remote row's view (the page's rows); a local session's id never."""
        local = self.is_local
        return [
            v
            for hs in self.hosts.values()
            for sid, v in hs.views.items()
            if (include_ended or not v.ended) and not local(sid)
        ]

    def get(self, session_id: str) -> Row | None:
        """A remote row by session id (None for a local session's id: the local one wins)."""
        host = self._owner.get(session_id)
        if host is None or self.is_local(session_id):
            return None
        return self.hosts[host].sessions.get(session_id)

    def host_names(self) -> list[str]:
        return sorted(self.hosts)

    # --- changes from the broker -----------------------------------------------------------

    def apply(self, host: str, data: Mapping[str, Any], notify: bool = False) -> bool:
        """One session change from its owner's stream; older than what we hold is ignored, and
        a row that is malformed, shadows a local session or another host's, or finds no room
        is refused (logged once)."""
        hs = self._host(host)
        checked = self._checked(host, data) if hs is not None else None
        if hs is None or checked is None or not self._may_hold(host, hs, checked["id"]):
            return False
        prev = hs.sessions.get(checked["id"])
        if prev is not None and _seq(prev) > checked["seq"]:
            return False
        changed = self._put(host, hs, checked)
        if notify and checked["id"] in hs.sessions:
            self._maybe_notify(host, hs.sessions[checked["id"]])
        return changed

    def remove(self, host: str, session_id: str) -> bool:
        """The owner dropped a session from its list."""
        hs = self.hosts.get(host)
        if hs is None or hs.sessions.pop(session_id, None) is None:
            return False
        hs.views.pop(session_id, None)
        if self._owner.get(session_id) == host:
            del self._owner[session_id]
        if not self.is_local(session_id):  # the page's row of that id is ours: it stays
            self.sink.removed(session_id)
        return True

    def replace_host(self, host: str, sessions: Mapping[str, Mapping[str, Any]]) -> None:
        """A host's whole current list (it republished, or we resynced): never notifies. Bad
        rows are refused one by one; the newest rows are kept when there are too many."""
        hs = self._host(host)
        if hs is None:
            return
        good = [c for data in sessions.values() if (c := self._checked(host, data)) is not None]
        good = [c for c in good if self._unshadowed(host, c["id"])]
        good.sort(key=lambda c: float(c["updated_at"]), reverse=True)
        if len(good) > MAX_HOST_ROWS:
            self._too_many(host)
            del good[MAX_HOST_ROWS:]
        kept = {c["id"] for c in good}
        for sid in [sid for sid in hs.sessions if sid not in kept]:
            self.remove(host, sid)
        for checked in good:
            if self._may_hold(host, hs, checked["id"]):
                self._put(host, hs, checked)

    def accepts(self, host: str) -> bool:
        """Whether rows from this host are followed (a host name, room for one more host)."""
        return self._host(host) is not None

    def presence(self, host: str, beat: float | None, now: float) -> None:
        """A host's heartbeat (None: its key expired); flips its rows' `stale`."""
        hs = self.hosts.get(host)
        if hs is None:
            return
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

    def _host(self, host: str) -> HostState | None:
        """The state kept for another host; None (logged once) for a name no host can have,
        or a new host past MAX_HOSTS."""
        if host == self.me:
            return None
        hs = self.hosts.get(host)
        if hs is not None:
            return hs
        if not host_name_ok(host):
            self.refuse(
                host, "", "not a host name (A-Z, a-z, 0-9, '.', '_', '-'; 64 at most)", True
            )
            return None
        if len(self.hosts) >= MAX_HOSTS:
            self.refuse(host, "", f"more than {MAX_HOSTS} other hosts: theirs are not shown", True)
            return None
        return self.hosts.setdefault(host, HostState())

    def _checked(self, host: str, data: Mapping[str, Any]) -> Row | None:
        """The checked row, or None (refused, logged once): whatever is wrong with it, even
        what no check foresaw, skips the row and never leaves here."""
        try:
            return check_row(data)
        except Exception as exc:
            why = str(exc) if isinstance(exc, BadRow) else f"unreadable ({type(exc).__name__})"
            sid = data.get("id") if isinstance(data, Mapping) else None
            self.refuse(host, sid if isinstance(sid, str) else "?", why)
            return None

    def _unshadowed(self, host: str, sid: str) -> bool:
        """A local session always wins its id; the first host to hold an id keeps it."""
        if self.is_local(sid):
            self.refuse(host, sid, "it has the id of a session of this host")
            return False
        owner = self._owner.get(sid)
        if owner is not None and owner != host:
            self.refuse(host, sid, f"host {owner!r} has a session with that id")
            return False
        return True

    def _may_hold(self, host: str, hs: HostState, sid: str) -> bool:
        """Not a shadow (see _unshadowed), and a new row needs room under the caps."""
        if not self._unshadowed(host, sid):
            return False
        if sid in hs.sessions:
            return True
        if len(hs.sessions) >= MAX_HOST_ROWS:
            self._too_many(host)
            return False
        if len(self._owner) >= MAX_ROWS:
            self.refuse(host, "", f"other hosts hold more than {MAX_ROWS} sessions in all", True)
            return False
        return True

    def _too_many(self, host: str) -> None:
        self.refuse(host, "", f"more than {MAX_HOST_ROWS} sessions: the rest are not shown")

    def refuse(self, host: str, sid: str, reason: str, anyone: bool = False) -> None:
        """Log a refusal once per host, row and reason (a row read again says nothing new), and
        at most LOG_PER_HOST lines per host (hosts not followed share one count); `anyone`: a
        limit over all hosts, logged once whichever host meets it."""
        key = ("" if anyone else host, sid, reason)
        if key in self._told:
            return
        self._told[key] = None
        if len(self._told) > REMEMBER:
            self._told.popitem(last=False)
        bucket = host if host in self.hosts else ""
        n = self._logged[bucket] = self._logged.get(bucket, 0) + 1
        if n > LOG_PER_HOST:
            return
        what = f"a session row (id {sid[:80]!r})" if sid else "rows"
        log.warning("refused %s from host %r: %s", what, host[:80], reason)
        if n == LOG_PER_HOST:
            log.warning("further refusals from host %r are not logged", host[:80])

    def _put(self, host: str, hs: HostState, data: Row) -> bool:
        row = self._row(host, hs, data)
        if row is None or hs.sessions.get(row["id"]) == row:
            return False
        hs.sessions[row["id"]] = row
        self._owner[row["id"]] = host
        self.sink.session(row)
        return True

    def _restamp(self, host: str, hs: HostState) -> None:
        for sid, row in list(hs.sessions.items()):
            checked = self._checked(host, row)  # held rows were checked: they pass again
            new = self._row(host, hs, checked) if checked is not None else None
            if new is not None:
                hs.sessions[sid] = new
                if not self.is_local(sid):
                    self.sink.session(new)

    def _row(self, host: str, hs: HostState, data: Row) -> Row | None:
        """A checked row as served here: its fields, its host, whether stale, our view of it."""
        origin = Origin(host, hs.stale, hs.offline_since, grouped=True)
        try:
            session = Session.from_record(data)
            view = present(session, origin, self.window)
            served = view.to_json()
        except Exception as exc:  # checked already: nothing from outside may break the link
            self.refuse(host, str(data.get("id")), f"unreadable ({type(exc).__name__}: {exc})")
            return None
        hs.views[session.id] = view
        return {
            **data,
            "host": host,
            "stale": hs.stale,
            "offline_since": view.offline_since,
            "view": served,
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
