"""`purplemux install-hooks --agent codex` / `uninstall-hooks` as a user runs them, on what a
Codex home can hold besides two tidy files: a user's hook that looks like ours, a FIFO, socket,
device, folder, symbolic-link loop or unreadable file where hooks.json or config.toml should be,
config.toml shapes tomlkit reads differently (inline tables, dotted keys, arrays of tables), and
a hooks.json whose numbers or duplicate keys Python's json cannot write back.

Every refusal is one line on stderr naming the file and the fix, exit 2, no traceback, and the
Codex home byte for byte as it was (no backup, no temp file). The CLI runs in a subprocess with a
timeout: one that blocks (on a FIFO) fails the test instead of hanging the run.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents.codex import install as codex
from purplemux.agents.codex.trust import EVENT_LABELS, state_key, trusted_hash

RUN_TIMEOUT = 60  # seconds; only a CLI that blocks comes near it

USER_TOP = '# my Codex setup\nmodel = "gpt-5.5"\n'
USER_TABLES = '[tui]\nterminal_title = ["spinner", "project-name"]\n'
USER_CONFIG = USER_TOP + "\n" + USER_TABLES


def config_with(shape: str) -> str:
    """The user's config.toml holding shape: top-level keys with theirs, a table at the end."""
    if shape.startswith("["):
        return USER_CONFIG + "\n" + shape
    return USER_TOP + shape + "\n" + USER_TABLES


@dataclass
class World:
    """A user's home with a Codex home, and the environment the CLI runs in."""

    root: Path
    codex: Path
    daemon_home: Path
    env: dict[str, str]

    @property
    def hooks(self) -> Path:
        return self.codex / "hooks.json"

    @property
    def config(self) -> Path:
        return self.codex / "config.toml"

    def our_command(self) -> str:
        return codex.hook_command(self.daemon_home / "status-hook.sh", self.daemon_home)


def make_world(root: Path) -> World:
    home, codex_home = root / "home", root / "home" / ".codex"
    codex_home.mkdir(parents=True)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PURPLEMUX_", "CODEX_", "CLAUDE_"))
    }
    env.update(
        HOME=str(home),
        PURPLEMUX_HOME=str(home / ".purplemux"),
        CODEX_HOME=str(codex_home),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
    )
    return World(root, codex_home.resolve(), home / ".purplemux", env)


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)


def cli(world: World, *argv: str, as_user: bool = False) -> subprocess.CompletedProcess[str]:
    """Run `purplemux <argv>` as a user would; a run that does not return fails the test.

    as_user: when the tests run as root, without the capabilities that let root read any file.
    """
    prefix: list[str] = []
    if as_user and os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: every file is readable")
        prefix = [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]
    try:
        return subprocess.run(
            [*prefix, sys.executable, "-m", "purplemux", *argv],
            env=world.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"purplemux {' '.join(argv)} blocked and did not return")


def snapshot(folder: Path) -> dict[str, tuple[str, bytes]]:
    """Every entry of folder: its kind and, for files and links, its bytes or target."""
    seen: dict[str, tuple[str, bytes]] = {}
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_symlink():
            seen[entry.name] = ("link", os.readlink(entry.path).encode())
        elif entry.is_file():
            with open(entry.path, "rb") as f:
                seen[entry.name] = ("file", f.read())
        elif entry.is_dir():
            seen[entry.name] = ("dir", repr(snapshot(Path(entry.path))).encode())
        else:
            seen[entry.name] = ("special", b"")
    return seen


def assert_refused(run: subprocess.CompletedProcess[str], path: Path, *words: str) -> None:
    """Exit 2, one line on stderr naming path and saying nothing changed, no traceback."""
    err = run.stderr.strip()
    assert run.returncode == 2, (run.returncode, run.stdout, err)
    assert "Traceback" not in err, err
    assert len(err.splitlines()) == 1, err
    assert str(path) in err and "nothing was changed" in err, err
    for word in words:
        assert word in err, (word, err)


def user_hooks_text(handlers: list[dict[str, Any]]) -> str:
    return json.dumps({"hooks": {"Stop": [{"hooks": handlers}]}}, indent=2) + "\n"


# --- a user's hook that merely looks like ours ---------------------------------------------------


LOOKALIKES = [
    "/opt/purplemux-tools/status-hook.sh",
    "PURPLEMUX_HOME=/srv/pm ~/bin/purplemux/status-hook.sh",
    "echo purplemux && /home/me/bin/status-hook.sh",
    "PURPLEMUX_HOME=/srv/pm PURPLEMUX_AGENT=codex /srv/other/status-hook.sh",
]


