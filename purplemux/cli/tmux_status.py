"""`purplemux tmux-status`: a short badge line for tmux's status bar, fetched in milliseconds.

tmux runs this every `status-interval` seconds, so the path stays light: a raw HTTP/1.1 request
on a socket (no urllib, no email parser, nothing of the server package) with a 0.3 s budget, and
an empty line whenever the daemon cannot answer, so a stopped daemon never litters the status bar.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from purplemux.core.model import State
from purplemux.core.present import BY_ORDER, LOOKS
from purplemux.core.termtext import TMUX_COLOURS, clean, tmux_name, tmux_text
from purplemux.io.settings import Settings

TIMEOUT = 0.3
MAX_RESPONSE = 8 * 1024 * 1024

STATES = tuple(state.value for state in BY_ORDER)
DEFAULT_SHOWN = (State.NEEDS_INPUT, State.REVIEW, State.BUSY)
"""What the default badge counts: what needs you, then what works; idle is the quiet rest."""

PLACEHOLDERS = (
    "needs_input",
    "review",
    "busy",
    "idle",
    "unknown",
    "total",
    "badge",
    "needs_names",
    "limits",
)
NAMES_SHOWN = 5
"""Names listed by {needs_names}; more are counted ("+2")."""


def needs_names(sessions: Sequence[Mapping[str, Any]]) -> str:
    """Names of the live sessions that wait for the user (needs-input first, then review),
    comma-separated: `api-server, web +1`; tmux-escaped (tmux reads this line as a format)."""
    waiting = [State.NEEDS_INPUT.value, State.REVIEW.value]
    live = [s for s in sessions if not s.get("ended") and s.get("state") in waiting]
    live.sort(key=lambda s: waiting.index(str(s.get("state"))))
    names = []
    for s in live:
        view = s.get("view")
        name = view.get("name") if isinstance(view, Mapping) else None
        names.append(tmux_name(str(name or s.get("name") or s.get("id") or "?")))
    more = len(names) - NAMES_SHOWN
    text = ", ".join(names[:NAMES_SHOWN])
    return f"{text} +{more}" if more > 0 else text


def count(sessions: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Live sessions per state, keyed by the placeholder names (needs_input, ..., total)."""
    counts = {state.replace("-", "_"): 0 for state in STATES}
    for s in sessions:
        if s.get("ended") or s.get("stale"):  # stale: its host is offline, its state unknown
            continue
        key = str(s.get("state", "unknown")).replace("-", "_")
        counts[key if key in counts else "unknown"] += 1
    counts["total"] = sum(counts.values())
    return counts


def badge(counts: Mapping[str, int], tmux_colours: bool = False) -> str:
    """`⚠2 ●1 ◐3`: needs-input, review, busy; zero counts left out; empty when all are zero."""
    parts = []
    for state in DEFAULT_SHOWN:
        n = counts.get(state.value.replace("-", "_"), 0)
        if not n:
            continue
        look = LOOKS[state]
        text = f"{look.glyph}{n}"
        if tmux_colours:
            text = f"#[fg={TMUX_COLOURS[look.colour]}]{text}#[default]"
        parts.append(text)
    return " ".join(parts)


def render(
    counts: Mapping[str, int],
    fmt: str | None = None,
    tmux_colours: bool = False,
    names: str = "",
    limits: str = "",
) -> str:
    """The status line: the badge, or fmt filled with the counts, the names of the sessions
    that need you and the accounts' usage limits (ValueError on a bad fmt)."""
    text = badge(counts, tmux_colours)
    if fmt is None:
        return text
    values: dict[str, object] = {
        name: counts.get(name, 0)
        for name in PLACEHOLDERS
        if name not in ("badge", "needs_names", "limits")
    }
    try:
        return fmt.format(badge=text, needs_names=names, limits=limits, **values)
    except (KeyError, IndexError, ValueError) as exc:
        names = " ".join("{" + p + "}" for p in PLACEHOLDERS)
        raise ValueError(f"bad --format {fmt!r} ({exc}); placeholders: {names}") from None


def fetch_sessions(settings: Settings, timeout: float = TIMEOUT) -> list[dict[str, Any]] | None:
    """The live sessions, or None when the daemon is down, slow, or there is no token."""
    data = _fetch(settings, "/api/sessions", timeout)
    sessions = data.get("sessions") if isinstance(data, dict) else None
    return sessions if isinstance(sessions, list) else None


def fetch_limits(settings: Settings, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
    """The accounts' usage-limit readings (GET /api/limits); none when the daemon cannot say."""
    data = _fetch(settings, "/api/limits", timeout)
    return [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []


def limits_text(readings: Sequence[Mapping[str, Any]]) -> str:
    """`{limits}`: "claude 5h42% 7d81% · codex 5h3%", tmux-escaped (labels are the user's)."""
    from purplemux.core.limits import short

    return tmux_text(clean(short(readings)))


def _fetch(settings: Settings, path: str, timeout: float) -> Any:
    """One GET's JSON, or None when the daemon is down, slow, or there is no token."""
    try:
        token = (settings.home / "token").read_text().strip()
    except OSError:
        return None
    if not token:
        return None
    host, port = _address(settings)
    try:
        return json.loads(_get(host, port, path, token, timeout))
    except (OSError, ValueError):
        return None


def _address(settings: Settings) -> tuple[str, int]:
    """Host and port as the CLI client finds them: the port file first, then the setting."""
    try:
        port = int(Path(settings.port_path).read_text().strip())
    except (OSError, ValueError):
        port = settings.port
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    return host, port


def _get(host: str, port: int, path: str, token: str, timeout: float) -> bytes:
    """One GET with a total deadline; the body of a 200 answer, else OSError."""
    deadline = time.monotonic() + timeout
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {token}\r\n"
        "Accept: application/json\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(request)
        chunks: list[bytes] = []
        size = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the daemon is slow")
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_RESPONSE:
                raise OSError("answer too large")
    return _body(b"".join(chunks))


def _body(raw: bytes) -> bytes:
    """The body of a complete HTTP/1.1 200 response (Content-Length or chunked)."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        raise OSError("truncated answer")
    lines = head.split(b"\r\n")
    status = lines[0].split(b" ", 2)
    if len(status) < 2 or status[1] != b"200":
        raise OSError(f"HTTP {status[1:2]!r}")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip()
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        return _dechunk(body)
    length = headers.get(b"content-length")
    if length is not None:
        n = int(length)
        if len(body) < n:
            raise OSError("truncated answer")
        return body[:n]
    return body


def _dechunk(data: bytes) -> bytes:
    out: list[bytes] = []
    while True:
        line, sep, rest = data.partition(b"\r\n")
        if not sep:
            raise OSError("truncated chunked answer")
        n = int(line.split(b";", 1)[0], 16)
        if n == 0:
            return b"".join(out)
        if len(rest) < n + 2:
            raise OSError("truncated chunked answer")
        out.append(rest[:n])
        data = rest[n + 2 :]


def status_line(settings: Settings, fmt: str | None = None, tmux_colours: bool = False) -> str:
    """What `purplemux tmux-status` prints: empty when the daemon cannot be asked."""
    sessions = fetch_sessions(settings)
    if sessions is None:
        return ""
    names = needs_names(sessions) if fmt and "needs_names" in fmt else ""
    limits = limits_text(fetch_limits(settings)) if fmt and "{limits" in fmt else ""
    return render(count(sessions), fmt, tmux_colours, names, limits)
