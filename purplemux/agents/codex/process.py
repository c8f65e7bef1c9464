"""Which process is a Codex TUI, and which CODEX_HOME it uses (codex.md, "Processes").

The TUI is the native binary (comm `codex`, under `@openai/codex-linux-<arch>/vendor/`); the npm
wrapper (`node …/bin/codex`) starts it. The shared app-server daemon and its updater are the same
binary with `app-server` as argv[1]: never a session (they belong to no pane).
"""

from __future__ import annotations

import os

from purplemux.io.procinfo import ProcInfo

DAEMON_ARG = "app-server"


def is_codex(info: ProcInfo) -> bool:
    """A Codex TUI process (not the node wrapper, not the app-server daemon)."""
    argv0 = os.path.basename(info.cmdline[0]) if info.cmdline else ""
    if info.name != "codex" and argv0 != "codex":
        return False
    return not (len(info.cmdline) > 1 and info.cmdline[1] == DAEMON_ARG)


def codex_home(pid: int, home: str | None = None) -> str | None:
    """The CODEX_HOME a Codex process uses: its environment's, else $HOME/.codex (None: its
    environment cannot be read, e.g. another user's process)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    env: dict[bytes, bytes] = {}
    for item in raw.split(b"\0"):
        key, eq, value = item.partition(b"=")
        if eq and key in (b"CODEX_HOME", b"HOME"):
            env[key] = value
    if env.get(b"CODEX_HOME"):
        return os.fsdecode(env[b"CODEX_HOME"])
    user_home = env.get(b"HOME")
    base = os.fsdecode(user_home) if user_home else home
    return os.path.join(base, ".codex") if base else None
