"""`purplemux service`: the unit text, validated by systemd when it is here, and the CLI."""

from __future__ import annotations

import io
import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from purplemux.cli import main, service
from purplemux.io.settings import Settings
from tests.support import fake_command


def parse_unit(text: str) -> dict[str, dict[str, list[str]]]:
    """A systemd unit as {section: {key: [values]}} (keys may repeat)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
            continue
        key, _, value = line.partition("=")
        current.setdefault(key, []).append(value)
    return sections


def verify(path: Path) -> None:
    """Run `systemd-analyze verify` on a unit; no output allowed. Fails (never skips) without it:
    `make test-deps` installs it (the systemd package)."""
    tool = shutil.which("systemd-analyze")
    assert tool, "systemd-analyze is not installed: `make test-deps` (scripts/install-test-deps.sh)"
    out = subprocess.run([tool, "verify", str(path)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert [line for line in out.stderr.splitlines() if str(path) in line] == [], out.stderr


def default_settings(home: Path) -> Settings:
    return Settings(home=home / ".purplemux", claude_dir=home / ".claude")


def test_unit_for_default_settings(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "purplemux", "serve"]
    p = service.plan(default_settings(tmp_path), "systemd", tmp_path, tmp_path, command)
    unit = parse_unit(p.text)
    assert unit["Service"]["ExecStart"] == [shlex.join(command)]
    assert unit["Service"]["Restart"] == ["on-failure"]
    assert unit["Install"]["WantedBy"] == ["default.target"]
    envs = unit["Service"].get("Environment", [])
    assert not [e for e in envs if "PURPLEMUX" in e or "CLAUDE" in e]
    assert p.path == tmp_path / "purplemux.cli.service"
    assert service.shell_line(p.enable) == (
        "systemctl --user daemon-reload && systemctl --user enable --now purplemux"
    )
    service.write(p)
    verify(p.path)


def test_unit_carries_settings_that_differ_and_quotes_odd_paths(tmp_path: Path) -> None:
    odd = tmp_path / "a dir" / '50% "home"'
    s = Settings(home=odd, claude_dir=tmp_path / "claude", port=9000, host="127.0.0.2")
    script = tmp_path / "bin dir" / "purplemux"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    command = service.serve_command(str(script))
    assert command == [str(script), "serve"]
    p = service.plan(s, "systemd", tmp_path / "units", tmp_path, command)
    unit = parse_unit(p.text)
    assert unit["Service"]["ExecStart"] == [f'"{script}" serve']
    assert unit["Service"]["Environment"] == [
        '"PURPLEMUX_HOME=' + str(odd).replace("%", "%%").replace('"', '\\"') + '"',
        f"CLAUDE_CONFIG_DIR={tmp_path / 'claude'}",
        "PURPLEMUX_HOST=127.0.0.2",
        "PURPLEMUX_PORT=9000",
    ]
    service.write(p)
    verify(p.path)


def test_serve_command_falls_back_to_this_python(tmp_path: Path) -> None:
    assert service.serve_command("/usr/lib/python3/dist-packages/pytest/__main__.py") == [
        os.path.abspath(sys.executable),
        "-m",
        "purplemux",
        "serve",
    ]
    command = [sys.executable, "-m", "purplemux", "serve"]
    checkout = tmp_path / "src"
    assert service.import_env(command, checkout, prefix=str(tmp_path / "venv")) == {
        "PYTHONPATH": str(checkout)
    }
    inside = tmp_path / "venv" / "lib" / "site-packages"
    assert service.import_env(command, inside, prefix=str(tmp_path / "venv")) == {}
    assert service.import_env(["/bin/purplemux", "serve"], checkout) == {}


def test_launchd_agent(tmp_path: Path) -> None:
    s = Settings(home=tmp_path / "h", claude_dir=tmp_path / ".claude")
    command = ["/opt/bin/purplemux", "serve"]
    p = service.plan(s, "launchd", tmp_path / "agents", tmp_path, command, "/opt/bin:/usr/bin")
    agent = plistlib.loads(p.text.encode())
    assert p.path == tmp_path / "agents" / "dev.purplemux.plist"
    assert agent["Label"] == "dev.purplemux"
    assert agent["ProgramArguments"] == command
    assert agent["RunAtLoad"] is True
    assert agent["KeepAlive"] == {"SuccessfulExit": False}
    assert agent["EnvironmentVariables"] == {
        "PURPLEMUX_HOME": str(tmp_path / "h"),
        "PATH": "/opt/bin:/usr/bin",
    }
    assert p.enable == (("launchctl", "bootstrap", f"gui/{os.getuid()}", str(p.path)),)


@pytest.fixture
def fake_systemctl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `systemctl` on PATH that records its arguments."""
    log = tmp_path / "systemctl.log"
    path = fake_command(
        tmp_path / "fakebin", "systemctl", f'echo "$@" >> {shlex.quote(str(log))}\n'
    )
    monkeypatch.setenv("PATH", path)
    monkeypatch.setenv("PURPLEMUX_HOME", str(tmp_path / "pmhome"))
    return log


