"""The daemon's home: made private, files written 0600 from their first byte, the access token.

The token is sent as a Bearer header (hooks, the CLI); browsers sign in with it once and then
hold a login cookie of their own (logins.py): the token itself is never put in a cookie.
"""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path

UNWRITABLE = frozenset(
    {
        errno.EROFS,
        errno.EACCES,
        errno.EPERM,
        errno.ENOSPC,
        errno.EDQUOT,
        errno.ENOTDIR,
        errno.ENOENT,
    }
)
"""Why a command could not write where it must: a read-only or full disk, a folder it may not
write, a home that cannot be made."""


def ensure_home(home: Path) -> None:
    """Create the daemon home, readable by its owner only."""
    home.mkdir(parents=True, exist_ok=True)
    os.chmod(home, 0o700)


def cannot_write(exc: OSError, home: Path) -> str | None:
    """One line for a file a command could not write: the folder, and the fix (the daemon's
    home, or the folder of the file, a Claude or Codex one); None for any other error."""
    if exc.errno not in UNWRITABLE or not isinstance(exc.filename, str):
        return None
    path = Path(exc.filename)
    reason = exc.strerror or type(exc).__name__
    if path == home or home in path.parents:
        return (
            f"cannot write to {home}: {reason}. Make it writable, or set PURPLEMUX_HOME to a "
            "folder you can write"
        )
    return f"cannot write to {path.parent}: {reason} ({path.name}). Make it writable"


def write_private(path: Path, text: str) -> None:
    """Write a file that is 0600 from its first byte, atomically."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    os.replace(tmp, path)


def load_or_create_token(home: Path) -> str:
    """The access token; made on first start (and the auth-header file the hook script reads)."""
    ensure_home(home)
    path = home / "token"
    token = path.read_text().strip() if path.exists() else ""
    if not token:
        token = secrets.token_urlsafe(32)
        write_private(path, token + "\n")
    header = f"Authorization: Bearer {token}\n"
    header_path = home / "auth-header"
    if not header_path.exists() or header_path.read_text() != header:
        write_private(header_path, header)
    for secret in (path, header_path):
        if secret.stat().st_mode & 0o077:  # made or copied by hand with a looser mode
            secret.chmod(0o600)
    return token


def read_token(home: Path) -> str | None:
    """The token if the daemon has made one (for the CLI)."""
    try:
        return (home / "token").read_text().strip() or None
    except OSError:
        return None
