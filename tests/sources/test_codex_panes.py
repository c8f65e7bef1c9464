"""The Codex panes' source: the project name a pane's title is matched against (files)."""

from __future__ import annotations

from pathlib import Path

from purplemux.sources.codex_panes import project_name


def test_the_project_is_the_git_roots_name_and_a_stray_empty_git_folder_is_no_root(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "src" / "deep").mkdir(parents=True)
    assert project_name(str(repo / "src" / "deep")) == "repo"
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: ../repo/.git/worktrees/wt\n")
    assert project_name(str(worktree)) == "wt"
    # An empty `.git` above a folder (no HEAD): not a repository, the folder names itself.
    (tmp_path / "stray" / ".git").mkdir(parents=True)
    (tmp_path / "stray" / "proj").mkdir()
    assert project_name(str(tmp_path / "stray" / "proj")) == "proj"
