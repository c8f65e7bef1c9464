"""Usage limits per account (issue 25): readings, the newest per account, and how they read.

A reading is what one agent last said of one account's two windows (the 5-hour and the weekly
one): Claude's statusLine input (`rate_limits.five_hour` / `seven_day`, for subscription and
gateway logins) or Codex's rollout (`token_count.rate_limits`, model.RateLimits). Pure: no I/O;
the daemon keeps a Board (server/limits.py), stores it (store.py, table `limits`) and serves it.

Rules: the newest reading wins per (agent, account); a window the newer reading leaves out is
kept from the older one only once its reset has passed (Claude drops a window from its input
then), so it still shows as "reset"; a window whose reset has passed is shown as reset (used 0,
`reset: true`), never as the stale use.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from purplemux.core.model import RateLimits

FIVE_HOUR_MINUTES = 300
SEVEN_DAY_MINUTES = 10080
EARLIEST = 1_000_000_000.0
"""Earliest reset taken (unix seconds, 2001-09-09)."""
LATEST = 4_102_444_800.0
"""Latest reset taken (unix seconds, 2100-01-01): every clock and page can show it."""


class ReadingError(ValueError):
    """An input that cannot be a reading (the API answers 4xx with this text)."""


@dataclass(frozen=True, slots=True)
class Window:
    """One limit window: percent used (0..100) and when it resets (unix seconds, or None)."""

    used_percent: float
    resets_at: float | None = None

    def is_reset(self, now: float) -> bool:
        return self.resets_at is not None and self.resets_at <= now


@dataclass(frozen=True, slots=True)
class Reading:
    """What an agent last said of one account's limits, and when (`at`, unix seconds)."""

    agent: str
    account: str
    five_hour: Window | None
    seven_day: Window | None
    at: float

    @property
    def key(self) -> tuple[str, str]:
        return (self.agent, self.account)

    def to_record(self) -> dict[str, Any]:
        """The stored form: the raw windows, as read."""
        return {
            "agent": self.agent,
            "account": self.account,
            "five_hour": _window_record(self.five_hour),
            "seven_day": _window_record(self.seven_day),
            "at": self.at,
        }

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> Reading:
        """A stored reading; ValueError for one that cannot be shown (see _window_of)."""
        at = data["at"]
        if not is_number(at) or not 0 <= at <= LATEST:
            raise ValueError("at is not a time a clock shows")
        return cls(
            agent=str(data["agent"]),
            account=str(data["account"]),
            five_hour=_window_of(data.get("five_hour")),
            seven_day=_window_of(data.get("seven_day")),
            at=float(at),
        )

    def to_json(self, now: float) -> dict[str, Any]:
        """What GET /api/limits, the feed and the page show: a passed window reads as reset."""
        return {
            "agent": self.agent,
            "account": self.account,
            "five_hour": _window_json(self.five_hour, now),
            "seven_day": _window_json(self.seven_day, now),
            "at": self.at,
        }


def _window_record(w: Window | None) -> dict[str, Any] | None:
    return None if w is None else {"used_percent": w.used_percent, "resets_at": w.resets_at}


def _window_of(data: object) -> Window | None:
    """A stored window; ValueError for one no clock or page can show (an older version
    stored what it was sent): the reading is skipped until the account's next one."""
    if not isinstance(data, Mapping):
        return None
    used, resets = data.get("used_percent"), data.get("resets_at")
    if not is_number(used) or not 0 <= used <= 100:  # type: ignore[operator]
        raise ValueError("used_percent is not a number from 0 to 100")
    if resets is not None and not unix_time(resets):
        raise ValueError("resets_at is not a time a clock shows")
    return Window(float(used), None if resets is None else float(resets))  # type: ignore[arg-type]


def _window_json(w: Window | None, now: float) -> dict[str, Any] | None:
    if w is None:
        return None
    if w.is_reset(now):
        return {"used_percent": 0, "resets_at": w.resets_at, "reset": True}
    return {"used_percent": w.used_percent, "resets_at": w.resets_at, "reset": False}


# --- the account label ------------------------------------------------------------------------


def dir_label(config_dir: Path) -> str:
    """An account's label from its config dir: its name without the leading dot (~/.claude ->
    "claude", ~/.codex -> "codex", ~/work-claude -> "work-claude").

    What daemon/limit_keeper.default_account falls back to for an agent with no account in
    the settings (which label theirs the same way: io/settings.default_label)."""
    name = config_dir.expanduser().name.lstrip(".")
    return name or str(config_dir)


# --- readings from what the agents say --------------------------------------------------------


