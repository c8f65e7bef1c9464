"""Scale: a Claude config dir with 1,000 session files and 10,000 transcripts, 200 tmux panes.

The transcripts (3 of 200 MB, the rest 10-200 KB, about 1.6 GB) are generated once into the cache
folder and reused. Each run starts live processes named `claude` (a symlink to sleep): 200 in the
panes of one private tmux server, the rest outside tmux; half of the 1,000 session files name one
of them, the other half name pids that are not running (files a crashed Claude left behind), which
the daemon must ignore. The live sessions' transcripts include the three big ones.

Measured from starting `purplemux serve` until /api/sessions is complete: every live session
listed, alive, with its pane when it has one, and its transcript read (its last answer shown:
the daemon reads a big transcript's tail first). A WebSocket client follows the feed to time that
without polling the daemon; one GET /api/sessions then confirms it. Then until the daemon has
summed every transcript's history (tokens, cost; /api/health says none is left), RSS, and CPU
over an idle spell (psutil cpu_times delta of the daemon, its children included: the tmux clients
it runs). Last, a restart on the first start's database: it continues each transcript from the
offset it stored, so it reads only what is new (nothing, here).

    python -m benchmarks.scale [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from benchmarks.common import REPO, Daemon, Stats, api, bench_daemon, cache_root, tempdir
from benchmarks.fixtures import project_dir, session_file, write_transcript

LINE_SLEEP = 86_400


@dataclass(frozen=True)
class ScaleSize:
    session_files: int = 1000
    live_in_panes: int = 200
    live_outside: int = 300
    transcripts: int = 10_000
    big: int = 3
    big_bytes: int = 200 << 20
    small_bytes: tuple[int, int] = (10 << 10, 200 << 10)
    projects: int = 50
    idle_seconds: float = 30.0
    runs: int = 3

    @property
    def live(self) -> int:
        return self.live_in_panes + self.live_outside

    def key(self) -> str:
        lo, hi = self.small_bytes
        return (
            f"scale-v1-{self.transcripts}x{lo >> 10}-{hi >> 10}k-{self.big}x{self.big_bytes >> 20}m"
        )


QUICK = ScaleSize(
    session_files=30,
    live_in_panes=5,
    live_outside=10,
    transcripts=100,
    big=1,
    big_bytes=4 << 20,
    small_bytes=(2 << 10, 20 << 10),
    projects=5,
    idle_seconds=2.0,
    runs=1,
)


@dataclass(frozen=True)
class Transcript:
    cwd: str
    session_id: str
    size: int


def ensure_transcripts(root: Path, size: ScaleSize) -> list[Transcript]:
    """Generate the transcripts under root/<key>/projects once; the big ones come first."""
    base = root / size.key()
    manifest = base / "manifest.json"
    if manifest.exists():
        return [Transcript(**t) for t in json.loads(manifest.read_text())]
    rng = random.Random(42)
    out: list[Transcript] = []
    started = time.monotonic()
    for i in range(size.transcripts):
        cwd = f"/home/dev/work/project-{i % size.projects:02d}"
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        target = size.big_bytes if i < size.big else rng.randint(*size.small_bytes)
        path = project_dir(base, cwd) / f"{sid}.jsonl"
        real = write_transcript(path, target, sid, cwd, seed=i)
        out.append(Transcript(cwd, sid, real))
        if i and i % 1000 == 0:
            print(
                f"  generated {i} transcripts ({time.monotonic() - started:.0f} s)", file=sys.stderr
            )
    manifest.write_text(json.dumps([t.__dict__ for t in out]))
    return out


# --- live processes ------------------------------------------------------------------------------


@dataclass
class World:
    """The processes and files one scale run needs; torn down by close()."""

    claude_dir: Path
    tmux_tmpdir: Path
    live: dict[str, int] = field(default_factory=dict)  # session id -> pid
    in_pane: set[str] = field(default_factory=set)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    tmux_env: dict[str, str] = field(default_factory=dict)
    pane_procs: list[psutil.Process] = field(default_factory=list)
    """Other programs started in the world's panes (benchmarks.idle's Codex stand-ins)."""

    def close(self) -> None:
        for q in self.pane_procs:  # while tmux still holds them: their pids are theirs
            with contextlib.suppress(psutil.Error):
                q.kill()
        subprocess.run(["tmux", "kill-server"], env=self.tmux_env, capture_output=True, timeout=10)
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()


def _claude_named_sleep(folder: Path) -> Path:
    """A `claude` that is /bin/sleep: the process name the poller looks for."""
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / "claude"
    if not link.exists():
        link.symlink_to(shutil.which("sleep") or "/bin/sleep")
    return link


def _pane_pids(env: dict[str, str]) -> list[int]:
    out = subprocess.run(
        ["tmux", "list-panes", "-a", "-F", "#{pane_pid}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=10,
    )
    return [int(x) for x in out.stdout.split()]


def build_world(
    run_dir: Path, cache: Path, size: ScaleSize, transcripts: list[Transcript]
) -> World:
    """Start the live processes and the tmux server, write the session files."""
    claude_dir = run_dir / "claude"
    (claude_dir / "sessions").mkdir(parents=True)
    (claude_dir / "projects").symlink_to(cache / size.key() / "projects")
    tmux_tmpdir = run_dir / "tmux"
    tmux_tmpdir.mkdir()
    world = World(claude_dir, tmux_tmpdir)
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    env["TMUX_TMPDIR"] = str(tmux_tmpdir)
    world.tmux_env = env
    claude = _claude_named_sleep(run_dir / "bin")
    cmd = f"exec {claude} {LINE_SLEEP}"
    try:
        if size.live_in_panes:
            subprocess.run(
                [
                    "tmux",
                    "-f",
                    "/dev/null",
                    "new-session",
                    "-d",
                    "-s",
                    "bench",
                    "-x",
                    "120",
                    "-y",
                    "30",
                    cmd,
                ],
                env=env,
                check=True,
                timeout=20,
            )
            rest = size.live_in_panes - 1
            for start in range(0, rest, 50):
                argv = ["tmux"]
                for _ in range(min(50, rest - start)):
                    argv += ["new-window", "-d", "-t", "bench", cmd, ";"]
                subprocess.run(argv[:-1], env=env, check=True, timeout=30)
        pane_pids = _pane_pids(env) if size.live_in_panes else []
        for _ in range(size.live_outside):
            world.procs.append(
                subprocess.Popen(
                    [str(claude), str(LINE_SLEEP)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
        pids = pane_pids + [p.pid for p in world.procs]
        # Wait until each is the claude-named program (the pane's shell has exec'd it).
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            names = {p: _name(p) for p in pids}
            if all(n == "claude" for n in names.values()):
                break
            time.sleep(0.05)
        now_ms = int(time.time() * 1000)
        statuses = ("idle", "idle", "idle", "busy", "waiting")
        for i, t in enumerate(transcripts[: len(pids)]):
            pid = pids[i]
            started = int(psutil.Process(pid).create_time() * 1000)
            status = statuses[i % len(statuses)]
            body = session_file(pid, t.session_id, t.cwd, started, status, now_ms - i)
            (claude_dir / "sessions" / f"{pid}.json").write_text(json.dumps(body))
            world.live[t.session_id] = pid
            if i < len(pane_pids):
                world.in_pane.add(t.session_id)
        dead = _dead_pids(size.session_files - len(pids))
        for j, pid in enumerate(dead):
            t = transcripts[len(pids) + j]
            body = session_file(pid, t.session_id, t.cwd, now_ms - 86_400_000, "idle", now_ms)
            body["procStart"] = "12345"
            (claude_dir / "sessions" / f"{pid}.json").write_text(json.dumps(body))
    except BaseException:
        world.close()
        raise
    return world


def _name(pid: int) -> str:
    try:
        return str(psutil.Process(pid).name())
    except psutil.Error:
        return ""


def _dead_pids(n: int) -> list[int]:
    try:
        pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
    except (OSError, ValueError):
        pid_max = 32768
    out: list[int] = []
    pid = pid_max - 1
    while len(out) < n and pid > 1:
        if not psutil.pid_exists(pid):
            out.append(pid)
        pid -= 1
    return out


# --- one daemon start ----------------------------------------------------------------------------


@dataclass
class ScaleRun:
    listed: float
    located: float
    transcripts: float
    complete: float
    summed: float  # every transcript's history summed (tokens and cost final)
    bytes_read: int  # of transcripts, by then
    rss_complete: float
    rss_idle: float
    rss_peak: float
    idle_cpu: float  # fraction of one core
    sessions: int


def _complete_parts(sessions: dict[str, dict[str, Any]], world: World) -> tuple[bool, bool, bool]:
    listed = all(sid in sessions for sid in world.live)
    located = listed and all(
        sessions[sid].get("alive") is True
        and (sid not in world.in_pane or (sessions[sid].get("tmux") or {}).get("pane"))
        for sid in world.live
    )
    read = listed and all(sessions[sid].get("snippet") for sid in world.live)
    return listed, located, read


async def _follow(daemon: Daemon, world: World, t0: float, timeout: float) -> dict[str, float]:
    """Follow the feed until complete; the time (since t0) each part became true."""
    from websockets.asyncio.client import connect

    url = daemon.url.replace("http://", "ws://") + "/api/stream"
    marks: dict[str, float] = {}
    sessions: dict[str, dict[str, Any]] = {}
    async with connect(
        url, additional_headers={"Authorization": f"Bearer {daemon.token}"}, max_size=None
    ) as conn:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                raw = await asyncio.wait_for(conn.recv(), max(0.01, deadline - time.monotonic()))
            except TimeoutError:
                break
            now = time.perf_counter() - t0
            msg = json.loads(raw)
            if msg["type"] == "snapshot":
                sessions = {s["id"]: s for s in msg["sessions"]}
            elif msg["type"] == "sessions":
                sessions.update((s["id"], s) for s in msg["sessions"])
            for name, ok in zip(
                ("listed", "located", "transcripts"), _complete_parts(sessions, world), strict=True
            ):
                if ok and name not in marks:
                    marks[name] = now
            if len(marks) == 3:
                break
    return marks


def _wait_healthy(daemon: Daemon, timeout: float = 30) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert daemon.proc is not None
        if daemon.proc.poll() is not None:
            raise RuntimeError(f"daemon exited: {daemon.logs()}")
        try:
            with urllib.request.urlopen(daemon.url + "/api/health", timeout=1) as r:
                # started: its app is up (it answers "starting" while the app loads)
                if r.status == 200 and json.loads(r.read()).get("status") == "ok":
                    return
        except (OSError, ValueError):
            pass
        time.sleep(0.01)  # not yet (no answer, or "starting"): as often as before issue 27
    raise RuntimeError("daemon did not start")


def _summed(daemon: Daemon, timeout: float = 900) -> dict[str, Any]:
    """Wait until no transcript history is left to sum; the daemon's transcript counters."""
    deadline = time.monotonic() + timeout
    while True:
        read = api(daemon, "/api/health").get("transcripts") or {}
        if not read.get("backfill_pending") or time.monotonic() > deadline:
            return dict(read)
        time.sleep(0.1)


