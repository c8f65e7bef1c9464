"""The daemon's own cost, this tree side by side with a baseline tree in the same run.

A small world (300 transcripts, 20 live sessions in real tmux panes, 10 outside tmux; the
scale benchmark's generator) is followed by a daemon from each tree in turn, interleaved:

- idle CPU: psutil cpu_times of the daemon and its children (its tmux clients, running or
  reaped) over an idle spell that starts 3 s after every live session is listed, alive and
  placed in its pane;
- CPU per event: hook events POSTed one at a time (UserPromptSubmit and Stop alternating, so
  each changes the state and the pane's mark) for sessions with a pane on the world's tmux
  server, and for sessions without one; daemon + children CPU per event.

The baseline is another checkout of purplemux (`--baseline DIR`, or `--baseline-ref REF`
exported with `git archive`): each daemon runs with its tree first on sys.path.
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psutil

from benchmarks import scale
from benchmarks.common import (
    REPO,
    Daemon,
    Stats,
    api,
    bench_daemon,
    cache_root,
    hook_headers,
    tempdir,
    wait_for,
)

BASELINE_REF = "2242df0"
"""The commit before issue 14 (file watchers on watchfiles, a /proc walk every 3 s, a tmux
process per pane mark): what `make bench` compares this tree with."""
WORLD = replace(
    scale.QUICK,  # its shape (one big transcript, small ones of 2-20 KB, 10 outside tmux), larger
    session_files=40,
    live_in_panes=20,
    transcripts=300,
    big_bytes=8 << 20,
    projects=10,
    idle_seconds=20.0,
    runs=2,
)


@dataclass
class TreeResult:
    idle_cpu: list[float] = field(default_factory=list)  # fraction of one core
    us_per_event_pane: list[float] = field(default_factory=list)
    us_per_event_nopane: list[float] = field(default_factory=list)


def _cpu(proc: psutil.Process) -> float:
    """CPU seconds of the process, its reaped children and its running ones."""
    t = proc.cpu_times()
    total = t.user + t.system + t.children_user + t.children_system
    for child in proc.children(recursive=True):
        try:
            c = child.cpu_times()
            total += c.user + c.system
        except psutil.Error:
            pass
    return float(total)


def _start(daemon: Daemon, tree: Path) -> psutil.Process:
    proc = daemon.spawn(
        log_path=daemon.home.parent / "daemon.log",
        env={**daemon.env, "PYTHONPATH": str(tree)},
        cwd=tree,  # `-m` puts the working directory first on sys.path
    )
    wait_for(daemon._healthy, timeout=30)
    return psutil.Process(proc.pid)


def _post(
    conn: http.client.HTTPConnection, token: str, body: dict[str, Any], n: int, pane: str, tmux: str
) -> None:
    data = json.dumps(body).encode()
    headers = hook_headers(token, f"{time.time_ns()}-{n}", pane, tmux)
    conn.request("POST", "/api/hooks", body=data, headers=headers)
    resp = conn.getresponse()
    resp.read()
    if resp.status != 202:
        raise RuntimeError(f"hook POST answered {resp.status}")


def _per_event(
    daemon: Daemon, proc: psutil.Process, targets: list[tuple[str, str, str]], events: int
) -> float:
    """µs of daemon (+children) CPU per hook event over `events` events to `targets`."""
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
    token = daemon.token
    names = ("UserPromptSubmit", "Stop")
    # Warm up: every target once in each state.
    for i in range(2 * len(targets)):
        sid, pane, tmux = targets[i % len(targets)]
        name = names[(i // len(targets)) % 2]
        _post(conn, token, {"session_id": sid, "hook_event_name": name, "cwd": "/w"}, i, pane, tmux)
    time.sleep(1.0)
    c0 = _cpu(proc)
    for i in range(events):
        sid, pane, tmux = targets[i % len(targets)]
        name = names[(i // len(targets)) % 2]
        _post(
            conn,
            token,
            {"session_id": sid, "hook_event_name": name, "cwd": "/w"},
            10**6 + i,
            pane,
            tmux,
        )
    time.sleep(1.0)  # the pane marks are written after the answers
    c1 = _cpu(proc)
    conn.close()
    return (c1 - c0) / events * 1e6


def one(
    root: Path, name: str, tree: Path, world: scale.World, idle: float, events: int
) -> tuple[float, float, float]:
    daemon = bench_daemon(root, name, claude_dir=world.claude_dir)
    daemon.env_extra["TMUX_TMPDIR"] = str(world.tmux_tmpdir)
    try:
        proc = _start(daemon, tree)

        def located() -> bool:
            got = {s["id"]: s for s in api(daemon, "/api/sessions")["sessions"]}
            return scale._complete_parts(got, world)[1]

        wait_for(located, timeout=120, interval=0.2)
        time.sleep(3.0)
        c0, w0 = _cpu(proc), time.monotonic()
        time.sleep(idle)
        idle_cpu = (_cpu(proc) - c0) / (time.monotonic() - w0)
        got = {s["id"]: s for s in api(daemon, "/api/sessions")["sessions"]}
        panes = []
        for sid in sorted(world.in_pane):
            t = got[sid]["tmux"]
            panes.append((sid, t["pane"], f"{t['socket']},1,0"))
        plain = [(f"{name}-plain-{i}", "", "") for i in range(len(panes))]
        with_pane = _per_event(daemon, proc, panes, events)
        without = _per_event(daemon, proc, plain, events)
        return idle_cpu, with_pane, without
    finally:
        daemon.stop()


def run(
    baseline: Path,
    *,
    world_size: scale.ScaleSize = WORLD,
    idle: float = 20.0,
    events: int = 400,
    runs: int = 2,
) -> dict[str, TreeResult]:
    transcripts = scale.ensure_transcripts(cache_root(), world_size)
    results = {"baseline": TreeResult(), "this": TreeResult()}
    with tempdir("pmx-idle-") as tmp:
        root = Path(tmp)
        world = scale.build_world(root / "world", cache_root(), world_size, transcripts)
        try:
            for r in range(runs):
                for label, tree in (("baseline", baseline), ("this", REPO)):
                    i, p, n = one(root, f"{label}-{r}", tree, world, idle, events)
                    res = results[label]
                    res.idle_cpu.append(i)
                    res.us_per_event_pane.append(p)
                    res.us_per_event_nopane.append(n)
        finally:
            world.close()
    return results


def export(ref: str, into: Path) -> Path:
    """The tree of a git ref (e.g. the commit before a change), for a baseline daemon."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    # Bytecode, as an installed daemon has it (this tree's is compiled by `make bench`).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into / "purplemux")], check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, help="a baseline checkout")
    parser.add_argument("--baseline-ref", default=BASELINE_REF, help="or a git ref to export")
    parser.add_argument("--idle", type=float, default=20.0, help="idle seconds per start")
    parser.add_argument("--events", type=int, default=400)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    with tempdir("pmx-baseline-") as tmp:
        base = args.baseline or export(args.baseline_ref, Path(tmp))
        res = run(base.resolve(), idle=args.idle, events=args.events, runs=args.runs)
    for label, r in res.items():
        idle = Stats.of([x * 100 for x in r.idle_cpu])
        pane = Stats.of(r.us_per_event_pane)
        plain = Stats.of(r.us_per_event_nopane)
        print(
            f"{label:8}  idle CPU {idle.median:.2f} % of a core"
            f"  per event: pane {pane.median:,.0f} µs, no pane {plain.median:,.0f} µs"
            f" ({pane.median / plain.median:.2f}x)"
        )


if __name__ == "__main__":
    main()
