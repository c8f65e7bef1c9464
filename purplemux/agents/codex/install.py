"""install-hooks for Codex: our hook on all 14 events in $CODEX_HOME/hooks.json, trusted.

Codex runs a user hook only when config.toml trusts it (see trust.py), so an install is two
edits made together: our handler in hooks.json for every event, and for each one the
``[hooks.state."<hooks.json>:<label>:<group>:<handler>"] trusted_hash`` entry Codex would write
itself after a review. With both, no screen asks anything and ``codex exec`` runs them.

- Ours are recognised by their exact command: the whole line is what hook_command writes for
  the home it names (``PURPLEMUX_HOME=<home> PURPLEMUX_AGENT=codex <home>/status-hook.sh``), so
  a user's hook that merely mentions purplemux or ends in status-hook.sh is never taken. The
  command sets PURPLEMUX_AGENT=codex: Codex runs hook commands through a shell (verified on
  0.171.0), so the script can tell the two agents apart.
- hooks.json is merged as JSON: the user's groups, handlers and keys stay, ours go in a group
  of their own at the end of each event (the user's indices, hence their trust, do not move).
  It is written back in the indentation it was found in. An older handler of ours (another
  command or timeout) is replaced where it stands.
- config.toml is edited with tomlkit, which keeps every other byte: comments, order, blank
  lines, the user's own trust entries. Ours go where [hooks.state] is (at the end when there is
  none), laid out so that removing them gives the file back as it was (see _toml_text).
- Uninstall removes exactly our handlers, the groups and events that only held them, and the
  trust entries at their positions. A user handler whose index moved because one of ours went
  has its trust entry moved with it (Codex trusts by position). A file left holding nothing
  (one we created) is removed.
- Every change backs the file up first (<name>.purplemux-backup-<time>) and replaces it in one
  atomic rename with its mode kept (0600 when new). Same bytes: no write, no backup. A file
  that does not parse raises CodexConfigError naming it, and nothing is written.
- Refused the same way (CodexConfigError, nothing written): anything but a readable regular
  file at either path (a FIFO or device is never opened for a blocking read: its type is
  checked first and the open does not block); a hooks.json to be rewritten that holds what
  json.dumps would change (a duplicate key, a number such as 1e3 or 0.1000); a config.toml whose
  hooks or hooks.state is an inline table or an array of tables, or whose edit would not read
  back as intended (dotted keys under [hooks]: checked with tomllib before writing).

Edge cases that do not round-trip byte for byte: a hooks.json whose layout json.dumps cannot
reproduce (mixed indentation, inline arrays); a config.toml with no final newline, or one where
something was appended after our entries (a blank line stays where they were); a stale trust
entry the user had at the position our group takes (overwritten, then removed); an event array
the user had left empty (uninstall drops it, as Claude's installer does).
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import os
import re
import shlex
import tomllib
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions

from purplemux.agents import hookfiles
from purplemux.agents.codex.trust import CLAMPED_LABELS, EVENT_LABELS, state_key, trusted_hash

EVENTS = tuple(EVENT_LABELS)
HOOK_TIMEOUT = 5  # seconds; the script returns in milliseconds, this only bounds a sick machine
CLAMPED_TIMEOUT = 3  # SessionEnd and Interrupt: Codex clamps their timeouts to 1..3 s
AGENT_ENV = "PURPLEMUX_AGENT=codex"
HOOKS_FILE = "hooks.json"
CONFIG_FILE = "config.toml"

Position = tuple[int, int]  # (group index, handler index) within one event's array


class CodexConfigError(hookfiles.InstallError):
    """hooks.json or config.toml cannot be edited safely; nothing was written."""


@dataclass(frozen=True)
class FileChange:
    """What an install or uninstall did to one file."""

    path: Path
    changed: bool
    backup: Path | None = None
    removed: bool = False  # the file held nothing but ours and is gone


@dataclass(frozen=True)
class CodexInstallResult:
    """What an install or uninstall did to hooks.json and config.toml."""

    hooks_json: FileChange
    config_toml: FileChange

    @property
    def changed(self) -> bool:
        return self.hooks_json.changed or self.config_toml.changed


@dataclass(frozen=True)
class CodexHookStatus:
    """Our Codex hooks as Codex would see them now, for doctor."""

    hooks_json: Path
    config_toml: Path
    missing: tuple[str, ...]  # events without a handler of ours
    untrusted: tuple[str, ...]  # ours, but no trusted_hash for it: Codex asks or skips
    modified: tuple[str, ...]  # ours, with a trusted_hash that no longer matches
    other_command: tuple[str, ...]  # ours, but not the command asked about (home moved)

    @property
    def installed(self) -> bool:
        """Our handler is in hooks.json for all 14 events."""
        return not self.missing

    @property
    def trusted(self) -> bool:
        """Every handler of ours has a state entry whose hash Codex would accept now."""
        return self.installed and not self.untrusted and not self.modified


@dataclass
class _EventChange:
    """What a merge or removal did to one event's array, in (group, handler) positions."""

    ours: Position | None = None  # where our handler is afterwards (install only)
    dropped: list[Position] = field(default_factory=list)  # ours that went (old positions)
    moved: dict[Position, Position] = field(default_factory=dict)  # user handlers: old -> new


