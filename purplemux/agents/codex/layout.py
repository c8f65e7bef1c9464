"""Which items a Codex TUI draws in its pane title: its `[tui] terminal_title` (codex.md).

The title is read by this structure only (agents/codex/pane_title.py), so the structure must be
the TUI's own: `$CODEX_HOME/config.toml`'s `[tui] terminal_title` (Codex's defaults when it has
none). Where the TUI may draw something else (a `-c`/`--config` override or a profile that names
its own `tui` table, a config that cannot be read, a list that is not strings) the layout is
`UNKNOWN`: no title fits it, so the title links no pane and claims no state (the hooks still
speak). Read again only when the file changes (its stat).
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Sequence

from purplemux.agents.codex.pane_title import DEFAULT_LAYOUT, Layout

UNKNOWN = Layout(items=())
"""A layout no title fits: the title says nothing."""
MAX_CONFIG = 1 << 20
"""Bytes of config.toml read at most (a larger file: UNKNOWN)."""
MAX_ITEMS = 32

_cache: dict[str, tuple[tuple[int, int, int], Layout]] = {}


def layout_of(home: str | None, argv: Sequence[str] = ()) -> Layout:
    """The title layout of a TUI with this CODEX_HOME and command line (blocking: a stat, and a
    read when the file changed)."""
    if home is None or _overridden(argv):
        return UNKNOWN
    path = os.path.join(home, "config.toml")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return DEFAULT_LAYOUT
    except OSError:
        return UNKNOWN
    key = (st.st_mtime_ns, st.st_size, st.st_ino)
    cached = _cache.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    layout = _read(path, st.st_size)
    _cache[path] = (key, layout)
    return layout


def _overridden(argv: Sequence[str]) -> bool:
    """A command-line option may change what the title draws (`-c tui.terminal_title=…`, a
    profile): the config file does not say then."""
    return any(
        "terminal_title" in a or a in ("-p", "--profile") or a.startswith("--profile=")
        for a in argv[1:]
    )


def _read(path: str, size: int) -> Layout:
    if size > MAX_CONFIG:
        return UNKNOWN
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return UNKNOWN
            data = os.read(fd, MAX_CONFIG + 1)
        finally:
            os.close(fd)
        config = tomllib.loads(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return UNKNOWN
    tui = config.get("tui")
    if tui is None:
        return DEFAULT_LAYOUT
    if not isinstance(tui, dict):
        return UNKNOWN
    items = tui.get("terminal_title")
    if items is None:
        return DEFAULT_LAYOUT
    if (
        not isinstance(items, list)
        or len(items) > MAX_ITEMS
        or not all(isinstance(i, str) for i in items)
    ):
        return UNKNOWN
    return Layout(items=tuple(items))
