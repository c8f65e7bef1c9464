"""`purplemux service install|uninstall`: run the daemon at login (systemd user unit or launchd)."""

from __future__ import annotations

import os
import plistlib
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import purplemux
from purplemux.agents import facts as agent_facts
from purplemux.io.settings import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    Settings,
    default_label,
)

Kind = Literal["systemd", "launchd"]
UNIT_NAME = "purplemux.cli.service"
LAUNCHD_LABEL = "dev.purplemux"
Steps = tuple[tuple[str, ...], ...]
"""Commands, each an argv, run (or printed) in order."""
BASE_PATH = ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]
SOURCE_ROOT = Path(purplemux.__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True)
class Plan:
    """Where the service file goes, what it holds, and the commands that (de)activate it."""

    kind: Kind
    path: Path
    text: str
    enable: Steps
    """After writing the file: load it and start the daemon now and at each login."""
    disable: Steps
    """Before removing the file: stop the daemon and forget the login start."""
    reload: Steps
    """After removing the file with `disable`: tell the service manager it is gone."""
    stop: Steps
    """After the file was removed without `disable`: stop what still runs."""


def shell_line(steps: Steps) -> str:
    """Steps as one line to print for the user to run."""
    return " && ".join(shlex.join(step) for step in steps)


def default_kind(platform: str = sys.platform) -> Kind:
    return "launchd" if platform == "darwin" else "systemd"


def default_dir(kind: Kind, user_home: Path) -> Path:
    """~/.config/systemd/user or ~/Library/LaunchAgents."""
    if kind == "launchd":
        return user_home / "Library" / "LaunchAgents"
    return user_home / ".config" / "systemd" / "user"


def serve_command(argv0: str | None = None, python: str | None = None) -> list[str]:
    """The absolute command that runs this purplemux's daemon (default: the running one)."""
    # An installed `purplemux` script (often ~/.local/bin/purplemux, a link into a venv) is kept
    # as the path the user runs, so a rebuilt venv behind the link still works.
    script = Path(argv0 if argv0 is not None else sys.argv[0])
    if script.name == "purplemux" and script.is_file() and os.access(script, os.X_OK):
        return [os.path.abspath(script), "serve"]
    return [os.path.abspath(python or sys.executable), "-m", "purplemux", "serve"]


def import_env(
    command: Sequence[str], source_root: Path = SOURCE_ROOT, prefix: str = sys.prefix
) -> dict[str, str]:
    """PYTHONPATH for `python -m purplemux` when the package is not installed in that Python."""
    if list(command[1:3]) != ["-m", "purplemux"]:
        return {}
    if source_root.is_relative_to(Path(prefix).resolve()):
        return {}  # inside the interpreter's prefix: installed there
    return {"PYTHONPATH": str(source_root)}


def service_environment(settings: Settings, user_home: Path) -> dict[str, str]:
    """The settings that differ from the defaults, as the environment the daemon reads them from."""
    env: dict[str, str] = {}
    if settings.home != user_home / ".purplemux":
        env["PURPLEMUX_HOME"] = str(settings.home)
    for agent in agent_facts.known():
        mine = settings.accounts_of(agent.name)
        if mine and mine[0].dir != user_home / agent.default_dir:
            env[agent.config_env] = str(mine[0].dir)
        if len(mine) > 1 or any(a.label != default_label(a.dir) for a in mine):
            env[agent.accounts_env] = ",".join(f"{a.label}={a.dir}" for a in mine)
    if settings.host != DEFAULT_HOST:
        env["PURPLEMUX_HOST"] = settings.host
    if settings.port != DEFAULT_PORT:
        env["PURPLEMUX_PORT"] = str(settings.port)
    if settings.desktop_notifications:
        env["PURPLEMUX_DESKTOP_NOTIFY"] = "1"
    return env


def _systemd_quote(word: str, exec_line: bool = True) -> str:
    """One ExecStart/Environment word, quoted the way systemd.syntax(7) reads it back."""
    # `%` starts a specifier in every setting; `$` a variable, but only in Exec lines.
    escaped = word.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    if exec_line:
        escaped = escaped.replace("$", "$$")
    if escaped and not any(c in escaped for c in " \t'\"\\;"):
        return escaped
    return f'"{escaped}"'