def codex_home_from_env(environ: Mapping[str, str], user_home: Path) -> Path:
    """The CODEX_HOME as Codex names it in trust keys.

    Verified on 0.171.0: a CODEX_HOME from the environment is canonicalised (a key through a
    symbolic link is void); the default ~/.codex is used as it is (a key through the real path
    is void when ~/.codex is a link).
    """
    value = environ.get("CODEX_HOME")
    if value:
        return Path(value).expanduser().resolve()
    return user_home / ".codex"


def hook_command(script: Path, home: Path) -> str:
    """The hook command line: the script, told where the daemon home is and that Codex calls."""
    return f"PURPLEMUX_HOME={shlex.quote(str(home))} {AGENT_ENV} {shlex.quote(str(script))}"


def our_handler(event: str, command: str) -> dict[str, Any]:
    """Our handler for one event, with the timeout written out (it is part of the hash)."""
    timeout = CLAMPED_TIMEOUT if EVENT_LABELS[event] in CLAMPED_LABELS else HOOK_TIMEOUT
    return {"type": "command", "command": command, "timeout": timeout}


def is_ours(handler: Any) -> bool:
    """Whether one handler of hooks.json is ours: its command is exactly one hook_command wrote."""
    if not isinstance(handler, dict) or handler.get("type") != "command":
        return False
    return is_our_command(handler.get("command"))


