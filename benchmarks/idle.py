"""The daemon's own cost, this tree side by side with a baseline tree in the same run.

A small world (300 transcripts, 20 live sessions in real tmux panes, 10 outside tmux; the
scale benchmark's generator) and five idle Codex TUIs in panes of the same tmux server (`add_codex`:
a copy of `sleep` named codex, with CODEX_HOME set, each in its own project folder, its thread
opened and the id in its pane title, as Codex 0.171.0 draws it with the run-state and thread-id
items) is followed by a daemon from each tree in turn, interleaved:

- idle CPU: psutil cpu_times of the daemon and its children (its tmux clients, running or
  reaped) over an idle spell that starts 3 s after every live session is listed, alive and
  placed in its pane, and every Codex thread is listed idle in its pane (by a tree that knows
  Codex; one that does not is checked to list none of them);
- CPU per event: hook events POSTed one at a time (UserPromptSubmit and Stop alternating, so
  each changes the state and the pane's mark) for sessions with a pane on the world's tmux
  server, and for sessions without one; daemon + children CPU per event.

The baseline is another checkout of purplemux (`--baseline DIR`, or `--baseline-ref REF`
exported with `git archive`; by default the commit before issue 27, benchmarks.start's
BASELINE_REF): each daemon runs with its tree first on sys.path.
"""

from __future__ import annotations

import argparse
import http.client
import json
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psutil

from benchmarks import scale, start
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
process per pane mark): the restart benchmark's older baseline (benchmarks.restart). Section 10
compares with the commit before issue 27 (benchmarks.start.BASELINE_REF)."""
CODEX_PANES = 5
"""Idle Codex TUIs added to the world: watching their titles and threads must add no timer."""
CODEX_PLACED_TIMEOUT = 60.0
"""Seconds a tree that knows Codex may take to list every Codex thread idle in its pane."""
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
    codex_placed: list[int] = field(default_factory=list)
    """Per start: how many of the Codex TUIs it listed as Codex threads, idle, in their panes."""


# --- the Codex TUIs ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CodexTui:
    """A stand-in Codex TUI in a pane of the world's tmux server, and the thread it shows."""

    thread: str
    pane: str
    pid: int
    folder: Path
    title: str


@dataclass
class CodexWorld:
    """The world's Codex home and its TUIs (their processes end with the world's close())."""

    home: Path
    tuis: list[CodexTui] = field(default_factory=list)

    def placed(self, sessions: dict[str, dict[str, Any]]) -> int:
        """How many TUIs the daemon lists as Codex threads, idle, in their panes."""
        n = 0
        for tui in self.tuis:
            s = sessions.get(tui.thread) or {}
            pane = (s.get("tmux") or {}).get("pane")
            if s.get("agent") == "codex" and pane == tui.pane and s.get("state") == "idle":
                n += 1
        return n


def uuid7() -> str:
    """A UUIDv7 minted now, as Codex makes a thread id (its first 48 bits: the time in ms)."""
    ms = int(time.time() * 1000)
    raw = (ms << 80) | (0x7 << 76) | (uuid.uuid4().int & ((1 << 76) - 1))
    raw = (raw & ~(0x3 << 62)) | (0x2 << 62)
    return str(uuid.UUID(int=raw))


TITLE_ITEMS = ("spinner", "run-state", "thread-id", "project-name")


def codex_title(thread: str, project: str) -> str:
    """The pane title Codex 0.171.0 draws when idle with the run-state and thread-id items (it
    cuts the id to its first 29 characters), checked with this tree's parser."""
    from purplemux.agents.codex import pane_title
    from purplemux.core.model import State

    title = f"Ready | {thread[: pane_title.ID_PREFIX_LEN]}... | {project}"
    layout = getattr(pane_title, "Layout", None)  # (a baseline tree reads the id anywhere)
    shown = (layout(TITLE_ITEMS),) if layout else ()
    parsed = pane_title.parse_title(title, project, *shown)
    if parsed.claim is not State.IDLE or not parsed.matches(thread) or not parsed.project_matched:
        raise RuntimeError(f"the parser does not read {title!r} as idle, of {thread}: {parsed}")
    return title


