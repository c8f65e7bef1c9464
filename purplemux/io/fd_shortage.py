"""Running out of file descriptors (EMFILE, ENFILE): a passing condition, said once, not a crash."""

from __future__ import annotations

import errno
import logging

from purplemux.io.log_once import RateLimitedLog

log = logging.getLogger("purplemux.fds")

RETRY = 1.0
"""Seconds before a part that ran out tries again: descriptors come back as soon as the
connections or files holding them close."""


def exhausted(exc: BaseException) -> bool:
    """The process (EMFILE) or the system (ENFILE) has no descriptor left."""
    return isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE)


def limiter() -> RateLimitedLog:
    """What an owner (the engine, the supervisor, the process poller) says it with: one line
    per part every 10 minutes."""
    return RateLimitedLog(log, interval=600)


def say(what: str, exc: BaseException, warn: RateLimitedLog) -> None:
    """One line per part every 10 minutes while it keeps running out (no traceback)."""
    warn.warning(
        ("fds", what),
        "%s: out of file descriptors (%s); retrying every %.0fs until some come back",
        what,
        exc,
        RETRY,
    )
