"""The Codex harness's own parts without Codex: the config.toml it writes, the hook trust
hashes, the /proc scan and the title rules. Not marked e2e, so they run in the default tier."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from .codex_harness import (
    CODEX_HOOK_EVENTS,
    CODEX_VERSION,
    CodexProcess,
    codex_env,
    composer_text,
    hook_label,
    is_idle_title,
    make_codex_home,
    processes_of,
    trusted_hash,
)
from .harness import wait_until

# Hashes Codex 0.171.0 itself wrote (or, for the matcher case, that made a hook fire in
# `codex exec`), from samples/codex-0.171.0/manual/hash-vectors.json: throw-away probe paths.
HASH_VECTORS = [
    (
        "SessionStart",
        None,
        {"type": "command", "command": "/tmp/cxp/bin/hook.sh SessionStart", "timeout": 10},
        "sha256:e23d648954f407deb845c6ec043a1980ebafb05c6d4933cc1eb0818193cc6fd2",
    ),
    (
        "SessionEnd",
        None,
        {"type": "command", "command": "/tmp/cxp/bin/hook.sh SessionEnd", "timeout": 3},
        "sha256:219486fe4cc1de77589e0f0ef4b01c4545069fefc84569d289d9cbcd73671c2c",
    ),
    (
        # Declared with timeout 10; Codex clamps Interrupt to 3 s before hashing.
        "Interrupt",
        None,
        {"type": "command", "command": "/tmp/cxp/bin/hook.sh Interrupt", "timeout": 10},
        "sha256:0ac574e07399eaa29f1505c275524fc03e0fd66b0bef892f0874cda152632ad9",
    ),
    (
        "SessionStart",
        "startup|resume",
        {
            "type": "command",
            "command": "/tmp/cxtoml/bin/hook.sh UserSessionStartToml",
            "timeout": 5,
        },
        "sha256:8b1b476ce19f6d1ad533cbac2b8c08ebe5541432c01e7cc39eacde762996b15c",
    ),
]


@pytest.mark.parametrize(("event", "matcher", "handler", "expected"), HASH_VECTORS)
def test_trusted_hash_matches_what_codex_wrote(
    event: str, matcher: str | None, handler: dict[str, object], expected: str
) -> None:
    assert trusted_hash(event, {"matcher": matcher}, handler) == expected


def test_hook_labels_are_snake_case() -> None:
    assert [hook_label(e) for e in ("PreToolUse", "Stop", "PostModelRequest")] == [
        "pre_tool_use",
        "stop",
        "post_model_request",
    ]


def test_the_config_points_at_the_fake_and_trusts_every_hook(tmp_path: Path) -> None:
    home = make_codex_home(
        tmp_path,
        "http://127.0.0.1:1234/v1",
        hook_command="/bin/hook 'a b'",
        extra_config={"tui": {"terminal_title": ["spinner", "thread-id"]}},
        extra_toml="[sandbox_workspace_write]\nexclude_slash_tmp = true\n",
    )
    assert home.codex_home == home.home / ".codex" and home.project == home.home / "proj"
    assert home.project.is_dir()
    config = tomllib.loads(home.config_path.read_text())
    assert config["model"] == "gpt-5.5" and config["model_provider"] == "fake"
    assert config["approval_policy"] == "on-request"
    assert config["sandbox_mode"] == "workspace-write"
    assert config["check_for_update_on_startup"] is False
    assert config["model_providers"]["fake"] == {
        "name": "Fake",
        "base_url": "http://127.0.0.1:1234/v1",
        "wire_api": "responses",
        "env_key": "FAKE_OPENAI_KEY",
        "request_max_retries": 0,
        "stream_max_retries": 0,
    }
    assert config["projects"][str(home.project)] == {"trust_level": "trusted"}
    assert config["tui"]["screen_reader_detection_done"] is True
    assert config["tui"]["model_availability_nux"] == {"gpt-6.1-sol": 1}
    assert config["notice"]["model_migrations"] == {"gpt-5.5": "gpt-6-sol"}
    assert config["features"]["default_mode_request_user_input"] is True
    assert config["tui"]["terminal_title"] == ["spinner", "thread-id"]
    assert config["sandbox_workspace_write"] == {"exclude_slash_tmp": True}
    hooks = json.loads(home.hooks_path.read_text())["hooks"]
    assert list(hooks) == list(CODEX_HOOK_EVENTS)
    state = config["hooks"]["state"]
    assert len(state) == len(CODEX_HOOK_EVENTS)
    for event, groups in hooks.items():
        handler = groups[0]["hooks"][0]
        assert handler["command"] == "/bin/hook 'a b'"
        assert handler["timeout"] == (3 if event in ("SessionEnd", "Interrupt") else 10)
        key = f"{home.hooks_path}:{hook_label(event)}:0:0"
        assert state[key] == {"trusted_hash": trusted_hash(event, groups[0], handler)}


def test_without_trust_or_hooks_nothing_is_declared(tmp_path: Path) -> None:
    home = make_codex_home(tmp_path, "http://x/v1", hook_command="/bin/true", trust_hooks=False)
    assert home.hooks_path.is_file()
    assert "hooks" not in tomllib.loads(home.config_path.read_text())
    home.hook_command = None
    home.write()
    assert not home.hooks_path.exists()


def test_the_environment_drops_outer_codex_openai_and_tmux_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real")
    monkeypatch.setenv("CODEX_HOME", "/elsewhere")
    monkeypatch.setenv("TMUX_PANE", "%9")
    home = make_codex_home(tmp_path, "http://x/v1")
    env = codex_env(home, {"EXTRA": "1"})
    assert "OPENAI_API_KEY" not in env and "TMUX_PANE" not in env
    assert env["CODEX_HOME"] == str(home.codex_home) and env["HOME"] == str(home.home)
    assert env["FAKE_OPENAI_KEY"] == "sk-fake" and env["EXTRA"] == "1"


def test_processes_of_finds_a_process_by_its_codex_home(tmp_path: Path) -> None:
    codex_home = tmp_path / ".codex"
    env = {**os.environ, "CODEX_HOME": str(codex_home)}
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env)
    try:
        # Right after fork the child still has this process's environment: wait for exec.
        found = wait_until(lambda: processes_of(codex_home), timeout=10, describe="the sleeper")
        assert [p.pid for p in found] == [sleeper.pid]
        assert processes_of(tmp_path / "other") == []
    finally:
        sleeper.kill()
        sleeper.wait()
    assert processes_of(codex_home) == []


def test_the_daemon_is_told_from_its_updater_and_the_tui() -> None:
    daemon = ("/h/.codex/packages/x/bin/codex", "app-server", "--listen", "unix://")
    assert CodexProcess(1, (*daemon, "--managed-daemon")).is_daemon
    assert not CodexProcess(2, (daemon[0], "app-server", "daemon", "pid-update-loop")).is_daemon
    assert not CodexProcess(3, ("/x/vendor/codex", "--managed-daemon")).is_daemon


def test_idle_titles() -> None:
    assert is_idle_title("proj") and is_idle_title("hello | proj")
    assert not is_idle_title("\u2838 hello | proj")  # a braille spinner frame
    assert not is_idle_title("[ ! ] Action Required | hello | proj")
    assert not is_idle_title("")


def test_the_pinned_version_is_read_from_the_ci_file() -> None:
    assert CODEX_VERSION == "0.171.0"


def test_the_composer_is_read_with_its_wrapped_lines() -> None:
    screen = (
        "\u203a hello\n\n\u2022 Hello from the fake model.\n\n"
        "\u203a a long prompt that\n  wraps onto a second line\n\n  GPT-5.5 default \u00b7 ~/proj\n"
    )
    assert composer_text(screen) == "a long prompt that wraps onto a second line"
    assert composer_text("\u203a Ask Codex to do anything\n\n  footer\n") == ""
    assert composer_text("  Hooks need review\n") is None


def test_a_misspelt_field_is_an_error_not_a_silent_no_op(tmp_path: Path) -> None:
    home = make_codex_home(tmp_path, "http://x/v1")
    with pytest.raises(AttributeError):
        home.extra_tom = "[x]"  # type: ignore[attr-defined]
