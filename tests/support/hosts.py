"""A real redis-server on a free loopback port and daemons on "several machines" sharing it."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.daemon import Daemon, fake_command, free_port, wait_for
from tests.support.hooks import send_hook

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


@dataclass
class RedisServer:
    """`redis-server` with no persistence: a restart comes back empty, as after a crash."""

    dir: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    password: str | None = None
    """`--requirepass`: clients must AUTH (the daemons read it from a file)."""

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.dir.mkdir(parents=True, exist_ok=True)
        argv = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        argv += ["--appendonly", "no", "--dir", str(self.dir)]
        if self.password:
            argv += ["--requirepass", self.password]
        with (self.dir / "redis.log").open("ab") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        wait_for(self.ping, timeout=10)
        return self

    def command(self, *args: str) -> bytes:
        """One command over a raw socket (RESP), the reply's raw bytes."""

        def wire(*words: str) -> bytes:
            parts = "".join(f"${len(w.encode())}\r\n{w}\r\n" for w in words)
            return f"*{len(words)}\r\n{parts}".encode()

        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
            if self.password:
                s.sendall(wire("AUTH", self.password))
                s.recv(1024)
            s.sendall(wire(*args))
            return s.recv(65536)

    def ping(self) -> bool:
        try:
            return self.command("PING").startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)


def host_daemon(base: Path, name: str, redis: RedisServer, **env: str) -> Daemon:
    """A daemon as if on its own machine: own home, own Claude dir, named `name`."""
    extra = {
        "PURPLEMUX_BROKER": redis.url,
        "PURPLEMUX_HOST_NAME": name,
        "PURPLEMUX_HEARTBEAT_TTL": "1.5",
    }
    extra.update(env)
    (base / name).mkdir(parents=True, exist_ok=True)
    return Daemon(home=base / name / "home", claude_dir=base / name / "claude", env_extra=extra)


BOOT = 90.0
"""Seconds a daemon may take to answer /api/health (a loaded 2-core CI box takes tens)."""


def boot(d: Daemon) -> Daemon:
    """Daemon.start with a bound for a busy machine."""
    return d.start(timeout=BOOT, interval=0.1)


def start_all(daemons: list[Daemon]) -> list[Daemon]:
    """Start daemons side by side (each takes seconds to boot on a busy machine)."""
    with ThreadPoolExecutor(len(daemons)) as pool:
        return list(pool.map(boot, daemons))


def start_hosts(daemons: list[Daemon], base: Path, redis: RedisServer, *names: str) -> list[Daemon]:
    """Daemons NAMES on one Redis, added to DAEMONS (stopped at the test's end), each connected."""
    out = [host_daemon(base, name, redis) for name in names]
    daemons.extend(out)
    start_all(out)
    for d in out:
        wait_for(lambda d=d: health(d)["broker"]["state"] == "connected", timeout=30)
    return out


def stop_all(daemons: list[Daemon]) -> None:
    """SIGTERM every daemon, then wait; one that hangs is killed, never left running."""
    for d in daemons:
        if d.proc and d.proc.poll() is None:
            d.proc.send_signal(signal.SIGTERM)
    hung: list[str] = []
    for d in daemons:  # every one waited for (or killed) before a hang is reported
        if d.proc is None:
            continue
        try:
            d.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            d.proc.kill()
            d.proc.wait(timeout=10)
            hung.append(d.logs()[-2000:])
    if hung:
        raise AssertionError(f"{len(hung)} daemon(s) did not stop on SIGTERM: {hung}")


def post_hook(d: Daemon, payload: dict[str, Any], pane: str | None = None) -> None:
    """One hook event through the hooks API, with the headers the hook script sends."""
    event_id = f"test:{uuid.uuid4().hex}"
    status = send_hook(
        d.url, d.token, payload, event_id, pane=pane, tmux="/tmp/tmux-test/default,1,0"
    )
    assert status == 202


def hook(name: str, sid: str, cwd: str = "/home/dev/proj", **extra: Any) -> dict[str, Any]:
    return {"session_id": sid, "hook_event_name": name, "cwd": cwd, **extra}


def health(d: Daemon) -> dict[str, Any]:
    with urllib.request.urlopen(d.url + "/api/health", timeout=2) as r:
        return dict(json.loads(r.read()))


def row(d: Daemon, sid: str) -> dict[str, Any] | None:
    """The session as this daemon lists it (its own or another host's)."""
    return next((s for s in d.sessions() if s["id"] == sid), None)


def fake_notify_send(bin_dir: Path, record: Path) -> str:
    """A `notify-send` that appends its title and body to `record`; returns a PATH using it."""
    return fake_command(
        bin_dir, "notify-send", f'shift 3\nprintf "%s|%s\\n" "$1" "$2" >> "{record}"\n'
    )


def forged_row(sid: str, **fields: Any) -> dict[str, Any]:
    """A session row as a host publishes it (model.Session.to_json), with `fields` over it."""
    from purplemux.core.model import Session, State

    now = time.time()
    data = Session(id=sid, state=State.IDLE, state_since=now, seq=1, updated_at=now).to_json()
    data.update(fields)
    if isinstance(data.get("cwd"), str) and "project" not in fields:
        data["project"] = data["cwd"].rstrip("/").rsplit("/", 1)[-1]
    return data


def forge(redis: RedisServer, host: str, rows: dict[str, Any], stream: bool = False) -> None:
    """Write rows straight into the broker as anyone who can write to the Redis can: into
    `host`'s hash (each value JSON-encoded unless already a string), naming the host and making
    it beat; `stream`: also one change entry per row, then a `sync` telling others to reload."""
    import redis as redis_lib

    client = redis_lib.Redis(host="127.0.0.1", port=redis.port, password=redis.password)
    try:
        pipe = client.pipeline(transaction=False)
        texts = {k: v if isinstance(v, str) else json.dumps(v) for k, v in rows.items()}
        for n in range(0, len(texts), 1000):
            chunk = dict(list(texts.items())[n : n + 1000])
            pipe.hset(f"purplemux:host:{host}:sessions", mapping=chunk)  # type: ignore[arg-type]
        pipe.sadd("purplemux:hosts", host)
        pipe.set(f"purplemux:host:{host}:alive", repr(time.time()), ex=3600)
        if stream:
            for sid, text in texts.items():
                entry = {"host": host, "kind": "session", "id": sid, "data": text, "notify": "0"}
                pipe.xadd("purplemux:changes", entry)  # type: ignore[arg-type]
        pipe.xadd("purplemux:changes", {"host": host, "kind": "sync"})
        pipe.execute()
    finally:
        client.close()
