"""The plumbing the fake model APIs share (fake_api.py, fake_responses.py): a threaded HTTP
server on a free local port, the requests it recorded, and the JSON and SSE answers.

Each fake keeps what makes it that API (its routes, its scripts, its record of a request);
this module holds only what they would otherwise both copy:

- :class:`FakeServer` serves a handler from a background thread, keeps the requests the
  handler recorded and lets a test wait for one (no sleeps: a condition is notified).
- :class:`FakeHandler` reads a body, answers JSON, and streams server-sent events, stopping
  early when the server stops (a streaming answer must not outlive its test).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Self, TypeVar

R = TypeVar("R")


class FakeHTTPServer(ThreadingHTTPServer):
    """The HTTP server of one :class:`FakeServer` (``owner``), one thread per connection."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        owner: FakeServer[Any],
    ) -> None:
        super().__init__(address, handler)
        self.owner = owner


class FakeHandler(BaseHTTPRequestHandler):
    """One request to a fake: the body, the common fields of its record, JSON and SSE."""

    server: FakeHTTPServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> Any:
        """The parsed JSON body, its text when it is not JSON, or None when there is none."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _record_fields(self, body: Any, status: int, kind: str) -> dict[str, Any]:
        """The fields every fake's RecordedRequest has, for this request."""
        return {
            "ts": time.time(),
            "method": self.command,
            "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": body,
            "status": status,
            "kind": kind,
        }

    def _send_json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_sse(
        self, headers: Mapping[str, str], events: Iterable[tuple[str, Any, float]]
    ) -> None:
        """A 200 event stream of ``(event, data, delay before it)``; the connection closes
        after it. Stops early (and quietly) when the fake stops during a delay."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.close_connection = True
        stopping = self.server.owner.stopping
        for event, data, delay in events:
            if delay and stopping.wait(delay):
                return
            self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()


class FakeServer(Generic[R]):
    """A fake API on ``host``:<free port>, served from a background thread, keeping the
    requests (of type ``R``) its handler recorded. Use as a context manager, or call
    :meth:`start` / :meth:`stop`."""

    #: The serving thread's name (shows in a dump of the threads).
    thread_name = "fake-api"

    def __init__(self, handler: type[FakeHandler], host: str = "127.0.0.1", port: int = 0):
        self._server = FakeHTTPServer((host, port), handler, self)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._requests: list[R] = []
        #: Set by :meth:`stop`; a handler waiting on it gives up its answer.
        self.stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> Self:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.1},
                name=self.thread_name,
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- recording ---------------------------------------------------------------------------

    def _record(self, request: R) -> None:
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()

    @property
    def requests(self) -> list[R]:
        """A snapshot of every request so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def _summary(self, request: R) -> object:
        """What a timed-out :meth:`wait_for_request` shows of each request it saw."""
        return request

    def wait_for_request(self, predicate: Callable[[R], bool], timeout: float = 30.0) -> R:
        """Block until a recorded request matches ``predicate``; TimeoutError otherwise."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for request in self._requests:
                    if predicate(request):
                        return request
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    seen = [self._summary(r) for r in self._requests]
                    raise TimeoutError(f"no matching request within {timeout}s; got {seen}")
                self._changed.wait(remaining)
