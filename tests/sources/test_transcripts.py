"""The transcript parser and tailer, against the real samples and temp files."""

from __future__ import annotations

import asyncio
import os
import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents.claude.transcript import (
    MAX_LINE,
    TranscriptReader,
    Turn,
    read_tail_state,
    transcript_path,
)
from purplemux.core.events import Event, Interrupt, Source, Stop, StopFailure, TranscriptFacts
from purplemux.core.model import Tokens
from purplemux.sources import transcripts
from purplemux.sources.transcripts import TranscriptTailer, _read_new, _Watched
from tests.support import wait_for_async
from tests.support.transcripts import collect, end, line, prompt, stops

FIRST = "054cd48c-887f-45cb-8bc0-ebcb7e4963ae"
SECOND = "d609f628-538a-4c5d-85ed-fe6cd59e8601"


def assistant(uuid: str, mid: str, blocks: list[dict[str, Any]], **extra: Any) -> bytes:
    usage = extra.pop("usage", {"input_tokens": 3, "output_tokens": 2})
    message = {"id": mid, "model": "m1", "role": "assistant", "content": blocks, "usage": usage}
    return line(
        type="assistant", uuid=uuid, timestamp="2026-01-01T00:00:01Z", message=message, **extra
    )


def user(uuid: str, content: Any, **extra: Any) -> bytes:
    """A user entry (not a prompt: an interrupt, a tool result) with that message content."""
    return line(type="user", uuid=uuid, message={"content": content}, **extra)


def state_events(events: list[Event]) -> list[Event]:
    return [e for e in events if not isinstance(e, TranscriptFacts)]


def facts(events: list[Event]) -> dict[str, object]:
    """Fold TranscriptFacts as the machine does: None means unchanged."""
    out: dict[str, object] = {}
    for e in events:
        if isinstance(e, TranscriptFacts):
            for name in ("snippet", "tokens", "model", "current_tool"):
                if getattr(e, name) is not None:
                    out[name] = getattr(e, name)
    return out


def test_transcript_path() -> None:
    path = transcript_path(Path("/c"), "/home/dev/my_proj.v2", "abc")
    assert path == Path("/c/projects/-home-dev-my-proj-v2/abc.jsonl")


def test_sample_events(samples: Path) -> None:
    reader = TranscriptReader(FIRST)
    events = reader.feed((samples / "transcripts" / f"{FIRST}.jsonl").read_bytes())
    kinds = [type(e) for e in state_events(events)]
    # Three finished turns (each has both end-of-turn subtypes) and one Esc.
    assert kinds == [Stop, Stop, Interrupt, Stop]
    assert all(e.source is Source.TRANSCRIPT for e in events)
    interrupt = next(e for e in events if isinstance(e, Interrupt))
    assert interrupt.id == f"tx:{FIRST}:f6ee9ce3-1be0-4f84-b209-240c2ff43c4f"
    assert interrupt.at == pytest.approx(1795991948.617)  # 2026-11-29T22:39:08.617Z
    first_stop = events[0]
    assert first_stop.id == f"tx:{FIRST}:stop:9c79e2aa-5738-418f-948c-37547afaac0f"
    assert first_stop.at == pytest.approx(1795991928.464)  # the stop_hook_summary entry
    # Five messages of 50 in / 10 out; two of them written as two entries each.
    assert reader.state.tokens == Tokens(input=250, output=50)
    assert (reader.state.snippet, reader.state.model, reader.current_tool) == (
        "Done.",
        "claude-opus-4-8",
        "",
    )
    assert reader.state.turn is Turn.FINISHED
    assert reader.state.last_prompt_seen == pytest.approx(1795991951.790)  # "FAIL:400 please"


def test_reread_gives_same_ids(samples: Path) -> None:
    data = (samples / "transcripts" / f"{FIRST}.jsonl").read_bytes()
    first = TranscriptReader(FIRST).feed(data)
    again = TranscriptReader(FIRST).feed(data)
    assert [e.id for e in first] == [e.id for e in again]


@pytest.mark.parametrize("name", [FIRST, SECOND])
@pytest.mark.parametrize("seed", range(8))
def test_random_chunks_same_as_whole(samples: Path, name: str, seed: int) -> None:
    data = (samples / "transcripts" / f"{name}.jsonl").read_bytes()
    whole_reader = TranscriptReader(name)
    whole = whole_reader.feed(data)
    rng = random.Random(seed)
    reader = TranscriptReader(name)
    chunked: list[Event] = []
    pos = 0
    while pos < len(data):
        size = rng.choice([1, 2, 7, 100, 1000, 5000])
        chunked += reader.feed(data[pos : pos + size])
        pos += size
    assert state_events(chunked) == state_events(whole)
    assert facts(chunked) == facts(whole)
    assert reader.offset == whole_reader.offset == len(data)
    assert (reader.state.tokens, reader.state.snippet, reader.state.turn) == (
        whole_reader.state.tokens,
        whole_reader.state.snippet,
        whole_reader.state.turn,
    )


