"""A start with one big live transcript: how soon the daemon shows the session's last answer.

One live session (a process called `claude`, outside tmux) whose transcript is big (150 MB in
the full run). Before each start, while no daemon runs, a new turn is appended to it (a prompt
and an answer with a text of its own); the clock runs from starting `purplemux serve` until a
WebSocket client of the feed sees the session show that answer.

- fresh: a new database, nothing known about the file;
- restart: the database the previous start left (the stored offset of the file, where there is
  one).

The same with a daemon from the baseline tree (the commit before issue 14, which read every
transcript from its first byte), interleaved: `python -m benchmarks.restart`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchmarks import idle, scale
from benchmarks.common import REPO, Daemon, Stats, bench_daemon, cache_root, tempdir
from benchmarks.fixtures import TurnWriter, project_dir

WORLD = replace(
    scale.QUICK,
    session_files=1,
    live_in_panes=0,
    live_outside=1,
    transcripts=1,
    big=1,
    big_bytes=150 << 20,
    projects=1,
    runs=3,
)
QUICK = replace(WORLD, big_bytes=4 << 20, runs=1)
TIMEOUT = 300.0


@dataclass
class TreeTimes:
    """Seconds from `serve` until the answer showed; and from the daemon answering /api/health."""

    fresh: list[float] = field(default_factory=list)
    restart: list[float] = field(default_factory=list)
    fresh_ready: list[float] = field(default_factory=list)
    restart_ready: list[float] = field(default_factory=list)


@dataclass
class RestartResult:
    size: scale.ScaleSize
    transcript_bytes: int
    trees: dict[str, TreeTimes]

    def stats(self, tree: str, case: str) -> Stats:
        return Stats.of(getattr(self.trees[tree], case))


async def _answer_shown(daemon: Daemon, sid: str, text: str, t0: float) -> float:
    """Seconds since t0 until the feed shows `text` as the session's last answer."""
    from websockets.asyncio.client import connect

    url = daemon.url.replace("http://", "ws://") + "/api/stream"
    deadline = time.monotonic() + TIMEOUT
    async with connect(
        url, additional_headers={"Authorization": f"Bearer {daemon.token}"}, max_size=None
    ) as conn:
        while time.monotonic() < deadline:
            raw = await asyncio.wait_for(conn.recv(), max(0.01, deadline - time.monotonic()))
            msg = json.loads(raw)
            rows: list[dict[str, Any]] = list(msg.get("sessions") or [])  # protocol 2+, snapshot
            if msg.get("type") == "session":  # protocol 1 (the baseline): one row a message
                rows.append(msg.get("session") or {})
            if any(r.get("id") == sid and text in str(r.get("snippet") or "") for r in rows):
                return time.perf_counter() - t0
    raise RuntimeError(f"the answer {text!r} was never shown")


def _one(
    run_dir: Path, name: str, tree: Path, world: scale.World, sid: str, text: str
) -> tuple[float, float]:
    """(seconds from starting serve, seconds from the daemon answering) to the answer shown."""
    daemon = bench_daemon(run_dir, name, claude_dir=world.claude_dir)
    t0 = time.perf_counter()
    daemon.spawn(
        log_path=daemon.home.parent / f"{name}.log",
        env={**daemon.env, "PYTHONPATH": str(tree)},
        cwd=tree,  # `-m` puts the working directory first on sys.path
    )
    try:
        scale._wait_healthy(daemon, timeout=60)
        ready = time.perf_counter() - t0
        shown = asyncio.run(_answer_shown(daemon, sid, text, t0))
        return shown, shown - ready
    finally:
        daemon.stop()


def _turn(writer: TurnWriter, text: str) -> list[str]:
    """A finished turn whose answer is `text`: the prompt, the answer, the turn's end."""
    prompt = writer.turn()[0]
    end = writer._entry("system", subtype="turn_duration", durationMs=1000)
    return [prompt, writer.assistant_text(text), end]


def run(
    root: Path,
    size: scale.ScaleSize,
    baseline: Path,
    cache: Path | None = None,
    before: Path | None = None,
) -> RestartResult:
    """`baseline`: the tree before issue 14; `before`: another to run beside them (the tree
    before issue 27, labelled "before")."""
    cache = cache or cache_root()
    transcripts = scale.ensure_transcripts(cache, size)
    world = scale.build_world(root / "restart", cache, size, transcripts)
    try:
        # A copy of its own: the turns appended here must not change the cached transcript.
        [t] = transcripts
        projects = world.claude_dir / "projects"
        projects.unlink()
        path = project_dir(world.claude_dir, t.cwd) / f"{t.session_id}.jsonl"
        path.parent.mkdir(parents=True)
        shutil.copyfile(project_dir(cache / size.key(), t.cwd) / path.name, path)
        writer = TurnWriter(t.session_id, t.cwd, seed=7, t0=time.time() - 3600)
        order = [("this", REPO), ("baseline", baseline)]
        if before is not None:
            order.insert(1, ("before", before))
        trees = {label: TreeTimes() for label, _ in order}
        n = 0
        for i in range(size.runs):
            for label, tree in order:
                times = trees[label]
                for case in ("fresh", "restart"):
                    n += 1
                    text = f"answer {n} ({label}, {case})"
                    with path.open("a") as f:
                        f.write("\n".join(_turn(writer, text)) + "\n")
                    # fresh: a database of its own; restart: the one the fresh start left.
                    took, after = _one(
                        root / "restart", f"{label}-{i}", tree, world, t.session_id, text
                    )
                    getattr(times, case).append(took)
                    getattr(times, f"{case}_ready").append(after)
        return RestartResult(size, path.stat().st_size, trees)
    finally:
        world.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--baseline-ref", default=idle.BASELINE_REF)
    args = parser.parse_args()
    with tempdir("purplemux-restart-") as name:
        root = Path(name)
        base = idle.export(args.baseline_ref, root / "baseline-tree")
        size = QUICK if args.quick else WORLD
        res = run(root, size, base, cache=root / "cache" if args.quick else None)
    print(f"transcript {res.transcript_bytes / 2**20:.0f} MB")
    for tree in res.trees:
        for case in ("fresh", "restart", "fresh_ready", "restart_ready"):
            st = res.stats(tree, case)
            print(f"{tree:8} {case:13} min {st.min:.2f} median {st.median:.2f} max {st.max:.2f} s")


if __name__ == "__main__":
    main()
