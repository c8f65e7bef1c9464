"""Give the C allocator's free memory back to the system, after a burst of work.

Summing a start's transcript histories parses hundreds of MB of JSON in 1 MiB steps (issue 14);
when it is done, most of what it allocated is free again, but glibc keeps it (freed chunks
inside its heaps and per-thread arenas, which `free` does not return): the resident size stayed
~11 MB above what the daemon holds (BENCHMARKS.md, section 4). `malloc_trim(0)` returns those
pages. Elsewhere (another C library, another system) this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Callable
from functools import cache


@cache
def _trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # musl and others have no malloc_trim
        return None
    return trim


def give_back() -> bool:
    """Return the allocator's free pages to the system (blocking: a few ms); False: unsupported."""
    trim = _trim()
    if trim is None:
        return False
    trim(0)
    return True
