"""A read-only home (a disk remounted read-only, a home on a read-only share): every command
that must write there says so in one line naming the folder and the fix, exits non-zero, and
prints no traceback; the commands that only read still work.

The home is made read-only by a real read-only bind mount in a mount namespace of the command's
own (`unshare`): chmod would not stop root, who runs these tests. Where no namespace can be made
(no unshare, user namespaces off) those tests are skipped; a home that cannot be made at all (a
folder under /proc, which nobody can create) is tested everywhere.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from purplemux.io.logins import FILE, Logins
from tests.support import REPO, Daemon, free_port


def _unshare() -> list[str] | None:
    """The unshare command that gives a process a mount namespace where a folder can be bound
    read-only; None when this machine allows none."""
    if shutil.which("unshare") is None:
        return None
    probe = Path(f"/tmp/purplemux-ro-probe-{os.getpid()}")
    probe.mkdir(exist_ok=True)
    try:
        for flags in (["-rm"], ["-m"]):
            inner = f"{_mounts([probe])} && ! touch {probe}/x 2>/dev/null"
            run = subprocess.run(
                ["unshare", *flags, "sh", "-c", inner], capture_output=True, timeout=30
            )
            if run.returncode == 0:
                return ["unshare", *flags]
        return None
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def _mounts(folders: list[Path]) -> str:
    return " && ".join(
        f"mount --bind {shlex.quote(str(f))} {shlex.quote(str(f))} && "
        f"mount -o remount,ro,bind {shlex.quote(str(f))}"
        for f in folders
    )


UNSHARE = _unshare()


needs_mount = pytest.mark.skipif(
    UNSHARE is None, reason="no mount namespace here to make a folder read-only"
)


def purplemux(
    read_only: Path | list[Path], env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    """`purplemux ARGS` with the folder(s) `read_only` read-only (see the module's docstring)."""
    command = [sys.executable, "-m", "purplemux", *args]
    if read_only:
        assert UNSHARE is not None
        folders = read_only if isinstance(read_only, list) else [read_only]
        inner = f"{_mounts(folders)} && exec {shlex.join(command)}"
        command = [*UNSHARE, "sh", "-c", inner]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def user(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A user's home where the daemon ran (token, database, a browser's login) and the hooks
    were installed: ~/.purplemux, ~/.claude, ~/.codex."""
    root = tmp_path_factory.mktemp("ro") / "user"
    d = Daemon(home=root / ".purplemux", claude_dir=root / ".claude")
    d.env_extra["CODEX_HOME"] = str(root / ".codex")
    (root / ".codex").mkdir(parents=True)
    d.start(timeout=30)
    d.stop()
    Logins(d.home / FILE, d.token).create()
    installed = d.cli("install-hooks")
    assert installed.returncode == 0, installed.stderr
    yield root


def environment(user: Path, which: str) -> tuple[Path, Path, dict[str, str]]:
    """(the read-only folder, the purplemux home, the environment) for a read-only purplemux
    home, or a read-only HOME holding it (and the Claude and Codex folders) by default."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PURPLEMUX_", "CLAUDE_"))}
    env.pop("CODEX_HOME", None)
    env.update(PYTHONPATH=str(REPO), PURPLEMUX_PORT=str(free_port()))
    if which == "HOME":
        env["HOME"] = str(user)
        return user, user / ".purplemux", env
    env.update(HOME=str(user), PURPLEMUX_HOME=str(user / ".purplemux"))
    return user / ".purplemux", user / ".purplemux", env


def assert_one_clear_line(run: subprocess.CompletedProcess[str], folder: Path) -> None:
    assert "Traceback" not in run.stdout + run.stderr, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("purplemux: "), lines
    assert str(folder) in lines[0], lines
    assert "writable" in lines[0], lines  # the fix


WRITERS = [["serve"], ["install-hooks"], ["install-hooks", "--agent", "claude"], ["logout-all"]]


@needs_mount
@pytest.mark.parametrize("which", ["PURPLEMUX_HOME", "HOME"])
@pytest.mark.parametrize("args", WRITERS, ids=" ".join)
def test_a_command_that_writes_says_which_folder_and_how_to_fix_it(
    user: Path, which: str, args: list[str]
) -> None:
    folder, home, env = environment(user, which)
    before = sorted(p.name for p in (user / ".purplemux").iterdir())
    run = purplemux(folder, env, *args)
    assert run.returncode == 1, (run.returncode, run.stdout, run.stderr)
    assert_one_clear_line(run, home)
    assert sorted(p.name for p in (user / ".purplemux").iterdir()) == before
    assert (user / ".purplemux" / FILE).read_text().strip()  # the login is still there


@needs_mount
@pytest.mark.parametrize("which", ["PURPLEMUX_HOME", "HOME"])
def test_commands_that_only_read_still_work(user: Path, which: str) -> None:
    folder, home, env = environment(user, which)
    opened = purplemux(folder, env, "open")
    status = purplemux(folder, env, "status")
    for run in (opened, status):
        assert "Traceback" not in run.stdout + run.stderr, run.stderr
    token = (home / "token").read_text().strip()
    assert opened.returncode == 0 and f"token={token}" in opened.stdout, opened
    assert status.returncode == 1  # nothing listens on its port: it says how to start it
    assert next(line for line in status.stderr.splitlines() if line.strip()).startswith(
        "purplemux: "
    )


@needs_mount
@pytest.mark.parametrize("args", [["install-hooks"], ["uninstall-hooks"]], ids=" ".join)
def test_a_read_only_claude_folder_is_named_with_the_fix(
    user: Path, args: list[str], tmp_path: Path
) -> None:
    """The purplemux home is writable, the Claude and Codex folders are not."""
    _, _, env = environment(user, "HOME")
    env.update(PURPLEMUX_HOME=str(tmp_path / "home"))
    claude = user / ".claude"
    settings = (claude / "settings.json").read_bytes()
    run = purplemux([claude, user / ".codex"], env, *args)
    assert run.returncode == 1, (run.returncode, run.stdout, run.stderr)
    assert_one_clear_line(run, claude)
    assert (claude / "settings.json").read_bytes() == settings


@pytest.mark.parametrize("args", [["serve"], ["install-hooks"]], ids=" ".join)
def test_a_home_that_cannot_be_made(user: Path, args: list[str]) -> None:
    """Runs with no mount namespace too: a home nobody, not even root, can create."""
    home = Path("/proc/purplemux-test-home")
    _, _, env = environment(user, "HOME")
    env["PURPLEMUX_HOME"] = str(home)
    run = purplemux([], env, *args)
    assert run.returncode == 1, (run.returncode, run.stdout, run.stderr)
    assert_one_clear_line(run, home)
