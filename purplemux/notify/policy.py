"""Whether a Notify effect becomes a push (pure: the caller passes times and focus)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection
from enum import StrEnum

from purplemux.core.machine import Notify
from purplemux.core.model import ATTENTION_STATES, Session, State
from purplemux.notify.once import LiveEntries


class Verdict(StrEnum):
    """The decision, with its reason (worth a debug log line)."""

    PUSH = "push"
    NOT_ATTENTION = "not an entry into needs-input or review"
    DUPLICATE = "this entry was already decided"
    FOCUSED = "a dashboard page is visible and focused"
    COOLDOWN = "the session was pushed for moments ago"


EntryKey = tuple[str, State, float]


class PushPolicy:
    """Push each live entry into needs-input or review once, unless the user is looking."""

    def __init__(self, cooldown: float = 0.0, remember: int = 1024) -> None:
        if cooldown < 0 or remember < 1:
            raise ValueError("cooldown must be >= 0 and remember >= 1")
        self.cooldown = cooldown
        self.remember = remember
        self._entries = LiveEntries(remember=remember)  # the engine decided it is live
        self._last_push: OrderedDict[str, float] = OrderedDict()

    def decide(
        self,
        session: Session,
        notify: Notify,
        *,
        now: float,
        focused_pages: int | Collection[object] = 0,
    ) -> Verdict:
        """Decide for one Notify effect; `now` is the caller's clock, used for the cooldown."""
        if notify.state not in ATTENTION_STATES:
            return Verdict.NOT_ATTENTION
        key: EntryKey = (session.id, notify.state, notify.since)
        # Every decided entry is remembered, pushed or not: an entry the user saw in a focused
        # dashboard must not be pushed later when the engine re-derives and emits it again.
        if not self._entries.first(key, notify.state, notify.since):
            return Verdict.DUPLICATE
        count = focused_pages if isinstance(focused_pages, int) else len(focused_pages)
        if count > 0:
            return Verdict.FOCUSED
        last = self._last_push.get(session.id)
        if self.cooldown > 0 and last is not None and now - last < self.cooldown:
            return Verdict.COOLDOWN
        self._last_push[session.id] = now
        self._last_push.move_to_end(session.id)
        while len(self._last_push) > self.remember:
            self._last_push.popitem(last=False)
        return Verdict.PUSH

    def should_push(
        self,
        session: Session,
        notify: Notify,
        *,
        now: float,
        focused_pages: int | Collection[object] = 0,
    ) -> bool:
        """`decide(...) is Verdict.PUSH`."""
        return self.decide(session, notify, now=now, focused_pages=focused_pages) is Verdict.PUSH

    def forget(self, session_id: str) -> None:
        """Drop a removed session's cooldown (entry keys age out on their own)."""
        self._last_push.pop(session_id, None)


CRITICAL = "critical"
BELOW_CRITICAL = frozenset({"", "healthy", "warning"})


class ContextAlerts:
    """Opt-in: alert once each time a session's context enters the critical band from below.

    Compacting (>= 95 % or a compaction running) is not an entry, nor is falling back from it;
    a session must drop below critical (a compaction, /clear) before it can alert again."""

    def __init__(self, remember: int = 1024) -> None:
        if remember < 1:
            raise ValueError("remember must be >= 1")
        self.remember = remember
        self._band: OrderedDict[str, str] = OrderedDict()

    def seed(self, session_id: str, band: str) -> None:
        """The band a session already had when we started watching: never an entry."""
        self._set(session_id, band)

    def entered_critical(self, session_id: str, band: str) -> bool:
        """Note the session's band now; True when it has just entered critical from below."""
        before = self._band.get(session_id, "")
        if band == before:
            return False
        self._set(session_id, band)
        return band == CRITICAL and before in BELOW_CRITICAL

    def forget(self, session_id: str) -> None:
        self._band.pop(session_id, None)

    def _set(self, session_id: str, band: str) -> None:
        self._band[session_id] = band
        self._band.move_to_end(session_id)
        while len(self._band) > self.remember:
            self._band.popitem(last=False)
