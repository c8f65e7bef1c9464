"""Claude Code's hooks in its settings.json: a pure merge, then one atomic write (install-hooks).

Our hook items are recognised by their exact command: the whole line is what `hook_command`
writes for the home it names (``PURPLEMUX_HOME=<home> <home>/status-hook.sh``, the only form
install-hooks has ever written), so a user's hook that merely mentions purplemux or ends in
status-hook.sh is never taken. Installing again for another home therefore replaces our old items
instead of adding a second set, and uninstall finds them wherever they point. Everything else in
the file, and every other hook, is kept as it was.

settings.json is read only when it is a readable regular file (hookfiles.read_file): a FIFO,
socket, device, folder, link loop or unreadable file there raises SettingsError naming it and
the fix, and nothing is written.

One case cannot round-trip: an event array the user had left empty and that install appended to
is dropped by uninstall, as one that install created; Claude treats both the same.
"""

from __future__ import annotations

import copy
import json
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from purplemux.agents import hookfiles
from purplemux.agents.claude.statusline import unwrap as unwrap_statusline
from purplemux.agents.claude.statusline import wrap as wrap_statusline

HOOK_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PostToolBatch",
    "MessageDisplay",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
)
HOOK_TIMEOUT = 10  # seconds; the script returns in milliseconds, this only bounds a sick machine
SCRIPT_NAME = hookfiles.SCRIPT_NAME
NEW_FILE_MODE = hookfiles.NEW_FILE_MODE  # settings.json can hold secrets (an env block)


class SettingsError(hookfiles.InstallError):
    """Claude's settings file cannot be merged safely; it was left untouched."""


@dataclass(frozen=True)
class InstallResult:
    """What an install or uninstall did to one settings file."""

    path: Path
    changed: bool
    backup: Path | None = None
    note: str | None = None
    """Something left alone on purpose (a statusLine we cannot wrap), said to the user."""


def hook_command(script: Path, home: Path) -> str:
    """The hook command line: the script, told where the daemon home is."""
    # Claude's environment has no PURPLEMUX_HOME, so a non-default home must be in the command.
    return f"PURPLEMUX_HOME={shlex.quote(str(home))} {shlex.quote(str(script))}"


def is_ours(hook: Any) -> bool:
    """Whether one hook item of a settings file is ours: its command is one hook_command wrote."""
    if not isinstance(hook, dict) or hook.get("type") != "command":
        return False
    return is_our_command(hook.get("command"))


def is_our_command(command: object) -> bool:
    """Whether command is, byte for byte, hook_command's line for the home it names."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) != 2 or not words[0].startswith("PURPLEMUX_HOME="):
        return False
    home = Path(words[0].removeprefix("PURPLEMUX_HOME="))
    return command == hook_command(home / SCRIPT_NAME, home)


def merge_hooks(settings: dict[str, Any], command: str, events: Sequence[str]) -> dict[str, Any]:
    """A copy of settings with our hook registered for each event (idempotent)."""
    result = copy.deepcopy(settings)
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError(f'"hooks" is a {_kind(hooks)}, not an object')
    for event in events:
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise SettingsError(f'"hooks"."{event}" is a {_kind(entries)}, not an array')
        # Items of an older install (another command) go; an item with this command stays as is.
        kept = _without(entries, lambda h: is_ours(h) and h.get("command") != command)
        if kept is not None:
            entries[:] = kept
        if not any(h.get("command") == command for h in _items(entries)):
            item = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT}
            entries.append({"matcher": "", "hooks": [item]})
    if not hooks and "hooks" not in settings:
        del result["hooks"]  # no events asked for: leave the settings as they were
    return result


def remove_hooks(settings: dict[str, Any]) -> dict[str, Any]:
    """A copy of settings without our hook items, and without the containers that left empty."""
    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    for event, entries in list(hooks.items()):
        if not isinstance(entries, list):
            continue
        kept = _without(entries, is_ours)
        if kept is None:
            continue  # none of ours: a user's empty array stays empty
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
            if not hooks:
                del result["hooks"]
    return result


def _without(entries: list[Any], drop: Callable[[Any], bool]) -> list[Any] | None:
    """Entries minus the hook items drop() picks, or None when it picks none."""
    kept: list[Any] = []
    removed = False
    for entry in entries:
        inner = entry.get("hooks") if isinstance(entry, dict) else None
        if not isinstance(inner, list) or not any(drop(h) for h in inner):
            kept.append(entry)
            continue
        removed = True
        rest = [h for h in inner if not drop(h)]
        if rest:  # an entry our removal emptied goes; one that was already empty stays
            kept.append({**entry, "hooks": rest})
    return kept if removed else None


def _items(entries: list[Any]) -> list[dict[str, Any]]:
    """Every command hook item of an event's entries."""
    found: list[dict[str, Any]] = []
    for entry in entries:
        inner = entry.get("hooks") if isinstance(entry, dict) else None
        if isinstance(inner, list):
            found.extend(h for h in inner if isinstance(h, dict) and h.get("type") == "command")
    return found


