"""install-hooks for Codex: hooks.json merged, config.toml trust entries, byte-exact uninstall."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents.codex import install as ci
from purplemux.agents.codex.trust import EVENT_LABELS, state_key, trusted_hash

HOME = Path("/home/dev/.purplemux")
CMD = ci.hook_command(HOME / "status-hook.sh", HOME)

RICH_CONFIG = """\
# My Codex settings.  Hand-written; keep the comments!
model = "gpt-5.5"          # the default model
model_provider = "fake"
approval_policy = "on-request"

[model_providers.fake]
name = "Fake"
base_url = "http://127.0.0.1:9/v1"   # nothing listens here
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"

# Projects I trust
[projects."/home/dev/proj"]
trust_level = "trusted"


[[hooks.SessionStart]]
matcher = "startup|resume"
[[hooks.SessionStart.hooks]]
type = "command"
command = "/home/dev/bin/toml-hook.sh"
timeout = 5

[hooks.state]
# my own trust entries, written by `/hooks`
[hooks.state."{home}/config.toml:session_start:0:0"]
trusted_hash = "sha256:8b1b476ce19f6d1ad533cbac2b8c08ebe5541432c01e7cc39eacde762996b15c"

[hooks.state."{home}/hooks.json:stop:0:0"]
trusted_hash = "{user_stop_hash}"
enabled = true

[tui]
screen_reader_detection_done = true
  # an indented comment
[notice.model_migrations]
"gpt-5.5" = "gpt-6-sol"
"""

USER_HOOKS: dict[str, Any] = {
    "$schema": "https://example.invalid/hooks.schema.json",
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 7}]}],
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {"type": "command", "command": "/home/dev/bin/guard.sh", "timeout": 5},
                    {"type": "command", "command": "/home/dev/bin/log.sh", "async": True},
                ],
            }
        ],
    },
    "comment": "ünïcode stays",
}


def user_files(codex_home: Path, indent: int | str = 4) -> tuple[bytes, bytes]:
    """A user's config.toml (rich, commented) and hooks.json (their own hooks), as bytes."""
    codex_home.mkdir(parents=True, exist_ok=True)
    stop_hash = trusted_hash("stop", USER_HOOKS["hooks"]["Stop"][0])
    config = RICH_CONFIG.format(home=codex_home, user_stop_hash=stop_hash).encode()
    hooks = (json.dumps(USER_HOOKS, indent=indent, ensure_ascii=False) + "\n").encode()
    (codex_home / "config.toml").write_bytes(config)
    (codex_home / "hooks.json").write_bytes(hooks)
    os.chmod(codex_home / "config.toml", 0o640)
    os.chmod(codex_home / "hooks.json", 0o644)
    return config, hooks


def backups(codex_home: Path) -> list[Path]:
    return sorted(codex_home.glob("*.purplemux-backup-*"))


def state_of(codex_home: Path) -> dict[str, Any]:
    config = tomllib.loads((codex_home / "config.toml").read_text())
    state: dict[str, Any] = config["hooks"]["state"]
    return state


def test_command_names_the_home_the_agent_and_the_script() -> None:
    assert CMD == (
        "PURPLEMUX_HOME=/home/dev/.purplemux PURPLEMUX_AGENT=codex"
        " /home/dev/.purplemux/status-hook.sh"
    )
    odd = ci.hook_command(Path("/odd home's/status-hook.sh"), Path("/odd home's"))
    assert odd.startswith("PURPLEMUX_HOME='/odd home'\"'\"'s' PURPLEMUX_AGENT=codex ")
    assert ci.is_ours({"type": "command", "command": odd})
    assert not ci.is_ours({"type": "command", "command": "/home/dev/bin/status-hook.sh"})
    # Only the exact line: not a look-alike, not ours with a word more or a home that differs.
    for other in (
        "/home/dev/.purplemux/status-hook.sh",  # Claude's form: never written into hooks.json
        "/opt/purplemux/status-hook.sh",
        CMD + " ",
        CMD.replace("codex", "claude"),
        CMD.replace("/home/dev/.purplemux/status", "/home/dev/other/status"),
        CMD.replace("=/home/dev/.purplemux ", "='/home/dev/.purplemux' "),  # quoted otherwise
        "true; " + CMD,
        "PURPLEMUX_HOME='unclosed PURPLEMUX_AGENT=codex x/status-hook.sh",
    ):
        assert not ci.is_ours({"type": "command", "command": other}), other


