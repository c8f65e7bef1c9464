"""The transcript watch is not rebuilt for each new session or project folder."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents.claude.transcript import TranscriptReader
from purplemux.io import watch
from purplemux.sources.transcripts import TranscriptTailer
from tests.support.transcripts import collect, end, prompt, stops


@pytest.mark.asyncio
async def test_new_sessions_in_new_folders_keep_one_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Any] = []
    real = watch.inotify.Inotify

    def counting() -> Any:  # a spy: the real inotify watch runs
        made = real()
        started.append(made)
        return made

    assert watch.inotify.available(), "this test is about the inotify watch (Linux)"
    monkeypatch.setattr(watch.inotify, "Inotify", counting)
    root = tmp_path / "projects"
    first = root / "-w-a" / "a.jsonl"
    first.parent.mkdir(parents=True)
    first.write_bytes(prompt("a1") + end("a1"))
    tailer = TranscriptTailer(
        reader=TranscriptReader, tail_first=True, root=root, recheck_ms=60_000
    )  # inotify alone must do it
    tailer.watch("a", first)
    agen = tailer.events()
    try:
        await collect(agen, lambda ev: "tx:a:stop:a1" in stops(ev))
        for n in range(20):  # twenty sessions, each in a project folder of its own
            path = root / f"-w-p{n}" / f"s{n}.jsonl"
            path.parent.mkdir()
            path.write_bytes(prompt(f"q{n}") + end(f"q{n}"))
            tailer.watch(f"s{n}", path)
            await collect(agen, lambda ev, n=n: f"tx:s{n}:stop:q{n}" in stops(ev))
        with (root / "-w-p3" / "s3.jsonl").open("ab") as f:  # later writes are still seen
            f.write(prompt("later") + end("later"))
        await collect(agen, lambda ev: "tx:s3:stop:later" in stops(ev))
        tailer.unwatch("s5")
        assert len(started) == 1, started
    finally:
        await agen.aclose()


@pytest.mark.asyncio
async def test_a_tailer_following_nothing_waits_with_no_timer(tmp_path: Path) -> None:
    """No session followed, so no folder: the watch is not re-checked on a timer (it used to
    wake every recheck for nothing); the first session watched is read at once all the same."""
    tailer = TranscriptTailer(reader=TranscriptReader, tail_first=True, recheck_ms=20)
    looks: list[set[Path]] = []
    real = tailer._dirs

    def dirs() -> set[Path]:
        looks.append(answer := real())
        return answer

    tailer._dirs = dirs  # type: ignore[method-assign]  # a spy: the real answer
    agen = tailer.events()
    first = asyncio.ensure_future(agen.__anext__())
    try:
        await asyncio.sleep(0.5)  # 25 rechecks' time
        assert not first.done() and looks == [set()]  # one look, then a wait
        path = tmp_path / "-w-a" / "a.jsonl"
        path.parent.mkdir()
        path.write_bytes(prompt("a1") + end("a1"))
        tailer.watch("a", path)
        seen = await asyncio.wait_for(first, 10)
        seen += await collect(agen, lambda ev: "tx:a:stop:a1" in stops(seen + ev))
        assert "tx:a:stop:a1" in stops(seen)
    finally:
        first.cancel()
        await agen.aclose()
