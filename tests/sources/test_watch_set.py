"""The transcript watch is not rebuilt for each new session or project folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from purplemux.sources import watch
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
    tailer = TranscriptTailer(root=root, recheck_ms=60_000)  # inotify alone must do it
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
