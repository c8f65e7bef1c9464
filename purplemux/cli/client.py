"""A small HTTP client for the CLI: finds the daemon from $PURPLEMUX_HOME and talks JSON."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from purplemux.core.termtext import clean
from purplemux.io.home import read_token
from purplemux.io.settings import Settings


class DaemonUnreachable(RuntimeError):
    """The daemon is not running or not answering; the message says how to start it."""


class ApiError(RuntimeError):
    """The daemon answered with an error: its `status`, its reason (as plain text: a reason may
    quote another host's answer, and the CLI prints it), and the whole JSON `body` (an action's
    refusal carries facts: the prompt on screen now, the keys already typed)."""

    def __init__(self, status: int, reason: str, body: dict[str, Any] | None = None) -> None:
        super().__init__(clean(reason))
        self.status = status
        self.body: dict[str, Any] = body if body is not None else {}


@dataclass(frozen=True)
class Client:
    """Talks to the daemon named by the settings (port file first, then the setting)."""

    settings: Settings
    timeout: float = 3.0

    @property
    def base_url(self) -> str:
        try:
            port = int(self.settings.port_path.read_text().strip())
        except (OSError, ValueError):
            port = self.settings.port
        host = self.settings.base_url.rsplit(":", 1)[0]
        return f"{host}:{port}"

    def token(self) -> str:
        token = read_token(self.settings.home)
        if not token:
            raise DaemonUnreachable(
                f"no token in {self.settings.home}: start the daemon with `purplemux serve`"
            )
        return token

    def request(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token()}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            try:
                body = json.loads(exc.read())
            except ValueError:
                body = None
            body = body if isinstance(body, dict) else {}
            raise ApiError(exc.code, str(body.get("error", exc.reason)), body) from None
        except (urllib.error.URLError, OSError) as exc:
            raise DaemonUnreachable(
                f"the daemon does not answer at {self.base_url} ({exc}): "
                "start it with `purplemux serve`"
            ) from None
