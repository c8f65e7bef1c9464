"""Which Codex thread each pane shows (pure): the link a Codex hook cannot give.

Codex's hooks run in its shared app-server daemon, so their $TMUX_PANE is the pane that started
the daemon, and nothing on disk says which TUI shows which thread. The link is made from what is
true of each pane, strongest first, and only when one reading is possible:

1. the title shows the thread id in the id's own place (the user's `[tui] terminal_title` has
   "thread-id"; never an id inside the thread title, which is text the user wrote): the one
   thread of that CODEX_HOME and folder whose id starts with it;
2. the title shows a thread title ("hello | proj", the first prompt): the one thread of that
   CODEX_HOME and folder with that title (`state_5.sqlite`); a pane already linked to a thread of
   that title keeps it (a title with two readings, pane_title.py, tries both: still one thread);
3. the title shows the project only (a thread not prompted yet): the thread of that home and
   folder with no title yet, created after the TUI started (or after the pane's last thread, for
   /new and /clear), that no other pane can claim; two panes that could each claim it (started
   within START_WINDOW of each other in one folder) get none until their first prompts tell them
   apart by rule 2.

A pane whose TUI quit (its process gone, its title empty) loses its link at once. Where it can be
wrong, and why the README says so: two threads of one folder with the same first prompt, shown
in two panes, are told apart only by rule 1 or by which pane had it first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from purplemux.agents.codex.pane_title import PaneTitle, title_fits
from purplemux.core.model import TmuxLocation

START_WINDOW = 10.0
"""Seconds between a TUI's start and its first thread's creation (the first TUI of a home starts
the daemon: up to ~7 s here). Two TUIs of one folder started closer than this are not told apart
by time."""
SLACK = 2.0
"""Seconds a thread's creation time (its UUIDv7, in ms) may precede what it is compared with
(process start times come from the boot time and clock ticks)."""

PaneKey = tuple[str, str]
"""(tmux socket, pane id)."""


@dataclass(frozen=True, slots=True)
class TuiPane:
    """A pane whose foreground program is a Codex TUI."""

    location: TmuxLocation
    pid: int
    started: float
    cwd: str | None
    home: str | None
    title: PaneTitle

    @property
    def key(self) -> PaneKey:
        return (self.location.socket or "", self.location.pane)


@dataclass(frozen=True, slots=True)
class Thread:
    """A Codex thread as its home's state DB (or a TUI's reference file) knows it."""

    id: str
    home: str
    created: float
    cwd: str | None = None
    title: str | None = None
    rollout_path: str | None = None


@dataclass(frozen=True, slots=True)
class Link:
    """A pane shows this thread (since `since`, by this TUI process)."""

    thread: str
    pid: int
    since: float
    created: float
    """The thread's own creation time: a later /new or /clear thread is newer than this."""


def _same_place(pane: TuiPane, thread: Thread) -> bool:
    """The thread belongs to the pane's TUI's CODEX_HOME and, where both are known, folder."""
    if not pane.home or thread.home != pane.home:
        return False
    return pane.cwd is None or thread.cwd is None or pane.cwd == thread.cwd


def _titled(shown: str, thread: Thread) -> bool:
    return thread.title is not None and title_fits(shown, thread.title)


def link(
    panes: Iterable[TuiPane],
    threads: Iterable[Thread],
    previous: Mapping[PaneKey, Link],
    now: float,
) -> dict[PaneKey, Link]:
    """The links now: each pane that shows one readable thread, to that thread (at most one
    pane per thread)."""
    panes = sorted(panes, key=lambda p: (p.started, p.key))
    threads = list(threads)
    out: dict[PaneKey, Link] = {}
    claimed: dict[str, PaneKey] = {}

    def take(pane: TuiPane, thread: Thread) -> None:
        old = previous.get(pane.key)
        kept = old is not None and old.thread == thread.id and old.pid == pane.pid
        since = old.since if kept and old else now
        out[pane.key] = Link(thread.id, pane.pid, since, thread.created)
        claimed[thread.id] = pane.key

    fresh: list[TuiPane] = []
    for pane in panes:
        title = pane.title
        if title.empty:
            continue  # quit (or not drawn yet): no link
        if title.thread_id_prefix:
            prefix = title.thread_id_prefix
            found = [t for t in threads if t.id.startswith(prefix) and _same_place(pane, t)]
            if len(found) == 1 and found[0].id not in claimed:
                take(pane, found[0])
            continue
        shown = title.thread_titles
        if shown:
            found = [
                t for t in threads if _same_place(pane, t) and any(_titled(s, t) for s in shown)
            ]
            old = previous.get(pane.key)
            mine = [t for t in found if old and t.id == old.thread and old.pid == pane.pid]
            if mine and mine[0].id not in claimed:
                take(pane, mine[0])
            elif len(found) == 1 and found[0].id not in claimed:
                take(pane, found[0])
            elif not found and old is not None and old.pid == pane.pid:
                # Its first prompt is drawn before the state DB has the thread's title: the
                # pane keeps the untitled thread it had (no other thread has that title).
                mine = [t for t in threads if t.id == old.thread and t.title is None]
                if mine and mine[0].id not in claimed and _same_place(pane, mine[0]):
                    take(pane, mine[0])
            if pane.key in out or title.untitled_reading is None:
                continue
        if title.project is not None:
            fresh.append(pane)  # (also a title one of whose readings shows no thread title)
    _link_fresh(fresh, threads, previous, claimed, take)
    return out


def _link_fresh(
    fresh: list[TuiPane],
    threads: list[Thread],
    previous: Mapping[PaneKey, Link],
    claimed: dict[str, PaneKey],
    take: Callable[[TuiPane, Thread], None],
) -> None:
    """Rule 3, for every pane whose thread has no prompt yet at once: a pane keeps its untitled
    thread; the others are matched to untitled threads created after they started (or after
    their last thread: /new, /clear), the closest pair in time first."""
    pairs: list[tuple[float, int, TuiPane, Thread]] = []
    open_panes: list[tuple[TuiPane, float]] = []
    for pane in fresh:
        old = previous.get(pane.key)
        after = pane.started
        if old is not None and old.pid == pane.pid:
            mine = next((t for t in threads if t.id == old.thread and t.title is None), None)
            if mine is not None and mine.id not in claimed:
                take(pane, mine)  # it keeps its thread: no rival of anyone's
                continue
            after = max(after, old.created + 0.001)  # /new or /clear: newer than the last one
        open_panes.append((pane, after))
    for n, (pane, after) in enumerate(open_panes):
        rivals = any(
            p is not pane
            and p.home == pane.home
            and p.cwd == pane.cwd
            and abs(p.started - pane.started) < START_WINDOW
            for p, _ in open_panes
        )
        if rivals:
            continue  # two TUIs of one folder started together: which thread is whose is unknown
        for t in threads:
            if _same_place(pane, t) and t.title is None and t.created >= after - SLACK:
                pairs.append((t.created - after, n, pane, t))
    for _, _, pane, thread in sorted(pairs, key=lambda p: (p[0], p[1])):
        if pane.key not in taken_keys(claimed) and thread.id not in claimed:
            take(pane, thread)


def taken_keys(claimed: Mapping[str, PaneKey]) -> set[PaneKey]:
    return set(claimed.values())