def is_our_command(command: object) -> bool:
    """Whether command is, byte for byte, hook_command's line for the home it names."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) != 3 or words[1] != AGENT_ENV or not words[0].startswith("PURPLEMUX_HOME="):
        return False
    home = Path(words[0].removeprefix("PURPLEMUX_HOME="))
    return command == hook_command(home / hookfiles.SCRIPT_NAME, home)


def merge_hooks(
    doc: dict[str, Any], command: str
) -> tuple[dict[str, Any], dict[str, _EventChange]]:
    """A copy of a hooks.json object with our handler on every event, and what moved where."""
    result = copy.deepcopy(doc)
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise CodexConfigError(f'"hooks" is a {_kind(hooks)}, not an object')
    changes: dict[str, _EventChange] = {}
    for event in EVENTS:
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise CodexConfigError(f'"hooks"."{event}" is a {_kind(entries)}, not an array')
        item = our_handler(event, command)
        entries[:], change = _rebuild(entries, item)
        if change.ours is None:
            entries.append({"hooks": [item]})
            change.ours = (len(entries) - 1, 0)
        changes[event] = change
    return result, changes


def remove_hooks(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, _EventChange]]:
    """A copy of a hooks.json object without our handlers, and what moved where."""
    result = copy.deepcopy(doc)
    hooks = result.get("hooks")
    changes: dict[str, _EventChange] = {}
    if not isinstance(hooks, dict):
        return result, changes
    for event, entries in list(hooks.items()):
        if not isinstance(entries, list) or event not in EVENT_LABELS:
            continue
        kept, change = _rebuild(entries, None)
        if not change.dropped:
            continue  # none of ours: the array stays exactly as it was
        changes[event] = change
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks and changes:
        del result["hooks"]
    return result, changes


def _rebuild(entries: list[Any], keep: dict[str, Any] | None) -> tuple[list[Any], _EventChange]:
    """entries without our handlers, except the first one, replaced by keep when given.

    A group that only our removal emptied goes; a group that was already empty stays.
    """
    change = _EventChange()
    rebuilt: list[Any] = []
    for gi, group in enumerate(entries):
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list) or not inner:
            rebuilt.append(group)
            continue
        new_gi = len(rebuilt)
        kept: list[Any] = []
        for hi, handler in enumerate(inner):
            if is_ours(handler):
                if keep is not None and change.ours is None:
                    change.ours = (new_gi, len(kept))
                    kept.append(handler if handler == keep else dict(keep))
                else:
                    change.dropped.append((gi, hi))
                continue
            if (new_gi, len(kept)) != (gi, hi):
                change.moved[(gi, hi)] = (new_gi, len(kept))
            kept.append(handler)
        if kept:
            rebuilt.append(group if kept == inner else {**group, "hooks": kept})
    return rebuilt, change


def install(codex_home: Path, command: str) -> CodexInstallResult:
    """Register our hook for every Codex event in codex_home, trusted; idempotent."""
    hooks_path, config_path = codex_home / HOOKS_FILE, codex_home / CONFIG_FILE
    hooks_raw, hooks_doc, hooks_loss = _read_json(hooks_path)
    config_raw, config_doc = _read_toml(config_path)
    merged, changes = merge_hooks(hooks_doc, command)
    with _toml_edit(config_path):
        state = _state_table(config_doc, config_path, create=True)
        assert state is not None
        for event, change in changes.items():
            label = EVENT_LABELS[event]
            _move_trust(state, hooks_path, label, change)
            assert change.ours is not None
            gi, hi = change.ours
            group = merged["hooks"][event][gi]
            key = state_key(hooks_path, label, gi, hi)
            _set_trust(state, key, trusted_hash(label, group, hi))
        _drop_empty_tables(config_doc)
    config_text = _checked_toml(
        config_path, config_doc, _toml_text(config_doc, config_raw), config_raw
    )
    hooks_data = None  # ours are there already: the file keeps its layout
    if hooks_raw is None or merged != hooks_doc:
        hooks_data = _json_out(hooks_path, merged, hooks_raw, hooks_loss)
    # Both checked before either is written. Trust first: entries for hooks not written yet are
    # harmless, the other way round is not.
    config_change = _write(config_path, config_raw, config_text.encode("utf-8"))
    if hooks_data is None:
        hooks_change = FileChange(hooks_path, changed=False)
    else:
        hooks_change = _write(hooks_path, hooks_raw, hooks_data)
    return CodexInstallResult(hooks_json=hooks_change, config_toml=config_change)


def uninstall(codex_home: Path) -> CodexInstallResult:
    """Remove exactly our handlers and their trust entries; the user's stay as they were."""
    hooks_path, config_path = codex_home / HOOKS_FILE, codex_home / CONFIG_FILE
    hooks_raw, hooks_doc, hooks_loss = _read_json(hooks_path)
    config_raw, config_doc = _read_toml(config_path)
    cleaned, changes = remove_hooks(hooks_doc)
    with _toml_edit(config_path):
        state = _state_table(config_doc, config_path, create=False)
        if state is not None:
            for event, change in changes.items():
                _move_trust(state, hooks_path, EVENT_LABELS[event], change)
            _drop_empty_tables(config_doc)
    config_text = _checked_toml(
        config_path, config_doc, _toml_text_without(config_doc, config_raw), config_raw
    )
    if hooks_raw is None or not changes:
        hooks_change = FileChange(hooks_path, changed=False)
    elif not cleaned and not hooks_path.is_symlink():
        hooks_change = _remove(hooks_path)  # it held nothing but ours
    else:
        data = _json_out(hooks_path, cleaned, hooks_raw, hooks_loss)
        hooks_change = _write(hooks_path, hooks_raw, data)
    if config_raw and config_raw.strip() and not config_text.strip():
        if config_path.is_symlink():
            config_change = _write(config_path, config_raw, config_text.encode("utf-8"))
        else:
            config_change = _remove(config_path)  # it held nothing but our trust entries
    else:
        config_change = _write(config_path, config_raw, config_text.encode("utf-8"))
    return CodexInstallResult(hooks_json=hooks_change, config_toml=config_change)


