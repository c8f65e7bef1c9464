"""Give the C allocator's free memory back to the system, after a burst of work.

Summing a start's transcript histories parses hundreds of MB of JSON in 1 MiB steps (issue 14);
when it is done, most of what it allocated is free again, but glibc keeps it (freed chunks
inside its heaps and per-thread arenas, which `free` does not return): the resident size stayed
~11 MB above what the daemon holds (BENCHMARKS.md, section 4). `malloc_trim(0)` returns those
pages. And at start (tune): at most ARENAS malloc arena(s) (glibc makes one per thread that
allocates, up to 8 per core, and each keeps its own free memory), and blocks from MMAP_AT up
always mapped on their own (glibc's threshold otherwise grows to the largest block freed, so
the 1 MiB reads of the histories land in the heap and leave it fragmented). Together: the 10k
world's resident size after its idle spell 88 -> ~80 MB (BENCHMARKS.md, section 4). Elsewhere
(another C library, another system) these do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Callable
from functools import cache

ARENAS = 1
MMAP_AT = 128 << 10
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
"""mallopt's parameters (glibc's malloc.h). One arena: the loop thread and the store and
worker threads allocate small objects through Python's own allocator under the GIL; what reaches
malloc from several threads at once is rare (SQLite's, in the store thread)."""


@cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim  # noqa: B018  (musl and others have no malloc_trim: not glibc)
        libc.mallopt  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


def _trim() -> Callable[[int], int] | None:
    libc = _libc()
    return None if libc is None else libc.malloc_trim


def tune() -> bool:
    """Before the daemon starts its threads: fewer arenas, big blocks mapped on their own."""
    libc = _libc()
    if libc is None:
        return False
    libc.mallopt(_M_ARENA_MAX, ARENAS)
    libc.mallopt(_M_MMAP_THRESHOLD, MMAP_AT)
    return True


def give_back() -> bool:
    """Return the allocator's free pages to the system (blocking: a few ms); False: unsupported."""
    trim = _trim()
    if trim is None:
        return False
    trim(0)
    return True
