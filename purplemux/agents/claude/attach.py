"""`claude attach <job>` windows: a background session's screen, for answering and for Jump.

A session started with `claude --bg` (or in the agent view) runs in a pty of Claude's own
daemon: no tmux pane to read or type into. `claude attach <job>` shows that pty's screen and
sends keys to it; Ctrl+Z detaches and the session keeps running (verified on 2.1.332,
../shared/claude-code-bg-and-limits.md, A). So to read or answer its prompt the daemon opens
one in a tmux session of its own, on a private tmux server (a socket under PURPLEMUX_HOME,
started with no config file: the user's tmux is not touched), and closes it afterwards (Ctrl+Z,
then the tmux session is killed). The answering desk's checks then apply to that pane as to any.

The attach runs with the session's own config: HOME and CLAUDE_CONFIG_DIR as the worker has
them (its /proc environ), else as the daemon's config dir says (`~/.claude`: that HOME and no
CLAUDE_CONFIG_DIR; any other folder: CLAUDE_CONFIG_DIR, where Claude then reads .claude.json).
The binary is the worker's own (/proc/<pid>/exe), else `claude` on PATH.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from purplemux.agents import base
from purplemux.agents.facts import CLAUDE
from purplemux.core.model import Session, TmuxLocation
from purplemux.io import tmux
from purplemux.io.proctable import environ
from purplemux.io.settings import Settings

log = logging.getLogger(__name__)

SOCKET = "attach.sock"
"""The private tmux server's socket, in PURPLEMUX_HOME."""
WIDTH, HEIGHT = 200, 50
DRAW_TIMEOUT = 8.0
"""Seconds to wait for an attach to draw the session's screen."""
DETACH_TIMEOUT = 3.0
KEEP_OPEN = 120.0
"""Seconds an attach window opened for a read stays open with no answer (then closed)."""
POLL = 0.1
JOB_ID = re.compile(r"^[0-9A-Za-z][0-9A-Za-z_-]{0,63}$")
"""A job id as Claude makes them (8 hex digits); never one that reads as an option."""
ENV_KEYS = ("HOME", "CLAUDE_CONFIG_DIR")


class AttachError(base.AttachError):
    """An attach window could not be opened (no job, tmux or claude refused)."""


def needs_attach(session: Session) -> bool:
    """A background session with no pane of its own: read and typed into through an attach."""
    return session.background and session.tmux is None and not session.ended


def _environ(pid: int | None) -> dict[str, str] | None:
    """HOME and CLAUDE_CONFIG_DIR of a running process (Linux /proc; None when unreadable)."""
    if pid is None:
        return None
    found = environ(pid, ENV_KEYS) or {}
    out = {name: value.decode("utf-8", "surrogateescape") for name, value in found.items()}
    return out if "HOME" in out else None


def session_env(worker: dict[str, str] | None, claude_dir: Path) -> tuple[dict[str, str], bool]:
    """(variables to set, whether to unset CLAUDE_CONFIG_DIR) for an attach to the session."""
    if worker is not None:
        keep = {k: v for k, v in worker.items() if k in ENV_KEYS}
        return keep, "CLAUDE_CONFIG_DIR" not in keep
    if claude_dir.name == ".claude":
        return {"HOME": str(claude_dir.parent)}, True
    return {"CLAUDE_CONFIG_DIR": str(claude_dir)}, False


def claude_binary(pid: int | None) -> str:
    """The worker's own executable (the same Claude), else `claude` on PATH."""
    if pid is not None:
        with contextlib.suppress(OSError):
            exe = os.readlink(f"/proc/{pid}/exe")
            if os.path.basename(exe).startswith("claude") and os.access(exe, os.X_OK):
                return exe
    return "claude"


def attach_command(session: Session, claude_dir: Path) -> list[str]:
    """argv of the attach for a background session (env sets its HOME / config dir)."""
    job = session.job_id or ""
    if not JOB_ID.match(job):
        raise AttachError("this session has no background job to attach to")
    values, unset = session_env(_environ(session.pid), claude_dir)
    argv = ["env"]
    if unset:
        argv += ["-u", "CLAUDE_CONFIG_DIR"]
    argv += [f"{k}={v}" for k, v in sorted(values.items())]
    return [*argv, claude_binary(session.pid), "attach", job]


Run = Callable[..., Awaitable[str]]


