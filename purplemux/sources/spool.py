"""The spool folder: hook events the daemon could not take when they happened, and its watcher."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import stat
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from purplemux.io.log_once import RateLimitedLog
from purplemux.io.settings import MAX_HOOK_BODY
from purplemux.io.watch import watch_dirs

log = logging.getLogger(__name__)

# The hook script's delivery headers; the spool file repeats them (see hooks/status-hook.sh).
HEADER_ID = "x-purplemux-event-id"
HEADER_TS = "x-purplemux-ts"
REQUIRED = (HEADER_ID, HEADER_TS)

SPOOL_SUFFIX = ".spool"
BODY_SUFFIX = ".json"
TMP_DIR = ".tmp"
MAX_FILE = MAX_HOOK_BODY + 65536
"""Bytes of one spooled file read at most: a hook body past MAX_HOOK_BODY (and its headers) is
refused, as the daemon refuses it live (413)."""


class SpoolError(ValueError):
    """A spool file that the hook script cannot have written; the message says why."""


class SpoolTooLarge(SpoolError):
    """A spooled hook body the daemon refuses as too large, as it would have live (413)."""


@dataclass(frozen=True)
class Delivery:
    """One hook call as the daemon would have received it: headers (lower-cased) and body."""

    headers: dict[str, str]
    body: bytes


def parse_spool(data: bytes) -> Delivery:
    """Split a spool file into its `Name: value` header lines and the untouched body."""
    head, blank, body = data.partition(b"\n\n")
    if not blank:
        raise SpoolError("no empty line between the headers and the body")
    headers: dict[str, str] = {}
    for number, line in enumerate(head.split(b"\n"), start=1):
        raw_name, colon, raw_value = line.partition(b":")
        try:
            name = raw_name.decode("ascii").lower()
        except UnicodeDecodeError:
            raise SpoolError(f"header line {number}: the name is not ASCII") from None
        if not colon or not name or name != name.strip() or " " in name:
            raise SpoolError(f"header line {number}: not 'Name: value': {line[:80]!r}")
        if name in headers:
            raise SpoolError(f"header line {number}: {name} given twice")
        # The script writes exactly one space after the colon; anything after it is the value.
        value = raw_value.removeprefix(b" ")
        # A tmux socket path is bytes; replace rather than fail on one that is not UTF-8.
        headers[name] = value.decode("utf-8", "replace")
    _check(headers)
    return Delivery(headers=headers, body=body)


def _check(headers: dict[str, str]) -> None:
    for name in REQUIRED:
        if not headers.get(name):
            raise SpoolError(f"missing header {name}")
    if not headers[HEADER_TS].isdigit():
        raise SpoolError(f"{HEADER_TS} is not a number of nanoseconds: {headers[HEADER_TS]!r}")


def read_file(path: Path, limit: int = MAX_FILE) -> bytes:
    """A spooled file's bytes: never through a symbolic link (O_NOFOLLOW), never a FIFO or a
    device (non-blocking open, then fstat), never more than `limit` bytes (SpoolError)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SpoolError(f"{path.name} is a symbolic link: not read") from None
        raise
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise SpoolError(f"{path.name} is not a regular file: not read")
        if st.st_size > limit:
            raise SpoolTooLarge(f"{path.name} holds {st.st_size} bytes, more than {limit}")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise SpoolTooLarge(f"{path.name} holds more than {limit} bytes")
    return data


def read_delivery(path: Path) -> Delivery:
    """Read a spool file, or an orphaned body from .tmp (headers then come from its name)."""
    if path.suffix == SPOOL_SUFFIX:
        return parse_spool(read_file(path))
    if path.suffix == BODY_SUFFIX:
        # The hook was stopped between saving stdin and spooling: only the name survives, which
        # holds the event id and the time. The pane and tmux socket are unknown, so absent.
        ts = _name_ts(path)
        if ts is None:
            raise SpoolError(f"{path.name}: not named <ts>-<pid>{BODY_SUFFIX}")
        return Delivery(headers={HEADER_ID: path.stem, HEADER_TS: str(ts)}, body=read_file(path))
    raise SpoolError(f"{path.name}: neither a {SPOOL_SUFFIX} file nor a {BODY_SUFFIX} body")


