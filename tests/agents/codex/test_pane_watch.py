"""The Codex panes' source: the project name a pane's title is matched against (files), and
when the reference folders' watch calls for a walk."""

from __future__ import annotations

from pathlib import Path

from purplemux.agents.codex.pane_watch import project_name


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


def test_a_thread_opened_before_the_watch_began_is_looked_for() -> None:
    """The daemon finds a TUI on a tmux server nobody named by the walk its thread's reference
    file calls for. A file written before the watch began (the daemon still starting, or the
    watch moving from the home to the new reference folder) is told by nothing else: a watch's
    start (None) walks too; its re-check after a quiet spell (empty) and a home's logs do not."""
    from purplemux.agents.codex.live import may_have_opened
    from purplemux.agents.codex.pane_watch import REFERENCES

    home = "/home/u/.codex"
    assert may_have_opened(None)
    assert not may_have_opened(set())
    assert may_have_opened({f"{home}/{REFERENCES}"})
    assert may_have_opened({f"{home}/{REFERENCES}/019a8b1c-0000-7000-8000-000000000000"})
    assert not may_have_opened({f"{home}/log/codex-tui.log", f"{home}/app-server-daemon"})
