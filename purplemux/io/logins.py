"""Dashboard logins: a random secret per browser in a cookie, never the API token itself.

Cookies ignore ports: a cookie set by 127.0.0.1:8022 is sent to every other server on 127.0.0.1
the user opens. So the cookie holds a login secret of its own, worth only the dashboard, and
revocable: `purplemux logout-all` empties the list, and a new token voids every login (each entry
is an HMAC of the secret keyed with the token). The list lives in `$PURPLEMUX_HOME/logins`
(0600), holding only those HMACs; the daemon rereads it when it changes on disk.

The cookie alone only views. Acting (a pane's screen, answers, focus, push subscriptions) also
needs the login's page key: an HMAC of the cookie's secret keyed with the token, handed to the
page once, when the login link is opened, and kept in the origin's own storage (per port, unlike
the cookie). A server that replays the cookie cannot derive it, and it dies with its login.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import time
from pathlib import Path

from purplemux.io.home import write_private

COOKIE = "purplemux_login"
LEGACY_COOKIE = "purplemux_token"
"""The old cookie that held the token: removed from the browser at the next login."""
FILE = "logins"
MAX_AGE = 60 * 60 * 24 * 365
"""Seconds a login lasts (the cookie's Max-Age, and how long the daemon honours it)."""
MAX_LOGINS = 64
"""Logins kept; the oldest is dropped first."""


def _digest(token: str, secret: str) -> str:
    key = token.encode()
    return hmac.new(key, secret.encode("utf-8", "surrogateescape"), hashlib.sha256).hexdigest()


def _derived(token: str, purpose: str, text: str) -> str:
    """An HMAC keyed with the token for one purpose (the NUL keeps purposes apart)."""
    message = f"{purpose}\0{text}".encode("utf-8", "surrogateescape")
    return hmac.new(token.encode(), message, hashlib.sha256).hexdigest()


class Logins:
    """The logins of one daemon (its token); create() at sign-in, valid() on every request."""

    def __init__(self, path: Path, token: str) -> None:
        self.path, self.token = path, token
        self._entries: list[tuple[str, float]] = []
        self._seen: tuple[int, int, int] | None = None

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _load(self) -> list[tuple[str, float]]:
        """The entries on disk (reread only when the file changed)."""
        stamp = self._stamp()
        if stamp != self._seen:
            self._seen = stamp
            entries: list[tuple[str, float]] = []
            try:
                text = self.path.read_text(errors="replace")
            except OSError:
                text = ""
            for line in text.splitlines():
                digest, _, created = line.partition(" ")
                with contextlib.suppress(ValueError):
                    entries.append((digest, float(created)))
            self._entries = entries
        return self._entries

    def create(self) -> str:
        """A new login: its secret goes in the browser's cookie, its HMAC in the file."""
        secret = secrets.token_urlsafe(32)
        now = time.time()
        kept = [(d, c) for d, c in self._load() if now - c < MAX_AGE][-(MAX_LOGINS - 1) :]
        kept.append((_digest(self.token, secret), now))
        write_private(self.path, "".join(f"{d} {c:.0f}\n" for d, c in kept))
        self._seen = None  # reread: our own write is the new state
        return secret

    def valid(self, secret: str | None) -> bool:
        """Whether a cookie's secret is a live login (constant-time compare with each entry)."""
        if not secret:
            return False
        given = _digest(self.token, secret)
        now = time.time()
        found = False
        for digest, created in self._load():
            # Every entry is compared, so the time taken says nothing about which one matched.
            if hmac.compare_digest(digest, given) and now - created < MAX_AGE:
                found = True
        return found

    def page_key(self, secret: str) -> str:
        """The page key of the login whose cookie holds `secret` (only the token derives it)."""
        return _derived(self.token, "page-key", secret)

    def login_id(self, secret: str) -> str:
        """The id push subscriptions made by this login are kept under (not a credential)."""
        return _derived(self.token, "login-id", _digest(self.token, secret))[:32]

    def token_id(self) -> str:
        """The id of whoever holds the token itself (the CLI): ends with a new token."""
        return _derived(self.token, "login-id", "token")[:32]

    def live_ids(self) -> set[str]:
        """The ids of every live login and of the token: a subscription under any other id
        belongs to a login that ended (logout-all, a new token, its age)."""
        now = time.time()
        ids = {
            _derived(self.token, "login-id", d)[:32] for d, c in self._load() if now - c < MAX_AGE
        }
        return ids | {self.token_id()}


def logout_all(home: Path) -> int:
    """Void every dashboard login of the daemon using `home`; returns how many there were."""
    path = home / FILE
    try:
        count = sum(1 for line in path.read_text(errors="replace").splitlines() if line.strip())
    except FileNotFoundError:
        return 0
    write_private(path, "")
    return count
