"""`purplemux install-hooks` / `uninstall-hooks` / `doctor` for both agents, as a user runs them:
Claude's settings.json and Codex's hooks.json + config.toml trust entries, the user's own
bytes kept, twice changes nothing, `--agent` picks one."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from purplemux.agents.codex import install as codex
from purplemux.agents.codex.doctor import check_codex_hooks
from purplemux.cli import main
from purplemux.io.settings import Settings

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


def test_two_claude_dirs_and_a_codex_home_each_get_hooks_and_give_every_byte_back(
    world: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A work and a personal Claude login plus one Codex home: install-hooks installs into each
    file with its own backup, twice changes nothing, --account picks one, doctor names each,
    and uninstall gives back each user's file byte for byte."""
    work, personal = tmp_path / ".claude-work", tmp_path / "me" / ".claude"
    for folder in (work, personal):
        (folder / "sessions").mkdir(parents=True)
        (folder / "projects").mkdir()
    mine = {"theme": "dark", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}
    (personal / "settings.json").write_text(json.dumps(mine, indent=2) + "\n")  # as Claude writes
    monkeypatch.setenv("PURPLEMUX_CLAUDE_DIRS", f"{work},personal={personal}")
    monkeypatch.setenv("PURPLEMUX_CODEX_HOMES", f"cx={world['codex']}")
    files = [
        personal / "settings.json",
        world["codex"] / "config.toml",
        world["codex"] / "hooks.json",
    ]
    before = [f.read_bytes() for f in files]

    code, text = run("install-hooks")
    assert code == 0, text
    assert f"claude-work: installed purplemux hooks in {work / 'settings.json'}" in text
    assert f"personal: installed purplemux hooks in {personal / 'settings.json'}" in text
    assert "(backup: " in text.split("personal: ", 1)[1].splitlines()[0]  # its own backup
    assert "hooks.json" in text and "config.toml" in text
    for folder in (work, personal):
        assert "PreToolUse" in json.loads((folder / "settings.json").read_text())["hooks"]
    assert json.loads((personal / "settings.json").read_text())["theme"] == "dark"
    assert not (world["claude"] / "settings.json").exists()  # CLAUDE_CONFIG_DIR: not listed
    code, again = run("install-hooks")
    assert code == 0 and again.count("nothing to change") == 4, again

    # doctor: a line per account, each ok.
    from purplemux.cli import doctor

    checks = {c.name: c for c in doctor.run_checks(Settings.from_env())}
    for name in (
        "hooks (claude-work)",
        "hooks (personal)",
        "statusline (claude-work)",
        "statusline (personal)",
        "claude config (claude-work)",
        "claude config (personal)",
        "codex hooks",
    ):
        assert checks[name].level == "ok", checks[name]
    assert str(personal / "settings.json") in checks["hooks (personal)"].detail

    # --account: one account only; the other keeps its hooks.
    code, text = run("uninstall-hooks", "--account", "claude-work")
    assert code == 0 and "claude-work: removed purplemux hooks" in text and "personal" not in text
    checks = {c.name: c for c in doctor.run_checks(Settings.from_env())}
    assert checks["hooks (claude-work)"].level == "fail"
    assert "install-hooks --account claude-work" in checks["hooks (claude-work)"].fix
    assert checks["hooks (personal)"].level == "ok"
    assert checks["statusline (claude-work)"].level == "warn"  # its wrapper went too
    assert "install-hooks --account claude-work" in (checks["statusline (claude-work)"].fix or "")
    assert checks["statusline (personal)"].level == "ok"

    code, text = run("uninstall-hooks")
    assert code == 0, text
    assert [f.read_bytes() for f in files] == before
    assert "PreToolUse" not in (work / "settings.json").read_text()


def test_an_unknown_account_is_refused_naming_the_accounts(
    world: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run("install-hooks", "--account", "wrok")
    assert code == 2
    err = capsys.readouterr().err
    assert "no account 'wrok': the accounts are claude (claude), codex (codex)" in err
    assert "PURPLEMUX_CLAUDE_DIRS" in err
    assert not (world["claude"] / "settings.json").exists()
