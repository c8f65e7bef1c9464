"""`purplemux doctor`: one check per part, each saying what is wrong and how to fix it."""

from __future__ import annotations

import json
import shutil
import stat
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from purplemux import __version__
from purplemux.agents import registry
from purplemux.agents.doctor import Which, on_path
from purplemux.core.checks import Check
from purplemux.io.settings import Settings
from purplemux.io.tmux import TmuxError, run_blocking

INOTIFY_WATCHES = Path("/proc/sys/fs/inotify/max_user_watches")
LOW_WATCHES = 8192
"""Below this, a few editors and dev servers can exhaust inotify watches and blind the daemon."""
VAPID_KEY = "vapid_private.pem"


def _private_file(path: Path) -> tuple[bool, int | None]:
    """Whether path is a regular file, and its permission bits."""
    try:
        st = path.stat()
    except OSError:
        return False, None
    return stat.S_ISREG(st.st_mode), stat.S_IMODE(st.st_mode)


def _daemon_url(settings: Settings) -> str:
    try:
        port = int(settings.port_path.read_text().strip())
    except (OSError, ValueError):
        port = settings.port
    return f"{settings.base_url.rsplit(':', 1)[0]}:{port}"


def check_daemon(settings: Settings, timeout: float = 2.0) -> Check:
    """The daemon answers /api/health, runs this version, and accepts our token."""
    url = _daemon_url(settings)
    start = "start it: `purplemux serve` (or `purplemux service install --enable`)"
    try:
        with urllib.request.urlopen(url + "/api/health", timeout=timeout) as resp:
            health = json.loads(resp.read())
    except (OSError, ValueError) as exc:
        return Check("daemon", "fail", f"no answer at {url} ({_reason(exc)})", start)
    version = str(health.get("version", "?")) if isinstance(health, dict) else "?"
    token = _read(settings.token_path)
    if not token:
        return Check("daemon", "fail", f"running {version} at {url}, but no token", start)
    req = urllib.request.Request(url + "/api/sessions")
    req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            live = len(json.loads(resp.read()).get("sessions", []))
    except urllib.error.HTTPError as exc:
        if exc.code == 401:
            return Check(
                "daemon",
                "fail",
                f"running {version} at {url}, but it rejects the token in {settings.token_path}",
                "another daemon home? restart the daemon so both use the same PURPLEMUX_HOME",
            )
        return Check("daemon", "fail", f"/api/sessions answered HTTP {exc.code}", start)
    except (OSError, ValueError) as exc:
        return Check("daemon", "fail", f"/api/sessions failed ({_reason(exc)})", start)
    detail = f"running {version} at {url}, {live} live session{'s' * (live != 1)}"
    if version != __version__:
        return Check(
            "daemon",
            "warn",
            f"{detail}; this command is {__version__}",
            "restart the daemon to run the installed version",
        )
    return Check("daemon", "ok", detail)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    return str(exc) or type(exc).__name__


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def check_token(settings: Settings) -> Check:
    """The access token exists and only its owner can read it."""
    path = settings.token_path
    is_file, mode = _private_file(path)
    if not is_file or not _read(path):
        return Check(
            "token", "fail", f"{path} is missing", "start the daemon once: it creates the token"
        )
    if mode is not None and mode & 0o077:
        return Check(
            "token", "fail", f"{path} has mode {mode:04o}: others can read it", f"chmod 600 {path}"
        )
    return Check("token", "ok", f"{path} (mode 0600)")


def check_tmux(which: Which = shutil.which) -> Check:
    """tmux is on PATH (optional: without it, panes are not shown or marked)."""
    found = on_path(
        "tmux",
        which,
        "not on PATH",
        "install tmux to see panes and mark them; sessions are still followed",
    )
    if found.level != "ok":
        return found
    try:
        out = run_blocking(None, "-V", timeout=2, tmux=found.detail)
    except TmuxError:
        return found
    return Check("tmux", "ok", out.strip() or found.detail)


def check_curl(which: Which = shutil.which) -> Check:
    """curl is on PATH; without it the hook script spools every event to disk."""
    return on_path(
        "curl",
        which,
        "not on PATH: hooks spool events to disk and the daemon picks them up (slower)",
        "install curl",
    )


