"""Which transcript paths the daemon opens, and how: regular files under Claude's projects folder.

A hook payload's `transcript_path` is text from outside (a prompt injection can make Claude write
odd paths). Read as given, any file the daemon can read became a snippet, a FIFO blocked the
reading thread for every session, and a NUL byte broke the watcher. So a path is accepted only
when, resolved (symlinks followed), it lies under `$CLAUDE_CONFIG_DIR/projects`; it is opened
non-blocking, without following a last symlink, and read only if it is a regular file.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class UnsafePath(ValueError):
    """A transcript path the daemon will not read; the message says why."""


def check(path: str | os.PathLike[str], root: Path) -> Path:
    """The resolved path if it may be read as a transcript (it need not exist yet)."""
    text = os.fspath(path)
    if "\x00" in text:
        raise UnsafePath("the path holds a NUL byte")
    if not os.path.isabs(text):
        raise UnsafePath("the path is not absolute")
    try:
        resolved = Path(resolve(text))
        top = Path(resolve(root))
    except (OSError, ValueError) as exc:
        raise UnsafePath(f"the path cannot be resolved ({exc})") from None
    if resolved == top or not resolved.is_relative_to(top):
        raise UnsafePath(f"not under {root}")
    return resolved


_O_PATH = getattr(os, "O_PATH", 0)


def resolve(path: str | os.PathLike[str]) -> str:
    """os.path.realpath(path), with symlinks followed by the kernel where it can.

    Python's realpath takes an lstat per component (and again for a symlink's target): for the
    hundreds of transcripts a start reads, several times each, that was a good part of its CPU.
    An existing path is opened with O_PATH (no open of the file itself: a FIFO does not block, a
    device is not touched) and named by /proc/self/fd; a path that does not exist (yet), that
    cannot be opened so, or a system without O_PATH or /proc, goes to realpath as before."""
    text = os.fspath(path)
    if _O_PATH and os.path.isabs(text):
        try:
            fd = os.open(text, _O_PATH | getattr(os, "O_CLOEXEC", 0))
        except (OSError, ValueError):
            pass
        else:
            try:
                named = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                named = ""
            finally:
                os.close(fd)
            # Only a plain absolute path is the kernel's answer ("x (deleted)": gone meanwhile).
            if named.startswith("/") and not named.endswith(" (deleted)"):
                return named
    return os.path.realpath(text)


def open_transcript(path: str | os.PathLike[str], root: Path | None) -> int:
    """A read-only descriptor of a regular transcript file (the caller closes it).

    UnsafePath for a path outside `root` or a file that is not a regular one (a FIFO, a device,
    a folder); FileNotFoundError while it does not exist. Never blocks.
    """
    text = os.fspath(path)
    if "\x00" in text:
        raise UnsafePath("the path holds a NUL byte")
    target = check(text, root) if root is not None else Path(text)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath("the file became a symbolic link") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath("not a regular file")
        if root is not None:
            _still_inside(fd, root)
        os.set_blocking(fd, True)  # a regular file: plain reads from here on
    except BaseException:
        os.close(fd)
        raise
    return fd


def _still_inside(fd: int, root: Path) -> None:
    """A folder on the way swapped for a symlink between check() and open(): refuse it."""
    link = f"/proc/self/fd/{fd}"
    try:
        opened = os.readlink(link)
    except OSError:
        return  # no /proc (macOS): check() and O_NOFOLLOW are what we have
    top = Path(resolve(root))
    if not Path(opened).is_relative_to(top) or Path(opened) == top:
        raise UnsafePath(f"not under {root}")
