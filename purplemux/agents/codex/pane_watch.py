"""Codex TUIs in tmux panes: which thread each shows (agents/codex/panes.py), and its title.

Codex hooks cannot place a session (they run in the app-server daemon), and Codex writes no
per-process session file. This source looks at what is true instead: the panes of every tmux
server it knows, the Codex TUI process in each (its start time, folder and CODEX_HOME), each
home's threads (its state DB and the TUIs' thread reference files), and each pane's title.

What it reports, as typed events for the engine:

- `ProcessSeen` when a pane is linked to a thread (the session gets its pane, pid and agent;
  a thread never prompted is listed, idle, from here);
- `ProcessGone` the moment a linked TUI quits or its pane moves on to another thread (/new,
  /clear, a resume): Codex itself says nothing then (SessionEnd comes ~60 s later, if ever);
- `StatusBusy` / `StatusWaiting` / `StatusIdle` (source PANE_TITLE) when a linked pane's title
  changes between a spinner, "Action Required" and neither: the only sign that an approval was
  answered, and a failed turn's end.

`read_titles` is one `list-panes -a` per server (through the control client when attached);
the process table is walked only when the panes or their processes changed. Between looks, each
server's control client is subscribed to its Codex panes' titles (`title_watch`): tmux says
when one changed, so an idle Codex pane costs no timer.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from purplemux.agents.codex import threads
from purplemux.agents.codex.layout import layout_of
from purplemux.agents.codex.pane_title import (
    DEFAULT_LAYOUT,
    Layout,
    PaneTitle,
    parse_title,
    title_fits,
)
from purplemux.agents.codex.panes import Link, PaneKey, Thread, TuiPane, link
from purplemux.agents.codex.process import codex_home, is_codex
from purplemux.core.events import (
    Event,
    ProcessGone,
    ProcessSeen,
    Source,
    StatusBusy,
    StatusIdle,
    StatusWaiting,
)
from purplemux.core.model import State
from purplemux.io.proctable import Pane, ProcessTable, find_under, socket_from_tmux_env, tmux_env

log = logging.getLogger(__name__)

TITLE_FORMAT = (
    "#{pane_id}\t#{pane_pid}\t#{session_name}\t#{window_index}\t#{socket_path}\t#{pane_title}"
)
TITLES = "purplemux-codex-titles"
"""The control clients' subscription to the Codex panes' titles (see `title_watch`)."""
AGENT = "codex"
REFERENCES = threads.OPENED_DIR


def parse_panes(lines: Iterable[str], socket: str) -> list[tuple[Pane, str]]:
    """`list-panes -a -F TITLE_FORMAT` lines as (pane, raw title); the title may hold tabs."""
    out: list[tuple[Pane, str]] = []
    for line in lines:
        parts = line.split("\t", 5)
        if len(parts) != 6 or not parts[1].isdigit():
            continue
        pane_id, pid, session, window, path, title = parts
        out.append((Pane(pane_id, int(pid), session, window, path or socket), title))
    return out


def title_watch(pane_ids: Iterable[str]) -> str:
    """A tmux format whose value changes whenever one of these panes' titles does, in any
    session of the server (a control client's session-wide format sees only its own session;
    `#{S:…}` loops over all of them)."""
    wanted = "|" + "|".join(sorted(pane_ids)) + "|"
    pane = "#{?#{m:*|#{pane_id}|*," + wanted + "},#{pane_id}=#{pane_title}|,}"
    return "#{S:#{W:#{P:" + pane + "}}}"


def read_threads(home: str) -> list[Thread]:
    """A CODEX_HOME's threads as the linker needs them: the state DB's rows (prompted threads,
    read-only, closed again at once) and the ids TUIs opened (reference files: a thread not
    prompted yet has no row); [] for what cannot be read."""
    found: dict[str, Thread] = {}
    for opened in threads.opened_threads(Path(home)):
        found[opened.id] = Thread(id=opened.id, home=home, created=opened.opened_at)
    read = threads.read_threads(Path(home))
    if read.reason:
        log.debug("codex threads of %s: %s", home, read.reason)
    for row in read.rows:
        if row.archived:
            continue
        created = threads.uuid7_time(row.id) or row.created_at or 0.0
        found[row.id] = Thread(
            id=row.id,
            home=home,
            created=created,
            cwd=row.cwd,
            title=row.title or None,
            rollout_path=row.rollout_path,
        )
    return list(found.values())


def _running(pid: int) -> bool:
    """The process exists and has not exited (a zombie waiting for its parent has)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    state = stat.rpartition(b")")[2].split()[:1]
    return state != [b"Z"] and state != [b"X"]