def test_cli_install_then_uninstall(tmp_path: Path, fake_systemctl: Path) -> None:
    units = tmp_path / "units"
    out = io.StringIO()
    assert main(["service", "install", "--unit-dir", str(units)], out=out) == 0
    path = units / "purplemux.cli.service"
    assert out.getvalue().splitlines() == [
        f"wrote {path}",
        "start it now and at each login: "
        "systemctl --user daemon-reload && systemctl --user enable --now purplemux",
    ]
    unit = parse_unit(path.read_text())
    assert unit["Service"]["ExecStart"][0].endswith("-m purplemux serve")
    assert f"PURPLEMUX_HOME={tmp_path / 'pmhome'}" in unit["Service"]["Environment"]
    assert not fake_systemctl.exists()  # nothing run without --enable
    verify(path)

    out = io.StringIO()
    assert main(["service", "install", "--unit-dir", str(units)], out=out) == 0
    assert out.getvalue().startswith(f"unchanged: {path}")

    wants = units / "default.target.wants"
    wants.mkdir()
    (wants / "purplemux.cli.service").symlink_to(path)
    out = io.StringIO()
    assert main(["service", "uninstall", "--unit-dir", str(units)], out=out) == 0
    assert out.getvalue().splitlines() == [
        f"removed {path}",
        "stop what still runs: systemctl --user stop purplemux && systemctl --user daemon-reload",
    ]
    assert not path.exists() and not (wants / "purplemux.cli.service").is_symlink()
    out = io.StringIO()
    assert main(["service", "uninstall", "--unit-dir", str(units)], out=out) == 0
    assert out.getvalue() == f"no service file at {path}\n"
    assert not fake_systemctl.exists()


def test_cli_enable_and_disable_run_systemctl(tmp_path: Path, fake_systemctl: Path) -> None:
    units = tmp_path / "units"
    assert (
        main(["service", "install", "--enable", "--unit-dir", str(units)], out=io.StringIO()) == 0
    )
    assert fake_systemctl.read_text().splitlines() == [
        "--user daemon-reload",
        "--user enable --now purplemux",
    ]
    fake_systemctl.unlink()
    argv = ["service", "uninstall", "--disable", "--unit-dir", str(units)]
    assert main(argv, out=io.StringIO()) == 0
    assert fake_systemctl.read_text().splitlines() == [
        "--user disable --now purplemux",
        "--user daemon-reload",
    ]
    assert not (units / "purplemux.cli.service").exists()


def test_cli_launchd_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PURPLEMUX_HOME", str(tmp_path / "pmhome"))
    agents = tmp_path / "agents"
    out = io.StringIO()
    argv = ["service", "install", "--kind", "launchd", "--unit-dir", str(agents)]
    assert main(argv, out=out) == 0
    agent = plistlib.loads((agents / "dev.purplemux.plist").read_bytes())
    assert agent["ProgramArguments"][-3:] == ["-m", "purplemux", "serve"]
    assert "/usr/bin" in agent["EnvironmentVariables"]["PATH"].split(":")
    assert f"launchctl bootstrap gui/{os.getuid()} {agents}" in out.getvalue()
