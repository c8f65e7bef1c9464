"""`purplemux install-hooks` / `uninstall-hooks` / `doctor` for both agents, as a user runs them:
Claude's settings.json and Codex's hooks.json + config.toml trust entries, the user's own
bytes kept, twice changes nothing, `--agent` picks one."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from purplemux.agents.codex import install as codex
from purplemux.cli import main
from purplemux.doctor import check_codex_hooks
from purplemux.settings import Settings

USER_CONFIG = """# my Codex setup: keep these comments
model = "gpt-5.5"   # the model I like

[projects."/home/me/work"]
trust_level = "trusted"

[tui]
# titles with the thread id, please
terminal_title = ["spinner", "project-name"]
"""
USER_HOOKS = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-me"}]}]}}


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    home = tmp_path / "pmx"
    claude = tmp_path / "claude"
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(USER_CONFIG)
    (codex_home / "hooks.json").write_text(json.dumps(USER_HOOKS, indent=2) + "\n")
    monkeypatch.setenv("PURPLEMUX_HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    return {"home": home, "claude": claude, "codex": codex_home}


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


def test_install_hooks_sets_up_both_agents_and_uninstall_gives_back_every_byte(
    world: dict[str, Path],
) -> None:
    config, hooks = world["codex"] / "config.toml", world["codex"] / "hooks.json"
    before = (config.read_bytes(), hooks.read_bytes())
    code, text = run("install-hooks")
    assert code == 0, text
    assert "settings.json" in text and "hooks.json" in text and "config.toml" in text
    settings = json.loads((world["claude"] / "settings.json").read_text())
    assert "PreToolUse" in settings["hooks"]
    ours = json.loads(hooks.read_text())["hooks"]
    assert set(codex.EVENTS) <= set(ours)
    assert "notify-me" in hooks.read_text()  # the user's own hook stays
    assert config.read_text().startswith(USER_CONFIG.rstrip("\n"))  # comments and order kept
    assert "[hooks.state." in config.read_text()
    status = codex.status(
        world["codex"], codex.hook_command(world["home"] / "status-hook.sh", world["home"])
    )
    assert status.installed and status.trusted
    doctor = check_codex_hooks(Settings.from_env())
    assert doctor is not None and doctor.level == "ok", doctor

    code, again = run("install-hooks")
    assert code == 0 and again.count("nothing to change") == 3, again  # settings, hooks, trust

    code, text = run("uninstall-hooks", "--agent", "codex")
    assert code == 0, text
    assert (config.read_bytes(), hooks.read_bytes()) == before
    assert "PreToolUse" in json.loads((world["claude"] / "settings.json").read_text())["hooks"]
    doctor = check_codex_hooks(Settings.from_env())
    assert (
        doctor is not None
        and doctor.level == "fail"
        and "install-hooks --agent codex" in doctor.fix
    )


def test_a_config_toml_that_does_not_parse_is_named_and_left_alone(world: dict[str, Path]) -> None:
    config = world["codex"] / "config.toml"
    config.write_text('model = "gpt-5.5\n[tui\n')
    before = config.read_bytes(), (world["codex"] / "hooks.json").read_bytes()
    code, _ = run("install-hooks", "--agent", "codex")
    assert code == 2
    assert (config.read_bytes(), (world["codex"] / "hooks.json").read_bytes()) == before


def test_agent_codex_without_a_codex_home_says_how_to_fix_it(
    world: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(world["codex"].parent / "nowhere"))
    code, _ = run("install-hooks", "--agent", "codex")
    assert code == 2
    assert "set CODEX_HOME" in capsys.readouterr().err
    code, text = run("install-hooks")  # without --agent: Claude only, Codex is not set up here
    assert code == 0 and "hooks.json" not in text