def _cwd(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class _Tui:
    pid: int
    started: float
    cwd: str | None
    home: str | None
    project: str | None
    layout: Layout = DEFAULT_LAYOUT
    """The items its title draws (its home's `[tui] terminal_title`, its command line)."""


def _state(title: PaneTitle) -> str | None:
    """What the title says of the session: waiting, busy, idle, or None (it says nothing)."""
    if title.claim is State.NEEDS_INPUT:
        return "waiting"
    if title.claim is State.BUSY:
        return "busy"
    return "idle" if title.claim is State.IDLE else None


def project_name(cwd: str | None) -> str | None:
    """The name Codex shows for a folder: its git root's, else its own (blocking: stats). A
    root is where git would find a repository: a `.git` file (a worktree, a submodule) or a
    `.git` folder with a HEAD; a stray empty `.git` above (seen in /tmp) is none, for Codex
    too (it then shows the folder's own name, and a title would never match)."""
    if not cwd:
        return None
    path = Path(cwd)
    for folder in (path, *path.parents):
        git = folder / ".git"
        if git.is_file() or (git / "HEAD").exists():
            return folder.name or None
    return path.name or None


class CodexPanes:
    """The links of Codex panes to threads, and their titles, from one look to the next."""

    def __init__(
        self,
        homes: Iterable[str],
        *,
        user_home: str | None = None,
        accounts: Mapping[str, str] | None = None,
    ) -> None:
        self._homes = {os.path.realpath(h) for h in homes}
        """The CODEX_HOMEs watched: a TUI of another home is not this daemon's."""
        self._accounts = {os.path.realpath(h): label for h, label in (accounts or {}).items()}
        """Each home's account label: a TUI's events name the account of its CODEX_HOME."""
        self._user_home = user_home or os.path.expanduser("~")
        self._tuis: dict[PaneKey, _Tui | None] = {}
        """Per pane (by its own process): the Codex TUI in it, or None (none)."""
        self._pane_pids: dict[PaneKey, int] = {}
        self._links: dict[PaneKey, Link] = {}
        self._told: dict[PaneKey, str] = {}
        """The state each linked pane's title last reported."""
        self._threads: dict[str, list[Thread]] = {}

    @property
    def links(self) -> Mapping[PaneKey, Link]:
        return self._links

    def needs_walk(self, panes: list[tuple[Pane, str]]) -> bool:
        """Whether the process table must be walked again: a pane came, went or runs another
        process, or a TUI of ours exited."""
        now = {(p.socket, p.pane_id): p.pid for p, _ in panes}
        if now != self._pane_pids:
            return True
        return any(t is not None and not _running(t.pid) for t in self._tuis.values())

    def walk(self, panes: list[tuple[Pane, str]], table: ProcessTable) -> None:
        """Find the Codex TUI of each pane (blocking: reads /proc)."""
        self._pane_pids = {(p.socket, p.pane_id): p.pid for p, _ in panes}
        tuis: dict[PaneKey, _Tui | None] = {}
        for pane, _ in panes:
            pid = find_under(pane.pid, table, is_codex)
            if pid is None or not _running(pid):  # (a TUI that quit may linger as a zombie)
                tuis[(pane.socket, pane.pane_id)] = None
                continue
            info = table.procs[pid]
            home = codex_home(pid, self._user_home)
            real = os.path.realpath(home) if home is not None else None
            if real is None or real not in self._homes:
                tuis[(pane.socket, pane.pane_id)] = None
                continue
            cwd = _cwd(pid)
            tuis[(pane.socket, pane.pane_id)] = _Tui(
                pid, info.create_time, cwd, home, project_name(cwd), layout_of(home, info.cmdline)
            )
        self._tuis = tuis

    def unplaced_sockets(self, table: ProcessTable, known: set[str]) -> set[str]:
        """The tmux servers of Codex TUIs in no pane listed so far (their $TMUX names the
        server, never the pane): servers to ask next."""
        placed = {t.pid for t in self._tuis.values() if t is not None}
        out: set[str] = set()
        for pid, info in table.procs.items():
            if pid not in placed and is_codex(info) and self._ours(pid):
                socket = socket_from_tmux_env(tmux_env(pid))
                if socket and socket not in known:
                    out.add(socket)
        return out

    def _ours(self, pid: int) -> bool:
        home = codex_home(pid, self._user_home)
        return home is not None and os.path.realpath(home) in self._homes

    def tui_pids(self) -> set[int]:
        """The Codex TUIs in the panes (their exits wake the watcher)."""
        return {t.pid for t in self._tuis.values() if t is not None}

    def tui_panes(self) -> dict[str, set[str]]:
        """Per tmux server socket: the ids of its panes that run a Codex TUI of ours."""
        out: dict[str, set[str]] = {}
        for (socket, pane_id), tui in self._tuis.items():
            if tui is not None:
                out.setdefault(socket, set()).add(pane_id)
        return out

    def owner(self, key: PaneKey, pid: int, raw: str) -> str | None:
        """The thread the pane `key` shows now, if its TUI is `pid` and its title `raw` (read
        just now) still reads as the linked thread's: its id in the id's place, its thread
        title, or, for a thread not prompted yet, none; else None (cannot confirm)."""
        ln = self._links.get(key)
        tui = self._tuis.get(key)
        if ln is None or tui is None or ln.pid != pid or tui.pid != pid:
            return None
        known = next((t for ts in self._threads.values() for t in ts if t.id == ln.thread), None)
        if known is None or known.home != tui.home:
            return None
        title = parse_title(raw, tui.project, tui.layout).resolve(known.title)
        if title.empty or title.readings:
            return None
        if title.thread_id_prefix is not None:
            return ln.thread if ln.thread.startswith(title.thread_id_prefix) else None
        if "thread-id" in tui.layout.items and known.title is not None:
            return None  # the id's place is empty: a thread not known to be this one
        shown = title.thread_title
        if known.title is None:
            return ln.thread if shown is None and title.project_matched else None
        return ln.thread if shown is not None and title_fits(shown, known.title) else None

    def has_tuis(self) -> bool:
        return any(t is not None for t in self._tuis.values())

    def look(self, panes: list[tuple[Pane, str]], now: float) -> list[Event]:
        """Link each Codex pane to its thread and read its title (blocking: reads the homes'
        state DBs when a pane's thread is not known yet)."""
        current: list[TuiPane] = []
        for pane, raw in panes:
            key = (pane.socket, pane.pane_id)
            tui = self._tuis.get(key)
            if tui is None:
                continue
            title = parse_title(raw, tui.project, tui.layout)
            current.append(TuiPane(pane.location(), tui.pid, tui.started, tui.cwd, tui.home, title))
        homes = {p.home for p in current if p.home}
        if any(self._needs_threads(p) for p in current):
            for home in homes:
                self._threads[home] = read_threads(home)
        threads = [t for home in homes for t in self._threads.get(home, ())]
        links = link(current, threads, self._links, now)
        by_id = {t.id: t for t in threads}
        out: list[Event] = []
        for key, was in self._links.items():
            now_link = links.get(key)
            if now_link is None or now_link.thread != was.thread or now_link.pid != was.pid:
                out.append(self._gone(was, now))
                self._told.pop(key, None)
        for tp in current:
            new = links.get(tp.key)
            if new is None:
                continue
            old = self._links.get(tp.key)
            thread = by_id.get(new.thread)
            if old is None or old.thread != new.thread or old.pid != new.pid:
                out.append(self._seen(tp, new, thread, now))
            # A title with two readings says only what the thread's own title tells apart.
            tp = replace(tp, title=tp.title.resolve(thread.title if thread else None))
            state = _state(tp.title)
            if state is not None and self._told.get(tp.key) != state:
                self._told[tp.key] = state
                out.append(self._status(tp, new, state, thread, now))
        self._links = links
        return out

    def _needs_threads(self, pane: TuiPane) -> bool:
        old = self._links.get(pane.key)
        if old is None or old.pid != pane.pid:
            return not pane.title.empty and pane.title.project is not None
        shown = pane.title.thread_titles
        known = next((t for ts in self._threads.values() for t in ts if t.id == old.thread), None)
        if known is None:
            return True
        if known.title is None:
            return bool(shown)
        return not any(title_fits(s, known.title) for s in shown)

    def _seen(self, pane: TuiPane, ln: Link, thread: Thread | None, now: float) -> Event:
        loc = pane.location
        return ProcessSeen(
            session_id=ln.thread,
            at=now,
            id=f"cx-seen:{ln.thread}:{ln.pid}:{loc.socket}:{loc.pane}:{now:.3f}",
            source=Source.PROCESS,
            pid=ln.pid,
            tmux=loc,
            cwd=pane.cwd,
            transcript_path=thread.rollout_path if thread else None,
            agent=AGENT,
            account=self._account_of(pane.home),
        )

    def _account_of(self, home: str | None) -> str | None:
        return self._accounts.get(os.path.realpath(home)) if home else None

    def _gone(self, ln: Link, now: float) -> Event:
        return ProcessGone(
            session_id=ln.thread,
            at=now,
            id=f"cx-gone:{ln.thread}:{ln.pid}:{now:.3f}",
            source=Source.PROCESS,
            pid=ln.pid,
            agent=AGENT,
        )

    def _status(
        self, pane: TuiPane, ln: Link, state: str, thread: Thread | None, now: float
    ) -> Event:
        common = dict(
            session_id=ln.thread,
            at=now,
            id=f"cx-title:{ln.thread}:{state}:{now:.3f}",
            name=f"title: {state}",
            source=Source.PANE_TITLE,
            pid=ln.pid,
            agent=AGENT,
            title=pane.title.thread_title or (thread.title if thread else None),
        )
        if state == "waiting":
            return StatusWaiting(**common)  # type: ignore[arg-type]
        if state == "busy":
            return StatusBusy(**common)  # type: ignore[arg-type]
        return StatusIdle(**common)  # type: ignore[arg-type]
