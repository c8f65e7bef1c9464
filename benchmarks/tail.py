"""Transcript tail: the cost of one appended line in a 1 MB vs a 1 GB transcript, and a 10 MB line.

The transcripts are real JSONL (benchmarks/fixtures.py), generated once into the cache folder.
A reader is put near the end (64 KiB before it, at a line start) and catches up; then lines are
appended one at a time and each is read through the tailer's own read step (`_read_new`: open,
fstat, seek to the reader's offset, read, parse, events), timed per line. The appended lines are
cut off again afterwards, so the cached file is unchanged. The same is timed end to end through a
TranscriptTailer (append -> its batch of events, inotify and debounce included). Last, a single
10 MB line (a pasted blob): the time to skip it and parse the line after it.

    python -m benchmarks.tail [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import Stats, cache_root, tempdir
from benchmarks.fixtures import TurnWriter, write_transcript
from purplemux.agents.claude.transcript import TranscriptReader
from purplemux.core.events import TranscriptFacts
from purplemux.sources.transcripts import TranscriptTailer, _read_new, _Watched

SID = "3f9e2c1a-8b7d-4c6e-9a5f-0e1d2c3b4a59"
CWD = "/home/dev/work/tail"
NEAR_END = 64 << 10


def ensure_file(folder: Path, size: int) -> Path:
    """A cached transcript of about `size` bytes (made once)."""
    label = f"{size >> 20}m" if size < 1 << 30 else f"{size >> 30}g"
    path = folder / f"transcript-{label}.jsonl"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        write_transcript(path, size, SID, CWD, seed=size)
    return path


def _line_start_before_end(path: Path, back: int) -> int:
    """The offset of the first line that starts at least `back` bytes before the end."""
    size = path.stat().st_size
    if size <= back:
        return 0
    with open(path, "rb") as f:
        f.seek(size - back)
        f.readline()
        return f.tell()


def _appended_lines(n: int, seed: int) -> list[bytes]:
    writer = TurnWriter(SID, CWD, seed=seed, t0=1_800_000_000.0)
    return [
        (writer.assistant_text(f"Appended answer number {i}.") + "\n").encode() for i in range(n)
    ]


def per_line_costs(path: Path, n: int) -> list[float]:
    """Microseconds to read and parse each of n lines appended one by one (via _read_new)."""
    size = path.stat().st_size
    w = _Watched(path, TranscriptReader(SID), TranscriptReader)
    w.reader.sync(os.stat(path))
    w.reader.offset = _line_start_before_end(path, NEAR_END)
    w.fresh = False  # placed by hand: not a first read (which would go tail first)
    _read_new(w)  # catch up to the end (not timed)
    assert w.reader.offset == size, (w.reader.offset, size)
    times: list[float] = []
    try:
        with open(path, "ab", buffering=0) as f:
            for line in _appended_lines(n, seed=n):
                f.write(line)
                start = time.perf_counter()
                events = _read_new(w)
                times.append((time.perf_counter() - start) * 1e6)
                if not any(isinstance(e, TranscriptFacts) for e in events):
                    raise RuntimeError(f"an appended line gave no event: {events}")
    finally:
        os.truncate(path, size)
    return times


async def _tailer_latencies(path: Path, n: int) -> list[float]:
    size = path.stat().st_size
    tailer = TranscriptTailer(reader=TranscriptReader, tail_first=True)
    tailer.watch(SID, path)
    # Start near the end, as a daemon that has followed this file for a while would be: the
    # tailer itself always starts a newly watched file from its first byte.
    tailer._watched[SID].reader.offset = _line_start_before_end(path, NEAR_END)
    got: asyncio.Queue[float] = asyncio.Queue()

    async def consume() -> None:
        async for batch in tailer.events():
            if any(isinstance(e, TranscriptFacts) for e in batch):
                got.put_nowait(time.perf_counter())

    task = asyncio.create_task(consume())
    times: list[float] = []
    try:
        await asyncio.wait_for(got.get(), 30)  # the catch-up batch
        await asyncio.sleep(0.05)
        with open(path, "ab", buffering=0) as f:
            for line in _appended_lines(n, seed=n + 1):
                start = time.perf_counter()
                f.write(line)
                seen = await asyncio.wait_for(got.get(), 10)
                times.append((seen - start) * 1000)
                await asyncio.sleep(0.02)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        os.truncate(path, size)
    return times


def tailer_latencies(path: Path, n: int) -> list[float]:
    """Milliseconds from appending a line to the TranscriptTailer yielding its event."""
    return asyncio.run(_tailer_latencies(path, n))


def long_line_costs(folder: Path, n: int, long_bytes: int = 10 << 20) -> list[float]:
    """Milliseconds to skip one `long_bytes` line and parse the (normal) line after it."""
    path = folder / "long-line.jsonl"
    writer = TurnWriter(SID, CWD, seed=7)
    head = "\n".join(writer.turn()) + "\n"
    blob = '{"type":"user","message":{"role":"user","content":"' + "x" * long_bytes + '"}}\n'
    tail = writer.assistant_text("The line after the blob.") + "\n"
    path.write_text(head + blob + tail)
    start_of_blob = len(head)
    times: list[float] = []
    for _ in range(n):
        w = _Watched(path, TranscriptReader(SID), TranscriptReader)
        w.reader.sync(os.stat(path))
        w.reader.offset = start_of_blob
        w.fresh = False
        start = time.perf_counter()
        events = _read_new(w)
        times.append((time.perf_counter() - start) * 1000)
        facts = [e for e in events if isinstance(e, TranscriptFacts)]
        if not facts or facts[-1].snippet != "The line after the blob.":
            raise RuntimeError("the line after the long line was not parsed")
    path.unlink()
    return times


@dataclass
class TailResult:
    small_bytes: int
    big_bytes: int
    small: list[float]  # us per line
    big: list[float]
    tail_small: list[float]  # ms append -> event through TranscriptTailer
    tail_big: list[float]
    long_line: list[float]  # ms
    long_bytes: int

    @property
    def ratio(self) -> float:
        return Stats.of(self.big).median / Stats.of(self.small).median


def run(folder: Path, big: int, lines: int, tail_samples: int, long_runs: int) -> TailResult:
    small_path = ensure_file(folder, 1 << 20)
    big_path = ensure_file(folder, big)
    # Interleave the two files' rounds so that a busy spell of the machine hits both alike.
    small: list[float] = []
    bigs: list[float] = []
    for _ in range(5):
        small += per_line_costs(small_path, lines // 5)
        bigs += per_line_costs(big_path, lines // 5)
    return TailResult(
        small_bytes=small_path.stat().st_size,
        big_bytes=big_path.stat().st_size,
        small=small,
        big=bigs,
        tail_small=tailer_latencies(small_path, tail_samples),
        tail_big=tailer_latencies(big_path, tail_samples),
        long_line=long_line_costs(folder, long_runs),
        long_bytes=10 << 20,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 32 MB file instead of 1 GB")
    args = parser.parse_args()
    with tempdir("purplemux-bench-tail-") as name:
        folder = Path(name) if args.quick else cache_root() / "tail"
        r = run(folder, (32 << 20) if args.quick else (1 << 30), 500, 30, 10)
    for label, values, unit in (
        (f"{r.small_bytes >> 20} MB, per line", r.small, "us"),
        (f"{r.big_bytes >> 20} MB, per line", r.big, "us"),
        ("append -> tailer event, small", r.tail_small, "ms"),
        ("append -> tailer event, big", r.tail_big, "ms"),
        ("10 MB line: skip + next line", r.long_line, "ms"),
    ):
        s = Stats.of(values)
        print(f"{label:<34} {s.min:8.2f} / {s.median:8.2f} / {s.max:8.2f} {unit}")
    print(f"ratio big/small (median): {r.ratio:.2f}")


if __name__ == "__main__":
    main()
