"""What every agent's hook installer shares: how our hook command is recognised, and how a
user's config file is replaced safely (a timestamped backup first, then one atomic rename that
keeps the file's mode).

It sits low in the layers so that both installers (agents/claude/install.py,
agents/codex/install.py) use the same rules: a config file is read only when it is a readable
regular file (read_file: a FIFO or device is never opened for a blocking read), and is never
left half-written. Which hook is ours is each agent's own rule: the exact command it writes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
import time
from pathlib import Path

SCRIPT_NAME = "status-hook.sh"
NEW_FILE_MODE = 0o600  # settings can hold secrets (an env block with API keys, provider keys)


FIX = " and run again; nothing was changed"
STATUSLINE_NAME = "statusline.sh"
"""The statusLine wrapper install-hooks copies next to the hook script (agents/install.py)."""


class InstallError(ValueError):
    """An agent's config cannot be changed safely; its files were left untouched (each
    installer's own error is one: Claude's SettingsError, Codex's CodexConfigError)."""


def statusline_script(home: Path) -> Path:
    """Where install-hooks puts the statusLine wrapper in the daemon's home."""
    return home / STATUSLINE_NAME


"""The end of every refusal: the user fixes the file, runs the command again, lost nothing."""


class FileRefused(ValueError):
    """A config path holds something other than a readable regular file; nothing was read."""


def read_file(path: Path, agent: str) -> bytes | None:
    """path's bytes (through a link), None when nothing is there; FileRefused, naming the path
    and the fix, for anything but a readable regular file. A FIFO or device is never read: its
    type is checked first, and the open itself cannot block (O_NONBLOCK) or take a terminal
    (O_NOCTTY). `agent` is who reads the file, for the message ("Claude", "Codex")."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise _not_a_file(path, info.st_mode, agent)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None  # a link to a file not made yet included: it is written through the link
    except OSError as exc:
        raise _unreadable(path, exc) from None
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        if not stat.S_ISREG(mode):  # swapped since the stat
            raise _not_a_file(path, mode, agent)
        try:
            return f.read()
        except OSError as exc:
            raise _unreadable(path, exc) from None


def _not_a_file(path: Path, mode: int, agent: str) -> FileRefused:
    kinds = (
        (stat.S_ISDIR, "folder"),
        (stat.S_ISFIFO, "FIFO (named pipe)"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    )
    kind = next((name for test, name in kinds if test(mode)), "special file")
    return FileRefused(
        f"{path} is a {kind}, not a file: move it away ({agent} reads {path.name} as a file){FIX}"
    )


def _unreadable(path: Path, exc: OSError) -> FileRefused:
    reason = exc.strerror or type(exc).__name__
    if exc.errno == errno.ELOOP:
        what = "is a symbolic link that loops: point it at a file or remove it"
    elif exc.errno in (errno.EACCES, errno.EPERM):
        what = f"cannot be read ({reason}): make it readable (chmod u+r) or move it away"
    else:
        what = f"cannot be read ({reason}): fix it or move it away"
    return FileRefused(f"{path} {what}{FIX}")


def replace_file(path: Path, original: bytes | None, data: bytes) -> Path | None:
    """Write data over path (through a symbolic link), backing up original first.

    Returns the backup's path (None for a new file). The file keeps its mode; a new one is 0600.
    """
    # A dotfile manager may link the file elsewhere: write through the link, keep the link.
    target = path.resolve() if path.is_symlink() else path
    mode = file_mode(target) if original is not None else NEW_FILE_MODE
    backup = make_backup(target, original, mode) if original is not None else None
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, data, mode)
    return backup


def file_mode(path: Path) -> int:
    """The permission bits of an existing file."""
    return path.stat().st_mode & 0o7777


def make_backup(target: Path, original: bytes, mode: int) -> Path:
    """Save original next to target as <name>.purplemux-backup-<time>, never over another."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = target.with_name(f"{target.name}.purplemux-backup-{stamp}")
    candidate, n = base, 0
    while True:
        try:
            # O_EXCL: two runs in the same second must not overwrite the first backup.
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except FileExistsError:
            n += 1
            candidate = base.with_name(f"{base.name}-{n}")
            continue
        with os.fdopen(fd, "wb") as out:
            out.write(original)
        return candidate


def write_atomic(target: Path, data: bytes, mode: int) -> None:
    """Replace target with data in one rename, so readers see the old or the new file, whole."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    done = False
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fchmod(out.fileno(), mode)
            os.fsync(out.fileno())
        os.replace(tmp, target)
        done = True
    finally:
        if not done:  # never leave a half-written temp file next to the user's settings
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    fsync_dir(target.parent)


def fsync_dir(folder: Path) -> None:
    """Make a rename or unlink in folder durable; not all systems can."""
    with contextlib.suppress(OSError):
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