def test_fresh_install_writes_all_14_events_trusted_and_uninstall_removes_the_files(
    tmp_path: Path,
) -> None:
    codex_home = tmp_path / ".codex"
    result = ci.install(codex_home, CMD)
    assert result.changed and result.hooks_json.backup is None and result.config_toml.backup is None
    for name in ("hooks.json", "config.toml"):
        assert stat.S_IMODE((codex_home / name).stat().st_mode) == 0o600
    hooks = json.loads((codex_home / "hooks.json").read_text())["hooks"]
    assert list(hooks) == list(EVENT_LABELS)
    for event, groups in hooks.items():
        timeout = 3 if event in ("SessionEnd", "Interrupt") else 5
        assert groups == [{"hooks": [{"type": "command", "command": CMD, "timeout": timeout}]}]
    state = state_of(codex_home)
    assert len(state) == 14
    for event, label in EVENT_LABELS.items():
        key = state_key(codex_home / "hooks.json", label, 0, 0)
        assert state[key] == {"trusted_hash": trusted_hash(label, hooks[event][0])}
    status = ci.status(codex_home, CMD)
    assert status.installed and status.trusted and not status.modified
    # The file reads well: a blank line between entries, one newline at the end.
    text = (codex_home / "config.toml").read_text()
    assert "\n\n\n" not in text and text.endswith('"\n') and text.count("\n\n") == 13

    result = ci.uninstall(codex_home)
    assert result.hooks_json.removed and result.config_toml.removed
    assert sorted(p.name for p in codex_home.iterdir()) == []


def test_install_keeps_every_user_byte_and_uninstall_restores_both_files_exactly(
    tmp_path: Path,
) -> None:
    codex_home = tmp_path / ".codex"
    config_before, hooks_before = user_files(codex_home)

    result = ci.install(codex_home, CMD)
    assert result.hooks_json.backup is not None and result.config_toml.backup is not None
    assert result.hooks_json.backup.read_bytes() == hooks_before
    assert result.config_toml.backup.read_bytes() == config_before
    assert stat.S_IMODE((codex_home / "config.toml").stat().st_mode) == 0o640
    assert stat.S_IMODE((codex_home / "hooks.json").stat().st_mode) == 0o644

    # config.toml: the user's text is all there, in order, untouched; ours are whole tables.
    after = (codex_home / "config.toml").read_text()
    ours = [k for k in state_of(codex_home) if k.startswith(f"{codex_home}/hooks.json")]
    assert len(ours) == 15  # 14 of ours + the user's own trust entry for their Stop hook
    stripped = after
    for event, label in EVENT_LABELS.items():
        gi = 1 if event in ("Stop", "PreToolUse") else 0
        key = state_key(codex_home / "hooks.json", label, gi, 0)
        block = (
            f'[hooks.state."{key}"]\ntrusted_hash = "{state_of(codex_home)[key]["trusted_hash"]}"\n'
        )
        assert block in stripped, key
        stripped = stripped.replace(block + "\n", "", 1).replace(block, "", 1)
    assert stripped == config_before.decode()

    # hooks.json: the user's groups first and unchanged, ours appended; 4-space layout kept.
    hooks_doc = json.loads((codex_home / "hooks.json").read_text())
    assert hooks_doc["$schema"] == USER_HOOKS["$schema"] and hooks_doc["comment"] == "ünïcode stays"
    assert hooks_doc["hooks"]["Stop"][0] == USER_HOOKS["hooks"]["Stop"][0]
    assert hooks_doc["hooks"]["PreToolUse"][0] == USER_HOOKS["hooks"]["PreToolUse"][0]
    assert hooks_doc["hooks"]["Stop"][1]["hooks"][0]["command"] == CMD
    assert (codex_home / "hooks.json").read_text().startswith('{\n    "$schema"')
    status = ci.status(codex_home, CMD)
    assert status.trusted, status

    # Twice: nothing changes, no new backup.
    n_backups = len(backups(codex_home))
    again = ci.install(codex_home, CMD)
    assert not again.changed and len(backups(codex_home)) == n_backups

    result = ci.uninstall(codex_home)
    assert result.hooks_json.backup is not None and result.config_toml.backup is not None
    assert (codex_home / "config.toml").read_bytes() == config_before
    assert (codex_home / "hooks.json").read_bytes() == hooks_before
    assert stat.S_IMODE((codex_home / "config.toml").stat().st_mode) == 0o640
    # Once more: nothing of ours is left, nothing is written.
    assert not ci.uninstall(codex_home).changed


@pytest.mark.parametrize("indent", [2, "\t", None])
def test_hooks_json_layout_round_trips(tmp_path: Path, indent: int | str | None) -> None:
    codex_home = tmp_path / ".codex"
    codex_home.mkdir()
    text = json.dumps(USER_HOOKS, indent=indent, ensure_ascii=False)
    if indent is None:
        text = json.dumps(USER_HOOKS, separators=(",", ":"))  # compact, escaped, no newline
    (codex_home / "hooks.json").write_text(text)
    ci.install(codex_home, CMD)
    ci.uninstall(codex_home)
    assert (codex_home / "hooks.json").read_text() == text


