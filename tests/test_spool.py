"""The spool folder: parsing what the hook script wrote, the drain order, and the watcher."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path

import pytest

from purplemux.sources.spool import (
    Delivery,
    SpoolError,
    parse_spool,
    pending_files,
    read_delivery,
    remove,
    watch_spool,
)
from tests.support import wait_for_async

BODY = b'{"session_id": "s1", "hook_event_name": "Stop", "text": "a\\n\\nb"}\n'


def spool_bytes(event_id: str, pane: str = "%0", tmux: str = "/tmp/tmux-0/default,1,0") -> bytes:
    ts = event_id.split("-")[0]
    head = (
        f"X-Purplemux-Event-Id: {event_id}\nX-Purplemux-Ts: {ts}\n"
        f"X-Purplemux-Pane: {pane}\nX-Purplemux-Tmux: {tmux}\n\n"
    )
    return head.encode() + BODY


def put(spool: Path, event_id: str) -> Path:
    """Spool an event the way the hook script does: write in .tmp, rename into place."""
    (spool / ".tmp").mkdir(parents=True, exist_ok=True)
    part = spool / ".tmp" / f"{event_id}.spool"
    part.write_bytes(spool_bytes(event_id))
    final = spool / f"{event_id}.spool"
    os.replace(part, final)
    return final


def test_parse_gives_headers_and_the_exact_body() -> None:
    tmux = "/tmp/my \"odd\" 'socket',123,0"
    got = parse_spool(spool_bytes("1700000000123456789-42", pane="", tmux=tmux))
    assert got == Delivery(
        headers={
            "x-purplemux-event-id": "1700000000123456789-42",
            "x-purplemux-ts": "1700000000123456789",
            "x-purplemux-pane": "",
            "x-purplemux-tmux": tmux,
        },
        body=BODY,
    )


def test_parse_keeps_a_body_with_blank_lines_and_any_bytes() -> None:
    body = b"\n\nnot json at all \xff\x00\r\n\n"
    data = b"X-Purplemux-Event-Id: 1-2\nX-Purplemux-Ts: 1\n\n" + body
    assert parse_spool(data).body == body


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"", "no empty line"),
        (b"X-Purplemux-Event-Id: 1-2\nX-Purplemux-Ts: 1\n{}", "no empty line"),
        (b"X-Purplemux-Ts: 1\n\n{}", "missing header x-purplemux-event-id"),
        (b"X-Purplemux-Event-Id: 1-2\n\n{}", "missing header x-purplemux-ts"),
        (b"X-Purplemux-Event-Id: 1-2\nX-Purplemux-Ts: soon\n\n{}", "not a number"),
        (b"X-Purplemux-Event-Id: 1-2\nX-Purplemux-Ts: 1\ngarbage\n\n{}", "line 3"),
        (b"X-Purplemux-Event-Id: 1-2\nX-Purplemux-Ts: 1\nX-Purplemux-Ts: 2\n\n{}", "twice"),
        (b"\n\n{}", "line 1"),
        (b"X-\xffName: x\n\n{}", "not ASCII"),
    ],
)
def test_parse_rejects_what_the_script_never_writes(data: bytes, why: str) -> None:
    with pytest.raises(SpoolError, match=why):
        parse_spool(data)
    assert issubclass(SpoolError, ValueError)


def test_pending_files_in_source_time_order(tmp_path: Path) -> None:
    # Numeric order, not by name: 999... sorts before 1000... although "9" > "1".
    for event_id in ("1000000000000000001-7", "999999999999999999-9", "1000000000000000001-5"):
        put(tmp_path, event_id)
    (tmp_path / "README").write_text("not a spool file")
    assert [p.name for p in pending_files(tmp_path)] == [
        "999999999999999999-9.spool",
        "1000000000000000001-5.spool",
        "1000000000000000001-7.spool",
    ]


def test_pending_files_of_a_missing_folder(tmp_path: Path) -> None:
    assert pending_files(tmp_path / "nope") == []


def test_stale_bodies_in_tmp_are_picked_up(tmp_path: Path) -> None:
    tmp = tmp_path / ".tmp"
    tmp.mkdir()
    orphan = tmp / "1700000000000000000-11.json"  # the hook died after saving stdin
    orphan.write_bytes(BODY)
    young = tmp / "1700000000000000002-12.json"  # a hook still delivering it
    young.write_bytes(BODY)
    spooled_too = tmp / "1700000000000000003-13.json"  # killed between mv and rm
    spooled_too.write_bytes(BODY)
    half = tmp / "1700000000000000004-14.spool"  # never renamed: its body is still in .tmp
    half.write_bytes(b"X-Purp")
    now = time.time()
    for path in (orphan, spooled_too):
        os.utime(path, (now - 30, now - 30))
    spooled = put(tmp_path, "1700000000000000003-13")
    put(tmp_path, "1600000000000000000-1")

    found = pending_files(tmp_path, stale_after=10.0, now=now)
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "1600000000000000000-1.spool",
        ".tmp/1700000000000000000-11.json",
        "1700000000000000003-13.spool",
    ]
    # Once old enough, the young body counts too.
    assert young in pending_files(tmp_path, stale_after=10.0, now=now + 60)

    assert read_delivery(found[1]) == Delivery(
        headers={
            "x-purplemux-event-id": "1700000000000000000-11",
            "x-purplemux-ts": "1700000000000000000",
        },
        body=BODY,
    )
    assert read_delivery(spooled).headers["x-purplemux-pane"] == "%0"


def test_read_delivery_rejects_foreign_names(tmp_path: Path) -> None:
    for name in ("notes.txt", "whatever.json"):
        path = tmp_path / name
        path.write_bytes(BODY)
        with pytest.raises(SpoolError):
            read_delivery(path)


def test_remove_forgets_the_event_and_ignores_missing_files(tmp_path: Path) -> None:
    path = put(tmp_path, "1700000000000000000-1")
    (tmp_path / ".tmp" / "1700000000000000000-1.json").write_bytes(BODY)
    remove(path)
    remove(path)  # twice: no error
    assert pending_files(tmp_path, stale_after=0) == []
    orphan = tmp_path / ".tmp" / "1700000000000000000-2.json"
    orphan.write_bytes(BODY)
    remove(orphan)
    assert list((tmp_path / ".tmp").iterdir()) == []


async def _next_batch(batches: asyncio.Queue[list[Path]], timeout: float = 5.0) -> list[Path]:
    return await asyncio.wait_for(batches.get(), timeout)


@pytest.mark.asyncio
async def test_watcher_sees_new_spool_files_and_nothing_else(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    stop = asyncio.Event()
    batches: asyncio.Queue[list[Path]] = asyncio.Queue()
    ready = asyncio.Event()

    async def consume() -> None:
        watcher = watch_spool(spool, stop_event=stop)
        ready.set()
        async for batch in watcher:
            await batches.put(batch)

    task = asyncio.create_task(consume())
    try:
        await ready.wait()
        # The watcher creates the folder; wait for it, then give inotify a file to report.
        await wait_for_async(spool.is_dir, timeout=5, what="watch_spool to create the folder")
        deadline = time.monotonic() + 5
        # Keep writing until the watcher has started (awatch has no "ready" signal).
        first: list[Path] = []
        n = 0
        while not first:
            assert time.monotonic() < deadline, "watcher never reported a spool file"
            n += 1
            put(spool, f"17000000000000000{n:02d}-1")
            with contextlib.suppress(TimeoutError):
                first = await _next_batch(batches, timeout=0.2)
        warm_up = set(first)

        (spool / ".tmp" / "1800000000000000000-9.json").write_bytes(BODY)  # ignored: .tmp
        (spool / "notes.txt").write_text("ignored")
        path = put(spool, "1800000000000000000-9")
        # A late batch of the warm-up files may come first; anything else would be a bug.
        batch = await _next_batch(batches)
        while path not in batch:
            warm_up.update(batch)
            batch = await _next_batch(batches)
        assert batch == [path]
        assert read_delivery(path).body == BODY
        assert all(p.parent == spool and p.name.startswith("17") for p in warm_up)
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)
