"""GET /api/debug/memory: where the daemon's memory is, for the benchmarks and a curious user.

Resident and peak size come from /proc/self/status. Allocation sites need tracing, which costs
memory and time, so it is on only for a daemon started with Python's own switch,
PYTHONTRACEMALLOC=1 (it then traces from the first import)."""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, HTTPException

from purplemux.server.runtime import require_auth

router = APIRouter(dependencies=[Depends(require_auth)])

TOP = 25
"""Allocation sites listed, largest first."""
NOT_TRACING = "allocation sites need a daemon started with PYTHONTRACEMALLOC=1"


def _status_bytes(*fields: str) -> dict[str, int]:
    """`VmRSS:`-style lines of /proc/self/status, in bytes, from one read (empty off Linux)."""
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return {}
    found = {}
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name in fields:
            found[name] = int(value.split()[0]) * 1024
    return found


def _short(filename: str) -> str:
    """A file relative to the longest sys.path entry holding it: purplemux/…, fastapi/…."""
    for root in sorted(sys.path, key=len, reverse=True):
        if root and filename.startswith(root.rstrip("/") + "/"):
            return filename[len(root.rstrip("/")) + 1 :]
    return filename


def _package(where: str) -> str:
    """purplemux/sources/x.py → purplemux.sources; fastapi/routing.py → fastapi."""
    if where.startswith("<frozen importlib"):
        return "(module code: what imports loaded)"
    parts = where.split("/")
    if parts[0] == "purplemux" and len(parts) > 2:
        return ".".join(parts[:2])
    return parts[0].removesuffix(".py") if parts else where


def report(top: int = TOP) -> dict[str, Any]:
    """The memory figures; `traced` and `top` only while tracemalloc traces."""
    vm = _status_bytes("VmRSS", "VmHWM")
    rss = vm.get("VmRSS")
    peak = vm.get("VmHWM")
    body: dict[str, Any] = {
        "rss_bytes": rss,
        # The kernel updates the high-water mark lazily: it can trail the current size.
        "peak_rss_bytes": max(peak, rss) if peak is not None and rss is not None else peak,
        "tracing": tracemalloc.is_tracing(),
    }
    if not tracemalloc.is_tracing():
        body["hint"] = NOT_TRACING
        return body
    current, peak = tracemalloc.get_traced_memory()
    stats = tracemalloc.take_snapshot().statistics("lineno")
    packages: dict[str, int] = {}
    for stat in stats:
        name = _package(_short(stat.traceback[0].filename))
        packages[name] = packages.get(name, 0) + stat.size
    body["traced"] = {"current_bytes": current, "peak_bytes": peak}
    body["top"] = [
        {
            "where": f"{_short(s.traceback[0].filename)}:{s.traceback[0].lineno}",
            "bytes": s.size,
            "blocks": s.count,
        }
        for s in stats[:top]
    ]
    body["packages"] = [
        {"package": name, "bytes": size}
        for name, size in sorted(packages.items(), key=lambda kv: -kv[1])[:top]
    ]
    return body


@router.get("/api/debug/memory")
async def memory(top: int = TOP) -> dict[str, Any]:
    if not 1 <= top <= 200:
        raise HTTPException(422, "top must be between 1 and 200")
    return report(top)
