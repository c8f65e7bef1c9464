"""Access: a random token in $PURPLEMUX_HOME, sent as a Bearer header (hooks, the CLI).

Browsers sign in with it once and then hold a login cookie of their own (server/logins.py): the
token itself is never put in a cookie. To act, a page also sends its login's page key in the
PAGE_KEY_HEADER header.
"""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from starlette.requests import HTTPConnection

PAGE_KEY_HEADER = "x-purplemux-key"
"""The header a dashboard page sends its page key in (never in a URL, never logged)."""


def ensure_home(home: Path) -> None:
    """Create the daemon home, readable by its owner only."""
    home.mkdir(parents=True, exist_ok=True)
    os.chmod(home, 0o700)


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


def presented_token(conn: HTTPConnection) -> str | None:
    """The token a request carries in `Authorization: Bearer` (never read from a cookie)."""
    header = conn.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return None


def token_ok(expected: str, given: str | None) -> bool:
    """Constant-time comparison."""
    if not given:
        return False
    return hmac.compare_digest(expected.encode(), given.encode("utf-8", "surrogateescape"))


def page_key_ok(expected: str, given: str | None) -> bool:
    """Whether a page key sent with a request is the login's own (constant-time)."""
    return token_ok(expected, given)