@dataclass
class Attacher:
    """The daemon's attach windows: one per job, on its private tmux server."""

    home: Path
    claude_dir: Path
    dir_of: Callable[[Session], Path] | None = None
    """The config dir of a session's account (several Claude accounts); else claude_dir."""
    run: Run = tmux.run
    start: Callable[..., Awaitable[None]] = tmux.start_server
    keep_open: float = KEEP_OPEN
    _open: dict[str, TmuxLocation] = field(default_factory=dict)
    _timers: dict[str, asyncio.TimerHandle] = field(default_factory=dict)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def socket(self) -> str:
        return str(self.home / SOCKET)

    async def open(self, session: Session) -> TmuxLocation:
        """The attach window of the session's job, opened if it is not (and drawn)."""
        where = self.dir_of(session) if self.dir_of is not None else self.claude_dir
        argv = attach_command(session, where)
        job = session.job_id or ""
        async with self._lock:
            loc = self._open.get(job)
            if loc is not None and await self._alive(loc):
                self._close_later(job)
                return loc
            self.home.mkdir(parents=True, exist_ok=True)
            name = f"job-{job}"
            with contextlib.suppress(tmux.TmuxError):
                await self.run(self.socket, "kill-session", "-t", f"={name}")
            out = await self._start(name, argv)
            pane = out.strip()
            if not pane.startswith("%"):
                raise AttachError(f"tmux gave no pane for the attach: {pane[:100]!r}")
            loc = TmuxLocation(pane=pane, socket=self.socket, session=name)
            self._open[job] = loc
            self._close_later(job)
        await self._drawn(loc)
        return loc

    @asynccontextmanager
    async def shown(self, session: Session) -> AsyncIterator[Session]:
        """The session where the desk reads and types: its own pane, else (a background
        session) its attach window, whose program in front is the attach (the worker runs
        elsewhere: no pid), detached (Ctrl+Z) and closed afterwards. One way to a screen for
        answers and for resume at the reset, so both go through the same checks."""
        if not needs_attach(session):
            yield session
            return
        loc = await self.open(session)
        try:
            yield replace(session, tmux=loc, pid=None)
        finally:
            await self.close(session.job_id or "")

    async def _start(self, name: str, argv: list[str]) -> str:
        """Start the attach in a tmux session of its own (the server with no config file)."""
        size = ["-x", str(WIDTH), "-y", str(HEIGHT)]
        try:
            await self.start(self.socket, "new-session", "-d", "-s", name, *size, "--", *argv)
        except tmux.TmuxError as exc:
            raise AttachError(f"tmux could not start the attach: {exc}") from None
        return await self.run(self.socket, "list-panes", "-t", f"={name}", "-F", "#{pane_id}")

    async def _alive(self, loc: TmuxLocation) -> bool:
        try:
            dead = await self.run(
                loc.socket, "display-message", "-p", "-t", loc.pane, "#{pane_dead}"
            )
        except tmux.TmuxError:
            return False
        return dead.strip() == "0"

    async def _drawn(self, loc: TmuxLocation) -> None:
        """Until the attach shows more than a blank screen and the same screen twice in a row
        (or DRAW_TIMEOUT). The attach replays the worker's screen in pieces: a dialog read
        half drawn has another id than the whole one, and its answer would be refused as a
        prompt that changed."""
        deadline = time.monotonic() + DRAW_TIMEOUT
        last: str | None = None
        while time.monotonic() < deadline:
            try:
                text = await tmux.capture(loc)
            except tmux.TmuxError:
                return
            if len(text.split()) > 3 and text == last:
                return
            last = text
            await asyncio.sleep(POLL)

    def _close_later(self, job: str) -> None:
        timer = self._timers.pop(job, None)
        if timer is not None:
            timer.cancel()
        loop = asyncio.get_running_loop()
        self._timers[job] = loop.call_later(
            self.keep_open, lambda: loop.create_task(self.close(job))
        )

    async def close(self, job: str) -> None:
        """Detach (Ctrl+Z: the session keeps running) and close the job's window."""
        timer = self._timers.pop(job, None)
        if timer is not None:
            timer.cancel()
        loc = self._open.pop(job, None)
        if loc is None:
            return
        try:
            await self.run(loc.socket, "send-keys", "-t", loc.pane, "C-z")
            deadline = time.monotonic() + DETACH_TIMEOUT
            while time.monotonic() < deadline and await self._alive(loc):
                await asyncio.sleep(POLL)
            if loc.session:
                with contextlib.suppress(tmux.TmuxError):
                    await self.run(loc.socket, "kill-session", "-t", f"={loc.session}")
        except tmux.TmuxError as exc:
            log.info("closing the attach of job %s: %s", job, exc)

    async def shutdown(self) -> None:
        """The daemon stops: detach every attach (Ctrl+Z) and end the private tmux server."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for loc in self._open.values():
            with contextlib.suppress(tmux.TmuxError):
                await self.run(loc.socket, "send-keys", "-t", loc.pane, "C-z")
        if self._open:
            self._open.clear()
            with contextlib.suppress(tmux.TmuxError):
                await self.run(self.socket, "kill-server")


async def jump(session: Session, claude_dir: Path, client: str | None, socket: str | None) -> str:
    """Open an attach window for the session in the user's tmux (the client's current session,
    else the default server's), and show it; returns its pane id."""
    argv = attach_command(session, claude_dir)
    target: list[str] = []
    if client:
        where = await tmux.run(socket, "display-message", "-p", "-c", client, "#{session_id}")
        if where.strip():
            target = ["-t", where.strip()]
    out = await tmux.run(
        socket,
        "new-window",
        *target,
        "-n",
        f"bg {session.job_id}",
        "-P",
        "-F",
        "#{pane_id}",
        "--",
        *argv,
    )
    pane = out.strip()
    if client:
        with contextlib.suppress(tmux.TmuxError):
            await tmux.run(socket, "switch-client", "-c", client, "-t", pane)
    return pane


def attacher(settings: Settings) -> Attacher:
    """The daemon's attach windows, in its home, each in its session's account's config dir."""
    return Attacher(
        settings.home,
        settings.claude_dir,
        dir_of=lambda s: settings.account_dir(CLAUDE.name, s.account),
    )


async def jump_from(
    session: Session, settings: Settings, client: str | None, socket: str | None
) -> str:
    """`jump` with the config dir of the session's account."""
    return await jump(session, settings.account_dir(CLAUDE.name, session.account), client, socket)
