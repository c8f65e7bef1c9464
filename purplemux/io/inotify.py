"""Linux inotify through ctypes: a folder watch that costs nothing while nothing changes.

watchfiles' notifier wakes every `step` (10 ms) and takes the GIL whether or not anything
changed; an inotify descriptor on the event loop (`loop.add_reader`) wakes only when the kernel
has something to say. Only what watch_dirs() needs: watch folders, read the names that changed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import struct
import sys
from pathlib import Path

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000

FOLDER_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
)
"""What happens to a folder's entries, and to the folder itself."""
GONE = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED
"""The watched folder itself went away (or was moved): the watch must start anew."""

_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event)


def available() -> bool:
    """Whether this system has inotify (Linux) and libc exposes it."""
    return _lib() is not None


@functools.cache  # loaded once: libc does not come or go while the daemon runs
def _lib() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        lib.inotify_init1.argtypes = [ctypes.c_int]
        lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):
        return None
    return lib


class Overflow(Exception):
    """The kernel's queue overflowed: changes were lost, re-check everything."""


class FolderGone(Exception):
    """A watched folder was deleted or moved away."""


class Inotify:
    """One non-blocking inotify descriptor watching some folders (not recursively)."""

    def __init__(self) -> None:
        lib = _lib()
        if lib is None:
            raise OSError("inotify is not available")
        self._lib = lib
        fd = lib.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"inotify_init1: {os.strerror(err)}")
        self.fd: int = fd
        self._dirs: dict[int, str] = {}

    def add(self, folder: Path) -> None:
        """Watch a folder's entries (raises OSError: missing, not a folder, limit reached)."""
        wd = self._lib.inotify_add_watch(self.fd, os.fsencode(folder), FOLDER_MASK)
        if wd < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"inotify_add_watch {folder}: {os.strerror(err)}")
        self._dirs[wd] = str(folder)

    def read(self) -> set[str]:
        """The paths that changed since the last read (empty if none are waiting)."""
        changed: set[str] = set()
        while True:
            try:
                data = os.read(self.fd, 64 * 1024)
            except BlockingIOError:
                return changed
            if not data:
                return changed
            at = 0
            while at + _HEADER.size <= len(data):
                wd, mask, _cookie, length = _HEADER.unpack_from(data, at)
                raw = data[at + _HEADER.size : at + _HEADER.size + length].rstrip(b"\0")
                at += _HEADER.size + length
                if mask & IN_Q_OVERFLOW:
                    raise Overflow
                folder = self._dirs.get(wd)
                if folder is None:
                    continue
                if mask & GONE and not raw:
                    raise FolderGone(folder)
                if raw:
                    changed.add(os.path.join(folder, os.fsdecode(raw)))

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
