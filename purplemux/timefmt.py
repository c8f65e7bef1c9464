"""How long a session has been in its state, as people read it (shared by the page and the CLI)."""

from __future__ import annotations


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
