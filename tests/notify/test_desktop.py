"""DesktopNotifier with fake `notify-send` / `osascript` programs on PATH."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from purplemux.notify.desktop import DesktopNotifier, applescript_string

TRICKY = "He said \"hi\" $(touch /tmp/pwned) `id` \\ 'quoted'"


def fake_program(bin_dir: Path, name: str, record: Path, exit_code: int = 0) -> None:
    """A program that writes its argv (after argv[0]) as JSON to `record`."""
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
        f"sys.exit({exit_code})\n"
    )
    script.chmod(0o755)


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "bin"
    path.mkdir()
    # Only the fakes are on PATH: a real notify-send on the machine must not be run.
    monkeypatch.setenv("PATH", str(path))
    return path


@pytest.mark.asyncio
async def test_notify_send_gets_title_and_body(bin_dir: Path, tmp_path: Path) -> None:
    record = tmp_path / "argv.json"
    fake_program(bin_dir, "notify-send", record)

    shown = await DesktopNotifier(True, platform="linux").notify("shop · %3", "Waiting for: Bash")

    assert shown
    argv = json.loads(record.read_text())
    assert argv[-2:] == ["shop · %3", "Waiting for: Bash"]
    assert argv[-3] == "--"


@pytest.mark.asyncio
async def test_shell_syntax_in_the_title_is_passed_literally(bin_dir: Path, tmp_path: Path) -> None:
    record = tmp_path / "argv.json"
    fake_program(bin_dir, "notify-send", record)

    assert await DesktopNotifier(True, platform="linux").notify(TRICKY, "-body starts with a dash")

    assert json.loads(record.read_text())[-2:] == [TRICKY, "-body starts with a dash"]
    assert not Path("/tmp/pwned").exists()


@pytest.mark.asyncio
async def test_osascript_on_macos_gets_an_escaped_script(bin_dir: Path, tmp_path: Path) -> None:
    record = tmp_path / "argv.json"
    fake_program(bin_dir, "osascript", record)

    assert await DesktopNotifier(True, platform="darwin").notify(TRICKY, 'line one\nsay "x"')

    flag, script = json.loads(record.read_text())
    assert flag == "-e"
    assert script == (
        'display notification "line one say \\"x\\"" with title '
        '"He said \\"hi\\" $(touch /tmp/pwned) `id` \\\\ \'quoted\'"'
    )


def test_applescript_string_escapes_backslash_before_quote() -> None:
    assert applescript_string('a\\"b') == '"a\\\\\\"b"'
    assert applescript_string("tab\there\r\n") == '"tab here  "'


@pytest.mark.asyncio
async def test_disabled_or_missing_tool_is_a_no_op(bin_dir: Path, tmp_path: Path) -> None:
    assert not await DesktopNotifier(True, platform="linux").notify("t", "b")  # nothing on PATH
    record = tmp_path / "argv.json"
    fake_program(bin_dir, "notify-send", record)
    assert not await DesktopNotifier(False, platform="linux").notify("t", "b")
    assert not record.exists()


@pytest.mark.asyncio
async def test_a_failing_or_hanging_tool_does_not_raise(bin_dir: Path, tmp_path: Path) -> None:
    fake_program(bin_dir, "notify-send", tmp_path / "argv.json", exit_code=3)
    assert not await DesktopNotifier(True, platform="linux").notify("t", "b")

    hang = bin_dir / "notify-send"
    hang.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(30)\n")
    notifier = DesktopNotifier(True, platform="linux", timeout=0.3)
    assert not await notifier.notify("t", "b")


@pytest.mark.asyncio
async def test_the_tool_is_looked_for_once_a_minute_not_at_every_notification(
    bin_dir: Path, tmp_path: Path
) -> None:
    """A machine without notify-send (a server) walks PATH once, not at every finished turn;
    a tool installed later shows notifications from the next look on."""
    from purplemux.notify import desktop

    clock = [1000.0]
    looks: list[str] = []

    def which(name: str) -> str | None:
        looks.append(name)
        return desktop.shutil.which(name)

    notifier = DesktopNotifier(True, platform="linux", which=which, clock=lambda: clock[0])
    for _ in range(5):
        assert not await notifier.notify("t", "b")
        assert not notifier.may_show()
    assert looks == ["notify-send"]
    record = tmp_path / "argv.json"
    fake_program(bin_dir, "notify-send", record)
    clock[0] += desktop.LOOK_AGAIN + 1
    assert notifier.may_show()
    assert await notifier.notify("later", "installed")
    assert json.loads(record.read_text())[-2:] == ["later", "installed"]
    assert looks == ["notify-send", "notify-send"]
