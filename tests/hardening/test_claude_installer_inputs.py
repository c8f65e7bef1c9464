"""`purplemux install-hooks --agent claude` / `uninstall-hooks` / `doctor` as a user runs them,
on what a Claude config dir can hold besides a tidy settings.json: a user's hook or statusLine
that looks like ours, and a FIFO, socket, device (or a link to one), folder, symbolic-link loop or
unreadable file where settings.json should be.

Every refusal is one line on stderr naming the file and the fix, exit 2, no traceback, and the
config dir byte for byte as it was. The CLI runs in a subprocess with a timeout: one that blocks
(on a FIFO) fails the test instead of hanging the run. The shared parts (the refusal's shape,
the special files, the snapshot) are the Codex installer's tests'.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents.claude import install as claude
from purplemux.agents.claude import statusline
from tests.hardening.test_codex_installer_inputs import (
    NOT_A_FILE,
    assert_refused,
    make_world,
    snapshot,
)
from tests.hardening.test_codex_installer_inputs import cli as run_cli
from tests.support import closed_port


@dataclass
class World:
    """A user's home with a Claude config dir, and the environment the CLI runs in."""

    claude: Path
    daemon_home: Path
    env: dict[str, str]

    @property
    def settings(self) -> Path:
        return self.claude / "settings.json"

    def our_command(self) -> str:
        return claude.hook_command(self.daemon_home / "status-hook.sh", self.daemon_home)


@pytest.fixture
def world(tmp_path: Path) -> World:
    base = make_world(tmp_path)
    folder = tmp_path / "home" / ".claude"
    folder.mkdir()
    env = {**base.env, "PURPLEMUX_PORT": str(closed_port())}  # doctor finds no daemon at once
    return World(folder.resolve(), base.daemon_home, env)


def cli(world: World, *argv: str, as_user: bool = False) -> Any:
    return run_cli(world, *argv, as_user=as_user)  # type: ignore[arg-type]  # uses .env only


def settings_text(doc: dict[str, Any]) -> str:
    """A settings.json as Claude's installer writes one (so uninstall can give it back whole)."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


# --- a user's hook or statusLine that merely looks like ours -------------------------------------


LOOKALIKES = [
    "/opt/purplemux-tools/status-hook.sh",
    "PURPLEMUX_HOME=/srv/pm ~/bin/purplemux/status-hook.sh",
    "echo purplemux && /home/me/bin/status-hook.sh",
    "PURPLEMUX_HOME=/srv/pm /srv/other/status-hook.sh",
    "PURPLEMUX_HOME=/srv/pm '/srv/pm/status-hook.sh'",  # quoted as hook_command never quotes it
    "'/x y/purplemux/status-hook.sh'",
]


def test_a_users_hook_that_looks_like_ours_is_left_byte_for_byte(world: World) -> None:
    """Only the exact command install-hooks writes is ours: a user's hook whose command merely
    holds "purplemux" and ends in status-hook.sh keeps its place and bytes through install and
    uninstall, and doctor does not count it as installed."""
    handlers = [{"type": "command", "command": c, "timeout": 4} for c in LOOKALIKES]
    user = {"model": "opus", "hooks": {"Stop": [{"matcher": "", "hooks": handlers}]}}
    world.settings.write_text(settings_text(user))
    before = world.settings.read_bytes()

    run = cli(world, "doctor")
    hooks_line = next(x for x in run.stdout.splitlines() if "  hooks:" in x)
    assert hooks_line.startswith("FAIL") and "not installed" in hooks_line, run.stdout

    run = cli(world, "install-hooks", "--agent", "claude")
    assert run.returncode == 0, run.stderr
    doc = json.loads(world.settings.read_text())
    stop = doc["hooks"]["Stop"]
    assert stop[0] == {"matcher": "", "hooks": handlers}  # the user's entry, whole, in place
    ours = {"type": "command", "command": world.our_command(), "timeout": claude.HOOK_TIMEOUT}
    assert stop[1:] == [{"matcher": "", "hooks": [ours]}]

    run = cli(world, "uninstall-hooks", "--agent", "claude")
    assert run.returncode == 0, run.stderr
    assert world.settings.read_bytes() == before


STATUSLINE_LOOKALIKES = [
    "PURPLEMUX_HOME=/srv/pm ~/bin/purplemux/statusline.sh",
    "PURPLEMUX_HOME=/srv/pm /srv/other/statusline.sh 'my-line --short'",
    "PURPLEMUX_HOME=/srv/pm '/srv/pm/statusline.sh'",
]


@pytest.mark.parametrize("command", STATUSLINE_LOOKALIKES)
def test_a_users_statusline_that_looks_like_ours_is_kept(world: World, command: str) -> None:
    """A user's statusLine that names PURPLEMUX_HOME and a statusline.sh, but is not the line
    install-hooks writes, is wrapped (ours runs it), and uninstall gives it back byte for byte."""
    user = {"statusLine": {"type": "command", "command": command, "padding": 0}}
    world.settings.write_text(settings_text(user))
    before = world.settings.read_bytes()
    assert statusline.wrapped_command(command) == (False, None)

    run = cli(world, "install-hooks", "--agent", "claude")
    assert run.returncode == 0, run.stderr
    line = json.loads(world.settings.read_text())["statusLine"]
    script = world.daemon_home / statusline.SCRIPT_NAME
    assert line["command"] == statusline.wrapper_command(script, world.daemon_home, command)

    run = cli(world, "uninstall-hooks", "--agent", "claude")
    assert run.returncode == 0, run.stderr
    assert world.settings.read_bytes() == before


# --- something other than a readable file at settings.json ---------------------------------------


def _link_to_device(path: Path) -> None:
    """A link to a character device: as root one of our own in the test's folder (never the
    machine's /dev/null, which an installer writing through the link would replace)."""
    if os.geteuid() == 0:
        node = path.with_name("own-null")
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        path.symlink_to(node)
    else:
        path.symlink_to("/dev/null")  # a user cannot replace it


KINDS = {**NOT_A_FILE, "link to a device": (_link_to_device, "device")}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_something_other_than_a_file_is_refused_without_blocking(world: World, kind: str) -> None:
    make, word = KINDS[kind]
    make(world.settings)
    before = snapshot(world.claude)
    for action in ("install-hooks", "uninstall-hooks"):
        run = cli(world, action, "--agent", "claude")
        assert_refused(run, world.settings, word, "run again")
        assert snapshot(world.claude) == before, action


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_doctor_says_what_is_at_settings_json_without_blocking(world: World, kind: str) -> None:
    """doctor reads settings.json as the installer does: one FAIL line naming what is there."""
    make, word = KINDS[kind]
    make(world.settings)
    before = snapshot(world.claude)
    run = cli(world, "doctor")
    hooks_line = next(x for x in run.stdout.splitlines() if "  hooks:" in x)
    assert hooks_line.startswith("FAIL") and str(world.settings) in hooks_line, run.stdout
    assert word in hooks_line and "install-hooks" in hooks_line, hooks_line
    assert "Traceback" not in run.stderr, run.stderr
    assert snapshot(world.claude) == before


def test_an_unreadable_file_is_refused(world: World) -> None:
    """Root reads every file: as root the CLI runs without the capabilities that allow it."""
    world.settings.write_text(settings_text({"model": "opus"}))
    os.chmod(world.settings, 0o000)
    before = snapshot(world.claude)
    for action in ("install-hooks", "uninstall-hooks"):
        run = cli(world, action, "--agent", "claude", as_user=True)
        assert_refused(run, world.settings, "cannot be read", "run again")
        assert snapshot(world.claude) == before, action