def status(codex_home: Path, command: str) -> CodexHookStatus:
    """Which events have our hook, and whether Codex trusts each as it is now (no writes)."""
    hooks_path, config_path = codex_home / HOOKS_FILE, codex_home / CONFIG_FILE
    _, hooks_doc, _ = _read_json(hooks_path)
    _, config_doc = _read_toml(config_path)
    state = _state_table(config_doc, config_path, create=False)
    hooks = hooks_doc.get("hooks")
    missing, untrusted, modified, other = [], [], [], []
    for event, label in EVENT_LABELS.items():
        entries = hooks.get(event) if isinstance(hooks, dict) else None
        found = _first_ours(entries if isinstance(entries, list) else [])
        if found is None:
            missing.append(event)
            continue
        gi, hi = found
        group = entries[gi]  # type: ignore[index]  # _first_ours found it in this list
        if group["hooks"][hi].get("command") != command:
            other.append(event)
        entry = state.get(state_key(hooks_path, label, gi, hi)) if state is not None else None
        written = entry.get("trusted_hash") if isinstance(entry, Mapping) else None
        if written is None:
            untrusted.append(event)
            continue
        try:
            now = trusted_hash(label, group, hi)
        except ValueError:
            now = None  # a timeout Codex cannot take: it will not run either
        if str(written) != now:
            modified.append(event)
    return CodexHookStatus(
        hooks_json=hooks_path,
        config_toml=config_path,
        missing=tuple(missing),
        untrusted=tuple(untrusted),
        modified=tuple(modified),
        other_command=tuple(other),
    )


def _first_ours(entries: list[Any]) -> Position | None:
    for gi, group in enumerate(entries):
        inner = group.get("hooks") if isinstance(group, dict) else None
        for hi, handler in enumerate(inner if isinstance(inner, list) else []):
            if is_ours(handler):
                return gi, hi
    return None


# --- config.toml: the [hooks.state] table -------------------------------------------------