def test_partial_line_waits_for_newline() -> None:
    reader = TranscriptReader("s")
    data = prompt("p1") + end("e1")
    cut = len(data) - 5
    assert state_events(reader.feed(data[:cut])) == []
    assert reader.offset == cut  # consumed, buffered
    got = reader.feed(data[cut:])
    assert [type(e) for e in got] == [Stop]


def test_one_stop_per_turn() -> None:
    reader = TranscriptReader("s")
    events = reader.feed(
        prompt("p1")
        + assistant("a1", "m1", [{"type": "text", "text": "hi"}])
        + end("e1", "stop_hook_summary")
        + end("e2", "turn_duration")
        + prompt("p2")
        + end("e3", "stop_hook_summary")
        + end("e4", "turn_duration")
    )
    stops = [e for e in events if isinstance(e, Stop)]
    assert [e.id for e in stops] == ["tx:s:stop:p1", "tx:s:stop:p2"]


def test_meta_command_and_summary_are_not_prompts() -> None:
    reader = TranscriptReader("s")
    reader.feed(prompt("p1", ts="2026-01-01T00:00:00Z") + end("e1"))
    for extra in (
        {
            "isMeta": True,
            "message": {"content": "<local-command-caveat>Caveat</local-command-caveat>"},
        },
        {"message": {"content": "<local-command-stdout>Goodbye!</local-command-stdout>"}},
        {"isCompactSummary": True, "message": {"content": "This session is being continued"}},
        {"message": {"content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}},
    ):
        reader.feed(line(type="user", uuid="u", timestamp="2026-01-01T01:00:00Z", **extra))
    assert reader.state.last_prompt_seen == pytest.approx(1767225600.0)
    assert reader.state.turn is Turn.FINISHED


def test_interrupt_as_string_and_block() -> None:
    reader = TranscriptReader("s")
    events = reader.feed(
        prompt("p1")
        + user("i1", "[Request interrupted by user]", timestamp="2026-01-01T00:00:05Z")
        + prompt("p2")
        + user(
            "i2",
            [{"type": "text", "text": "[Request interrupted by user for tool use]"}],
            timestamp="2026-01-01T00:00:09Z",
        )
        + end("late")  # no Stop for an interrupted turn
    )
    assert [(type(e), e.id) for e in state_events(events)] == [
        (Interrupt, "tx:s:i1"),
        (Interrupt, "tx:s:i2"),
    ]
    assert reader.state.turn is Turn.INTERRUPTED


def test_api_error_is_stop_failure() -> None:
    reader = TranscriptReader("s")
    events = reader.feed(
        prompt("p1")
        + assistant(
            "a1", "x", [{"type": "text", "text": "API Error: 400 bad"}], isApiErrorMessage=True
        )
    )
    failure = next(e for e in events if isinstance(e, StopFailure))
    assert (failure.error, failure.id) == ("API Error: 400 bad", "tx:s:a1")
    assert reader.state.turn is Turn.FAILED


def test_sidechain_ignored() -> None:
    reader = TranscriptReader("s")
    events = reader.feed(
        prompt("p1")
        + assistant("a1", "m-side", [{"type": "text", "text": "sub"}], isSidechain=True)
        + user("i", "[Request interrupted by user]", isSidechain=True)
        + end("e", "turn_duration")[:-1]
        + b"\n"
    )
    assert [type(e) for e in state_events(events)] == [Stop]
    assert reader.state.tokens == Tokens() and reader.state.snippet is None


def test_tokens_once_per_message_newest_usage_wins() -> None:
    reader = TranscriptReader("s")
    reader.feed(
        prompt("p")
        + assistant(
            "a1",
            "m1",
            [{"type": "text", "text": "a"}],
            usage={"input_tokens": 10, "output_tokens": 1},
        )
        + assistant(
            "a2",
            "m1",
            [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}],
            usage={"input_tokens": 10, "output_tokens": 7, "cache_read_input_tokens": 4},
        )
        + assistant(
            "a3",
            "m2",
            [{"type": "text", "text": "b"}],
            usage={"input_tokens": 5, "output_tokens": 5, "cache_creation_input_tokens": 2},
        )
    )
    assert reader.state.tokens == Tokens(input=15, output=12, cache_read=4, cache_creation=2)


def test_current_tool_until_result() -> None:
    reader = TranscriptReader("s")
    got = reader.feed(
        prompt("p") + assistant("a", "m", [{"type": "tool_use", "id": "t1", "name": "Bash"}])
    )
    assert facts(got)["current_tool"] == "Bash"
    got = reader.feed(user("r", [{"type": "tool_result", "tool_use_id": "t1"}]))
    assert facts(got) == {"current_tool": ""}


def test_garbage_skipped() -> None:
    reader = TranscriptReader("s")
    junk = b"\xff\xfe\x00garbage\n" + b"{not json\n" + b"[1,2]\n" + b"\n" + b"[" * 100_000 + b"\n"
    junk += '{"type":"user","message":{"content":"caf\xe9"}}\n'.encode("latin-1")
    events = reader.feed(junk + prompt("p") + end("e"))
    assert [type(e) for e in state_events(events)] == [Stop]


def test_huge_line_skipped_without_buffering() -> None:
    reader = TranscriptReader("s")
    huge = b'{"type":"user","message":{"content":"' + b"x" * (10 * 1024 * 1024) + b'"}}\n'
    data = prompt("p") + huge + end("e")
    view = memoryview(data)
    events: list[Event] = []
    tracemalloc.start()
    try:
        for i in range(0, len(data), 256 * 1024):
            events += reader.feed(bytes(view[i : i + 256 * 1024]))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * MAX_LINE  # the 10 MB line was never held whole
    assert [type(e) for e in state_events(events)] == [Stop]
    assert reader.offset == len(data)
    # And as one single chunk.
    whole = TranscriptReader("s").feed(data)
    assert [type(e) for e in state_events(whole)] == [Stop]


def test_sync_detects_truncation_and_replacement(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(prompt("p") + end("e"))
    reader = TranscriptReader("s")
    assert not reader.sync(path.stat())
    reader.feed(path.read_bytes())
    path.write_bytes(prompt("q"))  # shorter: truncated and rewritten
    assert reader.sync(path.stat()) and reader.offset == 0
    reader.feed(path.read_bytes())
    other = tmp_path / "new.jsonl"
    other.write_bytes(prompt("q") + end("e") + end("f") + end("g"))  # longer, another inode
    os.replace(other, path)
    assert reader.sync(path.stat()) and reader.offset == 0


def test_read_tail_state(tmp_path: Path, samples: Path) -> None:
    for name in (FIRST, SECOND):
        assert read_tail_state(samples / "transcripts" / f"{name}.jsonl") is Turn.FINISHED
    path = tmp_path / "t.jsonl"
    assert read_tail_state(path) is Turn.NONE
    path.write_bytes(prompt("p") + assistant("a", "m", [{"type": "text", "text": "working"}]))
    assert read_tail_state(path) is Turn.IN_PROGRESS
    path.write_bytes(
        prompt("p")
        + line(type="user", uuid="i", message={"content": "[Request interrupted by user]"})
    )
    assert read_tail_state(path) is Turn.INTERRUPTED
    # A tail that starts inside a huge line still finds the end of the turn.
    path.write_bytes(prompt("p") + b'{"x":"' + b"y" * 3000 + b'"}\n' + end("e"))
    assert read_tail_state(path, tail=1000) is Turn.FINISHED


# --- the tailer ------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_tailer_initial_read_and_appends(tmp_path: Path) -> None:
    path = tmp_path / "proj" / "s.jsonl"
    path.parent.mkdir()
    path.write_bytes(prompt("p1") + end("e1"))
    tailer = TranscriptTailer(
        reader=TranscriptReader, tail_first=True, recheck_ms=60_000
    )  # inotify alone must do it
    tailer.watch("s", path)
    agen = tailer.events()
    try:
        got = await collect(agen, lambda ev: "tx:s:stop:p1" in stops(ev))
        assert all(e.session_id == "s" for e in got)
        with path.open("ab") as f:
            data = prompt("p2") + end("e2")
            f.write(data[:10])  # a partial line: nothing yet
            f.flush()
            f.write(data[10:])
        got = await collect(agen, lambda ev: "tx:s:stop:p2" in stops(ev))
        assert "tx:s:stop:p1" not in stops(got)  # incremental: the old turn is not re-read
    finally:
        await agen.aclose()


@pytest.mark.asyncio
async def test_tailer_truncation_replacement_deletion(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(prompt("p1") + end("e1") + prompt("p2") + end("e2"))
    tailer = TranscriptTailer(
        reader=TranscriptReader, tail_first=True, recheck_ms=60_000
    )  # inotify alone must do it
    tailer.watch("s", path)
    agen = tailer.events()
    try:
        await collect(agen, lambda ev: "tx:s:stop:p2" in stops(ev))
        path.write_bytes(prompt("t1") + end("x"))  # truncated and rewritten in place
        await collect(agen, lambda ev: "tx:s:stop:t1" in stops(ev))
        tmp = tmp_path / "other"
        tmp.write_bytes(prompt("r1") + end("x") + prompt("r2") + end("y") + prompt("r3") + end("z"))
        os.replace(tmp, path)  # replaced: a new inode, read from 0
        got = await collect(agen, lambda ev: "tx:s:stop:r3" in stops(ev))
        assert "tx:s:stop:r1" in stops(got)
        path.unlink()  # deleted: the tailer just waits
        path.write_bytes(prompt("n1") + end("x"))
        await collect(agen, lambda ev: "tx:s:stop:n1" in stops(ev))
    finally:
        await agen.aclose()


@pytest.mark.asyncio
async def test_tailer_picks_up_file_and_folder_created_later(tmp_path: Path) -> None:
    path = tmp_path / "projects" / "-proj" / "s.jsonl"
    tailer = TranscriptTailer(
        reader=TranscriptReader, tail_first=True, recheck_ms=60_000
    )  # inotify alone must do it
    agen = tailer.events()
    first = asyncio.ensure_future(collect(agen, lambda ev: "tx:s:stop:p1" in stops(ev)))
    try:
        # The tailer runs (it waits for a change) with nothing watched yet.
        await wait_for_async(lambda: agen.ag_await is not None, what="the tailer to start")
        tailer.watch("s", path)
        path.parent.mkdir(parents=True)
        path.write_bytes(prompt("p1") + end("e"))
        await first
        tailer.unwatch("s")
        assert tailer.watching() == {}
    finally:
        first.cancel()
        await agen.aclose()


@pytest.mark.asyncio
async def test_tailer_two_sessions(tmp_path: Path, samples: Path) -> None:
    tailer = TranscriptTailer(
        reader=TranscriptReader, tail_first=True, recheck_ms=60_000
    )  # inotify alone must do it
    for name in (FIRST, SECOND):
        copy = tmp_path / f"{name}.jsonl"
        copy.write_bytes((samples / "transcripts" / f"{name}.jsonl").read_bytes())
        tailer.watch(name, copy)
    agen = tailer.events()
    try:
        got = await collect(agen, lambda ev: len(stops(ev)) == 4)
        assert sum(isinstance(e, Interrupt) for e in got) == 1
    finally:
        await agen.aclose()


@pytest.mark.asyncio
async def test_tailer_watch_while_running(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = tmp_path / "a" / "s1.jsonl", tmp_path / "b" / "s2.jsonl"
    first.write_bytes(prompt("p1") + end("e"))
    second.write_bytes(prompt("q1") + end("e"))
    tailer = TranscriptTailer(reader=TranscriptReader, tail_first=True, recheck_ms=60_000)
    tailer.watch("s1", first)
    agen = tailer.events()
    try:
        await collect(agen, lambda ev: "tx:s1:stop:p1" in stops(ev))
        tailer.watch("s2", second)  # another folder: the running watch restarts with it
        await collect(agen, lambda ev: "tx:s2:stop:q1" in stops(ev))
        with second.open("ab") as f:
            f.write(prompt("q2") + end("e"))
        got = await collect(agen, lambda ev: "tx:s2:stop:q2" in stops(ev))
        assert "tx:s1:stop:p1" not in stops(got)
        tailer.unwatch("s2")
        with second.open("ab") as f:
            f.write(prompt("q3") + end("e"))
        with first.open("ab") as f:
            f.write(prompt("p2") + end("e"))
        got = await collect(agen, lambda ev: "tx:s1:stop:p2" in stops(ev))
        assert all(e.session_id == "s1" for e in got)
    finally:
        await agen.aclose()


def test_an_unchanged_transcript_is_known_by_one_lstat_and_a_changed_one_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(prompt("p1") + end("e1"))
    w = _Watched(path, TranscriptReader("s"), TranscriptReader)
    assert "tx:s:stop:p1" in stops(_read_new(w))
    opened: list[object] = []
    real = transcripts.open_transcript
    monkeypatch.setattr(
        transcripts, "open_transcript", lambda p, root: opened.append(p) or real(p, root)
    )
    _read_new(w)  # a look after the first read: the file as read is noted
    opened.clear()
    assert _read_new(w) == [] and _read_new(w) == []
    assert opened == []  # nothing new: no open, no path check
    with path.open("ab") as f:
        f.write(prompt("p2") + end("e2"))
    assert stops(_read_new(w)) == ["tx:s:stop:p2"] and len(opened) == 1
    # Replaced by a file of the same size (a new inode): read again from its start.
    other = tmp_path / "other"
    other.write_bytes(path.read_bytes())
    os.replace(other, path)
    assert "tx:s:stop:p1" in stops(_read_new(w)) and len(opened) == 2
    # A link in its place, to a file of the same size: not taken as unchanged; refused.
    assert _read_new(w) == [] and len(opened) == 2
    target = tmp_path / "elsewhere"
    target.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(target)
    assert _read_new(w) == [] and len(opened) == 3
    assert w.refused  # once: not looked at again
