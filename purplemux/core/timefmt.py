"""How long a session has been in its state, as people read it (shared by the page and the CLI)."""

from __future__ import annotations

from datetime import datetime, tzinfo


def duration(seconds: float) -> str:
    """A compact, exact-enough age: 42s, 3m 05s, 2h 07m, 4d 3h."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h {(s % 3600) // 60:02d}m"
    return f"{s // 86400}d {(s % 86400) // 3600}h"


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def wall_clock(at: float, ref: float, zone: tzinfo | None = None) -> str:
    """A limit's reset as people read it: "22:32" on `ref`'s day, else "Dec 4 20:36" (24-hour,
    in `zone`, None: this machine's local time; the page's script does the same in the
    viewer's own, web/static/view.js wallClock)."""
    when = datetime.fromtimestamp(at, zone)
    hm = f"{when.hour:02d}:{when.minute:02d}"
    if when.date() == datetime.fromtimestamp(ref, zone).date():
        return hm
    return f"{_MONTHS[when.month - 1]} {when.day} {hm}"