def add_codex(world: scale.World, run_dir: Path, n: int = CODEX_PANES) -> CodexWorld:
    """Start `n` idle Codex TUIs in panes of the world's tmux server, each in its own project
    folder (not in a git repository: Codex shows the folder's name), and link each to a thread
    as the linker's strongest rung does: the thread id in the pane title. The thread is opened
    (its reference file written, as a real TUI does at its start) after the TUI started."""
    from purplemux.agents.codex.threads import OPENED_DIR

    codex = CodexWorld(run_dir / "codex-home")
    (codex.home / OPENED_DIR).mkdir(parents=True)
    # The TUIs' `[tui] terminal_title`: the titles below show the thread id in its own place.
    items = ", ".join(f'"{i}"' for i in TITLE_ITEMS)
    (codex.home / "config.toml").write_text(f"[tui]\nterminal_title = [{items}]\n")
    binary = run_dir / "bin" / "codex"
    binary.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(shutil.which("sleep") or "/bin/sleep", binary)
    env = world.tmux_env
    started: list[tuple[str, int, Path]] = []
    for i in range(n):
        folder = run_dir / "codex-projects" / f"codex-proj-{i:02d}"
        folder.mkdir(parents=True)
        first = not world.in_pane and not i  # no tmux server yet: the first pane starts it
        where = ["new-session", "-s", "bench"] if first else ["new-window", "-t", "bench"]
        argv = ["tmux", "-f", "/dev/null", *where, "-d", "-P", "-F", "#{pane_id} #{pane_pid}"]
        argv += ["-c", str(folder), "-e", f"CODEX_HOME={codex.home}"]
        argv += [f"exec {binary} {scale.LINE_SLEEP}"]
        out = subprocess.run(argv, env=env, check=True, capture_output=True, text=True, timeout=20)
        pane_id, pane_pid = out.stdout.split()
        world.pane_procs.append(psutil.Process(int(pane_pid)))
        started.append((pane_id, int(pane_pid), folder))
    # Each is the codex-named program (the pane's shell has exec'd it) before its thread opens.
    deadline = time.monotonic() + 10
    while not all(scale._name(pid) == "codex" for _, pid, _ in started):
        if time.monotonic() > deadline:
            raise RuntimeError("the Codex stand-ins did not start")
        time.sleep(0.05)
    for pane, pid, folder in started:
        thread = uuid7()
        (codex.home / OPENED_DIR / thread).write_text("")
        title = codex_title(thread, folder.name)
        subprocess.run(
            ["tmux", "select-pane", "-t", pane, "-T", title], env=env, check=True, timeout=10
        )
        codex.tuis.append(CodexTui(thread, pane, pid, folder, title))
    return codex


def knows_codex(tree: Path) -> bool:
    """The tree follows Codex sessions at all (its agents/codex package: since issue 24)."""
    return (tree / "purplemux" / "agents" / "codex").is_dir()


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
    root: Path,
    name: str,
    tree: Path,
    world: scale.World,
    codex: CodexWorld,
    idle: float,
    events: int,
) -> tuple[float, float, float, int]:
    daemon = bench_daemon(root, name, claude_dir=world.claude_dir)
    daemon.env_extra["TMUX_TMPDIR"] = str(world.tmux_tmpdir)
    daemon.env_extra["PURPLEMUX_CODEX_HOMES"] = str(codex.home)
    expect_codex = knows_codex(tree)
    try:
        proc = _start(daemon, tree)
        t0 = time.monotonic()

        def located() -> bool:
            got = {s["id"]: s for s in api(daemon, "/api/sessions")["sessions"]}
            if not scale._complete_parts(got, world)[1]:
                return False
            if expect_codex and codex.placed(got) < len(codex.tuis):
                if time.monotonic() - t0 > CODEX_PLACED_TIMEOUT:
                    raise RuntimeError(
                        f"{name}: {codex.placed(got)} of {len(codex.tuis)} Codex threads listed "
                        f"idle in their panes after {CODEX_PLACED_TIMEOUT:.0f} s: "
                        f"{[got.get(t.thread) for t in codex.tuis]}\n{daemon.logs()[-3000:]}"
                    )
                return False
            return True

        wait_for(located, timeout=120, interval=0.2)
        time.sleep(3.0)
        c0, w0 = _cpu(proc), time.monotonic()
        time.sleep(idle)
        idle_cpu = (_cpu(proc) - c0) / (time.monotonic() - w0)
        got = {s["id"]: s for s in api(daemon, "/api/sessions")["sessions"]}
        placed = codex.placed(got)
        if placed < (len(codex.tuis) if expect_codex else 0) or (not expect_codex and placed):
            raise RuntimeError(f"{name}: {placed} Codex threads placed after the idle spell")
        panes = []
        for sid in sorted(world.in_pane):
            t = got[sid]["tmux"]
            panes.append((sid, t["pane"], f"{t['socket']},1,0"))
        plain = [(f"{name}-plain-{i}", "", "") for i in range(len(panes))]
        with_pane = _per_event(daemon, proc, panes, events)
        without = _per_event(daemon, proc, plain, events)
        return idle_cpu, with_pane, without, placed
    finally:
        daemon.stop()


def run(
    baseline: Path,
    *,
    world_size: scale.ScaleSize = WORLD,
    idle: float = 20.0,
    events: int = 400,
    runs: int = 2,
    codex_panes: int = CODEX_PANES,
) -> dict[str, TreeResult]:
    transcripts = scale.ensure_transcripts(cache_root(), world_size)
    results = {"baseline": TreeResult(), "this": TreeResult()}
    with tempdir("pmx-idle-") as tmp:
        root = Path(tmp)
        world = scale.build_world(root / "world", cache_root(), world_size, transcripts)
        try:
            codex = add_codex(world, root / "world", codex_panes)
            for r in range(runs):
                for label, tree in (("baseline", baseline), ("this", REPO)):
                    i, p, n, c = one(root, f"{label}-{r}", tree, world, codex, idle, events)
                    res = results[label]
                    res.idle_cpu.append(i)
                    res.us_per_event_pane.append(p)
                    res.us_per_event_nopane.append(n)
                    res.codex_placed.append(c)
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
    parser.add_argument("--baseline-ref", default=start.BASELINE_REF, help="or a git ref to export")
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
            f" ({pane.median / plain.median:.2f}x); Codex threads placed {r.codex_placed}"
        )


if __name__ == "__main__":
    main()
