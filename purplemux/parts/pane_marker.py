"""Mirror each session's state into its tmux pane as the pane option `@purplemux_state`, and
its name (Claude's own, else the project) as `@purplemux_name`.

tmux formats can then show it without asking the daemon: `#{@purplemux_state}` in
`pane-border-format` is the pane's own state; in `window-status-format` it is the state of the
window's active pane, and `#{P:...}` loops over all the window's panes (verified on tmux 3.3a).
See TMUX_CONF for a ready ~/.tmux.conf snippet.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable

from purplemux.core.facts import display_name
from purplemux.core.model import Session
from purplemux.core.present import BY_ORDER, LOOKS
from purplemux.core.termtext import TMUX_COLOURS, tmux_name
from purplemux.daemon.runtime import Runtime
from purplemux.io.log_once import RateLimitedLog
from purplemux.io.tmux import Command, TmuxError, base_args, command_line, run_all

log = logging.getLogger(__name__)

OPTION = "@purplemux_state"
NAME_OPTION = "@purplemux_name"
AGENT_OPTION = "@purplemux_agent"
"""The session's agent ("claude", "codex"): `#{@purplemux_agent}` in a format marks it."""
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

PANE_BORDER = (
    " #P #{?#{"
    + OPTION
    + "},[#{"
    + OPTION
    + "}] #{"
    + AGENT_OPTION
    + "}: #{"
    + NAME_OPTION
    + "},} "
)
"""A tmux format for a pane's border: its number, then `[state] agent: name` on an agent's
pane."""

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
"""A ~/.tmux.conf snippet using `purplemux tmux-status` and the `@purplemux_state`,
`@purplemux_agent` and `@purplemux_name` pane options."""

PaneKey = tuple[str | None, str]
"""(tmux socket or None for the default server, pane id)."""
Runner = Callable[[str | None, list[Command]], Awaitable[bool]]
"""Runs tmux commands on one server (socket, commands); True when tmux accepted them all."""
Mark = tuple[str, str, str]
"""(state, name, agent) shown on a pane."""


def mark_commands(
    pane: str, state: str | None, name: str = "", agent: str = "", shown: Mark | None = None
) -> list[Command]:
    """The tmux commands that set (or, for None, unset) the state, name and agent options on one
    pane. Kept apart, never joined by hand: a value is never read as a separator. `shown`: the
    mark the pane has from us already; then only the options that differ are written (a state
    change is one command, not three: each is a round through tmux and its control client)."""
    unset = ["set-option", "-p", "-u", "-t", pane]
    if state is None:
        return [[*unset, OPTION], [*unset, NAME_OPTION], [*unset, AGENT_OPTION]]
    want = (state, _shown_name(name), agent)
    had = None if shown is None else (shown[0], _shown_name(shown[1]), shown[2])
    options = (OPTION, NAME_OPTION, AGENT_OPTION)
    return [
        ["set-option", "-p", "-t", pane, option, value] if value else [*unset, option]
        for i, (option, value) in enumerate(zip(options, want, strict=True))
        if had is None or had[i] != value
    ]


@functools.lru_cache(maxsize=1024)
def _shown_name(name: str) -> str:
    """termtext.tmux_name(name), remembered: a pane's name rarely changes, and cleaning it took
    most of a mark's commands (two names per change)."""
    return tmux_name(name)


def tmux_args(
    socket: str | None, pane: str, state: str | None, name: str = "", agent: str = ""
) -> list[str]:
    """The same as one tmux process's argv (the commands joined by tmux's `;`)."""
    return [*base_args(socket), *command_line(mark_commands(pane, state, name, agent))]


class ProcessRunner:
    """Runs the marks as one tmux process per call (tmux.run_all); never raises, and says why
    tmux refused, once a minute per reason (a pane that closed is normal churn)."""

    def __init__(self, timeout: float = TMUX_TIMEOUT, tmux: str = "tmux") -> None:
        self.timeout, self.tmux = timeout, tmux
        self.refusals = RateLimitedLog(log, interval=60.0)

    async def __call__(self, socket: str | None, commands: list[Command]) -> bool:
        try:
            await run_all(socket, commands, timeout=self.timeout, tmux=self.tmux)
        except TmuxError as exc:
            self.refusals.log(str(exc)[:80], logging.INFO, "pane mark not written: %s", exc)
            return False
        return True


class PaneMarker:
    """Keeps `@purplemux_state` on each session's pane; bursts collapse to the latest state."""

    def __init__(self, runner: Runner | None = None) -> None:
        self._runner = runner or ProcessRunner()
        self._pending: dict[PaneKey, Mark | None] = {}
        self._applied: dict[PaneKey, Mark] = {}
        self._owner: dict[PaneKey, str] = {}
        self._wake = asyncio.Event()
        self._failures = RateLimitedLog(log, interval=60.0)

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
            # What the view says (present()), without making the whole view at every change.
            name = display_name(session.title, session.project, session.id)
            self._pending[key] = (session.state.value, name, session.agent)
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
                state, name, agent = mark if mark is not None else (None, "", "")
                commands = mark_commands(key[1], state, name, agent, self._applied.get(key))
                try:
                    ok = await self._runner(key[0], commands) if commands else True
                except Exception as exc:
                    self._failures.log(
                        type(exc).__name__,
                        logging.WARNING,
                        "pane mark on %s failed: %r",
                        key[1],
                        exc,
                    )
                    ok = False
                if ok and mark is not None:
                    self._applied[key] = mark
                else:
                    # Unset, or the pane, server or tmux is gone: nothing to skip next time.
                    self._applied.pop(key, None)


def control_runner(rt: Runtime, fallback: Runner | None = None) -> Runner:
    """Runs pane-option writes through the server's tmux control client (a line per command on
    its stdin); a process per call only while no client is attached to that server."""
    process = fallback or ProcessRunner()

    async def run(socket: str | None, commands: list[Command]) -> bool:
        answer = await rt.tmux.commands(socket, commands)
        return await process(socket, commands) if answer is None else answer

    return run


async def pane_marker(rt: Runtime) -> None:
    """Daemon part: mark live sessions' panes now, then follow every change."""
    marker = PaneMarker(control_runner(rt))
    for session in rt.engine.sessions.values():
        if not session.ended:
            marker.on_change(session)
    unsubscribe = rt.engine.subscribe(change=marker.on_change)
    try:
        await marker.run()
    finally:
        unsubscribe()
