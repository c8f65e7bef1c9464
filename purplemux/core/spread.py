"""The safety-net timers' first pauses, spread so that one start's polls do not stack.

Each safety net (the process-table walk, the spool sweep, the Codex panes' quiet look, every
file watcher's quiet re-check) starts at its own pause and doubles it while it finds nothing.
Started together, timers of equal or doubling pauses wake together: at 5 s, 10 s, 20 s ... all of
them at once. Each is moved instead by a share of its pause fixed by its name (up to half of it
again): never sooner than asked (a start's first minute costs no more than before), the same
on every start (a test or a profile sees the same timings), and apart from the others for good,
since doubling keeps the ratio of two pauses.
"""

from __future__ import annotations

import zlib

MOST = 1.5
"""The longest first pause, as a share of the one asked for."""


def share(name: str) -> float:
    """The share of its pause a timer named `name` waits first: in [1, MOST)."""
    return 1.0 + (MOST - 1.0) * (zlib.crc32(name.encode()) % 1000) / 1000


def spread(seconds: float, name: str) -> float:
    """The first pause of the safety net `name` whose pause is `seconds`."""
    return seconds * share(name)
