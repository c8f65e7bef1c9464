"""One tmux control-mode client (`tmux -C`) per tmux server: its changes, and our writes.

Instead of a `tmux list-panes` poll and a `tmux set-option` process per change, the daemon keeps
one control client attached to each server it knows (`attach-session -f ignore-size,no-output`:
it never sizes a window and gets no pane output). tmux tells it when windows and panes come and
go (`%layout-change`, `%window-close`, `%unlinked-window-close`, `%sessions-changed`, ...), which
wakes the process poller, and its stdin takes commands such as the pane marker's `set-option`,
each answered by a `%begin`/`%end` (or `%error`) block in order (verified on tmux 3.3a).

A client also holds subscriptions (`refresh-client -B name::format`, tmux 3.2+): tmux expands
the format once a second in its own process and sends `%subscription-changed name … : value`
only when the value changed, so a watch on some panes' titles costs the daemon nothing while
they stay the same. A session-wide format sees only the client's own session, but one that
loops over every session (`#{S:#{W:#{P:…}}}`) sees every pane of the server (tmux 3.3a).

A server that is not running, or a tmux without control mode, leaves `command()` answering None:
the caller then runs a tmux process as before.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import re
from collections import deque
from collections.abc import Callable, Sequence

from purplemux.io.log_once import RateLimitedLog
from purplemux.io.tmux import Command, reap, spawn_control

log = logging.getLogger(__name__)

WAKE_ON = frozenset(
    {
        "%layout-change",
        "%window-add",
        "%window-close",
        "%unlinked-window-add",
        "%unlinked-window-close",
        "%sessions-changed",
        "%session-changed",
        "%window-pane-changed",
    }
)
"""Notifications that may mean a pane appeared, closed or moved."""
SUBSCRIPTION = "%subscription-changed"
"""A subscribed format's value changed: `%subscription-changed name $s @w i %p : value`."""
RETRY_FIRST = 1.0
RETRY_MAX = 60.0
"""Seconds before connecting again to a server that was not there, doubling up to the max."""
COMMAND_TIMEOUT = 2.0
MAX_REPLY_LINES = 10_000
"""Lines kept of one reply: a `list-panes -a` of a very big server, an error's reason."""
Reply = tuple[bool, list[str]]
"""tmux's answer to one command: taken (%end) or not (%error), and the lines it printed."""
_SAFE = re.compile(r"[A-Za-z0-9_@%.:/+=-]*")


def quote(arg: str) -> str:
    """One argument in tmux's command syntax (single quotes; no newline can get through)."""
    if arg and _SAFE.fullmatch(arg) and not arg.startswith("%%"):
        return arg
    return "'" + arg.replace("'", "'\\''").replace("\n", " ") + "'"


