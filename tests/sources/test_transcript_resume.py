"""A transcript read tail first, its history summed after, and a restart from a stored offset."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents.claude.transcript import TranscriptReader, Turn
from purplemux.core.events import Event, TranscriptFacts
from purplemux.core.model import Session, Tokens
from purplemux.io.store import Store
from purplemux.sources.transcripts import HISTORY_AFTER, TAIL_FIRST, TAIL_START, TranscriptTailer
from tests.support import wait_for_async
from tests.support.transcripts import end, line, prompt, stops, turns

# Every fact a person sees from a transcript, beside the state.
SHOWN = ("tokens", "cost_usd", "cost_source", "context_tokens", "snippet", "model", "title")


def shown(reader: TranscriptReader) -> dict[str, Any]:
    return {name: getattr(reader.state, name) for name in SHOWN} | {"turn": reader.state.turn}


def line_starts(data: bytes) -> list[int]:
    return [0, *[i + 1 for i, b in enumerate(data) if b == 10][:-1]]


def test_tail_plus_history_is_a_full_read_wherever_the_tail_starts() -> None:
    data, _ = turns(12, seed=1)
    full = TranscriptReader("s")
    full.feed(data)
    for start in line_starts(data)[1:]:
        tail = TranscriptReader("s")
        tail.offset = tail._line_start = start
        tail.partial = tail.hold_totals = True
        held = tail.feed(data[start:])
        assert all(
            e.tokens is None and e.cost_usd is None for e in held if isinstance(e, TranscriptFacts)
        )
        history = TranscriptReader("s")
        history.quiet = True
        assert history.feed(data[:start], flush=False) == []
        tail.adopt(history, ":h")
        assert shown(tail) == shown(full), start
        merged = [e for e in tail.feed(b"") if isinstance(e, TranscriptFacts)]
        assert (
            merged
            and merged[0].tokens == full.state.tokens
            and merged[0].cost_usd == full.state.cost_usd
        )
        # A snapshot taken there and restored continues as the reader would have.
        partway = TranscriptReader("s")
        partway.feed(data[:start])
        resumed = TranscriptReader("s")
        assert resumed.restore(partway.snapshot(), (0, 0))
        assert resumed.offset == start
        resumed.feed(data[start:])
        assert shown(resumed) == shown(full), start


def test_a_tail_that_starts_inside_a_turn_replays_no_stop() -> None:
    data, _ = turns(3, seed=2)
    start = data.index(b'"uuid": "a2-0-0"')
    start = data.rindex(b"\n", 0, start) + 1  # inside turn 2, after its prompt
    tail = TranscriptReader("s")
    tail.offset = tail._line_start = start
    tail.partial = True
    assert stops(tail.feed(data[start:])) == []  # its prompt's id is unknown: no made-up Stop
    assert tail.state.turn is Turn.FINISHED


def test_a_bad_snapshot_is_refused() -> None:
    reader = TranscriptReader("s")
    assert not reader.restore({"v": 1, "offset": "x"}, (0, 0))
    assert not reader.restore({"v": 99}, (0, 0))
    assert reader.offset == 0 and reader.state.tokens == TranscriptReader("s").state.tokens


# A reader's state as the store kept it before the state became one dataclass (taken from
# turns(1, seed=5), one open tool call added): a daemon upgraded in place must continue from it.
STORED_V1: dict[str, Any] = {
    "v": 1, "offset": 2049, "quiet": False, "turn": "finished",
    "last_prompt_seen": 1767225600.0, "snippet": "answer 0.2 xxxxxxxxxxxxx",
    "model": "claude-sonnet-4-5", "tokens": [115, 1204, 18638, 1507], "context_tokens": 4794,
    "retries": 0, "title": None, "cost_usd": 0.029648, "cost_source": "computed",
    "claude_cost": None, "cost_since": 0.02964765, "requests": 0, "compacted": False,
    "last_ts": 1767225602.0, "anchor": "p0", "anchor_stopped": True,
    "usage": [["msg-0-0", 17, 387, 5874, 814], ["msg-0-1", 48, 334, 8684, 29],
              ["msg-0-2", 50, 483, 4080, 664]],
    "costs": [["msg-0-0", 0.0106707], ["msg-0-1", 0.00786795], ["msg-0-2", 0.011109]],
    "tools": [["toolu_1", "Bash"]],
    "touched": ["context_tokens", "cost_source", "cost_usd", "model", "retries", "snippet",
                "tokens"],
}  # fmt: skip


def test_a_snapshot_stored_by_the_previous_reader_still_loads() -> None:
    reader = TranscriptReader("s")
    assert reader.restore(STORED_V1, (1, 2))
    assert reader.offset == 2049 and reader.identity == (1, 2)
    assert (reader.state.snippet, reader.state.turn, reader.current_tool) == (
        "answer 0.2 xxxxxxxxxxxxx",
        Turn.FINISHED,
        "Bash",
    )
    assert reader.state.tokens == Tokens(115, 1204, 18638, 1507)
    assert reader.state.cost_usd == 0.029648
    # The same shape, with the fields added since (issue 25's limit wall) blank.
    added = {"quota_resets_at": None, "request_at": None}
    assert reader.snapshot() == STORED_V1 | {"tools": [("toolu_1", "Bash")]} | added
    # It continues as the reader that stored it would: the next turn adds to its totals.
    data, _ = turns(2, seed=5)
    whole = TranscriptReader("s")
    whole.identity = (1, 2)
    assert data[:2049] == turns(1, seed=5)[0]
    whole.feed(data[:2049])
    whole.state.tools = {"toolu_1": "Bash"}
    assert reader.feed(data[2049:]) == whole.feed(data[2049:])
    assert reader.state == whole.state


# --- the tailer --------------------------------------------------------------------------------


class Follow:
    """Drains a tailer's batches as the transcript part does, keeping each one."""

    def __init__(self, tailer: TranscriptTailer) -> None:
        self.tailer = tailer
        self.batches: list[list[Event]] = []
        self._agen: AsyncGenerator[list[Event], None] = tailer.events()
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async for batch in self._agen:
            self.batches.append(batch)

    @property
    def events(self) -> list[Event]:
        return [e for b in self.batches for e in b]

    async def until(self, done: Callable[[], object], timeout: float = 20.0) -> None:
        def ready() -> object:
            if self._task.done():
                self._task.result()  # the tailer failed: say how
            return done()

        await wait_for_async(ready, timeout=timeout)

    async def close(self) -> None:
        self._task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await self._task
        await self._agen.aclose()