def systemd_unit(command: Sequence[str], env: Mapping[str, str]) -> str:
    """The text of a systemd user unit that runs command, restarting it when it fails."""
    lines = [
        "[Unit]",
        "Description=purplemux: what each Claude Code and Codex session is doing",
        "",
        "[Service]",
        "Type=simple",
        "ExecStart=" + " ".join(_systemd_quote(w) for w in command),
        "Restart=on-failure",
        "RestartSec=2",
    ]
    lines += ["Environment=" + _systemd_quote(f"{k}={v}", exec_line=False) for k, v in env.items()]
    lines += ["", "[Install]", "WantedBy=default.target", ""]
    return "\n".join(lines)


def launchd_plist(command: Sequence[str], env: Mapping[str, str], log_dir: Path) -> str:
    """The text of a launchd agent that runs command at login and again if it fails."""
    agent: dict[str, object] = {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": list(command),
        "RunAtLoad": True,
        # Restart only after a failure, as systemd's Restart=on-failure.
        "KeepAlive": {"SuccessfulExit": False},
        "StandardOutPath": str(log_dir / "daemon.log"),
        "StandardErrorPath": str(log_dir / "daemon.log"),
    }
    if env:
        agent["EnvironmentVariables"] = dict(env)
    return plistlib.dumps(agent).decode()


def plan(
    settings: Settings,
    kind: Kind,
    unit_dir: Path,
    user_home: Path,
    command: Sequence[str],
    path_env: str | None = None,
) -> Plan:
    """Everything install and uninstall need, computed without touching the system."""
    env = service_environment(settings, user_home) | import_env(command)
    if kind == "launchd":
        # launchd starts agents with PATH=/usr/bin:/bin:/usr/sbin:/sbin: no Homebrew tmux.
        if path_env:
            env["PATH"] = path_env
        path = unit_dir / f"{LAUNCHD_LABEL}.plist"
        domain = f"gui/{os.getuid()}"
        return Plan(
            kind,
            path,
            launchd_plist(command, env, settings.home),
            enable=(("launchctl", "bootstrap", domain, str(path)),),
            disable=(("launchctl", "bootout", f"{domain}/{LAUNCHD_LABEL}"),),
            reload=(),
            stop=(("launchctl", "bootout", f"{domain}/{LAUNCHD_LABEL}"),),
        )
    path = unit_dir / UNIT_NAME
    return Plan(
        kind,
        path,
        systemd_unit(command, env),
        enable=(
            ("systemctl", "--user", "daemon-reload"),
            ("systemctl", "--user", "enable", "--now", "purplemux"),
        ),
        disable=(("systemctl", "--user", "disable", "--now", "purplemux"),),
        reload=(("systemctl", "--user", "daemon-reload"),),
        # A unit whose file is gone stays loaded while it runs, so it can still be stopped.
        stop=(
            ("systemctl", "--user", "stop", "purplemux"),
            ("systemctl", "--user", "daemon-reload"),
        ),
    )


def write(p: Plan) -> bool:
    """Write the service file; False when it already holds exactly this text."""
    try:
        if p.path.read_text() == p.text:
            return False
    except OSError:
        pass
    p.path.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.path.with_name(f".{p.path.name}.tmp")
    tmp.write_text(p.text)
    os.replace(tmp, p.path)
    return True


def remove(p: Plan) -> bool:
    """Remove the service file (and systemd's enable link); False when there was none."""
    if p.kind == "systemd":
        # What `systemctl disable` removes, so a later login does not look for a missing unit.
        (p.path.parent / "default.target.wants" / UNIT_NAME).unlink(missing_ok=True)
    try:
        p.path.unlink()
    except FileNotFoundError:
        return False
    return True


def run_commands(steps: Sequence[Sequence[str]]) -> int:
    """Run each step in turn; the first failing exit code, or 0."""
    for step in steps:
        try:
            code = subprocess.run(list(step), check=False).returncode
        except OSError as exc:
            print(f"purplemux: cannot run {step[0]}: {exc}", file=sys.stderr)
            return 1
        if code != 0:
            return code
    return 0