class ControlClient:
    """A `tmux -S socket -C attach-session` client; reconnects with backoff while wanted."""

    def __init__(
        self, socket: str, on_notify: Callable[[str], None], *, tmux: str = "tmux"
    ) -> None:
        self.socket = socket
        self._on_notify = on_notify
        self._tmux = tmux
        self._proc: asyncio.subprocess.Process | None = None
        self._pending: deque[tuple[asyncio.Future[Reply], str]] = deque()
        """A future per command sent and its name, answered in order by tmux's replies."""
        self._connected = asyncio.Event()
        self._kick = asyncio.Event()
        self.errors = RateLimitedLog(log, interval=60.0)
        """tmux's `%error` replies, one line per kind a minute (a closed pane repeats)."""
        self._subs: dict[str, str] = {}
        """The subscriptions wanted (name -> format), sent again at every attachment."""
        self._taken: set[str] = set()
        """The subscriptions tmux took on this attachment."""

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def kick(self) -> None:
        """Try to connect now rather than at the next retry (someone names this server)."""
        self._kick.set()

    async def run(self) -> None:
        """Stay attached while the server runs; wait and retry while it does not."""
        pause = RETRY_FIRST
        while True:
            self._kick.clear()
            if await self._session():
                pause = RETRY_FIRST  # it was attached until now: look again soon
            # (call_later, not wait_for: on 3.11 wait_for can swallow our cancellation)
            timer = asyncio.get_running_loop().call_later(pause, self._kick.set)
            try:
                await self._kick.wait()
            finally:
                timer.cancel()
            pause = min(pause * 2, RETRY_MAX)

    async def _session(self) -> bool:
        """One attachment, until tmux ends it; True if it got as far as attaching."""
        if not os.path.exists(self.socket):
            return False
        try:
            proc = await spawn_control(self.socket, self._tmux)
        except OSError as exc:
            log.debug("cannot run tmux: %s", exc)
            return False
        self._proc = proc
        attached = False
        try:
            assert proc.stdout is not None
            in_block = False
            ours = False
            said: list[str] = []
            while line := await proc.stdout.readline():
                text = line.decode("utf-8", "replace").rstrip("\n")
                if in_block:
                    if text.startswith(("%end ", "%error ")):
                        in_block = False
                        ok = text.startswith("%end ")
                        if ours and self._pending:
                            fut, what = self._pending.popleft()
                            if not ok:
                                self._refused(what, said)
                            if not fut.done():
                                fut.set_result((ok, said))
                        elif not ours and not attached and text.startswith("%end "):
                            attached = True  # the attach itself succeeded
                            self._connected.set()
                            log.debug("tmux control client attached to %s", self.socket)
                            for name, fmt in self._subs.items():
                                self._ask(name, fmt)
                    elif len(said) < MAX_REPLY_LINES:
                        said.append(text)  # the reply's text (an error's reason, a query's lines)
                    continue
                if text.startswith("%begin "):
                    in_block = True
                    said = []
                    # The flags field: 1 for a command this client sent (0: the attach itself).
                    ours = text.rsplit(" ", 1)[-1] == "1"
                    continue
                if text.startswith("%exit"):
                    break
                word = text.split(" ", 1)[0]
                if word in WAKE_ON or word == SUBSCRIPTION:
                    self._on_notify(text)
        finally:
            self._connected.clear()
            self._taken.clear()
            self._proc = None
            while self._pending:
                fut, _ = self._pending.popleft()
                if not fut.done():
                    fut.set_result((False, []))
            await reap(proc, grace=0.5)
            if attached:
                self._on_notify("%exit")  # the server or our session ended: look again
        return attached

    def _refused(self, what: str, said: list[str]) -> None:
        """tmux answered a command of ours with `%error`: say so (a write that fails for ever
        would otherwise freeze what it shows without a word)."""
        reason = " / ".join(said) or "no reason given"
        self.errors.log(
            (what, reason[:80]),
            logging.WARNING,
            "tmux on %s refused %s: %s",
            self.socket,
            what,
            reason,
        )

    async def command(self, args: Command) -> bool | None:
        """Run one tmux command through this client: True/False as tmux answers, None if not
        attached (the caller runs a process instead)."""
        return await self.commands([args])

    async def commands(self, commands: Sequence[Command]) -> bool | None:
        """Run several commands through this client, one line each (so one reply each, in
        order): True if tmux took them all, False if it refused one or did not answer, None
        if not attached (the caller runs a process instead)."""
        replies = await self._send(commands)
        return None if replies is None else all(ok for ok, _ in replies)

    async def query(self, args: Command) -> list[str] | None:
        """Run one command and return the lines it printed (e.g. `list-panes -F`); None if not
        attached, refused or unanswered (the caller runs a process instead)."""
        replies = await self._send([args])
        if not replies or not replies[0][0]:
            return None
        return replies[0][1]

    def subscribe(self, name: str, fmt: str | None) -> None:
        """Keep a subscription to `fmt` under `name` (None: drop it), on this attachment and
        every later one; its changes come to `on_notify` as `%subscription-changed` lines."""
        if fmt is None:
            if self._subs.pop(name, None) is None:
                return
        elif self._subs.get(name) == fmt:
            return
        else:
            self._subs[name] = fmt
        self._taken.discard(name)
        if self._connected.is_set():
            self._ask(name, fmt)

    def subscribed(self, name: str) -> bool:
        """Whether tmux took that subscription on the current attachment (a tmux before 3.2
        refuses it: the caller keeps looking on a timer)."""
        return self._connected.is_set() and name in self._taken

    def _ask(self, name: str, fmt: str | None) -> None:
        futures = self._write([["refresh-client", "-B", name if fmt is None else f"{name}::{fmt}"]])

        def answered(fut: asyncio.Future[Reply]) -> None:
            if fmt is not None and fut.result()[0] and self._subs.get(name) == fmt:
                self._taken.add(name)

        if futures:
            futures[0].add_done_callback(answered)

    def _write(self, commands: Sequence[Command]) -> list[asyncio.Future[Reply]] | None:
        """Send commands, one line each; a future per command for its reply (None: not sent)."""
        proc = self._proc
        if proc is None or proc.stdin is None or not self._connected.is_set():
            return None
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[Reply]] = []
        text = ""
        for args in commands:
            fut: asyncio.Future[Reply] = loop.create_future()
            futures.append(fut)
            self._pending.append((fut, args[0] if args else ""))
            text += " ".join(quote(a) for a in args) + "\n"
        try:
            proc.stdin.write(text.encode())
        except (ConnectionError, RuntimeError):
            for _ in futures:  # never sent: no reply will come for them
                self._pending.pop()
            return None
        return futures

    async def _send(self, commands: Sequence[Command]) -> list[Reply] | None:
        futures = self._write(commands)
        if futures is None:
            return None
        # tmux answers in order: once the last command's reply is in, every one's is. One
        # waiter and one timer for the lot (a pane's mark is a command per change of state;
        # gather, shield and a timeout context cost more than the reply's reading). A caller
        # that is cancelled leaves the replies to be read and dropped, in their order.
        last = futures[-1]
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()

        def wake(_: object = None) -> None:
            if not waiter.done():
                waiter.set_result(None)

        last.add_done_callback(wake)
        timer = loop.call_later(COMMAND_TIMEOUT, wake)
        try:
            await waiter
        finally:
            timer.cancel()
            last.remove_done_callback(wake)
        if not last.done():
            return [(False, [])]
        return [f.result() for f in futures]


