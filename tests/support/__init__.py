"""Shared test helpers (a pytest plugin too: see plugin.py): the daemon, hooks, waiting (sync and
async) and ports, settings, captured Claude screens.

Benchmarks and scripts import them from here as a package."""

from tests.support.daemon import REPO, Daemon, cli_sees, fake_command
from tests.support.hooks import HOOK, hook, post_hook, run_hook, settings_for
from tests.support.screens import screen, screens
from tests.support.waiting import closed_port, free_port, wait_for, wait_for_async

__all__ = [
    "HOOK",
    "REPO",
    "Daemon",
    "cli_sees",
    "closed_port",
    "fake_command",
    "free_port",
    "hook",
    "post_hook",
    "run_hook",
    "screen",
    "screens",
    "settings_for",
    "wait_for",
    "wait_for_async",
]