def is_number(value: object) -> bool:
    """A finite JSON number (compared, never converted: a 400-digit int has no float)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and -math.inf < value < math.inf
    )


def unix_time(value: object) -> bool:
    """Whether a reset is unix seconds from EARLIEST to LATEST."""
    return is_number(value) and EARLIEST <= value <= LATEST  # type: ignore[operator]


def from_rate_limits(limits: RateLimits, agent: str, account: str, at: float) -> Reading | None:
    """A reading from Codex's token_count rate_limits: each window goes where its length says
    (300 min: five_hour, 10080 min: seven_day; primary/secondary when the length is missing)."""
    slots: dict[str, Window] = {}
    for percent, minutes, resets, default in (
        (limits.primary_percent, limits.primary_window_minutes, limits.primary_resets_at, "5h"),
        (
            limits.secondary_percent,
            limits.secondary_window_minutes,
            limits.secondary_resets_at,
            "7d",
        ),
    ):
        if percent is None:
            continue
        slot = {FIVE_HOUR_MINUTES: "5h", SEVEN_DAY_MINUTES: "7d"}.get(minutes or 0)
        if slot is None and minutes is not None:
            continue  # another window length: not one the gauge has
        resets = resets if unix_time(resets) else None  # one no clock shows: left out
        slots.setdefault(slot or default, Window(max(0.0, min(100.0, percent)), resets))
    if not slots:
        return None
    return Reading(agent, account, slots.get("5h"), slots.get("7d"), at)


# --- the newest reading per account ---------------------------------------------------------


def merge(old: Reading | None, new: Reading) -> Reading | None:
    """What the account shows after `new` arrives: None when `new` changes nothing (older, or
    the same); a window `new` lacks is kept from `old` once that one's reset has passed."""
    if old is not None and new.at < old.at:
        return None
    if old is not None:
        if new.five_hour is None and old.five_hour and old.five_hour.is_reset(new.at):
            new = replace(new, five_hour=old.five_hour)
        if new.seven_day is None and old.seven_day and old.seven_day.is_reset(new.at):
            new = replace(new, seven_day=old.seven_day)
        if replace(old, at=new.at) == new:
            return None
    return new


SOURCES_KEPT = 2000
"""Sessions whose last windows a Board remembers (the oldest are forgotten first)."""


class Board:
    """The newest reading per (agent, account).

    Newest means newest news: Claude keeps its readings per session, so an idle session that
    redraws its statusLine repeats what it last heard, maybe hours ago, while another session
    of the same account has heard better. A reading that only repeats what its own session
    (`source`) said last time therefore changes nothing."""

    def __init__(self, readings: Iterable[Reading] = ()) -> None:
        self._by: dict[tuple[str, str], Reading] = {}
        self._said: dict[tuple[str, str, str], tuple[Window | None, Window | None]] = {}
        for r in readings:
            self.offer(r)

    def offer(self, reading: Reading, source: str | None = None) -> Reading | None:
        """Take a reading (from the session `source`, when known); the account's new reading
        when it changed what is shown, else None."""
        if source is not None:
            said = (reading.five_hour, reading.seven_day)
            key = (*reading.key, source)
            repeat = self._said.get(key) == said and reading.key in self._by
            self._said.pop(key, None)
            self._said[key] = said  # re-inserted: the newest last
            if len(self._said) > SOURCES_KEPT:
                del self._said[next(iter(self._said))]
            if repeat:
                return None
        merged = merge(self._by.get(reading.key), reading)
        if merged is not None:
            self._by[reading.key] = merged
        return merged

    def readings(self) -> list[Reading]:
        """Every account's reading, by agent then account."""
        return [self._by[k] for k in sorted(self._by)]

    def to_json(self, now: float | None = None) -> list[dict[str, Any]]:
        at = time.time() if now is None else now
        return [r.to_json(at) for r in self.readings()]


# --- as text ------------------------------------------------------------------------------------


def clock(ts: float, now: float) -> str:
    """A reset time in local time: "22:32" today, else "Dec 4 22:32" ("" for a time no clock
    shows)."""
    try:
        t, n = time.localtime(ts), time.localtime(now)
    except (OverflowError, ValueError, OSError):
        return ""
    if (t.tm_year, t.tm_yday) == (n.tm_year, n.tm_yday):
        return time.strftime("%H:%M", t)
    return time.strftime("%b ", t) + str(t.tm_mday) + time.strftime(" %H:%M", t)


def window_text(name: str, w: Mapping[str, Any] | None, now: float) -> str:
    """The window as text: "5h 42% (resets 22:32)", "5h reset", or "" (no such window)."""
    if not w:
        return ""
    if w.get("reset"):
        return f"{name} reset"
    used = _percent(w.get("used_percent"))
    if used is None:
        return ""
    resets = w.get("resets_at")
    when = clock(float(resets), now) if unix_time(resets) else ""  # type: ignore[arg-type]
    return f"{name} {used}%" + (f" (resets {when})" if when else "")


def _percent(value: object) -> int | None:
    """A window's use as shown (0..100), or None for one that is not a number."""
    if not is_number(value) or not 0 <= value <= 100:  # type: ignore[operator]
        return None
    return round(float(value))  # type: ignore[arg-type]


def line(reading: Mapping[str, Any], now: float) -> str:
    """One account as a line: "claude/work  5h 42% (resets 22:32)  7d 81% (resets Dec 4 20:33)"."""
    parts = [
        window_text("5h", reading.get("five_hour"), now),
        window_text("7d", reading.get("seven_day"), now),
    ]
    who = f"{reading.get('agent')}/{reading.get('account')}"
    return "  ".join([who, *(p for p in parts if p)])


def short(readings: Iterable[Mapping[str, Any]]) -> str:
    """The tmux `{limits}` text: "claude 5h42% 7d81% · codex 5h3%" (percent only, reset: 0)."""
    out = []
    for r in readings:
        bits = [str(r.get("account") or r.get("agent"))]
        for name, key in (("5h", "five_hour"), ("7d", "seven_day")):
            w = r.get(key)
            used = (0 if w.get("reset") else _percent(w.get("used_percent"))) if w else None
            if used is not None:
                bits.append(f"{name}{used}%")
        out.append(" ".join(bits))
    return " · ".join(out)
