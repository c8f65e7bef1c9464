"""Which items a Codex TUI draws in its title: its own config, or nothing known."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from purplemux.agents.codex.layout import UNKNOWN, layout_of
from purplemux.agents.codex.pane_title import DEFAULT_LAYOUT, Layout


def test_no_config_or_no_tui_table_is_codexs_default(tmp_path: Path) -> None:
    assert layout_of(str(tmp_path)) == DEFAULT_LAYOUT
    (tmp_path / "config.toml").write_text('model = "x"\n')
    assert layout_of(str(tmp_path)) == DEFAULT_LAYOUT


def test_the_configured_items_in_order(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        '[tui]\nterminal_title = ["spinner", "run-state", "thread-id", "project-name"]\n'
    )
    assert layout_of(str(tmp_path), ["codex"]) == Layout(
        ("spinner", "run-state", "thread-id", "project-name")
    )


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[tui]\nterminal_title = ["thread-id"]\n')
    assert layout_of(str(tmp_path)).items == ("thread-id",)
    config.write_text('[tui]\nterminal_title = ["spinner", "project-name"]\n')
    os.utime(config, ns=(1, 1))  # a different stat even within one clock tick
    assert layout_of(str(tmp_path)).items == ("spinner", "project-name")


@pytest.mark.parametrize(
    "argv",
    [
        ["codex", "-c", 'tui.terminal_title=["thread-title"]'],
        ["codex", "--config=tui.terminal_title=[]"],
        ["codex", "-p", "work"],
        ["codex", "--profile=work"],
    ],
)
def test_a_command_line_that_may_change_the_title_makes_it_unknown(
    tmp_path: Path, argv: list[str]
) -> None:
    assert layout_of(str(tmp_path), argv) is UNKNOWN


@pytest.mark.parametrize(
    "text",
    [
        "[tui]\nterminal_title = 'thread-id'\n",
        "[tui]\nterminal_title = [1, 2]\n",
        "tui = 3\n",
        "[tui\n",
        "\xff",
    ],
)
def test_a_config_that_cannot_be_read_makes_it_unknown(tmp_path: Path, text: str) -> None:
    (tmp_path / "config.toml").write_bytes(text.encode("latin-1"))
    assert layout_of(str(tmp_path)) is UNKNOWN


def test_a_fifo_or_folder_at_the_config_is_unknown_and_never_blocks(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "config.toml")
    assert layout_of(str(tmp_path)) is UNKNOWN
    folder = tmp_path / "other"
    (folder / "config.toml").mkdir(parents=True)
    assert layout_of(str(folder)) is UNKNOWN
