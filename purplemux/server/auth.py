"""Access: the token a request presents (a Bearer header), compared in constant time.

The token itself is made and kept in $PURPLEMUX_HOME (io/home.py); browsers sign in with it
once and then hold a login cookie of their own (io/logins.py): the token itself is never put
in a cookie. To act, a page also sends its login's page key in the PAGE_KEY_HEADER header.
"""

from __future__ import annotations

import hmac

from starlette.requests import HTTPConnection

PAGE_KEY_HEADER = "x-purplemux-key"
"""The header a dashboard page sends its page key in (never in a URL, never logged)."""


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
