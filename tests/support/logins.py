"""Signing in as a browser does, over plain HTTP: the login cookie and the page key the login
link's page hands over (what a page keeps, and what a server replaying the cookie lacks)."""

from __future__ import annotations

import html
import http.client
import http.server
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from purplemux.io import logins
from purplemux.server.auth import PAGE_KEY_HEADER

KEY_META = re.compile(r'<meta name="purplemux-page-key" content="([^"]*)">')


@dataclass(frozen=True)
class Login:
    """One browser login: its cookie (`purplemux_login=...`) and its page key."""

    cookie: str
    key: str

    @property
    def cookie_only(self) -> dict[str, str]:
        """The headers a server replaying the cookie can send: the cookie, nothing else."""
        return {"Cookie": self.cookie}

    @property
    def page(self) -> dict[str, str]:
        """The headers the signed-in page sends when it acts: the cookie and its key."""
        return {"Cookie": self.cookie, PAGE_KEY_HEADER: self.key}


def parse_login(set_cookies: Iterable[str], body: str) -> Login:
    """The Login in a response to the login link: its cookie, and the key its page carries
    ("" if none: a test that needs the key asserts it)."""
    cookies = [c.split(";", 1)[0] for c in set_cookies]
    [cookie] = [c for c in cookies if c.startswith(logins.COOKIE + "=")]
    found = KEY_META.search(body)
    return Login(cookie, html.unescape(found.group(1)) if found else "")


def http_login(port: int, token: str) -> Login:
    """Open the login link of the daemon on `port` (as `purplemux open` prints it)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", f"/?token={quote(token)}")
        r = conn.getresponse()
        body = r.read().decode()
        assert r.status in (200, 303), r.status
        return parse_login(r.headers.get_all("set-cookie") or [], body)
    finally:
        conn.close()


def subscription_logins(home: Path) -> list[str]:
    """The login each push subscription a daemon keeps belongs to (read from its database)."""
    db = sqlite3.connect(f"file:{home / 'state.db'}?mode=ro", uri=True)
    try:
        return [str(r[0]) for r in db.execute("SELECT login FROM push_subscriptions")]
    finally:
        db.close()


@contextmanager
def cookie_server() -> Iterator[tuple[int, list[str]]]:
    """Another server on this host (another free port) that records the Cookie header of each
    request it gets; yields (its port, those headers)."""
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Cookie") or "")
            body = b"<!doctype html><title>another local server</title><p>hello"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()
