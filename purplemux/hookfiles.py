"""What every agent's hook installer shares: how our hook command is recognised, and how a
user's config file is replaced safely (a timestamped backup first, then one atomic rename that
keeps the file's mode).

It sits low in the layers so that both the Claude installer (install.py) and the agent packages
(agents/codex/install.py) use the same rules: a hook item is ours when its command names our
status-hook.sh and purplemux, whatever home it points at, and a file is never left half-written.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path

SCRIPT_NAME = "status-hook.sh"
NEW_FILE_MODE = 0o600  # settings can hold secrets (an env block with API keys, provider keys)


def is_our_command(command: object) -> bool:
    """Whether a hook command line runs our status hook (closing quotes aside, any home)."""
    if not isinstance(command, str):
        return False
    return "purplemux" in command.lower() and command.strip().rstrip("'\"").endswith(SCRIPT_NAME)


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when it does not exist."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


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
