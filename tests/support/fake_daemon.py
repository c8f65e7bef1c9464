"""A tiny HTTP server standing in for the daemon's POST /api/hooks, and a daemon home for it.

The `serve` fixture (tests/support/plugin.py) starts them; tests of the hook script use them."""

from __future__ import annotations

import http.server
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.samples import load_hooks

TOKEN = "tok-" + "7f3a9c" * 6


def payload() -> bytes:
    """A real PermissionRequest payload, plus text no shell may touch."""
    line = next(h for h in load_hooks() if h["payload"]["hook_event_name"] == "PermissionRequest")
    data = dict(line["payload"], note="quotes \" ' $HOME `id` \\n, ünïcødé, 🚀")
    return json.dumps(data, ensure_ascii=False).encode() + b"\n"


PAYLOAD = payload()


@dataclass
class Request:
    headers: dict[str, str]
    body: bytes


@dataclass
class FakeDaemon:
    """A tiny HTTP server standing in for the daemon's POST /api/hooks."""

    status: int = 200
    delay: float = 0.0
    requests: list[Request] = field(default_factory=list)
    received: threading.Event = field(default_factory=threading.Event)
    answered: threading.Event = field(default_factory=threading.Event)
    port: int = 0


class _Server(http.server.ThreadingHTTPServer):
    request_queue_size = 2048
    """The listen queue the real daemon has (uvicorn's default backlog). socketserver's 5 was too
    few: with ten hooks at once on a loaded machine, the queue filled before the accept loop ran,
    the kernel dropped the other connections, curl's 1 s connect timeout ran out before its
    retry and those events were spooled, never POSTed."""


def start_daemon(daemon: FakeDaemon) -> http.server.ThreadingHTTPServer:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            headers = {k.lower(): v for k, v in self.headers.items()}
            daemon.requests.append(Request(headers={"path": self.path, **headers}, body=body))
            daemon.received.set()
            if daemon.delay:
                daemon.answered.wait(daemon.delay)  # hold the request in flight
            self.send_response(daemon.status)
            self.send_header("Content-Length", "0")
            self.end_headers()
            daemon.answered.set()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = _Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    daemon.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def make_home(tmp_path: Path, port: int | None) -> Path:
    """A daemon home as the daemon leaves it: port file, auth-header file (0600)."""
    home = tmp_path / "purplemux-home"
    home.mkdir(parents=True)
    if port is not None:
        (home / "port").write_text(f"{port}\n")
    auth = home / "auth-header"
    auth.write_text(f"Authorization: Bearer {TOKEN}\n")
    auth.chmod(0o600)
    return home
