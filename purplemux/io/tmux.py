"""Every tmux call: the one runner (spawn, timeout, reap) and what reads or acts on a pane.

run(), run_all() and run_blocking() are the only ways the daemon, its sources and the CLI run
a tmux command; spawn_control() and reap() start and end the control clients
(tmux_control.py). Each call runs `tmux -S <socket>` for the pane's own server (the default
server when the socket is unknown), off the event loop, with a timeout. Nothing here knows
about Claude; the prompt recogniser (prompts.py) reads what `capture` returns, the API decides
which keys to send.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from purplemux.core.model import TmuxLocation
from purplemux.core.termtext import clean

TIMEOUT = 3.0
"""Seconds one tmux call may take."""


class TmuxError(RuntimeError):
    """tmux is missing, the server or pane is gone, or tmux did not answer."""


def plain(text: str) -> str:
    """A pane's text safe to show anywhere (termtext.clean, its lines kept), trailing blanks of
    each line dropped."""
    return "\n".join(line.rstrip() for line in clean(text, lines=True).split("\n"))


def base_args(socket: str | None, tmux: str = "tmux") -> list[str]:
    """`tmux`, pointed at the pane's own server."""
    return [tmux, "-S", socket] if socket else [tmux]


Command = Sequence[str]
"""One tmux command and its arguments (`set-option`, `-p`, ...), without `tmux -S socket`."""


def _literal(arg: str) -> str:
    """An argument tmux's argv parser keeps as it is: a trailing `;` ends a command there, so
    it is escaped (`x;` -> `x\\;`, which tmux reads back as `x;`)."""
    return arg[:-1] + "\\;" if arg.endswith(";") else arg


def command_line(commands: Sequence[Command]) -> list[str]:
    """Several commands as one tmux argv, separated by tmux's own `;` (never a value's)."""
    out: list[str] = []
    for n, cmd in enumerate(commands):
        if n:
            out.append(";")
        out += [_literal(a) for a in cmd]
    return out


async def run(socket: str | None, *args: str, timeout: float = TIMEOUT, tmux: str = "tmux") -> str:
    """Run one tmux command on that server; its stdout, or TmuxError with tmux's reason.

    The one place a tmux process is spawned, waited for within `timeout`, and reaped: killed
    and waited for when it hangs or its caller is cancelled (which is re-raised)."""
    argv = [*base_args(socket, tmux), *args]
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        raise TmuxError(f"cannot run tmux: {exc}") from None
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except (TimeoutError, asyncio.CancelledError) as exc:
        await reap(proc)
        if isinstance(exc, asyncio.CancelledError):
            raise  # the caller is being stopped: not a tmux error to handle and go on from
        raise TmuxError(f"tmux {_name(args)} did not answer within {timeout:.0f}s") from None
    if proc.returncode != 0:
        reason = err.decode(errors="replace").strip() or f"exit {proc.returncode}"
        raise TmuxError(f"tmux {_name(args)}: {reason}")
    return out.decode(errors="replace")


async def start_server(
    socket: str, *args: str, timeout: float = TIMEOUT, tmux: str = "tmux"
) -> None:
    """Run a tmux command that may start that server (`new-session`) with no config file; its
    output is not read: a server it starts keeps the pipes it was given open for its whole
    life. TmuxError when it fails or hangs (then it is killed and reaped)."""
    argv = [tmux, "-f", os.devnull, "-S", socket, *args]
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError as exc:
        raise TmuxError(f"cannot run tmux: {exc}") from None
    try:
        code = await asyncio.wait_for(proc.wait(), timeout)
    except (TimeoutError, asyncio.CancelledError) as exc:
        await reap(proc)
        if isinstance(exc, asyncio.CancelledError):
            raise
        raise TmuxError(f"tmux {_name(args)} did not answer within {timeout:.0f}s") from None
    if code != 0:
        raise TmuxError(f"tmux {_name(args)}: exit {code}")


async def run_all(
    socket: str | None, commands: Sequence[Command], timeout: float = TIMEOUT, tmux: str = "tmux"
) -> None:
    """Run several commands in one tmux process (joined by `;`); TmuxError if any fails."""
    await run(socket, *command_line(commands), timeout=timeout, tmux=tmux)


