"""Shared parts of the benchmarks: statistics, a real daemon, the cache folder, the machine."""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from tests.support import Daemon, free_port, wait_for

REPO = Path(__file__).resolve().parent.parent

__all__ = ["REPO", "Daemon", "free_port", "wait_for"]

_T = TypeVar("_T")

HOOK_SCRIPT = REPO / "hooks" / "status-hook.sh"


def hook_headers(token: str, event_id: str, pane: str, tmux: str) -> dict[str, str]:
    """The headers of a hook's POST to /api/hooks, as the hook script sends them."""
    return {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "X-Purplemux-Event-Id": event_id,
        "X-Purplemux-Ts": str(time.time_ns()),
        "X-Purplemux-Pane": pane,
        "X-Purplemux-Tmux": tmux,
    }


# --- statistics --------------------------------------------------------------------------------


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0-100), linear between closest ranks."""
    if not values:
        return float("nan")
    data = sorted(values)
    k = (len(data) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (k - lo)


@dataclass(frozen=True)
class Stats:
    """min / median / max (and p99) of a list of samples."""

    n: int
    min: float
    median: float
    max: float
    p99: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Stats:
        if not values:
            nan = float("nan")
            return cls(0, nan, nan, nan, nan)
        return cls(
            len(values),
            min(values),
            statistics.median(values),
            max(values),
            percentile(values, 99),
        )


# --- where generated inputs live ---------------------------------------------------------------


def cache_root() -> Path:
    """Generated inputs (transcripts), made once and reused: $PURPLEMUX_BENCH_CACHE."""
    raw = os.environ.get("PURPLEMUX_BENCH_CACHE")
    root = Path(raw) if raw else Path.home() / ".cache" / "purplemux-bench"
    root.mkdir(parents=True, exist_ok=True)
    return root


def free_bytes(path: Path) -> int:
    return shutil.disk_usage(path).free


# --- a daemon for a benchmark ------------------------------------------------------------------


class BenchDaemon(Daemon):
    """tests.daemon.Daemon without the caller's tmux: its poller must not see the user's panes."""

    @property
    def env(self) -> dict[str, str]:
        env = super().env
        for name in ("TMUX", "TMUX_PANE"):
            env.pop(name, None)
        return env


def bench_daemon(root: Path, name: str, claude_dir: Path | None = None, **env: str) -> Daemon:
    """A daemon with its own home, Claude dir and private tmux socket folder (not the user's)."""
    home = root / name / "home"
    home.parent.mkdir(parents=True, exist_ok=True)
    claude = claude_dir or root / name / "claude"
    claude.mkdir(parents=True, exist_ok=True)
    tmux_tmp = root / name / "tmux"
    tmux_tmp.mkdir(exist_ok=True)
    return BenchDaemon(
        home=home, claude_dir=claude, env_extra={"TMUX_TMPDIR": str(tmux_tmp), **env}
    )


@contextmanager
def running(daemon: Daemon) -> Iterator[Daemon]:
    """Start the daemon; always stop it."""
    try:
        yield daemon.start()
    finally:
        daemon.stop()


def api(daemon: Daemon, path: str, timeout: float = 30) -> Any:
    req = urllib.request.Request(daemon.url + path)
    req.add_header("Authorization", f"Bearer {daemon.token}")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def settle_spool(home: Path, timeout: float = 10.0) -> None:
    """Wait until background hook deliveries from `home` are done (its .tmp folder is empty)."""
    tmp = home / "spool" / ".tmp"
    deadline = time.monotonic() + timeout
    while tmp.is_dir() and any(tmp.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.0005)


def loadavg() -> float:
    return os.getloadavg()[0]


# --- the machine -------------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def _version(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return "not found"
    return (out.stdout or out.stderr).strip().splitlines()[0] if out.returncode == 0 else "?"


def _package(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine() -> dict[str, str]:
    """What this machine is, for the report's header."""
    import psutil

    mem = psutil.virtual_memory().total
    hypervisor = ""
    try:
        if "hypervisor" in Path("/proc/cpuinfo").read_text():
            hypervisor = " (virtual machine)"
    except OSError:
        pass
    return {
        "CPU": f"{_cpu_model()}{hypervisor}",
        "Cores": f"{os.cpu_count()} logical, {psutil.cpu_count(logical=False) or '?'} physical",
        "RAM": f"{mem / 2**30:.1f} GiB",
        "OS": f"{_os_name()}, Linux {platform.release()}",
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        "tmux": _version(["tmux", "-V"]),
        "sh": os.path.realpath("/bin/sh"),
        "curl": _version(["curl", "--version"]).split(" (")[0],
        "Libraries": ", ".join(
            f"{p} {_package(p)}" for p in ("uvicorn", "fastapi", "websockets", "watchfiles")
        ),
    }


def timed(fn: Callable[[], Any]) -> float:
    """Seconds fn() took."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def tempdir(prefix: str) -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix=prefix)


def run_from_args(
    doc: str | None, n_help: str, prefix: str, run: Callable[[Path, int], _T]
) -> tuple[int, _T]:
    """A benchmark's command line (`-n`, default 200): run it in a fresh temporary directory;
    the n given and what the run found."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("-n", type=int, default=200, help=n_help)
    args = parser.parse_args()
    with tempdir(prefix) as name:
        return args.n, run(Path(name), args.n)