def test_a_users_hook_that_looks_like_ours_is_left_byte_for_byte(world: World) -> None:
    """Only the exact command install-hooks writes is ours: a user's handler whose command
    merely holds "purplemux" and ends in status-hook.sh keeps its place, bytes and trust."""
    handlers = [{"type": "command", "command": c, "timeout": 4} for c in LOOKALIKES]
    world.hooks.write_text(user_hooks_text(handlers))
    group = {"hooks": handlers}
    trust = "".join(
        f'[hooks.state."{state_key(world.hooks, "stop", 0, i)}"]\n'
        f'trusted_hash = "{trusted_hash("stop", group, i)}"\n\n'
        for i in range(len(handlers))
    )
    world.config.write_text(USER_CONFIG + "\n" + trust.rstrip("\n") + "\n")
    before = snapshot(world.codex)

    run = cli(world, "install-hooks", "--agent", "codex")
    assert run.returncode == 0, run.stderr
    doc = json.loads(world.hooks.read_text())
    assert doc["hooks"]["Stop"][0] == group  # the user's group, whole, where it was
    ours = {"type": "command", "command": world.our_command(), "timeout": 5}
    assert doc["hooks"]["Stop"][1] == {"hooks": [ours]}
    state = tomllib.loads(world.config.read_text())["hooks"]["state"]
    for i in range(len(handlers)):  # the user's trust entries are still theirs
        key = state_key(world.hooks, "stop", 0, i)
        assert state[key] == {"trusted_hash": trusted_hash("stop", group, i)}

    run = cli(world, "uninstall-hooks", "--agent", "codex")
    assert run.returncode == 0, run.stderr
    after = snapshot(world.codex)
    for name in ("hooks.json", "config.toml"):
        assert after[name] == before[name], name


# --- something other than a readable file at hooks.json or config.toml ---------------------------


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.close()  # the socket file stays


def _device(path: Path) -> None:
    """A character device of our own (a null device) where root may make one; else a link to
    /dev/null, which a user cannot replace. Never a link to /dev/null as root: an installer
    that wrote through it would replace the machine's /dev/null."""
    if os.geteuid() == 0:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    else:
        path.symlink_to("/dev/null")


def _folder(path: Path) -> None:
    path.mkdir()


def _loop(path: Path) -> None:
    other = path.with_name(path.name + ".other")
    path.symlink_to(other)
    other.symlink_to(path)


NOT_A_FILE = {
    "fifo": (_fifo, "FIFO"),
    "socket": (_socket, "socket"),
    "device": (_device, "device"),
    "folder": (_folder, "folder"),
    "loop": (_loop, "loop"),
}


@pytest.mark.parametrize("name", ["hooks.json", "config.toml"])
@pytest.mark.parametrize("kind", sorted(NOT_A_FILE))
def test_something_other_than_a_file_is_refused_without_blocking(
    world: World, name: str, kind: str
) -> None:
    make, word = NOT_A_FILE[kind]
    world.config.write_text(USER_CONFIG)
    world.hooks.write_text(user_hooks_text([{"type": "command", "command": "notify-me"}]))
    path = world.codex / name
    path.unlink()
    make(path)
    before = snapshot(world.codex)
    for action in ("install-hooks", "uninstall-hooks"):
        run = cli(world, action, "--agent", "codex")
        assert_refused(run, path, word, "run again")
        assert snapshot(world.codex) == before, action


def test_an_unreadable_file_is_refused(world: World) -> None:
    """Root reads every file: as root the CLI runs without the capabilities that allow it."""
    world.config.write_text(USER_CONFIG)
    world.hooks.write_text(user_hooks_text([{"type": "command", "command": "notify-me"}]))
    os.chmod(world.hooks, 0o000)
    before = snapshot(world.codex)
    for action in ("install-hooks", "uninstall-hooks"):
        run = cli(world, action, "--agent", "codex", as_user=True)
        assert_refused(run, world.hooks, "cannot be read", "run again")
        assert snapshot(world.codex) == before, action


# --- config.toml shapes --------------------------------------------------------------------------


TRUST = 'trusted_hash = "sha256:00"'
REFUSED_SHAPES = {
    "inline hooks": ("hooks = {}\n", "inline table"),
    "inline hooks with state": (
        f'hooks = {{ state = {{ "a:b:0:0" = {{ {TRUST} }} }} }}\n',
        "inline table",
    ),
    "inline state": (f'[hooks]\nstate = {{ "a:b:0:0" = {{ {TRUST} }} }}\n', "inline table"),
    "dotted state in [hooks]": (f'[hooks]\nstate."a:b:0:0".{TRUST}\n', "dotted keys"),
    "dotted state at the top": (f'hooks.state."a:b:0:0".{TRUST}\n', "dotted keys"),
    "dotted hooks of the user's": ("hooks.SessionStart = []\n", "dotted keys"),
    "array of hooks tables": ("[[hooks]]\nx = 1\n", "array of tables"),
    "array of state tables": ("[[hooks.state]]\nx = 1\n", "array of tables"),
}
HANDLED_SHAPES = {
    "empty [hooks.state]": "[hooks.state]\n",
    "dotted entries in [hooks.state]": f'[hooks.state]\n"a:b:0:0".{TRUST}\n',
    "[hooks] with a user's hook table": (
        '[hooks]\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "x"\n'
    ),
}


