"""Running out of file descriptors (EMFILE, ENFILE): a passing condition, said once, not a crash."""

from __future__ import annotations

import errno
import logging

from purplemux.ratelimit_log import RateLimitedLog

log = logging.getLogger("purplemux.fds")
warn = RateLimitedLog(log, interval=600)

RETRY = 1.0
"""Seconds before a part that ran out tries again: descriptors come back as soon as the
connections or files holding them close."""


def exhausted(exc: BaseException) -> bool:
    """The process (EMFILE) or the system (ENFILE) has no descriptor left."""
    return isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE)


def say(what: str, exc: BaseException) -> None:
    """One line per part every 10 minutes while it keeps running out (no traceback)."""
    warn.warning(
        ("fds", what),
        "%s: out of file descriptors (%s); retrying every %.0fs until some come back",
        what,
        exc,
        RETRY,
    )
