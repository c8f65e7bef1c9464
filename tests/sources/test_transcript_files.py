"""Which transcript paths are read: `resolve` names a path as os.path.realpath does (the kernel
follows the symlinks of an existing one), so check() and open_transcript() judge the same paths
as before, on real files, folders, symlinks and a FIFO."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from purplemux.io.transcript_files import UnsafePath, check, open_transcript, resolve


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    """A projects folder reached through a symlink, with a file, a FIFO and ways out of it."""
    real = tmp_path / "real" / "projects"
    (real / "-p").mkdir(parents=True)
    (real / "-p" / "a.jsonl").write_text("{}\n")
    os.mkfifo(real / "-p" / "fifo.jsonl")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.jsonl").write_text("secret\n")
    claude = tmp_path / "claude"
    claude.mkdir()
    (claude / "projects").symlink_to(real)
    root = claude / "projects"
    (real / "-p" / "out.jsonl").symlink_to(outside / "secret.jsonl")
    (real / "-away").symlink_to(outside)
    (real / "-p" / "loop").symlink_to(real / "-p" / "loop")
    (real / "-p" / "dangling.jsonl").symlink_to(real / "-p" / "nothing.jsonl")
    return {"root": root, "real": real, "outside": outside}


CASES = [
    "",
    "-p",
    "-p/a.jsonl",
    "-p/fifo.jsonl",
    "-p/out.jsonl",
    "-away/secret.jsonl",
    "-p/../-p/a.jsonl",
    "-away/../-p/a.jsonl",
    "-p/missing.jsonl",
    "-new/missing.jsonl",
    "-p/a.jsonl/",
    "-p/a.jsonl/x",
    "-p/loop",
    "-p/loop/x",
    "-p/dangling.jsonl",
    "-p/./a.jsonl",
]


@pytest.mark.parametrize("rel", CASES)
def test_resolve_names_a_path_as_realpath_does(world: dict[str, Path], rel: str) -> None:
    text = os.path.join(str(world["root"]), rel) if rel else str(world["root"])
    assert resolve(text) == os.path.realpath(text)


def test_resolve_of_a_relative_path_is_realpath(
    world: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(world["root"])
    assert resolve("-p/a.jsonl") == os.path.realpath("-p/a.jsonl")
    assert resolve("-p/a.jsonl") == str(world["real"] / "-p" / "a.jsonl")


def test_check_keeps_to_the_resolved_projects_folder(world: dict[str, Path]) -> None:
    root, real = world["root"], world["real"]
    assert check(root / "-p" / "a.jsonl", root) == real / "-p" / "a.jsonl"
    assert check(root / "-p" / "missing.jsonl", root) == real / "-p" / "missing.jsonl"
    for rel in ("-p/out.jsonl", "-away/secret.jsonl", ""):
        with pytest.raises(UnsafePath):
            check(os.path.join(str(root), rel) if rel else root, root)


def test_open_transcript_reads_regular_files_inside_only(world: dict[str, Path]) -> None:
    root = world["root"]
    fd = open_transcript(root / "-p" / "a.jsonl", root)
    try:
        assert os.read(fd, 100) == b"{}\n"
    finally:
        os.close(fd)
    with pytest.raises(UnsafePath):
        open_transcript(root / "-p" / "fifo.jsonl", root)  # and it did not block
    with pytest.raises(UnsafePath):
        open_transcript(root / "-p" / "out.jsonl", root)
    with pytest.raises(FileNotFoundError):
        open_transcript(root / "-p" / "missing.jsonl", root)
