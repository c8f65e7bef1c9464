"""Shared test helpers (a pytest plugin too: see plugin.py): the daemon, hooks, waiting, settings.

Benchmarks and scripts import them from here as a package."""

from tests.support.daemon import REPO, Daemon, free_port, wait_for
from tests.support.hooks import HOOK, hook, post_hook, run_hook, settings_for

__all__ = [
    "HOOK",
    "REPO",
    "Daemon",
    "free_port",
    "hook",
    "post_hook",
    "run_hook",
    "settings_for",
    "wait_for",
]
