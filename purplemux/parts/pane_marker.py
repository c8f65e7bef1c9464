"""Mirror each session's state into its tmux pane as the pane option `@purplemux_state`, and
its name (Claude's own, else the project) as `@purplemux_name`.

tmux formats can then show it without asking the daemon: `#{@purplemux_state}` in
`pane-border-format` is the pane's own state; in `window-status-format` it is the state of the
window's active pane, and `#{P:...}` loops over all the window's panes (verified on tmux 3.3a).
See TMUX_CONF for a ready ~/.tmux.conf snippet.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from purplemux.model import Session
from purplemux.present import BY_ORDER, LOOKS, present
from purplemux.runtime import Runtime
from purplemux.tmux_status import TMUX_COLOURS, plain

log = logging.getLogger(__name__)

OPTION = "@purplemux_state"
NAME_OPTION = "@purplemux_name"
"""The session's name (control characters removed); set and cleared with the state."""
TMUX_TIMEOUT = 2.0
"""Seconds one tmux call may take; a wedged server must not hold the other panes back."""

WINDOW_MARK = (
    "#{P:"
    + "".join(
        f"#{{?#{{==:#{{{OPTION}}},{state.value}}},"
        f"#[fg={TMUX_COLOURS[LOOKS[state].colour]}]{LOOKS[state].glyph}#[default],}}"
        for state in BY_ORDER
        if LOOKS[state].attention
    )
    + "}"
)
"""A tmux format: one glyph per pane of the window that needs input (⚠) or review (●)."""

PANE_BORDER = " #P #{?#{" + OPTION + "},[#{" + OPTION + "}] #{" + NAME_OPTION + "},} "
"""A tmux format for a pane's border: its number, then `[state] name` on a Claude pane."""

TMUX_CONF = f"""\
# purplemux: counts in the status bar, refreshed every 2 seconds
set -g status-interval 2
set -g status-right '#(purplemux tmux-status --tmux-colours) %H:%M'
# a window's mark: a glyph per Claude pane in it that needs you (#{{P:}} loops over the panes)
set -g window-status-format '#I:#W{WINDOW_MARK}'
set -g window-status-current-format '#[bold]#I:#W{WINDOW_MARK}'
# each pane's own state in its border
set -g pane-border-status top
set -g pane-border-format '{PANE_BORDER}'
"""
"""A ~/.tmux.conf snippet using `purplemux tmux-status` and the `@purplemux_state` and
`@purplemux_name` pane options."""

PaneKey = tuple[str | None, str]
"""(tmux socket or None for the default server, pane id)."""
Runner = Callable[[list[str]], Awaitable[bool]]
"""Runs one tmux command line; True when tmux accepted it."""
Mark = tuple[str, str]
"""(state, name) shown on a pane."""


def tmux_args(socket: str | None, pane: str, state: str | None, name: str = "") -> list[str]:
    """The tmux command that sets (or, for None, unsets) the state and name options on one
    pane: one client call, the two commands joined by tmux's `;`."""
    base = ["tmux", "-S", socket] if socket else ["tmux"]
    if state is None:
        unset = ["set-option", "-p", "-u", "-t", pane]
        return [*base, *unset, OPTION, ";", *unset, NAME_OPTION]
    label = plain(name)
    second = (
        ["set-option", "-p", "-t", pane, NAME_OPTION, label]
        if label
        else ["set-option", "-p", "-u", "-t", pane, NAME_OPTION]
    )
    return [*base, "set-option", "-p", "-t", pane, OPTION, state, ";", *second]


async def run_tmux(args: list[str]) -> bool:
    """Run one tmux command off the event loop; never raises, kills it if it hangs or we stop."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:  # no tmux on PATH: the daemon works without it
        log.debug("cannot run tmux: %s", exc)
        return False
    try:
        _, err = await asyncio.wait_for(proc.communicate(), TMUX_TIMEOUT)
    except TimeoutError:
        log.debug("%s: no answer within %.0fs", " ".join(args), TMUX_TIMEOUT)
        await _reap(proc)
        return False
    except asyncio.CancelledError:
        await _reap(proc)  # the daemon is stopping: leave no tmux client behind
        raise
    if proc.returncode != 0:
        # A pane that closed, a server that exited: normal churn, not worth more than debug.
        log.debug("%s: %s", " ".join(args[-4:]), err.decode(errors="replace").strip())
        return False
    return True


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Kill a tmux client and wait for it, so no process or pipe outlives us."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    with contextlib.suppress(Exception):
        # Shielded: a second cancellation must not leave the child unreaped.
        await asyncio.shield(proc.communicate())


class PaneMarker:
    """Keeps `@purplemux_state` on each session's pane; bursts collapse to the latest state."""

    def __init__(self, runner: Runner = run_tmux) -> None:
        self._runner = runner
        self._pending: dict[PaneKey, Mark | None] = {}
        self._applied: dict[PaneKey, Mark] = {}
        self._owner: dict[PaneKey, str] = {}
        self._wake = asyncio.Event()

    def on_change(self, session: Session) -> None:
        """Engine listener: note the pane's new state; the worker applies it soon after."""
        if session.tmux is None or not session.tmux.pane:
            return
        key: PaneKey = (session.tmux.socket, session.tmux.pane)
        if session.ended:
            # After /clear a new session owns the pane: the old one's end must not wipe its mark.
            if self._owner.get(key, session.id) != session.id:
                return
            self._owner.pop(key, None)
            self._pending[key] = None
        else:
            self._owner[key] = session.id
            view = present(session)
            self._pending[key] = (view.state, view.name)
        self._wake.set()

    async def run(self) -> None:
        """Apply pending marks until cancelled."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch, self._pending = self._pending, {}
            for key, mark in batch.items():
                if mark is not None and self._applied.get(key) == mark:
                    continue  # a tool update in the same state: tmux already shows it
                state, name = mark if mark is not None else (None, "")
                try:
                    ok = await self._runner(tmux_args(key[0], key[1], state, name))
                except Exception:
                    log.debug("tmux call for %s failed", key, exc_info=True)
                    ok = False
                if ok and mark is not None:
                    self._applied[key] = mark
                else:
                    # Unset, or the pane, server or tmux is gone: nothing to skip next time.
                    self._applied.pop(key, None)


def control_runner(rt: Runtime) -> Runner:
    """Runs a pane-option write through the server's tmux control client (a line on its
    stdin); a process per call only while no client is attached to that server."""

    async def run(args: list[str]) -> bool:
        socket = args[2] if len(args) > 2 and args[1] == "-S" else None
        command = args[3:] if socket else args[1:]
        answer = await rt.tmux.command(socket, command)
        return await run_tmux(args) if answer is None else answer

    return run


async def pane_marker(rt: Runtime) -> None:
    """Daemon part: mark live sessions' panes now, then follow every change."""
    marker = PaneMarker(control_runner(rt))
    for session in rt.engine.sessions.values():
        if not session.ended:
            marker.on_change(session)
    rt.engine.on_change.append(marker.on_change)
    try:
        await marker.run()
    finally:
        with contextlib.suppress(ValueError):
            rt.engine.on_change.remove(marker.on_change)
