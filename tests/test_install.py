"""install-hooks / uninstall-hooks: the pure merge, and what happens to the settings file."""

from __future__ import annotations

import copy
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents import hookfiles
from purplemux.agents import install as generic
from purplemux.agents.claude import install as inst
from purplemux.agents.claude.install import (
    HOOK_EVENTS,
    SCRIPT_NAME,
    SettingsError,
    hook_command,
    merge_hooks,
    remove_hooks,
)
from purplemux.io import paths

CMD = "PURPLEMUX_HOME=/home/dev/.purplemux /home/dev/.purplemux/status-hook.sh"


def user_settings() -> dict[str, Any]:
    """A settings file a real user might have: other keys, other hooks, odd values."""
    return {
        "model": "opus",
        "env": {"FOO": "bar"},
        "permissions": {"allow": ["Bash(ls:*)"], "deny": []},
        "hooks": {
            "Stop": [
                {"matcher": "", "hooks": [{"type": "command", "command": "notify-send done"}]},
            ],
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {"type": "command", "command": "~/bin/guard.sh", "timeout": 5},
                        {"type": "command", "command": "~/bin/log.sh"},
                    ],
                }
            ],
            "UserPromptSubmit": [{"matcher": "", "hooks": []}],  # a user's empty entry
            "Custom": [],  # a user's empty array for an event we do not use
        },
        "statusLine": {"type": "command", "command": "echo hi"},
    }


