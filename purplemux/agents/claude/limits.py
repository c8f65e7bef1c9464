"""Claude Code's words about a usage limit, read back into times (pure: no clock, no I/O).

Claude 2.1.332 says a wall three ways (../shared/claude-code-bg-and-limits.md, "A 429"):
- the StopFailure hook's `last_assistant_message` (the screen's text): "You've hit your 5-hour
  limit · resets 10:32pm (UTC)", "You've hit your weekly limit · resets Dec 4, 8:36pm (UTC)" —
  a clock time to the minute in the time zone it names (an IANA name: "UTC", "Europe/Berlin");
- the transcript's synthetic error entry: `quotaLimits` {rateLimitType, resetsAt (unix s)};
- a system informational entry "Usage limit reached · set to continue automatically at 10:40pm"
  (no zone: Claude's own local time), and "Automatic continue cancelled · …" after Esc.
A time is read as the first such moment after the text was written (`at`), in its zone; a zone
this machine does not know gives no time at all rather than a wrong one.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

WINDOWS = {"5-hour": "five_hour", "weekly": "seven_day"}
"""The window names of the message, as quotaLimits.rateLimitType says them."""
QUOTA_WINDOWS = frozenset({"five_hour", "seven_day", "seven_day_opus", "seven_day_sonnet"})

AUTO_CONTINUE_PROMPTS = (
    "Your claude.ai usage limit has reset. Continue the task you were working on",
    "Your claude.ai usage is available again before the usage-limit reset. Continue the task",
)
"""How the prompts Claude types itself after a wall begin (2.1.332's binary; the first one seen
in a real auto-continued turn: its UserPromptSubmit carries nothing else that tells)."""
AUTO_ARMED = "Usage limit reached · set to continue automatically at "
AUTO_CANCELLED = "Automatic continue cancelled"

_HIT = re.compile(
    r"hit your (?P<window>5-hour|weekly) limit · resets "
    r"(?:(?P<month>[A-Z][a-z]{2}) (?P<day>\d{1,2}), )?"
    r"(?P<clock>\d{1,2}(?::\d{2})?\s*[ap]m) \((?P<zone>[^()\s]+)\)"
)
_CLOCK = re.compile(r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<half>[ap]m)")
_AT_CLOCK = re.compile(r"at (?P<clock>\d{1,2}(?::\d{2})?\s*[ap]m)")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def is_auto_continue(prompt: str) -> bool:
    """Whether a UserPromptSubmit's prompt is one Claude typed itself after a limit reset."""
    return prompt.lstrip().startswith(AUTO_CONTINUE_PROMPTS)


def hit_message(text: str | None, at: float) -> tuple[str | None, float | None]:
    """(window, reset) from "You've hit your 5-hour limit · resets 10:32pm (UTC)"; None where
    the text does not say (an API key's "API Error: Request rejected (429) · …")."""
    if not text:
        return None, None
    m = _HIT.search(text)
    if m is None:
        return None, None
    window = WINDOWS[m["window"]]
    zone = _zone(m["zone"])
    if zone is None:
        return window, None
    month = _MONTHS.index(m["month"]) + 1 if m["month"] in _MONTHS else None
    day = int(m["day"]) if m["day"] else None
    return window, _next(m["clock"], at, zone, month, day)


def auto_resume_time(text: str, at: float, zone: tzinfo | None = None) -> float | None:
    """When "… set to continue automatically at 10:40pm" means, in Claude's local time `zone`
    (None: this process's local time), the first such moment from a minute before `at`."""
    m = _AT_CLOCK.search(text)
    if m is None:
        return None
    return _next(m["clock"], at, zone, None, None)


def _zone(name: str) -> tzinfo | None:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _next(
    clock: str, at: float, zone: tzinfo | None, month: int | None, day: int | None
) -> float | None:
    """The first moment at or after `at` less a minute (the text is cut to the minute) that
    reads `clock` (and `month` `day`, when given) in `zone`."""
    m = _CLOCK.fullmatch(clock.strip())
    if m is None:
        return None
    hour = int(m["hour"]) % 12 + (12 if m["half"] == "pm" else 0)
    minute = int(m["minute"] or 0)
    if hour > 23 or minute > 59:
        return None
    base = datetime.fromtimestamp(at - 60, zone)
    for days in range(0, 400):
        d = (base + timedelta(days=days)).date()
        if month is not None and (d.month, d.day) != (month, day):
            continue
        moment = datetime(d.year, d.month, d.day, hour, minute, tzinfo=base.tzinfo)
        stamp = moment.timestamp()
        if stamp >= at - 60:
            return stamp
    return None