def pending_files(
    spool_dir: Path,
    stale_after: float = 10.0,
    now: float | None = None,
    warn: RateLimitedLog | None = None,
) -> list[Path]:
    """Every spooled event, plus bodies orphaned in .tmp, oldest source time first; `warn`:
    the owner's limiter for what is skipped (a daemon's keeps it to a line a while)."""
    now = time.time() if now is None else now
    warn = warn or RateLimitedLog(log)
    found: dict[str, Path] = {}
    if _linked(spool_dir, warn):
        return []
    tmp = spool_dir / TMP_DIR
    if not _linked(tmp, warn):
        for path, st in _regular(tmp, BODY_SUFFIX, warn):
            # A younger body may belong to a hook that is still delivering it.
            if now - st.st_mtime >= stale_after:
                found[path.stem] = path
    for path, _st in _regular(spool_dir, SPOOL_SUFFIX, warn):
        found[path.stem] = path  # the spool file has the headers the body lacks
    return sorted(found.values(), key=_order)


def _linked(folder: Path, warn: RateLimitedLog) -> bool:
    """A spool folder that is a symbolic link is never followed (said once)."""
    try:
        linked = stat.S_ISLNK(os.lstat(folder).st_mode)
    except OSError:
        return False
    if linked:
        warn.warning(("link", str(folder)), "%s is a symbolic link: not read; remove it", folder)
    return linked


def _regular(folder: Path, suffix: str, warn: RateLimitedLog) -> list[tuple[Path, os.stat_result]]:
    """The regular files named *suffix in folder (lstat: a symbolic link is skipped, unread)."""
    out: list[tuple[Path, os.stat_result]] = []
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        for entry in os.scandir(folder):
            if not entry.name.endswith(suffix):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # delivered or spooled while we looked
            if stat.S_ISREG(st.st_mode):
                out.append((Path(entry.path), st))
            elif stat.S_ISLNK(st.st_mode):
                warn.warning(
                    ("link", entry.path), "skipping %s: a symbolic link, not read", entry.name
                )
    return out


def remove(path: Path) -> None:
    """Forget a stored event: its spool file and any copy of its body left in .tmp."""
    spool_dir = path.parent.parent if path.parent.name == TMP_DIR else path.parent
    for leftover in (
        path,
        spool_dir / TMP_DIR / f"{path.stem}{BODY_SUFFIX}",
        spool_dir / TMP_DIR / f"{path.stem}{SPOOL_SUFFIX}",
    ):
        leftover.unlink(missing_ok=True)


async def watch_spool(
    spool_dir: Path, stop_event: asyncio.Event | None = None
) -> AsyncIterator[list[Path]]:
    """Yield the spool files that appear, in source-time order, until stop_event is set."""
    spool_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    watch = watch_dirs(
        lambda: {spool_dir},
        name="spool",
        debounce_ms=50,
        step_ms=10,
        recheck_ms=60_000,  # nothing to re-check: the sweeper finds what a watch could miss
    )
    stopped = asyncio.ensure_future((stop_event or asyncio.Event()).wait())
    step: asyncio.Future[set[str] | None] | None = None
    try:
        while True:
            step = asyncio.ensure_future(watch.__anext__())
            await asyncio.wait({step, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not step.done():
                return
            changes = step.result()
            # The hook writes in .tmp and renames into place, so a complete file appears as
            # added. Not recursive, so every name is directly in spool_dir (never in .tmp).
            paths = {spool_dir / Path(name).name for name in changes or ()}
            ready = sorted(
                (p for p in paths if p.name.endswith(SPOOL_SUFFIX) and _is_regular(p)), key=_order
            )
            if ready:
                yield ready
    except StopAsyncIteration:
        return
    finally:
        # The watch may be mid-step (we were stopped or cancelled): end that step first.
        waiting = [f for f in (stopped, step) if f is not None and not f.done()]
        for f in waiting:
            f.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
        await watch.aclose()


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _name_ts(path: Path) -> int | None:
    ts, dash, _pid = path.stem.partition("-")
    return int(ts) if dash and ts.isdigit() else None


def _order(path: Path) -> tuple[int, int, str]:
    # By the hook's start time; a name the script did not make sorts last rather than failing.
    ts = _name_ts(path)
    return (0, ts, path.name) if ts is not None else (1, 0, path.name)