def test_a_config_without_hooks_tables_gets_them_back_out(tmp_path: Path) -> None:
    codex_home = tmp_path / ".codex"
    codex_home.mkdir()
    for original in ('model = "a"\n', "# only a comment\n\n[tui]\nx = 1\n", "a = 1\n\n\n"):
        (codex_home / "config.toml").write_text(original)
        ci.install(codex_home, CMD)
        text = (codex_home / "config.toml").read_text()
        assert tomllib.loads(text)["hooks"]["state"]
        assert text.startswith(original + "\n[hooks.state.")
        assert text.endswith("\n\n") == original.endswith("\n\n")  # the ending it had
        ci.uninstall(codex_home)
        assert (codex_home / "config.toml").read_text() == original
        assert not (codex_home / "hooks.json").exists()


def test_a_file_that_does_not_parse_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    codex_home = tmp_path / ".codex"
    config_before, hooks_before = user_files(codex_home)
    (codex_home / "config.toml").write_bytes(config_before + b"\n[broken\n")
    with pytest.raises(ci.CodexConfigError, match=r"config\.toml: not valid TOML"):
        ci.install(codex_home, CMD)
    assert (codex_home / "hooks.json").read_bytes() == hooks_before
    assert (codex_home / "config.toml").read_bytes() == config_before + b"\n[broken\n"

    (codex_home / "config.toml").write_bytes(config_before)
    (codex_home / "hooks.json").write_bytes(b'{"hooks": {')
    for action in (lambda: ci.install(codex_home, CMD), lambda: ci.uninstall(codex_home)):
        with pytest.raises(ci.CodexConfigError, match=r"hooks\.json: not valid JSON"):
            action()
    (codex_home / "hooks.json").write_bytes(b'{"hooks": []}')
    with pytest.raises(ci.CodexConfigError, match='"hooks" is a array'):
        ci.install(codex_home, CMD)
    (codex_home / "hooks.json").write_bytes(b'{"hooks": {"Stop": {}}}')
    with pytest.raises(ci.CodexConfigError, match='"Stop" is a object'):
        ci.install(codex_home, CMD)
    (codex_home / "hooks.json").write_bytes(hooks_before)
    (codex_home / "config.toml").write_bytes(b'hooks = "no"\n')
    with pytest.raises(ci.CodexConfigError, match=r"config\.toml: hooks is a string, not a table"):
        ci.install(codex_home, CMD)
    assert (codex_home / "config.toml").read_bytes() == b'hooks = "no"\n'
    assert (codex_home / "hooks.json").read_bytes() == hooks_before
    assert backups(codex_home) == []


def test_another_command_replaces_ours_where_it_stands(tmp_path: Path) -> None:
    codex_home = tmp_path / ".codex"
    config_before, hooks_before = user_files(codex_home)
    ci.install(codex_home, CMD)
    other = ci.hook_command(Path("/srv/pm/status-hook.sh"), Path("/srv/pm"))
    assert ci.status(codex_home, other).other_command == tuple(EVENT_LABELS)
    ci.install(codex_home, other)
    hooks = json.loads((codex_home / "hooks.json").read_text())["hooks"]
    assert hooks["Stop"][1] == {"hooks": [{"type": "command", "command": other, "timeout": 5}]}
    assert len(hooks["Stop"]) == 2
    status = ci.status(codex_home, other)
    assert status.trusted and not status.other_command
    ci.uninstall(codex_home)
    assert (codex_home / "config.toml").read_bytes() == config_before
    assert (codex_home / "hooks.json").read_bytes() == hooks_before