def totals(events: list[Event]) -> TranscriptFacts | None:
    return next(
        (e for e in reversed(events) if isinstance(e, TranscriptFacts) and e.tokens is not None),
        None,
    )


def whole(data: bytes) -> TranscriptReader:
    reader = TranscriptReader("s")
    reader.feed(data)
    return reader


def stored(tmp_path: Path, rows: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    """Rows through a real store and back, as a restart loads them."""
    store = Store(tmp_path / "state.db")
    try:
        store.commit([], [Session(id=sid) for sid, _, _ in rows])
        store.save_transcript_offsets(rows)
        return store.load_transcript_offsets()
    finally:
        store.close()


def followed(path: Path) -> tuple[TranscriptTailer, Follow]:
    """A tailer (no timed rechecks) watching PATH as session "s", and a Follow of it."""
    tailer = TranscriptTailer(reader=TranscriptReader, tail_first=True, recheck_ms=60_000)
    tailer.watch("s", path)
    return tailer, Follow(tailer)


@pytest.mark.asyncio
async def test_big_transcript_state_and_answer_come_before_its_totals(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    data, answer = turns(400, seed=3)
    assert len(data) > 8 * TAIL_FIRST
    path.write_bytes(data)
    full = whole(data)
    tailer, follow = followed(path)
    try:
        await follow.until(lambda: totals(follow.events))
        first = follow.batches[0]
        facts = [e for e in first if isinstance(e, TranscriptFacts)]
        # The first batch: the newest turn's end and its last answer, no totals yet.
        assert stops(first) == ["tx:s:stop:p399"]
        assert [f.snippet for f in facts if f.snippet] == [answer.strip()[:200]]
        assert all(f.tokens is None and f.cost_usd is None for f in facts)
        got = totals(follow.events)
        assert (
            got is not None
            and got.tokens == full.state.tokens
            and got.cost_usd == full.state.cost_usd
        )
        assert got.cost_source == full.state.cost_source
        assert totals(first) is None  # the totals came in a later batch
        assert stops(follow.events) == ["tx:s:stop:p399"]  # older turns are not replayed
        s = tailer.stats
        assert s.history_bytes > 0 and s.bytes_read >= len(data) and s.backfill_pending == 0
        # Appended after: counted on top of the whole history.
        more, _ = turns(1, seed=4, first=400)
        with path.open("ab") as f:
            f.write(more)
        await follow.until(lambda: "tx:s:stop:p400" in stops(follow.events))
        await follow.until(lambda: totals(follow.events).tokens == whole(data + more).state.tokens)  # type: ignore[union-attr]
    finally:
        await follow.close()


@pytest.mark.asyncio
async def test_histories_wait_until_the_tails_events_are_handed_on(tmp_path: Path) -> None:
    """No history is summed while the batch of first reads is still with its consumer (the
    engine storing hundreds of tails at a start): summing would only slow it down."""
    data, _ = turns(400, seed=3)
    assert len(data) > 8 * TAIL_FIRST
    for sid in ("a", "b"):
        (tmp_path / f"{sid}.jsonl").write_bytes(data)
    tailer = TranscriptTailer(reader=TranscriptReader, tail_first=True, recheck_ms=60_000)
    for sid in ("a", "b"):
        tailer.watch(sid, tmp_path / f"{sid}.jsonl")
    agen = tailer.events()
    try:
        first = await agen.__anext__()  # both tails; not handed on yet
        assert {e.session_id for e in first} == {"a", "b"} and totals(first) is None
        assert tailer.stats.backfill_pending == 2
        await asyncio.sleep(3 * HISTORY_AFTER)  # the consumer is slow
        assert tailer.stats.history_bytes == 0  # nothing summed meanwhile
        # Handed on (the next batch asked for): the histories are summed, the totals follow.
        later: list[Event] = []
        while tailer.stats.backfill_pending or not totals(later):
            later += await asyncio.wait_for(agen.__anext__(), 20)
        assert tailer.stats.history_bytes > 0
        assert totals(later).tokens == whole(data).state.tokens  # type: ignore[union-attr]
    finally:
        await agen.aclose()


@pytest.mark.asyncio
async def test_restart_continues_from_the_stored_offset(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    data, _ = turns(200, seed=5)
    path.write_bytes(data)
    tailer, follow = followed(path)
    rows: list[tuple[str, str, dict[str, Any]]] = []
    try:
        await follow.until(
            lambda: (
                rows.extend(tailer.checkpoint())
                or any(
                    r[2]["state"]["offset"] == len(data) and not r[2]["state"]["quiet"]
                    for r in rows
                )
            )
        )
    finally:
        await follow.close()
    more, _answer = turns(2, seed=6, first=200)
    with path.open("ab") as f:
        f.write(more)
    again = TranscriptTailer(reader=TranscriptReader, tail_first=True, recheck_ms=60_000)
    again.remember(stored(tmp_path, rows[-1:]))
    again.watch("s", path)
    follow = Follow(again)
    try:
        full = whole(data + more)
        await follow.until(lambda: "tx:s:stop:p201" in stops(follow.events))
        got = totals(follow.events)
        assert (
            got is not None
            and got.tokens == full.state.tokens
            and got.cost_usd == full.state.cost_usd
        )
        assert stops(follow.events) == ["tx:s:stop:p200", "tx:s:stop:p201"]
        s = again.stats
        assert (s.resumed, s.started_over, s.history_bytes) == (1, 0, 0)
        assert s.bytes_read == len(more)  # only what was appended while it was down
    finally:
        await follow.close()


@pytest.mark.parametrize("how", ["replaced", "truncated"])
@pytest.mark.asyncio
async def test_a_replaced_or_truncated_file_starts_over(tmp_path: Path, how: str) -> None:
    path = tmp_path / "s.jsonl"
    data, _ = turns(60, seed=7)
    path.write_bytes(data)
    reader = whole(data)
    st = path.stat()
    rows = [("s", str(path), {"dev": st.st_dev, "ino": st.st_ino, "state": reader.snapshot()})]
    new, _ = turns(3, seed=8)
    if how == "replaced":
        other = tmp_path / "new.jsonl"
        other.write_bytes(data + new)  # longer than the stored offset, but another file
        os.replace(other, path)
    else:
        with path.open("r+b") as f:
            f.truncate(0)
            f.write(new)
    content = path.read_bytes()
    tailer = TranscriptTailer(reader=TranscriptReader, tail_first=True, recheck_ms=60_000)
    tailer.remember(stored(tmp_path, rows))
    tailer.watch("s", path)
    follow = Follow(tailer)
    try:
        await follow.until(lambda: totals(follow.events) and tailer.stats.backfill_pending == 0)
        got = totals(follow.events)
        assert got is not None and got.tokens == whole(content).state.tokens
        assert (tailer.stats.resumed, tailer.stats.started_over) == (0, 1)
    finally:
        await follow.close()


def test_retention_drops_the_offsets_of_pruned_sessions(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.db")
    try:
        old = Session(id="old", ended=True, updated_at=100.0)
        kept = Session(id="kept", updated_at=100.0)
        store.commit([], [old, kept])
        snap = {"dev": 1, "ino": 2, "state": TranscriptReader("x").snapshot()}
        store.save_transcript_offsets([("old", "/p/old", snap), ("kept", "/p/kept", snap)])
        ids, _ = store.prune(cutoff=200.0, max_events=100)
        assert ids == ["old"]
        left = store.db.execute("SELECT session_id FROM transcript_offsets").fetchall()
        assert left == [("kept",)]
    finally:
        store.close()


@pytest.mark.asyncio
async def test_a_tail_grows_to_hold_the_newest_prompt(tmp_path: Path) -> None:
    """A newest turn bigger than the first tail (a long tool result): still its own Stop."""
    path = tmp_path / "s.jsonl"
    data, _ = turns(100, seed=9)
    result = {"type": "tool_result", "tool_use_id": "t", "content": "y" * (8 * TAIL_START)}
    text = {"id": "m", "model": "m1", "content": [{"type": "text", "text": "done"}]}
    big = (
        prompt("p100", ts="2026-01-02T00:00:00Z")
        + line(type="user", uuid="r", message={"role": "user", "content": [result]})
        + line(type="assistant", uuid="a", timestamp="2026-01-02T00:00:01Z", message=text)
        + end("e100")
    )
    path.write_bytes(data + big)
    tailer, follow = followed(path)
    try:
        await follow.until(lambda: follow.batches)
        assert stops(follow.batches[0]) == ["tx:s:stop:p100"]
        assert tailer.stats.tail_bytes > len(big)
    finally:
        await follow.close()


@pytest.mark.asyncio
async def test_the_offsets_store_is_woken_only_by_reading(tmp_path: Path) -> None:
    """`read_further` (what the part storing the offsets waits on) is set when a transcript was
    read further, so checkpoint has rows then; nothing read, nothing set: no timer while quiet."""
    path = tmp_path / "s.jsonl"
    data, _ = turns(3, seed=7)
    path.write_bytes(data)
    tailer, follow = followed(path)
    rows: list[tuple[str, str, dict[str, Any]]] = []
    try:
        await follow.until(
            lambda: (
                tailer.read_further.is_set()
                and (rows.extend(tailer.checkpoint()) or rows)
                and rows[-1][2]["state"]["offset"] == len(data)
            )
        )
        tailer.read_further.clear()
        await asyncio.sleep(3 * HISTORY_AFTER)  # quiet: nothing read
        assert not tailer.read_further.is_set() and tailer.checkpoint() == []
        more, _ = turns(1, seed=8, first=3)
        with path.open("ab") as f:
            f.write(more)
        await follow.until(lambda: tailer.read_further.is_set())
        await follow.until(lambda: rows.extend(tailer.checkpoint()) or len(rows) > 1)
        assert rows[-1][2]["state"]["offset"] == len(data) + len(more)
    finally:
        await follow.close()
