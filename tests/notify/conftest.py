"""Fixtures for the browser half: the system Chromium via Playwright, and a tiny local site."""

from __future__ import annotations

import json
import mimetypes
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from purplemux.notify.vapid import load_or_create_keys
from tests.chromium import CHROMIUM, require
from tests.chromium import LAUNCH_ARGS as BROWSER_ARGS
from tests.support.browser import new_page

STATIC = Path(__file__).resolve().parents[2] / "web" / "static"

TEST_PAGE = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>purplemux push test</title></head>
<body>
<script type="module">
  import * as push from "/static/push.js";
  import { storeKey } from "/static/pagekey.js";
  // What the daemon's login page does: keep the page key the push routes ask for.
  await storeKey("test-page-key");
  window.purplemuxPush = push;
  window.swMessages = [];
  navigator.serviceWorker.addEventListener("message", (e) => window.swMessages.push(e.data));
  document.body.dataset.ready = "1";
</script>
</body></html>
"""


LAUNCH_ARGS: dict[str, Any] = {"executable_path": str(CHROMIUM), "args": BROWSER_ARGS}


@pytest.fixture(scope="module")
def sync_pw() -> Iterator[Playwright]:
    """Playwright's sync API, started for one test module."""
    # Not pytest-playwright's session-wide fixture: while the sync API is started it marks an
    # event loop as running in this thread, which breaks every asyncio test that runs after it.
    require()
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="module")
def chromium(sync_pw: Playwright) -> Iterator[Browser]:
    """The system Chromium (TESTING.md: never `playwright install`)."""
    browser = sync_pw.chromium.launch(**LAUNCH_ARGS)
    yield browser
    browser.close()


@pytest.fixture
def web_page(chromium: Browser) -> Iterator[Page]:
    """A fresh (incognito) context and page per test."""
    with new_page(chromium) as page:
        yield page


@dataclass
class Site:
    """The test site: web/static under /static/, a test page at /, a fake push API."""

    origin: str
    application_server_key: str
    subscriptions: list[Any] = field(default_factory=list)
    page_keys: list[str | None] = field(default_factory=list)
    """The page key header each POST carried."""


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    keys = load_or_create_keys(tmp_path_factory.mktemp("home"))
    holder: dict[str, Site] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/":
                self._send(200, TEST_PAGE, "text/html; charset=utf-8")
            elif path == "/api/push/key":
                body = json.dumps({"key": keys.application_server_key}).encode()
                self._send(200, body, "application/json")
            elif path.startswith("/static/"):
                file = (STATIC / path.removeprefix("/static/")).resolve()
                if file.parent != STATIC or not file.is_file():
                    self._send(404, b"not found", "text/plain")
                    return
                ctype = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
                if file.suffix == ".js":
                    ctype = "text/javascript"
                # What the daemon must send too: lets /static/sw.js control scope "/".
                extra = {"Service-Worker-Allowed": "/"} if file.name == "sw.js" else {}
                self._send(200, file.read_bytes(), ctype, extra)
            else:
                self._send(404, b"not found", "text/plain")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            data = json.loads(self.rfile.read(length) or b"null")
            if self.path == "/api/push/subscriptions":
                holder["site"].subscriptions.append(data)
                holder["site"].page_keys.append(self.headers.get("X-Purplemux-Key"))
                self._send(201, b"{}", "application/json")
            else:
                self._send(404, b"{}", "application/json")

        def _send(
            self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output quiet

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    holder["site"] = Site(
        f"http://127.0.0.1:{server.server_address[1]}", keys.application_server_key
    )
    try:
        yield holder["site"]
    finally:
        server.shutdown()
        server.server_close()