@pytest.mark.parametrize("shape", sorted(REFUSED_SHAPES))
def test_a_config_toml_shape_that_cannot_be_edited_is_refused(world: World, shape: str) -> None:
    text, word = REFUSED_SHAPES[shape]
    world.config.write_text(config_with(text))
    before = snapshot(world.codex)
    run = cli(world, "install-hooks", "--agent", "codex")
    assert_refused(run, world.config, word, "run again")
    assert snapshot(world.codex) == before


@pytest.mark.parametrize("shape", sorted(HANDLED_SHAPES))
def test_a_config_toml_shape_that_can_be_edited_gets_trust_where_codex_reads_it(
    world: World, shape: str
) -> None:
    text = config_with(HANDLED_SHAPES[shape])
    world.config.write_text(text)
    user_doc = tomllib.loads(text)
    run = cli(world, "install-hooks", "--agent", "codex")
    assert run.returncode == 0, run.stderr
    doc = tomllib.loads(world.config.read_text())
    state = doc["hooks"]["state"]
    for label in EVENT_LABELS.values():
        assert state_key(world.hooks, label, 0, 0) in state, label
    for key, value in user_doc.get("hooks", {}).get("state", {}).items():
        assert state[key] == value
    assert {k: v for k, v in doc.items() if k != "hooks"} == {
        k: v for k, v in user_doc.items() if k != "hooks"
    }
    run = cli(world, "uninstall-hooks", "--agent", "codex")
    assert run.returncode == 0, run.stderr
    assert world.config.read_text() == text
    assert not world.hooks.exists()


# --- hooks.json that Python's json cannot write back -------------------------------------------


def test_floats_that_round_trip_are_kept_byte_for_byte(world: World) -> None:
    text = (
        '{\n  "weight": 1.0,\n  "ratio": 0.25,\n  "hooks": {\n    "Stop": [\n      {\n'
        '        "hooks": [\n          {\n            "type": "command",\n'
        '            "command": "notify-me",\n            "timeout": 7\n          }\n'
        "        ]\n      }\n    ]\n  }\n}\n"
    )
    world.hooks.write_text(text)
    run = cli(world, "install-hooks", "--agent", "codex")
    assert run.returncode == 0, run.stderr
    assert '"weight": 1.0,\n  "ratio": 0.25,' in world.hooks.read_text()
    run = cli(world, "uninstall-hooks", "--agent", "codex")
    assert run.returncode == 0, run.stderr
    assert world.hooks.read_text() == text


UNWRITABLE_JSON = {
    "1e3": ('{"scale": 1e3, "hooks": {}}\n', "1e3"),
    "0.1000": ('{"ratio": 0.1000, "hooks": {}}\n', "0.1000"),
    "-0": ('{"n": -0, "hooks": {}}\n', "-0"),
    "duplicate key": ('{"note": "a", "note": "b", "hooks": {}}\n', '"note"'),
    "duplicate nested": (
        '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "command": "b"}]}]}}\n',
        '"command"',
    ),
}


@pytest.mark.parametrize("case", sorted(UNWRITABLE_JSON))
def test_a_hooks_json_that_would_not_round_trip_is_refused(world: World, case: str) -> None:
    text, word = UNWRITABLE_JSON[case]
    world.hooks.write_text(text)
    world.config.write_text(USER_CONFIG)
    before = snapshot(world.codex)
    run = cli(world, "install-hooks", "--agent", "codex")
    assert_refused(run, world.hooks, word, "run again")
    assert snapshot(world.codex) == before


def test_uninstall_refuses_a_hooks_json_with_ours_and_a_duplicate_key(world: World) -> None:
    assert cli(world, "install-hooks", "--agent", "codex").returncode == 0
    text = world.hooks.read_text()
    world.hooks.write_text(text.replace('{\n  "hooks"', '{\n  "x": 1,\n  "x": 2,\n  "hooks"', 1))
    before = snapshot(world.codex)
    run = cli(world, "uninstall-hooks", "--agent", "codex")
    assert_refused(run, world.hooks, '"x"', "run again")
    assert snapshot(world.codex) == before
