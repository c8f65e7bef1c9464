"""The safety nets' first pauses (purplemux/core/spread.py): spread apart, never sooner, stable."""

from __future__ import annotations

import itertools

from purplemux.core.spread import MOST, share, spread

NAMES = (
    *("processes", "spool sweep", "codex panes"),  # the parts' timers
    *("transcript", "spool", "session file", "claude jobs", "codex threads"),  # the watchers
)
"""The safety nets of one start, by the names they pass."""


def test_a_first_pause_is_never_sooner_and_at_most_half_again() -> None:
    for name in NAMES:
        assert 5.0 <= spread(5.0, name) < MOST * 5.0


def test_the_same_name_waits_the_same_on_every_start() -> None:
    assert [spread(3.0, n) for n in NAMES] == [spread(3.0, n) for n in NAMES]


def test_the_nets_of_one_start_do_not_wake_together() -> None:
    """Two nets of the same pause wake at different moments, and stay apart as they double."""
    shares = {n: share(n) for n in NAMES}
    for a, b in itertools.combinations(NAMES, 2):
        assert abs(shares[a] - shares[b]) >= 0.005, (a, b)
        for doubled in range(6):  # 5 s, 10 s, ... up to 160 s: never the same moment
            assert spread(5.0, a) * 2**doubled != spread(5.0, b) * 2**doubled