def _rss_peak(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return float("nan")


def _cpu(p: psutil.Process) -> float:
    t = p.cpu_times()
    return float(t.user + t.system + t.children_user + t.children_system)


def warm_page_cache(folder: Path) -> int:
    """Read every file under `folder` (through the projects symlink), so that a start finds
    them in the page cache as the section says it does. This VM's host takes back page cache
    that has not been touched for a while (~10 MB/s, with 20 GB free): read cold, a start's
    tails cost it disk reads of its own. Returns the bytes read."""
    total = 0
    for dirpath, _dirs, files in os.walk(folder, followlinks=True):
        for name in files:
            with contextlib.suppress(OSError), open(os.path.join(dirpath, name), "rb") as f:
                while chunk := f.read(1 << 20):
                    total += len(chunk)
    return total


def one_start(
    run_dir: Path, name: str, world: World, size: ScaleSize, tree: Path | None = None
) -> ScaleRun:
    """A start of a daemon (from `tree`, default this checkout) on the world."""
    warm_page_cache(world.claude_dir)
    daemon = bench_daemon(run_dir, name, claude_dir=world.claude_dir)
    daemon.env_extra["TMUX_TMPDIR"] = str(world.tmux_tmpdir)
    where = {} if tree is None else {"env": {**daemon.env, "PYTHONPATH": str(tree)}, "cwd": tree}
    t0 = time.perf_counter()
    daemon.spawn(log_path=daemon.home.parent / "daemon.log", **where)
    try:
        _wait_healthy(daemon)
        marks = asyncio.run(_follow(daemon, world, t0, timeout=300))
        got = {s["id"]: s for s in api(daemon, "/api/sessions")["sessions"]}
        if not all(_complete_parts(got, world)) or len(marks) < 3:
            raise RuntimeError(f"/api/sessions never became complete: {marks}, {daemon.logs()}")
        proc = psutil.Process(daemon.proc.pid)
        rss_complete = proc.memory_info().rss
        read = _summed(daemon)
        summed = time.perf_counter() - t0
        time.sleep(min(3.0, size.idle_seconds))  # let the start-up work finish
        c0, w0 = _cpu(proc), time.monotonic()
        time.sleep(size.idle_seconds)
        c1, w1 = _cpu(proc), time.monotonic()
        return ScaleRun(
            listed=marks["listed"],
            located=marks["located"],
            transcripts=marks["transcripts"],
            complete=max(marks.values()),
            summed=summed,
            bytes_read=int(read.get("bytes_read") or 0),
            rss_complete=rss_complete,
            rss_idle=proc.memory_info().rss,
            rss_peak=_rss_peak(proc.pid),
            idle_cpu=(c1 - c0) / (w1 - w0),
            sessions=len(got),
        )
    finally:
        daemon.stop()


@dataclass
class ScaleResult:
    size: ScaleSize
    runs: list[ScaleRun]
    generated_bytes: int
    live: int
    dead: int
    generate_seconds: float
    processes: int = 0
    live_bytes: int = 0  # the followed transcripts' total size
    empty_rss: float = float("nan")  # a daemon with an empty Claude dir, for comparison
    empty_idle_cpu: float = float("nan")
    idle_parts: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    """The safety-net polls: name -> (ms of CPU per round, seconds between at first, backed off)."""
    baseline_idle_parts: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    """The same polls of the baseline tree, timed the same way on the same world."""
    memory: dict[str, Any] | None = None
    """GET /api/debug/memory of a traced start (PYTHONTRACEMALLOC=1) once complete."""
    restart: ScaleRun | None = None
    """A start on the first start's database (its stored transcript offsets)."""
    baseline: ScaleRun | None = None
    """A fresh start of the baseline tree (benchmarks.start.BASELINE_REF) on the same world."""

    def stats(self, attr: str) -> Stats:
        return Stats.of([getattr(r, attr) for r in self.runs])


def run(
    root: Path, size: ScaleSize, cache: Path | None = None, baseline: Path | None = None
) -> ScaleResult:
    """`baseline`: a tree to start once on the same world too, after this one's starts."""
    cache = cache or cache_root()
    t = time.monotonic()
    transcripts = ensure_transcripts(cache, size)
    generated = time.monotonic() - t
    world = build_world(root / "scale", cache, size, transcripts)
    try:
        runs = [one_start(root / "scale", f"start-{i}", world, size) for i in range(size.runs)]
        restart = one_start(root / "scale", "start-0", world, size)
        base = None
        if baseline is not None:
            base = one_start(root / "scale", "baseline-0", world, size, tree=baseline)
        memory = traced_start(root / "scale", "start-0", world)
        parts = idle_parts(world, transcripts)
        base_parts = idle_parts(world, transcripts, baseline) if baseline is not None else {}
        nprocs = len(psutil.pids())
    finally:
        world.close()
    empty_rss, empty_cpu = empty_daemon(root / "scale", min(10.0, size.idle_seconds))
    live_ids = set(world.live)
    return ScaleResult(
        size=size,
        runs=runs,
        generated_bytes=sum(t.size for t in transcripts),
        live=len(world.live),
        dead=size.session_files - len(world.live),
        generate_seconds=generated,
        processes=nprocs,
        idle_parts=parts,
        baseline_idle_parts=base_parts,
        live_bytes=sum(t.size for t in transcripts if t.session_id in live_ids),
        empty_rss=empty_rss,
        empty_idle_cpu=empty_cpu,
        restart=restart,
        memory=memory,
        baseline=base,
    )


def traced_start(run_dir: Path, name: str, world: World) -> dict[str, Any]:
    """Where the memory is: a start with tracemalloc on, its /api/debug/memory once complete."""
    daemon = bench_daemon(run_dir, name, claude_dir=world.claude_dir)
    daemon.env_extra.update(TMUX_TMPDIR=str(world.tmux_tmpdir), PYTHONTRACEMALLOC="1")
    daemon.spawn(log_path=daemon.home.parent / "daemon-traced.log")
    try:
        _wait_healthy(daemon, timeout=120)
        asyncio.run(_follow(daemon, world, time.perf_counter(), timeout=600))
        _summed(daemon)
        report: dict[str, Any] = api(daemon, "/api/debug/memory?top=30")
        if not report.get("tracing"):
            raise RuntimeError(f"the traced daemon does not trace: {report}")
        return report
    finally:
        daemon.stop()


def empty_daemon(root: Path, idle: float) -> tuple[float, float]:
    """RSS and idle CPU (fraction of a core) of a daemon with nothing to follow."""
    daemon = bench_daemon(root, "empty")
    try:
        daemon.start()
        assert daemon.proc is not None
        proc = psutil.Process(daemon.proc.pid)
        time.sleep(2)
        c0, w0 = _cpu(proc), time.monotonic()
        time.sleep(idle)
        c1, w1 = _cpu(proc), time.monotonic()
        return float(proc.memory_info().rss), (c1 - c0) / (w1 - w0)
    finally:
        daemon.stop()


def idle_parts(
    world: World, transcripts: list[Transcript], tree: Path = REPO
) -> dict[str, tuple[float, float, float]]:
    """The daemon's safety-net polls of `tree`, each timed on its own on this world in a process
    of its own (benchmarks/safety_nets.py; explains the idle CPU): name -> (ms of CPU per round,
    seconds between rounds at first, once nothing changes)."""
    followed = [
        [str(project_dir(world.claude_dir, t.cwd) / f"{t.session_id}.jsonl"), t.session_id]
        for t in transcripts[: len(world.live)]
    ]
    given = {
        "claude_dir": str(world.claude_dir),
        "socket": str(world.tmux_tmpdir / f"tmux-{os.getuid()}" / "default"),
        "followed": followed,
    }
    out = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "safety_nets.py")],
        input=json.dumps(given),
        capture_output=True,
        text=True,
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        timeout=600,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"safety_nets.py on {tree} failed: {out.stderr[-2000:]}")
    got = json.loads(out.stdout)
    if not Path(got["purplemux"]).resolve().is_relative_to(tree.resolve()):
        raise RuntimeError(f"safety_nets.py measured {got['purplemux']}, not {tree}")
    return {name: (ms, first, later) for name, (ms, first, later) in got["parts"].items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int)
    parser.add_argument("--idle", type=float, help="idle seconds (default 30)")
    args = parser.parse_args()
    size = QUICK if args.quick else ScaleSize()
    if args.runs:
        size = ScaleSize(**{**size.__dict__, "runs": args.runs})
    if args.idle is not None:
        size = ScaleSize(**{**size.__dict__, "idle_seconds": args.idle})
    with tempdir("purplemux-bench-scale-") as name:
        cache = Path(name) / "cache" if args.quick else None
        result = run(Path(name), size, cache)
    for r in [*result.runs, *([result.restart] if result.restart else [])]:
        print(
            f"listed {r.listed:.2f}s located {r.located:.2f}s transcripts {r.transcripts:.2f}s "
            f"summed {r.summed:.2f}s ({r.bytes_read / 2**20:.0f} MB read) "
            f"rss {r.rss_complete / 2**20:.0f}/{r.rss_idle / 2**20:.0f}/peak "
            f"{r.rss_peak / 2**20:.0f} MB idle cpu {r.idle_cpu * 100:.2f}% ({r.sessions} sessions)"
        )


if __name__ == "__main__":
    main()