def _state_table(
    doc: tomlkit.TOMLDocument, path: Path, create: bool
) -> MutableMapping[str, Any] | None:
    """doc's hooks.state table; created (as implicit tables, no headers) when asked."""
    hooks = doc.get("hooks")
    if hooks is None:
        if not create:
            return None
        hooks = tomlkit.table(is_super_table=True)
        doc.append("hooks", hooks)
        hooks.trivia.indent = ""  # tomlkit would put a blank line in front: see _set_trust
    if not isinstance(hooks, MutableMapping):
        raise CodexConfigError(
            f"{path}: hooks is {_toml_kind(hooks)}, not a table: make it a [hooks] table{_FIX}"
        )
    state = hooks.get("state")
    if state is None and not create:
        return None
    if create and (_written_dotted(doc, "hooks") or _written_dotted(hooks, "state")):
        raise CodexConfigError(
            f"{path}: hooks is written with dotted keys (hooks.… = … or state.… = …), where"
            f' entries cannot be added in their place: write it as [hooks] and [hooks.state."…"]'
            f" tables{_FIX}"
        )
    if isinstance(hooks, tomlkit.items.InlineTable):
        raise CodexConfigError(
            f"{path}: hooks is an inline table (hooks = {{…}}), which cannot take"
            f' [hooks.state."…"] entries: write it as [hooks] tables{_FIX}'
        )
    if state is None:
        state = tomlkit.table(is_super_table=True)
        hooks["state"] = state
        state.trivia.indent = ""
        state = hooks["state"]
    if not isinstance(state, MutableMapping):
        raise CodexConfigError(
            f"{path}: hooks.state is {_toml_kind(state)}, not a table: write its entries as"
            f' [hooks.state."…"] tables{_FIX}'
        )
    if isinstance(state, tomlkit.items.InlineTable) and create:
        raise CodexConfigError(
            f"{path}: hooks.state is an inline table (state = {{…}}): write its entries as"
            f' [hooks.state."…"] tables{_FIX}'
        )
    return state


def _written_dotted(table: Any, name: str) -> bool:
    """Whether table's key name is written as a dotted key (``state."k".x = 1``), where an added
    [hooks.state."…"] table would not keep the user's layout."""
    container = (
        table if isinstance(table, tomlkit.container.Container) else getattr(table, "value", None)
    )
    body = getattr(container, "body", [])
    return any(key is not None and key.key == name and key.is_dotted() for key, _ in body)


_FIX = hookfiles.FIX


def _toml_kind(value: Any) -> str:
    """A tomlkit item's kind for messages: "a string", "an array of tables ([[…]])", ..."""
    if isinstance(value, tomlkit.items.AoT):
        return "an array of tables ([[…]])"
    name = type(value).__name__.lower()  # tomlkit's item types: String, Integer, Array, ...
    return f"an {name}" if name[:1] in "aeiou" else f"a {name}"


@contextlib.contextmanager
def _toml_edit(path: Path) -> Iterator[None]:
    """Edits of config.toml that tomlkit refuses become a CodexConfigError naming the file."""
    try:
        yield
    except CodexConfigError:
        raise
    except (ValueError, tomlkit.exceptions.TOMLKitError) as exc:
        raise CodexConfigError(
            f"{path}: its [hooks] tables are in a form this installer cannot edit ({exc});"
            f' write the trust entries as [hooks.state."…"] tables{_FIX}'
        ) from None


def _checked_toml(path: Path, doc: tomlkit.TOMLDocument, text: str, original: bytes | None) -> str:
    """text, once it reads back (with tomllib, as Codex would) as the edited doc holds it.

    tomlkit can lay an added table out where it means something else: under a [hooks] whose
    state is written as dotted keys, [hooks.state."…"] comes out as [state."…"].
    """
    if original is not None and text.encode("utf-8") == original:
        return text  # unchanged: nothing is written
    try:
        same = tomllib.loads(text) == doc.unwrap()
    except (tomllib.TOMLDecodeError, ValueError):
        same = False
    if not same:
        raise CodexConfigError(
            f"{path}: hooks.state is written in a form (dotted keys or inline tables) this"
            f' installer cannot add to safely: write its entries as [hooks.state."…"] tables{_FIX}'
        )
    return text


def _set_trust(state: MutableMapping[str, Any], key: str, digest: str) -> None:
    entry = state.get(key)
    if isinstance(entry, MutableMapping):
        if entry.get("trusted_hash") != digest:
            entry["trusted_hash"] = digest
        return
    if entry is not None:
        del state[key]
    table = tomlkit.table()
    table.add("trusted_hash", digest)
    table.add(tomlkit.nl())  # the blank line after it belongs to it: removed with it
    state[key] = table
    added = state[key]
    if hasattr(added, "trivia"):
        added.trivia.indent = ""  # nothing in front: the text before it stays the user's


