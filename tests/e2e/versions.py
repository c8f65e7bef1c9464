"""The Claude Code releases the e2e tier runs against: one list, in .ci/claude-versions.

Tests run on every version unless marked ``@pytest.mark.claude_versions("2.1.197", ...)``
(behaviour that differs between releases); conftest parametrizes ``claude_version`` from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

VERSIONS_FILE = Path(__file__).resolve().parents[2] / ".ci" / "claude-versions"


def _read() -> tuple[str, ...]:
    lines = (ln.strip() for ln in VERSIONS_FILE.read_text().splitlines())
    return tuple(ln for ln in lines if ln and not ln.startswith("#"))


VERSIONS: tuple[str, ...] = _read()
OLDEST, CURRENT = VERSIONS[0], VERSIONS[-1]


@dataclass(frozen=True)
class Profile:
    """What a test must do differently on a release (claude-code.md, "What changed by 2.1.332")."""

    version: str
    manual_args: tuple[str, ...]
    """Arguments that give the classic permission dialog (2.1.332 defaults to auto mode)."""
    dialog_guard: float
    """Seconds a dialog ignores keys after it appears (2.1.332: about 1; we wait 1.5)."""
    sleep: str
    """A shell command that sleeps N seconds: `sleep` alone is refused on 2.1.332."""

    def sleep_command(self, seconds: float) -> str:
        return self.sleep.format(seconds=seconds)


def profile(version: str) -> Profile:
    if tuple(int(x) for x in version.split(".")) >= (2, 1, 332):
        return Profile(
            version,
            ("--permission-mode", "default"),
            1.5,
            'python3 -c "import time; time.sleep({seconds})"',
        )
    return Profile(version, (), 0.0, "sleep {seconds}")