def check_file_watch(platform: str = sys.platform, watches_path: Path = INOTIFY_WATCHES) -> Check:
    """watchfiles imports and, on Linux, inotify has room for our watches."""
    try:
        import watchfiles
    except ImportError as exc:
        return Check(
            "file watch", "fail", f"watchfiles does not import ({exc})", "pip install watchfiles"
        )
    version = getattr(watchfiles, "__version__", "?")
    if not platform.startswith("linux"):
        return Check("file watch", "ok", f"watchfiles {version}")
    try:
        limit = int(watches_path.read_text().strip())
    except (OSError, ValueError):
        return Check(
            "file watch",
            "warn",
            f"watchfiles {version}, but {watches_path} is not readable: inotify may be missing",
            "transcripts are then followed late; check the kernel's inotify support",
        )
    if limit < LOW_WATCHES:
        return Check(
            "file watch",
            "warn",
            f"watchfiles {version}, inotify max_user_watches is only {limit}",
            "sudo sysctl fs.inotify.max_user_watches=524288",
        )
    return Check("file watch", "ok", f"watchfiles {version}, inotify ({limit} watches)")


def check_push_keys(settings: Settings) -> Check:
    """The Web Push (VAPID) key exists and is private; made on first start when missing."""
    path = settings.home / VAPID_KEY
    is_file, mode = _private_file(path)
    if not is_file:
        return Check(
            "push keys",
            "warn",
            f"{path} does not exist yet",
            "it is made when a page first asks for notifications",
        )
    if mode is not None and mode & 0o077:
        return Check(
            "push keys",
            "fail",
            f"{path} has mode {mode:04o}: others can read it",
            f"chmod 600 {path}",
        )
    return Check("push keys", "ok", f"{path} (mode 0600)")


def check_broker(settings: Settings, timeout: float = 2.0) -> Check | None:
    """With several machines: the daemon's link to the shared Redis (None: no broker in use)."""
    try:
        url = _daemon_url(settings)
        with urllib.request.urlopen(url + "/api/health", timeout=timeout) as resp:
            health = json.loads(resp.read())
    except (OSError, ValueError):
        health = {}
    broker = health.get("broker") if isinstance(health, dict) else None
    state = broker.get("state") if isinstance(broker, dict) else None
    if not isinstance(broker, dict) or state in (None, "off"):
        if not settings.broker:
            return None
        return Check(
            "broker",
            "warn",
            "PURPLEMUX_BROKER is set, but the running daemon does not use a broker",
            "restart the daemon with the same environment (or `purplemux serve --broker URL`)",
        )
    if state == "connected":
        return Check("broker", "ok", "connected: this daemon shares its sessions with other hosts")
    since = broker.get("since")
    when = time.strftime("%H:%M:%S", time.localtime(float(since))) if since else "?"
    error = f" ({broker['error']})" if broker.get("error") else ""
    return Check(
        "broker",
        "warn",
        f"{state} since {when}{error}: this daemon serves only its own sessions meanwhile",
        "check that the Redis in PURPLEMUX_BROKER is reachable from this machine, and its "
        "password (PURPLEMUX_BROKER_PASSWORD_FILE); the daemon retries by itself",
    )


def run_checks(settings: Settings) -> list[Check]:
    """Every check, in the order a person would fix things: the daemon, its token, then each
    agent's (its hooks and config in each account, its command), then what serves them all."""
    broker = check_broker(settings)
    return [
        check_daemon(settings),
        *([broker] if broker else []),
        check_token(settings),
        *(
            check
            for agent in registry.all_agents()
            for account in settings.accounts_of(agent.name)
            for check in agent.installer.checks(settings, account)
        ),
        check_file_watch(),
        check_push_keys(settings),
        check_tmux(),
        *(check() for agent in registry.all_agents() if (check := agent.installer.cli)),
        check_curl(),
    ]


def report(checks: Iterable[Check], out: TextIO, colour: bool = False) -> int:
    """Print one line per check; the exit code is 1 if any required check failed."""
    failed = False
    for check in checks:
        print(check.line(colour), file=out)
        failed = failed or check.level == "fail"
    return 1 if failed else 0