def _kind(value: Any) -> str:
    """The JSON name of a value's type, for error messages."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    return "null" if value is None else "number"


def install(
    settings_path: Path, command: str, statusline: tuple[Path, Path] | None = None
) -> InstallResult:
    """Register our hook for every event in a Claude settings file; with `statusline` (the
    wrapper script, the daemon home) also wrap the user's statusLine (agents/claude/statusline)."""
    original, settings = _read(settings_path)
    merged = merge_hooks(settings, command, HOOK_EVENTS)
    note = None
    if statusline is not None:
        outcome = wrap_statusline(merged, *statusline)
        merged, note = outcome.settings, outcome.note
    if original is not None and merged == settings:
        return InstallResult(path=settings_path, changed=False, note=note)
    return replace(_commit(settings_path, original, merged), note=note)


def uninstall(settings_path: Path) -> InstallResult:
    """Remove exactly our hook items (and our statusLine wrapper) from a Claude settings file."""
    original, settings = _read(settings_path)
    cleaned = unwrap_statusline(remove_hooks(settings))
    if original is None or cleaned == settings:
        return InstallResult(path=settings_path, changed=False)
    return _commit(settings_path, original, cleaned)


def write_standalone(path: Path, command: str) -> InstallResult:
    """Write a settings file holding only our hooks, for `claude --settings FILE`."""
    return _commit(path, read_file(path), merge_hooks({}, command, HOOK_EVENTS))


def read_file(path: Path) -> bytes | None:
    """A settings file's bytes, None when missing; SettingsError for anything but a readable
    regular file (hookfiles.read_file: a FIFO or device is never opened for a blocking read)."""
    try:
        return hookfiles.read_file(path, "Claude")
    except hookfiles.FileRefused as exc:
        raise SettingsError(str(exc)) from None


def _read(path: Path) -> tuple[bytes | None, dict[str, Any]]:
    """The file's bytes (None when missing) and its JSON object; SettingsError if not one."""
    original = read_file(path)
    if original is None or not original.strip():
        return original, {}  # missing or empty: nothing configured yet
    try:
        settings = json.loads(original.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path}: not UTF-8 text (byte {exc.start}); left untouched") from None
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{path}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            f" (char {exc.pos}); fix it or move it away, it was left untouched"
        ) from None
    if not isinstance(settings, dict):
        raise SettingsError(
            f"{path}: holds a JSON {_kind(settings)}, not an object; left untouched"
        )
    return original, settings


def _commit(path: Path, original: bytes | None, settings: dict[str, Any]) -> InstallResult:
    """Write settings over path unless the bytes are the same; back up what it replaces."""
    data = (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    if original == data:
        return InstallResult(path=path, changed=False)
    backup = hookfiles.replace_file(path, original, data)
    return InstallResult(path=path, changed=True, backup=backup)


def summary(result: InstallResult, installed: bool) -> str:
    """What install-hooks / uninstall-hooks did to Claude's settings, in one line."""
    if not result.changed:
        why = "already installed" if installed else "no purplemux hooks"
        return f"{result.path}: nothing to change ({why})"
    verb = "installed purplemux hooks in" if installed else "removed purplemux hooks from"
    return f"{verb} {result.path}" + (f" (backup: {result.backup})" if result.backup else "")
