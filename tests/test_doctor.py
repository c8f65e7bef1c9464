"""`purplemux doctor`: each check on its own, then the whole report against a real daemon."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from purplemux.agents.claude import doctor as claude_doctor
from purplemux.agents.claude.install import HOOK_EVENTS, hook_command, install, merge_hooks
from purplemux.agents.hookfiles import statusline_script
from purplemux.agents.install import install_script
from purplemux.cli import doctor, main
from purplemux.core.checks import Check
from purplemux.io.settings import Settings
from purplemux.notify.vapid import load_or_create_keys
from tests.support import Daemon, cli_sees, free_port
from tests.support import settings_for as in_process_settings


def settings_for(tmp_path: Path) -> Settings:
    return in_process_settings(tmp_path, port=free_port(), watch_sources=True)


def private(path: Path, text: str = "x\n", mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def test_a_line_per_check_with_the_fix_only_when_not_ok() -> None:
    assert Check("tmux", "ok", "tmux 3.3a", "unused").line() == "ok    tmux: tmux 3.3a"
    assert Check("curl", "warn", "not on PATH", "install curl").line() == (
        "warn  curl: not on PATH — install curl"
    )
    assert Check("hooks", "fail", "missing", "run x").line() == "FAIL  hooks: missing — run x"
    assert Check("hooks", "fail", "missing", "run x").line(colour=True).startswith("\033[31;1m")


def test_report_fails_only_on_a_failed_check() -> None:
    out = io.StringIO()
    assert doctor.report([Check("a", "ok", "."), Check("b", "warn", ".", "f")], out) == 0
    assert doctor.report([Check("a", "ok", "."), Check("c", "fail", ".", "f")], out) == 1
    assert len(out.getvalue().splitlines()) == 4


def test_token_check(tmp_path: Path) -> None:
    s = settings_for(tmp_path)
    check = doctor.check_token(s)
    assert check.level == "fail" and "missing" in check.detail and "start the daemon" in check.fix
    private(s.token_path, "tok\n", 0o644)
    check = doctor.check_token(s)
    assert check.level == "fail" and "0644" in check.detail
    assert check.fix == f"chmod 600 {s.token_path}"
    s.token_path.chmod(0o600)
    assert doctor.check_token(s).level == "ok"


def test_push_key_check(tmp_path: Path) -> None:
    s = settings_for(tmp_path)
    check = doctor.check_push_keys(s)
    assert check.level == "warn" and "first asks for notifications" in check.fix
    key = private(s.home / "vapid_private.pem", "k", 0o640)
    assert doctor.check_push_keys(s).level == "fail"
    key.chmod(0o600)
    assert doctor.check_push_keys(s).level == "ok"


def write_settings(s: Settings, data: object) -> None:
    s.settings_json.parent.mkdir(parents=True, exist_ok=True)
    s.settings_json.write_text(json.dumps(data))


def test_hooks_check(tmp_path: Path) -> None:
    s = settings_for(tmp_path)
    check = claude_doctor.check_hooks(s)
    assert check.level == "fail" and "does not exist" in check.detail
    assert check.fix == "run `purplemux install-hooks`"

    s.settings_json.parent.mkdir(parents=True)
    s.settings_json.write_text("{not json")
    assert "cannot read" in claude_doctor.check_hooks(s).detail

    write_settings(s, {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x.sh"}]}]}})
    assert claude_doctor.check_hooks(s).detail.startswith("not installed")

    script = s.home / "status-hook.sh"
    command = hook_command(script, s.home)
    partial = merge_hooks({}, command, HOOK_EVENTS[:-1])
    write_settings(s, partial)
    check = claude_doctor.check_hooks(s)
    assert check.level == "fail" and check.detail.startswith(f"missing for {HOOK_EVENTS[-1]} ")

    write_settings(s, merge_hooks({}, command, HOOK_EVENTS))
    check = claude_doctor.check_hooks(s)
    assert check.level == "fail" and f"{script} does not exist" in check.detail

    install_script(s.home)
    assert claude_doctor.check_hooks(s).level == "ok"
    script.chmod(0o644)
    assert f"{script} is not executable" in claude_doctor.check_hooks(s).detail
    script.chmod(0o755)

    other = tmp_path / "other-home"
    install_script(other)
    write_settings(s, merge_hooks({}, hook_command(other / "status-hook.sh", other), HOOK_EVENTS))
    check = claude_doctor.check_hooks(s)
    assert check.level == "fail" and f"they report to {other}" in check.detail


def test_statusline_check(tmp_path: Path) -> None:
    """The statusLine wrapper: only a warning when missing (limits do not show), with the fix."""
    s = settings_for(tmp_path)
    check = claude_doctor.check_statusline(s)
    assert (check.level, check.fix) == ("warn", "run `purplemux install-hooks`")
    assert "usage limits will not show" in check.detail

    write_settings(s, {"statusLine": {"type": "command", "command": "~/bin/my-line"}})
    check = claude_doctor.check_statusline(s)
    assert check.level == "warn" and check.detail.startswith("not wrapped in ")

    write_settings(s, {"statusLine": "text"})
    check = claude_doctor.check_statusline(s)
    assert check.level == "warn" and "is not a command" in check.detail
    assert check.fix is not None and check.fix.startswith('make it {"type": "command"')

    script = install_script(s.home)
    wrapper = (statusline_script(s.home), s.home)
    write_settings(s, {"statusLine": {"type": "command", "command": "~/bin/my-line"}})
    install(s.settings_json, hook_command(script, s.home), statusline=wrapper)
    check = claude_doctor.check_statusline(s)
    assert check.level == "ok", check
    assert check.detail == f"wrapped in {s.settings_json} (then runs '~/bin/my-line')"

    statusline_script(s.home).chmod(0o644)
    check = claude_doctor.check_statusline(s)
    assert check.level == "warn" and "not executable" in check.detail
    statusline_script(s.home).chmod(0o755)

    other = tmp_path / "other-home"
    install_script(other)
    install(
        s.settings_json, hook_command(script, s.home), statusline=(statusline_script(other), other)
    )
    check = claude_doctor.check_statusline(s)
    assert check.level == "warn" and f"it reports to {other}" in check.detail
    assert claude_doctor.check_hooks(s).level == "ok"  # the hooks still report here


def test_claude_dir_check(tmp_path: Path) -> None:
    s = settings_for(tmp_path)
    assert claude_doctor.check_claude_dir(s).level == "fail"
    s.claude_dir.mkdir()
    check = claude_doctor.check_claude_dir(s)
    assert check.level == "warn" and "sessions/ or projects/" in check.detail
    (s.claude_dir / "sessions").mkdir()
    (s.claude_dir / "projects").mkdir()
    assert claude_doctor.check_claude_dir(s).level == "ok"


def test_tool_checks_warn_when_missing() -> None:
    def nothing(name: str) -> str | None:
        return None

    for check in (
        doctor.check_tmux(nothing),
        claude_doctor.check_claude_cli(nothing),
        doctor.check_curl(nothing),
    ):
        assert check.level == "warn" and check.detail.startswith("not on PATH") and check.fix
    assert "spool" in doctor.check_curl(nothing).detail
    assert doctor.check_curl(lambda name: "/usr/bin/curl").level == "ok"
    assert claude_doctor.check_claude_cli(lambda name: "/opt/claude").detail == "/opt/claude"


def test_tmux_check_reports_the_version() -> None:
    check = doctor.check_tmux()
    assert check.level == "ok" and check.detail.startswith("tmux ")


def test_file_watch_check(tmp_path: Path) -> None:
    watches = tmp_path / "max_user_watches"
    assert doctor.check_file_watch("linux", watches).level == "warn"  # unreadable
    watches.write_text("4096\n")
    check = doctor.check_file_watch("linux", watches)
    assert check.level == "warn" and "4096" in check.detail and "sysctl" in check.fix
    watches.write_text("524288\n")
    assert doctor.check_file_watch("linux", watches).level == "ok"
    assert doctor.check_file_watch("darwin", tmp_path / "none").level == "ok"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Daemon]:
    """A daemon (not started) whose home and Claude dir the CLI sees through the environment."""
    d = cli_sees(Daemon(home=tmp_path / "home", claude_dir=tmp_path / "claude"), monkeypatch)
    yield d
    d.stop()


def test_doctor_fails_with_a_useful_line_when_the_daemon_is_down(env: Daemon) -> None:
    out = io.StringIO()
    assert main(["doctor"], out=out) == 1
    lines = out.getvalue().splitlines()
    daemon_line = next(line for line in lines if "daemon:" in line)
    assert daemon_line.startswith("FAIL  daemon: no answer at http://127.0.0.1:")
    assert "purplemux serve" in daemon_line
    assert len(lines) == 10


def test_doctor_passes_when_all_is_well(env: Daemon) -> None:
    env.start()
    assert main(["install-hooks"], out=io.StringIO()) == 0
    (env.claude_dir / "sessions").mkdir()
    (env.claude_dir / "projects").mkdir()
    if not (env.home / "vapid_private.pem").exists():
        load_or_create_keys(env.home)

    out = io.StringIO()
    code = main(["doctor"], out=out)
    text = out.getvalue()
    assert code == 0, text
    levels = {line.split(":")[0].split(None, 1)[1]: line.split()[0] for line in text.splitlines()}
    names = ("daemon", "token", "hooks", "statusline", "claude config", "push keys", "file watch")
    for name in names:
        assert levels[name] == "ok", text
    assert "FAIL" not in text
    assert "0 live sessions" in text


def test_doctor_fails_when_the_daemon_rejects_the_token(env: Daemon) -> None:
    env.start()
    private(env.home / "token", "not-the-token\n")
    check = doctor.check_daemon(Settings.from_env())
    assert check.level == "fail" and "rejects the token" in check.detail


def test_hooks_installed_with_settings_of_another_tool_stay_ok(tmp_path: Path) -> None:
    """Other hooks in settings.json do not confuse the check."""
    s = settings_for(tmp_path)
    script = install_script(s.home)
    foreign = {"type": "command", "command": "/usr/bin/true"}
    write_settings(s, {"hooks": {"Stop": [{"matcher": "", "hooks": [foreign]}]}, "model": "x"})
    install(s.settings_json, hook_command(script, s.home))
    assert claude_doctor.check_hooks(s).level == "ok"
    assert os.access(script, os.X_OK)
