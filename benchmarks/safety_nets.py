"""The daemon's safety-net polls, timed on their own against one tree of purplemux.

Run as a script by `benchmarks.scale.idle_parts`, once with this tree and once with the
baseline's first on PYTHONPATH, so both are timed the same way on the same world. It imports
nothing of the benchmarks (the baseline tree has its own), only purplemux and psutil.

stdin: {"claude_dir", "socket", "followed": [[path, session_id], ...]}.
stdout: {"purplemux": the package file measured, "parts": {name: [ms, first s, backed off s]}}.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def cpu_ms(
    fn: Callable[[], object], n: int = 10, batches: int = 5, children: bool = False
) -> float:
    """ms of CPU per call of fn (of the child processes it runs, with `children`): the least of
    `batches` batches of n calls (what the poll costs, not what the machine's other work did to
    it), after one call that is not counted (what a daemon's earlier rounds left warm)."""

    def now() -> float:
        if children:
            r = resource.getrusage(resource.RUSAGE_CHILDREN)
            return r.ru_utime + r.ru_stime
        return time.process_time()

    fn()
    best = float("inf")
    for _ in range(batches):
        t0 = now()
        for _ in range(n):
            fn()
        best = min(best, (now() - t0) / n * 1000)
    return best


def parts(claude_dir: Path, socket: str, followed: list[tuple[str, str]]) -> dict[str, Any]:
    import psutil

    # A baseline tree from before the layer folders (issue 38) has the flat layout: tried
    # first, since the editable install would otherwise lend this tree's new modules to it.
    try:
        from purplemux.settings import Settings
        from purplemux.sources.claude_sessions import (
            SessionFileWatcher,
        )
        from purplemux.sources.watch import MAX_RECHECK_MS

        from purplemux.parts.sources import MAX_POLL_INTERVAL
        from purplemux.sources import processes
        from purplemux.sources.transcripts import (
            TranscriptReader,
            TranscriptTailer,
            _read_new,
            _Watched,
        )

        def watched_file(path: Path, session_id: str) -> Any:
            return _Watched(path, TranscriptReader(session_id))

        def tailer() -> Any:
            return TranscriptTailer()
    except ImportError:
        from purplemux.agents.claude.live import MAX_POLL_INTERVAL
        from purplemux.agents.claude.sessions import SessionFileWatcher
        from purplemux.agents.claude.transcript import TranscriptReader
        from purplemux.io import proctable as processes
        from purplemux.io.settings import Settings
        from purplemux.io.watch import MAX_RECHECK_MS
        from purplemux.sources.transcripts import TranscriptTailer, _read_new, _Watched

        def watched_file(path: Path, session_id: str) -> Any:
            return _Watched(path, TranscriptReader(session_id), TranscriptReader)

        def tailer() -> Any:
            return TranscriptTailer(reader=TranscriptReader, tail_first=True)

    poll = Settings(home=claude_dir, claude_dir=claude_dir).poll_interval
    walk: Callable[[], object] = processes.snapshot
    if hasattr(processes, "Cmdlines"):  # the daemon's poller keeps one (issue 27)
        known = processes.Cmdlines()
        walk = lambda: processes.snapshot(known)  # noqa: E731
    watcher = SessionFileWatcher(claude_dir / "sessions")
    watcher._update()
    watched = []
    for path, session_id in followed:
        w = watched_file(Path(path), session_id)
        w.reader.sync(os.stat(path))
        w.reader.offset = w.reader.size
        w.fresh = False  # read already: the re-check only looks for more
        watched.append(w)
    settled = MAX_RECHECK_MS / 1000
    backed_off = max(poll, MAX_POLL_INTERVAL)
    files = sum(1 for _ in (claude_dir / "sessions").iterdir())
    return {
        f"walk of the process table ({len(psutil.pids())} processes)": (
            cpu_ms(walk),
            poll,
            backed_off,
        ),
        f"rescan of {files} session files": (
            cpu_ms(watcher._update),
            watcher.rescan_ms / 1000,
            settled,
        ),
        f"re-check of the {len(watched)} followed transcripts": (
            cpu_ms(lambda: [_read_new(w) for w in watched]),
            tailer().recheck_ms / 1000,
            settled,
        ),
        "`tmux list-panes` (with each walk: the tmux client it runs)": (
            cpu_ms(lambda: processes.list_panes(socket), children=True),
            poll,
            backed_off,
        ),
    }


def main() -> None:
    import purplemux

    given = json.load(sys.stdin)
    followed = [(str(p), str(s)) for p, s in given["followed"]]
    out = parts(Path(given["claude_dir"]), str(given["socket"]), followed)
    json.dump({"purplemux": purplemux.__file__, "parts": out}, sys.stdout)


if __name__ == "__main__":
    main()
