"""`purplemux serve`: run the app on uvicorn, print the login link only to a terminal."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import sys
import threading
from collections.abc import Iterable
from types import FrameType
from typing import TextIO
from urllib.parse import unquote_plus

import uvicorn

from purplemux.io import memtrim
from purplemux.io.home import load_or_create_token
from purplemux.io.log_bounds import BoundLines
from purplemux.io.settings import Settings, is_loopback
from purplemux.io.store import Store, StoreError
from purplemux.server.connguard import Guard, default_limits, guarded_protocol
from purplemux.server.starting import Starting

GRACEFUL_SHUTDOWN = 1
"""Seconds uvicorn gives open requests and connections once told to stop (its type: whole)."""
FORCE_EXIT_AFTER = 5.0
"""Seconds after the first SIGTERM/SIGINT at which the process ends itself, whatever still runs:
the last resort if some task swallows its cancellation (every part is bounded well below)."""


def serve(settings: Settings, allow_remote: bool = False, out: TextIO | None = None) -> int:
    """Run until interrupted; returns the exit code."""
    out = out or sys.stdout
    if not is_loopback(settings.host):
        if not (allow_remote or settings.allow_remote):
            print(
                f"purplemux: refusing to listen on {settings.host}: anyone who can reach it could "
                "try the API. Use --allow-remote if you mean it (see SECURITY.md), or an SSH "
                "tunnel to 127.0.0.1.",
                file=sys.stderr,
            )
            return 2
        print(
            f"purplemux: WARNING: listening on {settings.host}, not only loopback", file=sys.stderr
        )
        if not settings.input_allowed:
            print(
                "purplemux: answering prompts is off on a non-loopback address "
                "(PURPLEMUX_INPUT=on turns it on)",
                file=sys.stderr,
            )
    os.umask(0o077)  # everything the daemon makes in its home is the owner's alone
    memtrim.tune()  # before any thread allocates (purplemux/io/memtrim.py)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # watchfiles (the folder watch where there is no inotify: io/watch.py) logs every change at
    # INFO: with the log file inside a watched folder (a missing Claude dir is watched through its
    # nearest parent) each line would trigger the next.
    logging.getLogger("watchfiles").setLevel(logging.WARNING)
    token = load_or_create_token(settings.home)
    try:  # a broken or locked database: say how to recover, not a traceback from the lifespan
        store = Store(settings.db_path)
        try:
            store.check()
        finally:
            store.close()
    except StoreError as exc:
        print(f"purplemux: {exc}", file=sys.stderr)
        return 1
    if out.isatty():
        print(f"purplemux dashboard: {settings.base_url}/?token={token}", file=out)
    else:
        print(
            f"purplemux listening on {settings.base_url}; run `purplemux open` for the login link",
            file=out,
        )
    out.flush()
    limits = default_limits(settings.max_connections, settings.max_feeds)
    server: QuietServer | None = None

    def failed() -> None:
        if server is not None:
            server.should_exit = True

    # It answers /api/health at once and loads the daemon's app behind it (server/starting.py).
    app = Starting(settings, on_failure=failed)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        access_log=False,  # the login link carries the token: never write URLs to a log
        # No proxy stands in front: X-Forwarded-For from a local process would rename the
        # client in the logs, and reading it cost every request a middleware layer.
        proxy_headers=False,
        server_header=False,
        log_level="info",
        lifespan="on",
        # Every client would get its own compressor, run per message: for JSON of a few hundred
        # bytes that costs more than it saves (benchmarks: the WebSocket fan-out).
        ws_per_message_deflate=False,
        # Idle keep-alive connections go after a few seconds; a connection that sends no whole
        # request in time, or one past its client's share or the total, is closed
        # (server/connguard.py).
        timeout_keep_alive=int(min(5.0, settings.request_timeout)) or 1,
        http=guarded_protocol(Guard(limits.per_client, settings.request_timeout, limits.total)),
        # On SIGTERM a request still open after this long is cancelled (a hook's sender then
        # spools it): stopping must not wait on a slow client (issue 22: stop means stop).
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN,
    )
    # uvicorn logs every WebSocket handshake with its query string, access log or not: every
    # handler that writes a line (ours and uvicorn's own) blanks secrets first.
    redact = RedactTokens([token])
    bound = BoundLines()  # after redaction: a cut never leaves part of a secret
    for name in ("", "uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.addFilter(redact)
        for handler in logger.handlers:
            handler.addFilter(redact)
            handler.addFilter(bound)
    server = QuietServer(config)
    server.run()
    return 1 if app.failed else 0


class QuietServer(uvicorn.Server):
    """uvicorn's main loop wakes ten times a second to refresh the Date header and look for
    a signal; this one wakes once a second (the header's resolution), and at once on a signal."""

    _exit: asyncio.Event | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _watchdog: threading.Timer | None = None
    force_exit_after: float = FORCE_EXIT_AFTER

    async def main_loop(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._exit = asyncio.Event()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 10) % 864000  # each tick is a second: the header is refreshed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._exit.wait(), 1.0)
            should_exit = await self.on_tick(counter)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        if self._loop is not None and self._exit is not None:
            self._loop.call_soon_threadsafe(self._exit.set)
        if self._watchdog is None:
            # A daemon thread: it never holds the exit up, and a clean exit never waits for it.
            self._watchdog = threading.Timer(self.force_exit_after, self._force_exit)
            self._watchdog.daemon = True
            self._watchdog.start()

    def _force_exit(self) -> None:
        """Still running long after the signal: say so and end now (exit status 70)."""
        with contextlib.suppress(Exception):
            sys.stderr.write(
                f"purplemux: still stopping {self.force_exit_after:.0f}s after the signal "
                "(a task did not end when cancelled); exiting now\n"
            )
            sys.stderr.flush()
        os._exit(70)


def _decoded(text: str) -> str:
    """Percent-decoding applied until nothing changes (a few rounds at most)."""
    for _ in range(3):
        plain = unquote_plus(text)
        if plain == text:
            break
        text = plain
    return text


class RedactTokens(logging.Filter):
    """Blanks secrets in log records: a client may put the token in a URL (a WebSocket's).

    A `name=value` pair whose name, once percent-decoded, holds "token" in any case
    (`?token=`, `?tok%65n=`, `?%74oken=`, `?ToKeN=`) loses its value; and the daemon's own
    token, however it is encoded, never stays in a line.
    """

    PAIR = re.compile(r"([^=&?;\s\"'/]+)=([^&;\s\"']*)")

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def clean(self, text: str) -> str:
        def pair(m: re.Match[str]) -> str:
            return f"{m.group(1)}=<redacted>" if "token" in _decoded(m.group(1)).lower() else m[0]

        text = self.PAIR.sub(pair, text)
        if self.secrets:
            plain = _decoded(text)
            if any(s in text or s in plain for s in self.secrets):
                for secret in self.secrets:
                    plain = plain.replace(secret, "<redacted>")
                text = plain
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(self.clean(a) if isinstance(a, str) else a for a in record.args)
        if isinstance(record.msg, str):
            record.msg = self.clean(record.msg)
        return True
