"""install-hooks wraps Claude's statusLine so its input reaches the daemon; uninstall-hooks gives
the user's own statusLine back as it was; twice changes nothing; an odd one is left alone."""

from __future__ import annotations

import copy
import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents.claude.statusline import unwrap, wrap, wrapped_command
from purplemux.cli import main

SCRIPT = Path("/home/dev/.purplemux/statusline.sh")
HOME = Path("/home/dev/.purplemux")
USER_LINE = {
    "type": "command",
    "command": "~/bin/line.sh --sep ' | ' \"$HOME\" 'it'\\''s'",
    "padding": 0,
}


def settings_with(line: Any) -> dict[str, Any]:
    return {"model": "opus", "env": {"FOO": "bar"}, "statusLine": line}


def test_the_users_statusline_runs_inside_the_wrapper_and_comes_back_as_it_was() -> None:
    before = settings_with(copy.deepcopy(USER_LINE))
    out = wrap(before, SCRIPT, HOME)
    assert out.note is None
    line = out.settings["statusLine"]
    assert line["padding"] == 0 and line["type"] == "command"
    assert wrapped_command(line["command"]) == (True, USER_LINE["command"])
    assert "/home/dev/.purplemux/statusline.sh" in line["command"]
    assert before == settings_with(USER_LINE)  # the input is not changed
    assert unwrap(out.settings) == before
    assert wrap(out.settings, SCRIPT, HOME).settings == out.settings  # twice: the same


def test_no_statusline_gets_ours_and_uninstall_takes_it_away() -> None:
    out = wrap({"model": "opus"}, SCRIPT, HOME)
    assert wrapped_command(out.settings["statusLine"]["command"]) == (True, None)
    assert unwrap(out.settings) == {"model": "opus"}


def test_another_home_rewraps_the_same_user_command() -> None:
    first = wrap(settings_with(copy.deepcopy(USER_LINE)), SCRIPT, HOME).settings
    moved = wrap(first, Path("/srv/pmx/statusline.sh"), Path("/srv/pmx")).settings
    assert moved["statusLine"]["command"].startswith("PURPLEMUX_HOME=/srv/pmx ")
    assert unwrap(moved) == settings_with(USER_LINE)


@pytest.mark.parametrize(
    "user_command",
    [
        "~/purplemux-tools/statusline.sh",
        "PURPLEMUX_HOME=/x ~/bin/mine.sh",
        "bash ~/.purplemux/statusline.sh 'x'",
    ],
)
def test_a_users_own_command_that_looks_like_ours_is_wrapped_not_taken(user_command: str) -> None:
    line = {"type": "command", "command": user_command}
    assert wrapped_command(user_command) == (False, None)
    out = wrap(settings_with(dict(line)), SCRIPT, HOME)
    assert wrapped_command(out.settings["statusLine"]["command"]) == (True, user_command)
    assert unwrap(settings_with(dict(line))) == settings_with(line)  # never removed
    assert unwrap(out.settings) == settings_with(line)


@pytest.mark.parametrize(
    "odd", ["echo hi", {"type": "static", "text": "hi"}, {"type": "command", "command": 7}]
)
def test_a_statusline_we_cannot_understand_is_left_alone_with_a_note(odd: Any) -> None:
    out = wrap(settings_with(odd), SCRIPT, HOME)
    assert out.settings == settings_with(odd)
    assert out.note is not None and "left alone" in out.note
    assert unwrap(out.settings) == settings_with(odd)


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


@pytest.fixture
def claude_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PURPLEMUX_HOME", str(tmp_path / "pmx"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "no-codex"))
    (tmp_path / "claude").mkdir()
    return tmp_path / "claude"


def test_install_hooks_wraps_it_and_uninstall_gives_back_every_byte(
    claude_dir: Path, tmp_path: Path
) -> None:
    path = claude_dir / "settings.json"
    user = settings_with({"type": "command", "command": "printf 'ctx %s' \"$(head -c 12)\""})
    path.write_text(json.dumps(user, indent=2) + "\n")
    before = path.read_bytes()
    code, text = run("install-hooks", "--agent", "claude")
    assert code == 0, text
    installed = json.loads(path.read_text())
    assert {k: v for k, v in installed.items() if k not in ("hooks", "statusLine")} == {
        "model": "opus",
        "env": {"FOO": "bar"},
    }
    # What Claude then runs: the settings' command under /bin/sh, the input on stdin.
    shown = subprocess.run(
        ["/bin/sh", "-c", installed["statusLine"]["command"]],
        input=b'{"session_id": "x"}',
        capture_output=True,
        timeout=20,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert (shown.returncode, shown.stdout, shown.stderr) == (0, b'ctx {"session_id', b"")
    assert run("install-hooks", "--agent", "claude")[1].endswith("(already installed)\n")
    code, text = run("uninstall-hooks", "--agent", "claude")
    assert code == 0 and "removed purplemux hooks" in text
    assert path.read_bytes() == before
    backups = sorted(claude_dir.glob("settings.json.purplemux-backup-*"))
    assert backups and backups[0].read_bytes() == before


def test_install_hooks_says_when_it_leaves_a_statusline_alone(
    claude_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = claude_dir / "settings.json"
    path.write_text(json.dumps(settings_with("echo hi"), indent=2) + "\n")
    code, _ = run("install-hooks", "--agent", "claude")
    assert code == 0
    assert json.loads(path.read_text())["statusLine"] == "echo hi"
    assert '"statusLine" left alone' in capsys.readouterr().err