class TmuxControl:
    """The daemon's control clients, one per tmux server socket, and who wants to hear of them."""

    def __init__(self, *, default_socket: str | None = None, tmux: str = "tmux") -> None:
        self._default_socket = default_socket or os.path.join(
            "/tmp", f"tmux-{os.getuid()}", "default"
        )
        """The default server's socket: the daemon passes Settings.tmux_default_socket (which
        follows TMUX_TMPDIR); without it, tmux's own default when TMUX_TMPDIR is unset."""
        self._tmux = tmux
        self.clients: dict[str, ControlClient] = {}
        self._listeners: list[Callable[[str, str], None]] = []
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._new = asyncio.Event()

    def key(self, socket: str | None) -> str:
        return socket or self._default_socket

    def want(self, socket: str | None) -> ControlClient:
        """Keep a client on this server (None: the default one); returns it."""
        key = self.key(socket)
        client = self.clients.get(key)
        if client is None:
            client = ControlClient(key, functools.partial(self._notify, key), tmux=self._tmux)
            self.clients[key] = client
            self._new.set()
        elif not client.connected:
            client.kick()
        return client

    def _notify(self, socket: str, line: str) -> None:
        for listener in list(self._listeners):
            try:
                listener(socket, line)
            except Exception:
                log.exception("tmux notification listener failed")

    def listen(self, listener: Callable[[str, str], None]) -> Callable[[], None]:
        """Hear (socket, notification line) from every client; returns the way to stop."""
        self._listeners.append(listener)

        def unlisten() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unlisten

    async def command(self, socket: str | None, args: Command) -> bool | None:
        """Run a tmux command on that server through its client; None if none is attached."""
        return await self.want(socket).command(args)

    async def commands(self, socket: str | None, commands: Sequence[Command]) -> bool | None:
        """Run several tmux commands on that server through its client (one line each); None if
        none is attached."""
        return await self.want(socket).commands(commands)

    async def query(self, socket: str | None, args: Command) -> list[str] | None:
        """A command's printed lines through that server's client; None if none is attached."""
        return await self.want(socket).query(args)

    def subscribe(self, socket: str | None, name: str, fmt: str | None) -> None:
        """Keep a subscription on that server's client (None: drop it); see ControlClient. A
        client is made for it if none is kept yet, but none is kicked to connect again (the
        Codex watcher asks at every look)."""
        client = self.clients.get(self.key(socket))
        if client is None:
            if fmt is None:
                return
            client = self.want(socket)
        client.subscribe(name, fmt)

    def subscribed(self, socket: str | None, name: str) -> bool:
        client = self.clients.get(self.key(socket))
        return client is not None and client.subscribed(name)

    async def run(self) -> None:
        """Run every wanted client until cancelled (then end them all), in one TaskGroup: a
        client that crashes ends the group, so whoever runs this (the supervisor) logs it and
        starts them all again; none dies unseen."""
        try:
            async with asyncio.TaskGroup() as group:
                while True:
                    for key, client in list(self.clients.items()):
                        if key not in self._tasks:
                            self._tasks[key] = group.create_task(
                                client.run(), name=f"tmux-control:{key}"
                            )
                    self._new.clear()
                    await self._new.wait()
        finally:
            self._tasks.clear()