def _move_trust(
    state: MutableMapping[str, Any], hooks_path: Path, label: str, change: _EventChange
) -> None:
    """Drop the entries of our handlers that went; move the user's along with their handlers."""
    for gi, hi in change.dropped:
        state.pop(state_key(hooks_path, label, gi, hi), None)
    for (gi, hi), (ngi, nhi) in sorted(change.moved.items()):  # down-shifts: targets are free
        old = state_key(hooks_path, label, gi, hi)
        if old in state:
            entry = state[old]
            del state[old]
            state[state_key(hooks_path, label, ngi, nhi)] = entry


def _drop_empty_tables(doc: tomlkit.TOMLDocument) -> None:
    """Remove hooks.state and hooks when empty and implicit (no header of the user's)."""
    hooks = doc.get("hooks")
    if not isinstance(hooks, MutableMapping):
        return
    state = hooks.get("state")
    if isinstance(state, MutableMapping) and not state and _implicit(state):
        del hooks["state"]
    if not hooks and _implicit(hooks):
        del doc["hooks"]


def _implicit(table: Any) -> bool:
    is_super = getattr(table, "is_super_table", None)
    return bool(is_super()) if callable(is_super) else False


def _toml_text(doc: tomlkit.TOMLDocument, original: bytes | None) -> str:
    """The edited config.toml as text, laid out so that uninstall can give the bytes back.

    tomlkit hands the blank lines in front of a table to the table before it, so a blank line we
    put before our entries would look like the user's afterwards. Hence: nothing in front of an
    entry of ours, a blank line after each, and two exact rules for the end of the file, undone
    by _toml_text_without: entries appended at the end get one blank line before them, and the
    last one gives its own blank line back (the file keeps the ending it had).
    """
    text = doc.as_string()
    before = original.decode("utf-8") if original else ""
    added = text[len(before) :] if text.startswith(before) else ""
    if before.endswith("\n") and added.startswith("["):
        text = before + "\n" + added
    if text.endswith("\n\n") and not before.endswith("\n\n"):
        text = text[:-1]
    return text


def _toml_text_without(doc: tomlkit.TOMLDocument, original: bytes | None) -> str:
    """config.toml as text after removing entries: the end-of-file blank line goes with them."""
    text = doc.as_string()
    before = original.decode("utf-8") if original else ""
    if text != before and before.startswith(text) and text.endswith("\n\n"):
        text = text[:-1]  # all that went was at the end: so does the blank line put before it
    return text


# --- reading and writing ------------------------------------------------------------------


def _read_file(path: Path) -> bytes | None:
    """path's bytes, None when nothing is there; CodexConfigError for anything but a readable
    regular file (hookfiles.read_file: a FIFO or device is never opened for a blocking read)."""
    try:
        return hookfiles.read_file(path, "Codex")
    except hookfiles.FileRefused as exc:
        raise CodexConfigError(str(exc)) from None


def _read_json(path: Path) -> tuple[bytes | None, dict[str, Any], str | None]:
    """The file's bytes and object, and what json.dumps would lose or change in it (None: it
    round-trips; _json_out refuses to write it otherwise)."""
    raw = _read_file(path)
    if raw is None or not raw.strip():
        return raw, {}, None
    losses: list[str] = []
    try:
        doc = json.loads(
            raw.decode("utf-8"),
            object_pairs_hook=lambda pairs: _object(pairs, losses),
            parse_float=lambda text: _number(text, float(text), losses),
            parse_int=lambda text: _number(text, int(text), losses),
        )
    except UnicodeDecodeError as exc:
        raise CodexConfigError(
            f"{path}: not UTF-8 text (byte {exc.start}); left untouched"
        ) from None
    except json.JSONDecodeError as exc:
        raise CodexConfigError(
            f"{path}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno};"
            " fix it or move it away, nothing was changed"
        ) from None
    if not isinstance(doc, dict):
        raise CodexConfigError(f"{path}: holds a JSON {_kind(doc)}, not an object; left untouched")
    return raw, doc, losses[0] if losses else None


