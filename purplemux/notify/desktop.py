"""Desktop notifications through `notify-send` (Linux) or `osascript` (macOS)."""

from __future__ import annotations

import asyncio
import logging
import shutil
import sys
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

APP_NAME = "purplemux"
LOOK_AGAIN = 60.0
"""Seconds a lookup of the tool on PATH is kept: a walk of PATH at every entry into review
was most of a finished turn's cost where the tool is missing (a server, a container)."""


class DesktopNotifier:
    """Shows a notification on this machine's desktop; a no-op when disabled or unsupported."""

    def __init__(
        self,
        enabled: bool,
        *,
        timeout: float = 5.0,
        platform: str = sys.platform,
        which: Callable[[str], str | None] = shutil.which,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.enabled = enabled
        self.timeout = timeout
        self._platform = platform
        self._which = which
        self._clock = clock
        self._failing = False
        self._found: tuple[float, str, str | None] | None = None
        """When the tool was looked for, its name and its path (None: none is on PATH)."""

    def _tool(self) -> tuple[str, str | None]:
        """The tool's name and path on PATH, looked up again after LOOK_AGAIN seconds."""
        now = self._clock()
        if self._found is None or now - self._found[0] > LOOK_AGAIN:
            order = ("osascript", "notify-send") if self._platform == "darwin" else ("notify-send",)
            found = next(((n, p) for n in order if (p := self._which(n)) is not None), None)
            name, path = found or ("", None)
            self._found = (now, name, path)
        return self._found[1], self._found[2]

    def may_show(self) -> bool:
        """Enabled, with the tool on PATH (as last looked): else a notification is not even
        worded."""
        return self.enabled and self._tool()[1] is not None

    def command(self, title: str, body: str, *, urgent: bool = False) -> list[str] | None:
        """The argv that shows the notification here, or None when no tool is on PATH."""
        name, path = self._tool()
        if path is None:
            return None
        if name == "notify-send":
            urgency = "critical" if urgent else "normal"
            # `--` ends the options: a title starting with "-" is still a title.
            return [path, f"--app-name={APP_NAME}", f"--urgency={urgency}", "--", title, body]
        script = f"display notification {applescript_string(body)} with title " + (
            applescript_string(title)
        )
        return [path, "-e", script]

    async def notify(self, title: str, body: str, *, urgent: bool = False) -> bool:
        """Run the tool without blocking the loop; True if it ran and exited 0."""
        if not self.enabled:
            return False
        argv = self.command(title, body, urgent=urgent)
        if argv is None:
            return False
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
            )
            try:
                _, stderr = await asyncio.wait_for(proc.communicate(), self.timeout)
            except TimeoutError:
                proc.kill()
                await proc.wait()
                self._failed(f"{argv[0]} took longer than {self.timeout:g} s")
                return False
        except Exception as exc:  # OSError from exec, mostly: log and carry on
            self._failed(f"{argv[0]}: {exc}")
            return False
        if proc.returncode != 0:
            detail = stderr.decode(errors="replace").strip()[:200]
            self._failed(f"{argv[0]} exited {proc.returncode}: {detail}")
            return False
        if self._failing:
            log.info("desktop notifications work again")
            self._failing = False
        return True

    def _failed(self, why: str) -> None:
        """Log once while failing; repeats go to debug."""
        if self._failing:
            log.debug("desktop notification failed: %s", why)
        else:
            log.warning("desktop notification failed: %s", why)
            self._failing = True


def applescript_string(text: str) -> str:
    """`text` as an AppleScript string literal: quotes and backslashes escaped, one line."""
    flat = "".join(" " if ch in "\r\n\t" or ord(ch) < 0x20 else ch for ch in text)
    return '"' + flat.replace("\\", "\\\\").replace('"', '\\"') + '"'