def test_status_tells_missing_untrusted_and_modified(tmp_path: Path) -> None:
    codex_home = tmp_path / ".codex"
    assert ci.status(codex_home, CMD).missing == tuple(EVENT_LABELS)
    ci.install(codex_home, CMD)
    hooks_path = codex_home / "hooks.json"
    doc = json.loads(hooks_path.read_text())
    doc["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 9  # edited by hand: Codex stops running it
    del doc["hooks"]["PreCompact"]
    hooks_path.write_text(json.dumps(doc))
    config = (codex_home / "config.toml").read_text()
    key = state_key(hooks_path, "session_start", 0, 0)
    start = config.index(f'[hooks.state."{key}"]')
    end = config.index("[hooks.state.", start + 1)
    (codex_home / "config.toml").write_text(config[:start] + config[end:])
    status = ci.status(codex_home, CMD)
    assert status.missing == ("PreCompact",) and not status.installed
    assert status.modified == ("Stop",)
    assert status.untrusted == ("SessionStart",)
    assert not status.trusted
    ci.install(codex_home, CMD)  # repairs all three
    assert ci.status(codex_home, CMD).trusted


def test_uninstall_moves_the_trust_of_user_hooks_that_came_after_ours(tmp_path: Path) -> None:
    """Codex trusts by position: a user group added after ours keeps its trust when ours go."""
    codex_home = tmp_path / ".codex"
    ci.install(codex_home, CMD)
    hooks_path = codex_home / "hooks.json"
    doc = json.loads(hooks_path.read_text())
    mine = {"hooks": [{"type": "command", "command": "/home/dev/bin/later.sh", "timeout": 4}]}
    doc["hooks"]["Stop"].append(mine)
    hooks_path.write_text(json.dumps(doc, indent=2) + "\n")
    digest = trusted_hash("stop", mine)
    with (codex_home / "config.toml").open("a") as out:
        out.write(f'\n[hooks.state."{state_key(hooks_path, "stop", 1, 0)}"]\n')
        out.write(f'trusted_hash = "{digest}"\n')
    ci.uninstall(codex_home)
    assert json.loads(hooks_path.read_text()) == {"hooks": {"Stop": [mine]}}
    assert state_of(codex_home) == {state_key(hooks_path, "stop", 0, 0): {"trusted_hash": digest}}


def test_a_linked_hooks_json_is_written_through_the_link(tmp_path: Path) -> None:
    codex_home = tmp_path / ".codex"
    codex_home.mkdir()
    real = tmp_path / "dotfiles" / "hooks.json"
    real.parent.mkdir()
    real.write_text(json.dumps(USER_HOOKS, indent=2) + "\n")
    (codex_home / "hooks.json").symlink_to(real)
    ci.install(codex_home, CMD)
    assert (codex_home / "hooks.json").is_symlink()
    assert len(json.loads(real.read_text())["hooks"]) == 14
    # The trust key is the path Codex reads, the link's, not the target's.
    assert state_key(codex_home / "hooks.json", "stop", 1, 0) in state_of(codex_home)
    ci.uninstall(codex_home)
    assert json.loads(real.read_text()) == USER_HOOKS


def test_codex_home_is_canonical_from_the_environment_only(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    env = {"CODEX_HOME": str(tmp_path / "link")}
    assert ci.codex_home_from_env(env, tmp_path) == real
    assert ci.codex_home_from_env({}, tmp_path / "u") == tmp_path / "u" / ".codex"
    assert ci.codex_home_from_env({"CODEX_HOME": ""}, tmp_path) == tmp_path / ".codex"


def test_an_installed_hooks_json_in_a_layout_of_its_own_is_left_alone(tmp_path: Path) -> None:
    codex_home = tmp_path / ".codex"
    ci.install(codex_home, CMD)
    hooks_path = codex_home / "hooks.json"
    odd = hooks_path.read_text().replace('\n      "hooks": [', '\n      "hooks":   [')
    hooks_path.write_text(odd)
    assert not ci.install(codex_home, CMD).changed
    assert hooks_path.read_text() == odd


def test_ours_inside_a_user_group_is_replaced_there_and_removed_from_there(tmp_path: Path) -> None:
    """Ours (of an older home) put by hand into a user's group: the user's next handler keeps
    its trust."""
    codex_home = tmp_path / ".codex"
    codex_home.mkdir()
    hooks_path = codex_home / "hooks.json"
    older = ci.hook_command(Path("/srv/old pmx/status-hook.sh"), Path("/srv/old pmx"))
    old = {"type": "command", "command": older, "timeout": 10}
    theirs = {"type": "command", "command": "/home/dev/bin/after.sh", "timeout": 5}
    group = {"matcher": "startup", "hooks": [old, theirs]}
    hooks_path.write_text(json.dumps({"hooks": {"SessionStart": [group]}}, indent=2) + "\n")
    their_hash = trusted_hash("session_start", group, 1)
    (codex_home / "config.toml").write_text(
        f'[hooks.state."{state_key(hooks_path, "session_start", 0, 1)}"]\n'
        f'trusted_hash = "{their_hash}"\n'
    )
    ci.install(codex_home, CMD)
    hooks = json.loads(hooks_path.read_text())["hooks"]
    ours = ci.our_handler("SessionStart", CMD)
    assert hooks["SessionStart"] == [{"matcher": "startup", "hooks": [ours, theirs]}]
    assert ci.status(codex_home, CMD).trusted
    ci.uninstall(codex_home)
    left = {"matcher": "startup", "hooks": [theirs]}
    assert json.loads(hooks_path.read_text()) == {"hooks": {"SessionStart": [left]}}
    key = state_key(hooks_path, "session_start", 0, 0)
    assert state_of(codex_home) == {key: {"trusted_hash": trusted_hash("session_start", left)}}
