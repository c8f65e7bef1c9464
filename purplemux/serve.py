"""`purplemux serve`: run the app on uvicorn, print the login link only to a terminal."""

from __future__ import annotations

import logging
import re
import sys
from typing import TextIO

import uvicorn

from purplemux.server.app import create_app
from purplemux.server.auth import load_or_create_token
from purplemux.settings import Settings, is_loopback
from purplemux.store import Store, StoreError


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
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # watchfiles logs every change at INFO: with the log file inside a watched folder (a missing
    # Claude dir is watched through its nearest parent) each line would trigger the next.
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
    config = uvicorn.Config(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        access_log=False,  # the login link carries the token: never write URLs to a log
        log_level="info",
        lifespan="on",
        # Every client would get its own compressor, run per message: for JSON of a few hundred
        # bytes that costs more than it saves (benchmarks: the WebSocket fan-out).
        ws_per_message_deflate=False,
    )
    # uvicorn logs every WebSocket handshake with its query string, access log or not.
    logging.getLogger("uvicorn.error").addFilter(RedactTokens())
    server = uvicorn.Server(config)
    server.run()
    return 0


class RedactTokens(logging.Filter):
    """Blanks `token=...` in log records: a client may put the token in a WebSocket URL."""

    PATTERN = re.compile(r"(token=)[^&\s\"']+", re.IGNORECASE)

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                self.PATTERN.sub(r"\1<redacted>", a) if isinstance(a, str) else a
                for a in record.args
            )
        if isinstance(record.msg, str):
            record.msg = self.PATTERN.sub(r"\1<redacted>", record.msg)
        return True