def our_items(settings: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [
        h
        for entry in settings.get("hooks", {}).get(event, [])
        for h in entry.get("hooks", [])
        if inst.is_ours(h)
    ]


def test_merge_registers_every_event_once() -> None:
    merged = merge_hooks({}, CMD, HOOK_EVENTS)
    assert set(merged) == {"hooks"}
    assert set(merged["hooks"]) == set(HOOK_EVENTS)
    for event in HOOK_EVENTS:
        assert merged["hooks"][event] == [
            {"matcher": "", "hooks": [{"type": "command", "command": CMD, "timeout": 10}]}
        ]


def test_merge_keeps_user_keys_and_hooks_and_does_not_mutate() -> None:
    before = user_settings()
    snapshot = copy.deepcopy(before)
    merged = merge_hooks(before, CMD, HOOK_EVENTS)
    assert before == snapshot  # input untouched
    for key in ("model", "env", "permissions", "statusLine"):
        assert merged[key] == before[key]
    # The user's entries come first, unchanged; ours is appended after them.
    assert merged["hooks"]["Stop"][:1] == before["hooks"]["Stop"]
    assert merged["hooks"]["PreToolUse"][:1] == before["hooks"]["PreToolUse"]
    assert merged["hooks"]["UserPromptSubmit"][0] == {"matcher": "", "hooks": []}
    assert merged["hooks"]["Custom"] == []
    for event in HOOK_EVENTS:
        assert len(our_items(merged, event)) == 1


def test_merge_is_idempotent() -> None:
    once = merge_hooks(user_settings(), CMD, HOOK_EVENTS)
    twice = merge_hooks(once, CMD, HOOK_EVENTS)
    assert twice == once
    assert json.dumps(twice) == json.dumps(once)  # same order too


def test_merge_replaces_a_moved_install_instead_of_duplicating() -> None:
    old_home = Path("/old/place/.purplemux")
    old = merge_hooks(user_settings(), hook_command(old_home / SCRIPT_NAME, old_home), HOOK_EVENTS)
    moved = merge_hooks(old, CMD, HOOK_EVENTS)
    for event in HOOK_EVENTS:
        assert [h["command"] for h in our_items(moved, event)] == [CMD]
    assert moved == merge_hooks(user_settings(), CMD, HOOK_EVENTS)


def test_merge_refuses_hooks_it_cannot_understand() -> None:
    with pytest.raises(SettingsError, match="not an object"):
        merge_hooks({"hooks": []}, CMD, HOOK_EVENTS)
    with pytest.raises(SettingsError, match="not an array"):
        merge_hooks({"hooks": {"Stop": {"matcher": ""}}}, CMD, HOOK_EVENTS)


def test_uninstall_gives_back_the_users_settings_exactly() -> None:
    before = user_settings()
    restored = remove_hooks(merge_hooks(before, CMD, HOOK_EVENTS))
    assert restored == before
    assert json.dumps(restored) == json.dumps(before)  # key order too


def test_uninstall_of_settings_that_had_no_hooks_drops_the_hooks_key() -> None:
    before = {"model": "opus"}
    assert remove_hooks(merge_hooks(before, CMD, HOOK_EVENTS)) == before


def test_uninstall_keeps_user_empty_containers() -> None:
    settings = {
        "hooks": {
            "Stop": [],
            "Notification": [{"matcher": "", "hooks": []}],
            "SessionEnd": [
                {"matcher": "", "hooks": [{"type": "command", "command": CMD, "timeout": 10}]}
            ],
        }
    }
    assert remove_hooks(settings) == {
        "hooks": {"Stop": [], "Notification": [{"matcher": "", "hooks": []}]}
    }
    assert remove_hooks({"hooks": {}}) == {"hooks": {}}


def test_uninstall_removes_only_our_items_from_a_shared_entry() -> None:
    home = Path("/x y/purplemux")
    ours = {"type": "command", "command": hook_command(home / SCRIPT_NAME, home)}
    theirs = {"type": "command", "command": "my-status-hook.sh"}
    # Not the line install-hooks writes, though it names purplemux and status-hook.sh: not ours.
    alike = {"type": "command", "command": "'/x y/purplemux/status-hook.sh'"}
    settings = {"hooks": {"Stop": [{"matcher": "", "hooks": [theirs, ours, alike]}]}}
    kept = {"hooks": {"Stop": [{"matcher": "", "hooks": [theirs, alike]}]}}
    assert remove_hooks(settings) == kept


def test_hook_command_is_recognised_as_ours(tmp_path: Path) -> None:
    command = hook_command(tmp_path / "odd home's" / "status-hook.sh", tmp_path / "odd home's")
    assert inst.is_ours({"type": "command", "command": command})
    assert remove_hooks(merge_hooks({}, command, HOOK_EVENTS)) == {}


# --- the file ----------------------------------------------------------------------------------


def write(path: Path, text: str, mode: int = 0o640) -> bytes:
    path.write_text(text)
    path.chmod(mode)
    return path.read_bytes()


def backups(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.purplemux-backup-*"))


def test_install_into_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "claude" / "settings.json"
    result = inst.install(path, CMD)
    assert result.changed and result.backup is None
    assert json.loads(path.read_text()) == merge_hooks({}, CMD, HOOK_EVENTS)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert backups(path.parent) == []


def test_install_merges_backs_up_and_keeps_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    original = write(path, json.dumps(user_settings(), indent=4))
    result = inst.install(path, CMD)
    assert result.changed
    assert json.loads(path.read_text()) == merge_hooks(user_settings(), CMD, HOOK_EVENTS)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert result.backup is not None
    assert backups(tmp_path) == [result.backup]
    assert result.backup.name.startswith("settings.json.purplemux-backup-")
    assert result.backup.read_bytes() == original
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_second_install_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    write(path, json.dumps(user_settings()))
    inst.install(path, CMD)
    after_first = path.read_bytes()
    inode = path.stat().st_ino
    result = inst.install(path, CMD)
    assert not result.changed and result.backup is None
    assert path.read_bytes() == after_first
    assert path.stat().st_ino == inode  # not even rewritten with the same bytes
    assert len(backups(tmp_path)) == 1


def test_install_then_uninstall_restores_the_settings(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    write(path, json.dumps(user_settings()), mode=0o600)
    inst.install(path, CMD)
    result = inst.uninstall(path)
    assert result.changed and result.backup is not None
    assert json.loads(path.read_text()) == user_settings()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = inst.uninstall(path)
    assert not again.changed and again.backup is None


def test_uninstall_without_a_file_creates_nothing(tmp_path: Path) -> None:
    result = inst.uninstall(tmp_path / "settings.json")
    assert not result.changed
    assert list(tmp_path.iterdir()) == []


def test_replace_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new content lands by one rename of a complete temp file from the same folder."""
    path = tmp_path / "settings.json"
    write(path, "{}")
    seen: list[tuple[str, bytes]] = []
    real_replace = os.replace

    def spy(src: Any, dst: Any) -> None:
        seen.append((str(Path(src).parent), Path(src).read_bytes()))
        assert path.read_bytes() == b"{}"  # the old file is whole until the rename
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    inst.install(path, CMD)
    assert seen == [(str(tmp_path), path.read_bytes())]


def test_failed_write_leaves_the_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "settings.json"
    original = write(path, '{"model": "opus"}')

    def broken(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="No space"):
        inst.install(path, CMD)
    assert path.read_bytes() == original
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"model": "opus",\n  "hooks": {,}}', r"not valid JSON: .* line 2 column"),
        ("[1, 2]", "holds a JSON array, not an object"),
        ("// comment\n{}", "not valid JSON"),
    ],
)
def test_invalid_settings_are_refused_and_left_untouched(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "settings.json"
    original = write(path, text)
    for action in ("install", "uninstall"):
        with pytest.raises(SettingsError, match=expected) as info:
            inst.install(path, CMD) if action == "install" else inst.uninstall(path)
        assert str(path) in str(info.value)
        assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_install_writes_through_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    write(real, "{}")
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    inst.install(link, CMD)
    assert link.is_symlink()
    assert json.loads(real.read_text()) == merge_hooks({}, CMD, HOOK_EVENTS)


def test_write_standalone(tmp_path: Path) -> None:
    path = tmp_path / "purplemux-hooks.json"
    result = inst.write_standalone(path, CMD)
    assert result.changed
    assert json.loads(path.read_text()) == merge_hooks({}, CMD, HOOK_EVENTS)
    assert not inst.write_standalone(path, CMD).changed


def test_install_script(tmp_path: Path) -> None:
    home = tmp_path / "home"
    script = generic.install_script(home)
    assert script == home / "status-hook.sh"
    assert script.read_bytes() == paths.hook_script().read_bytes()
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    script.write_text("stale")
    assert generic.install_script(home).read_bytes() == paths.hook_script().read_bytes()
    # The statusLine wrapper goes next to it (agents/claude/statusline.py), nothing else.
    assert sorted(p.name for p in home.iterdir()) == ["status-hook.sh", "statusline.sh"]
    wrapper = hookfiles.statusline_script(home)
    assert wrapper.read_bytes() == paths.statusline_script().read_bytes()
    assert stat.S_IMODE(wrapper.stat().st_mode) == 0o755
