"""A session's events in source-time order, so a late event is put in its place (pure)."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, replace

from purplemux.core.events import Event, Kind
from purplemux.core.machine import (
    Broadcast,
    Effect,
    Notify,
    Persist,
    ScheduleTick,
    Unwatch,
    Watch,
    step,
)
from purplemux.core.model import Session

ALWAYS_CURRENT = frozenset({Kind.TRANSCRIPT, Kind.PROCESS_SEEN, Kind.PROCESS_GONE})
"""Kinds that describe the present whatever their timestamp, so they are never stale."""

KEEP = 256
"""Entries kept per session: a late event older than all of them is applied on top instead."""


@dataclass(frozen=True, slots=True)
class Entry:
    key: tuple[float, str]
    event: Event
    after: Session


class Timeline:
    """The fold of one session's events, re-derived from a late event's place onwards."""

    def __init__(self, base: Session) -> None:
        self.base = base
        self.entries: list[Entry] = []

    @property
    def current(self) -> Session:
        return self.entries[-1].after if self.entries else self.base

    def apply(self, event: Event) -> tuple[Session, list[Effect]]:
        """Insert the event by (source time, id) and return the new current session and effects."""
        key = (event.at, event.id)
        if event.at < self.base.updated_at and event.kind not in ALWAYS_CURRENT:
            # Older than everything the base already folds in (a trimmed or reloaded history):
            # it cannot be put in its place, and newer facts already superseded it.
            return self.current, []
        if not self.entries or key >= self.entries[-1].key:
            new, effects = step(self.current, event)
            self.entries.append(Entry(key, event, new))
            self._trim()
            return new, effects
        return self._refold(event, key)

    def _refold(self, event: Event, key: tuple[float, str]) -> tuple[Session, list[Effect]]:
        old = self.current
        index = bisect_right([e.key for e in self.entries], key)
        state = self.entries[index - 1].after if index else self.base
        later = [e.event for e in self.entries[index:]]
        del self.entries[index:]
        effects: list[Effect] = []
        for e in (event, *later):
            state, produced = step(state, e)
            effects.extend(produced)
            self.entries.append(Entry((e.at, e.id), e, state))
        if state.state is old.state and state.state_since < old.state_since:
            # The same spell, found to have begun earlier (a hook delivered late, behind the
            # screen or a session file that showed it first): it keeps the start it was shown
            # with, so what was said about it stays true (the prompt id a push or a page holds
            # is made from it; a second push for it would be a duplicate).
            state = replace(state, state_since=old.state_since)
            self.entries[-1] = replace(self.entries[-1], after=state)
        self._trim()
        return state, _settle(old, state, effects)

    def _trim(self) -> None:
        if len(self.entries) > KEEP:
            cut = len(self.entries) - KEEP
            self.base = self.entries[cut - 1].after
            del self.entries[:cut]


def _settle(old: Session, new: Session, effects: list[Effect]) -> list[Effect]:
    """Effects of a refold, judged by where it ended rather than by each intermediate step."""
    out: list[Effect] = []
    if new != old:
        out += [Persist(), Broadcast()]
    for eff in effects:
        if isinstance(eff, Notify) and eff.state is new.state and eff.since == new.state_since:
            if not (old.state is new.state and old.state_since == new.state_since):
                out.append(eff)
        elif isinstance(eff, ScheduleTick):
            out.append(eff)
    if new.transcript_path and new.transcript_path != old.transcript_path and not new.ended:
        out.append(Watch(new.transcript_path))
    if new.ended and not old.ended:
        out.append(Unwatch())
    return out
