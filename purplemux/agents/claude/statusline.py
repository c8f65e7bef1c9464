"""Claude's `statusLine` in settings.json, wrapped so its input reaches the daemon (issue 25).

Claude hands the statusLine command a JSON object on stdin that, for subscription and gateway
logins, carries `rate_limits` (the account's 5-hour and weekly use). install-hooks replaces the
user's statusLine command with our wrapper (hooks/statusline.sh), which posts that input to the
daemon in the background and then runs the user's own command with the same stdin.

How uninstall gets the user's statusLine back, with no state kept anywhere else: the wrapper's
command line carries the user's command as its one argument, shell-quoted, and every other key
of the user's object (`padding`, ...) stays in the object as it was. Restoring is putting that
argument back as `command`; a wrapper with no argument means there was no statusLine, and the key
goes. Installing again re-reads the argument, so it changes nothing (or only the home/script).
A statusLine that is not a command object is left alone, with a note saying so.
"""

from __future__ import annotations

import copy
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from purplemux.core.limits import Reading, ReadingError, Window, is_number, unix_time

SCRIPT_NAME = "statusline.sh"
KEY = "statusLine"


@dataclass(frozen=True, slots=True)
class Outcome:
    """A copy of the settings with the statusLine (un)wrapped, and why it was left alone."""

    settings: dict[str, Any]
    note: str | None = None


def wrapper_command(script: Path, home: Path, user_command: str | None) -> str:
    """Our statusLine command: the wrapper, told the home, with the user's command (if any)."""
    line = f"PURPLEMUX_HOME={shlex.quote(str(home))} {shlex.quote(str(script))}"
    return line if user_command is None else f"{line} {shlex.quote(user_command)}"


def wrapped_command(command: object) -> tuple[bool, str | None]:
    """(is it our wrapper, the user's command it carries or None).

    Ours only when the whole line is, byte for byte, what wrapper_command writes for the home it
    names (``PURPLEMUX_HOME=<home> <home>/statusline.sh [command]``): a user's own line that
    names PURPLEMUX_HOME or a statusline.sh elsewhere (even under a "purplemux" folder) is never
    taken."""
    if not isinstance(command, str):
        return False, None
    try:
        words = shlex.split(command)
    except ValueError:
        return False, None
    if not 2 <= len(words) <= 3 or not words[0].startswith("PURPLEMUX_HOME="):
        return False, None
    home = Path(words[0].removeprefix("PURPLEMUX_HOME="))
    user = words[2] if len(words) == 3 else None
    if command != wrapper_command(home / SCRIPT_NAME, home, user):
        return False, None
    return True, user


def wrap(settings: dict[str, Any], script: Path, home: Path) -> Outcome:
    """settings with its statusLine going through our wrapper (idempotent)."""
    result = copy.deepcopy(settings)
    current = result.get(KEY)
    if current is None:
        result[KEY] = {"type": "command", "command": wrapper_command(script, home, None)}
        return Outcome(result)
    if not isinstance(current, dict) or current.get("type") != "command":
        return Outcome(result, _alone(current))
    command = current.get("command")
    if not isinstance(command, str):
        return Outcome(result, _alone(current))
    ours, user = wrapped_command(command)
    current["command"] = wrapper_command(script, home, user if ours else command)
    return Outcome(result)


def unwrap(settings: dict[str, Any]) -> dict[str, Any]:
    """settings with the user's statusLine back as it was before wrap (or without one)."""
    result = copy.deepcopy(settings)
    current = result.get(KEY)
    if not isinstance(current, dict) or current.get("type") != "command":
        return result
    ours, user = wrapped_command(current.get("command"))
    if not ours:
        return result
    if user is None:
        del result[KEY]
    else:
        current["command"] = user
    return result


def _alone(value: Any) -> str:
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:79] + "…"
    return (
        f'"{KEY}" left alone (not a {{"type": "command", "command": ...}} object: {shown}); '
        "Claude's usage limits will not show in purplemux until it is one"
    )


# --- the input it hands the wrapper: the account's usage limits ---------------------------------


def from_statusline(
    data: object, agent: str, account: str, at: float
) -> tuple[str | None, Reading | None]:
    """(session id, reading) from Claude's statusLine input; reading None when the input has no
    `rate_limits` (an API-key login, or before the session's first answer). ReadingError for an
    input Claude would never send."""
    if not isinstance(data, Mapping):
        raise ReadingError("the statusLine input must be a JSON object")
    sid = data.get("session_id")
    if sid is not None and not (isinstance(sid, str) and 0 < len(sid) <= 200):
        raise ReadingError("session_id must be a string of 1 to 200 characters")
    path = data.get("transcript_path")
    if path is not None and not isinstance(path, str):
        raise ReadingError("transcript_path must be a string")
    limits = data.get("rate_limits")
    if limits is None:
        return sid, None
    if not isinstance(limits, Mapping):
        raise ReadingError("rate_limits must be an object")
    five = _statusline_window(limits.get("five_hour"), "five_hour")
    seven = _statusline_window(limits.get("seven_day"), "seven_day")
    if five is None and seven is None:
        return sid, None
    return sid, Reading(agent, account, five, seven, at)


def _statusline_window(value: object, name: str) -> Window | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ReadingError(f"rate_limits.{name} must be an object")
    used = value.get("used_percentage")
    if not is_number(used) or not 0 <= used <= 100:  # type: ignore[operator]
        raise ReadingError(f"rate_limits.{name}.used_percentage must be a number from 0 to 100")
    resets = value.get("resets_at")
    if resets is not None and not unix_time(resets):
        raise ReadingError(f"rate_limits.{name}.resets_at must be unix seconds (2001 to 2100)")
    return Window(float(used), None if resets is None else float(resets))  # type: ignore[arg-type]