def run_blocking(
    socket: str | None, *args: str, timeout: float = TIMEOUT, tmux: str = "tmux"
) -> str:
    """run(), for code already off the event loop (a poll in a thread, the CLI, doctor)."""
    argv = [*base_args(socket, tmux), *args]
    try:
        done = subprocess.run(
            argv, capture_output=True, stdin=subprocess.DEVNULL, timeout=timeout, check=False
        )  # subprocess.run kills and reaps the child on a timeout
    except subprocess.TimeoutExpired:
        raise TmuxError(f"tmux {_name(args)} did not answer within {timeout:.0f}s") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise TmuxError(f"cannot run tmux: {exc}") from None
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}"
        raise TmuxError(f"tmux {_name(args)}: {reason}")
    return done.stdout.decode("utf-8", "replace")


async def spawn_control(socket: str, tmux: str = "tmux") -> asyncio.subprocess.Process:
    """A control-mode client (`tmux -C`) attached to that server, its stdin and stdout piped;
    end it with reap(). OSError if tmux cannot be run."""
    return await asyncio.create_subprocess_exec(
        *base_args(socket, tmux),
        "-C",
        "attach-session",
        "-f",
        "ignore-size,no-output",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,  # our signals (Ctrl-C on serve) are not its
    )


async def reap(proc: asyncio.subprocess.Process, grace: float = 0.0) -> None:
    """End a tmux process and wait for it, so no process or pipe outlives us: its stdin closed,
    `grace` seconds to exit, then killed. Shielded: a second cancellation cannot leave it
    unreaped (and a kill is answered at once)."""
    if proc.stdin is not None:
        with contextlib.suppress(Exception):
            proc.stdin.close()
    if grace > 0 and proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        with contextlib.suppress(Exception):
            await asyncio.shield(asyncio.wait_for(proc.wait(), grace))
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    with contextlib.suppress(Exception):
        await asyncio.shield(proc.communicate())


def _name(args: Sequence[str]) -> str:
    return args[0] if args else "tmux"


async def capture(loc: TmuxLocation) -> str:
    """The pane's visible text, plain."""
    return plain(await run(loc.socket, "capture-pane", "-p", "-t", loc.pane))


async def send_keys(loc: TmuxLocation, *keys: str) -> None:
    """Press tmux keys ("Enter", "Down", "Escape", "BTab", ...) in the pane."""
    await run(loc.socket, "send-keys", "-t", loc.pane, *keys)


async def send_text(loc: TmuxLocation, text: str) -> None:
    """Type text literally (no key names), without Enter."""
    await run(loc.socket, "send-keys", "-t", loc.pane, "-l", "--", text)


@dataclass(frozen=True, slots=True)
class Client:
    """An attached tmux client."""

    name: str
    activity: int
    session: str


async def clients(socket: str | None) -> list[Client]:
    """The people's clients attached to that server, most recently active first.

    Control-mode clients (the daemon's own, tmux_control.py) are left out: nobody looks at them.
    """
    fmt = "#{client_name}\t#{client_activity}\t#{client_session}\t#{client_control_mode}"
    try:
        out = await run(socket, "list-clients", "-F", fmt)
    except TmuxError:
        return []
    found: list[Client] = []
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) == 4 and parts[1].isdigit() and parts[3] != "1":
            found.append(Client(parts[0], int(parts[1]), parts[2]))
    return sorted(found, key=lambda c: -c.activity)


@dataclass(frozen=True, slots=True)
class Focused:
    """What focus() did: the pane's window and session, and the client switched (if any)."""

    pane: str
    window: str
    session: str
    client: str | None


async def focus(loc: TmuxLocation, client: str | None = None) -> Focused:
    """Bring the pane to the front of its own server: its window becomes its session's current
    window and the pane the window's active one; then switch a client there (the one named, if
    attached to this server, else the most recently active one), across tmux sessions."""
    where = await run(
        loc.socket, "display-message", "-p", "-t", loc.pane, "#{window_id}\t#{session_id}"
    )
    window, _, session = where.strip().partition("\t")
    await run(loc.socket, "select-window", "-t", loc.pane)
    await run(loc.socket, "select-pane", "-t", loc.pane)
    attached = await clients(loc.socket)
    chosen = next((c for c in attached if c.name == client), None) if client else None
    if chosen is None and attached:
        chosen = attached[0]
    if chosen is not None:
        await run(loc.socket, "switch-client", "-c", chosen.name, "-t", loc.pane)
    return Focused(loc.pane, window, session, chosen.name if chosen else None)