def _object(pairs: list[tuple[str, Any]], losses: list[str]) -> dict[str, Any]:
    """A JSON object; a key it holds twice is noted (a dict keeps the last one only)."""
    doc: dict[str, Any] = {}
    for key, value in pairs:
        if key in doc:
            losses.append(f"the key {json.dumps(key)} appears twice in one object: remove one")
        doc[key] = value
    return doc


def _number(text: str, value: float, losses: list[str]) -> float:
    """A JSON number; one that json.dumps would write otherwise (1e3, 0.1000, -0) is noted."""
    written = json.dumps(value)
    if written != text:
        fix = f"write it as {written}" if math.isfinite(value) else "use a smaller one"
        losses.append(f"the number {text} would be written back as {written}: {fix}")
    return value


def _read_toml(path: Path) -> tuple[bytes | None, tomlkit.TOMLDocument]:
    raw = _read_file(path)
    if raw is None:
        return None, tomlkit.document()
    try:
        return raw, tomlkit.parse(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CodexConfigError(
            f"{path}: not UTF-8 text (byte {exc.start}); left untouched"
        ) from None
    except tomlkit.exceptions.TOMLKitError as exc:
        raise CodexConfigError(
            f"{path}: not valid TOML: {exc}; fix it or move it away, nothing was changed"
        ) from None


def _json_out(path: Path, doc: dict[str, Any], original: bytes | None, loss: str | None) -> bytes:
    """doc as _json_bytes writes it; CodexConfigError when the file holds what it would lose."""
    if loss is not None:
        raise CodexConfigError(f"{path}: {loss}{_FIX}")
    return _json_bytes(doc, original)


def _json_bytes(doc: dict[str, Any], original: bytes | None) -> bytes:
    """doc as JSON in the layout the original file had (2 spaces for a new file)."""
    text = original.decode("utf-8") if original and original.strip() else ""
    indent: str | None = "  "
    separators = (",", ": ")
    if text:
        found = re.search(r"\n([ \t]+)\S", text)
        indent = found.group(1) if found else None
        if indent is None:
            separators = (", ", ": ") if re.search(r"[,:] ", text) else (",", ":")
    ascii_only = bool(text) and text.isascii() and "\\u" in text
    ending = "\n" if not text or text.endswith("\n") else ""
    body = json.dumps(doc, indent=indent, separators=separators, ensure_ascii=ascii_only)
    return (body + ending).encode("utf-8")


def _write(path: Path, original: bytes | None, data: bytes) -> FileChange:
    if original == data:
        return FileChange(path, changed=False)
    if original is None and data.strip() in (b"", b"{}"):
        return FileChange(
            path, changed=False
        )  # nothing to say: no file is better than an empty one
    backup = hookfiles.replace_file(path, original, data)
    return FileChange(path, changed=True, backup=backup)


def _remove(path: Path) -> FileChange:
    """Remove a file that holds nothing but ours (no backup: nothing of the user's is in it)."""
    os.unlink(path)
    hookfiles.fsync_dir(path.parent)
    return FileChange(path, changed=True, removed=True)


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


def summary(result: CodexInstallResult, installed: bool) -> list[str]:
    """What install-hooks / uninstall-hooks did to Codex's hooks.json and config.toml."""
    lines = []
    for change, what in ((result.hooks_json, "hooks"), (result.config_toml, "trust entries")):
        if not change.changed:
            why = "already installed" if installed else "no purplemux hooks"
            lines.append(f"{change.path}: nothing to change ({why})")
            continue
        verb = f"installed purplemux {what} in" if installed else f"removed purplemux {what} from"
        if change.removed:
            verb = "removed (it held only purplemux's)"
        backup = f" (backup: {change.backup})" if change.backup else ""
        lines.append(f"{verb} {change.path}{backup}")
    return lines
