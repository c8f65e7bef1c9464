"""How the tests and scripts launch Debian's Chromium (TESTING.md: never `playwright install`)."""

from __future__ import annotations

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def require() -> str:
    """The browser's path, or a clear failure naming the fix (never a silent skip)."""
    if not CHROMIUM.exists():
        raise RuntimeError(
            f"{CHROMIUM} is missing: run `make test-deps` (apt-get install chromium)"
        )
    return str(CHROMIUM)
