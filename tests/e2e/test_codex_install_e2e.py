"""install-hooks for Codex against the real Codex CLI 0.171.0: the hooks run, trusted.

The real installer writes hooks.json and the trust entries into a throw-away CODEX_HOME that
already holds a user's commented config.toml and a hook of their own; the real status-hook.sh
is installed into a purplemux home where no daemon runs, so it spools every event it gets to
``$PURPLEMUX_HOME/spool/``. ``codex exec`` (in-process, no app-server daemon, no TUI) then runs
one turn against a local stand-in for the Responses API, without
``--dangerously-bypass-hook-trust``: one spool file per hook that fired proves Codex trusted
every one (it skips untrusted hooks in exec without a word). Uninstall then gives both files
back byte for byte.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents import install
from purplemux.agents.codex import install as ci
from purplemux.agents.codex.trust import state_key, trusted_hash

from .harness import cache_root

pytestmark = pytest.mark.e2e

CODEX_VERSION = "0.171.0"
# What one plain turn of `codex exec` fires (codex.md, "Hook events"); SessionEnd at exit.
TURN_EVENTS = {"SessionStart", "UserPromptSubmit", "PreModelRequest", "PostModelRequest", "Stop"}


def codex_bin() -> Path:
    """The pinned Codex CLI (npm's wrapper); installed into the e2e cache with npm if missing."""
    dest = cache_root() / f"codex-{CODEX_VERSION}"
    wrapper = dest / "node_modules" / ".bin" / "codex"
    if not wrapper.is_file():
        if shutil.which("npm") is None:
            pytest.fail(f"Codex {CODEX_VERSION} is not in {dest} and npm is not on PATH")
        dest.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--prefix", str(dest), "--no-audit", "--no-fund",
             f"@openai/codex@{CODEX_VERSION}"],
            check=True, capture_output=True, timeout=900,
        )  # fmt: skip
    return wrapper


class _Responses(BaseHTTPRequestHandler):
    """POST /v1/responses: one short streamed answer, "Hi.", for every request."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        item = {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Hi.", "annotations": []}],
        }
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 2,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 12,
        }
        events: list[tuple[str, dict[str, Any]]] = [
            ("response.created", {"response": {"id": "resp_1", "status": "in_progress"}}),
            (
                "response.output_item.added",
                {"output_index": 0, "item": {**item, "status": "in_progress", "content": []}},
            ),
            (
                "response.output_text.delta",
                {"output_index": 0, "content_index": 0, "item_id": "msg_1", "delta": "Hi."},
            ),
            ("response.output_item.done", {"output_index": 0, "item": item}),
            (
                "response.completed",
                {
                    "response": {
                        "id": "resp_1",
                        "status": "completed",
                        "output": [item],
                        "usage": usage,
                    }
                },
            ),
        ]
        for name, data in events:
            payload = json.dumps({"type": name, **data})
            self.wfile.write(f"event: {name}\ndata: {payload}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True


@pytest.fixture
def responses_api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Responses)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def user_config(base_url: str, project: Path, own_key: str, own_hash: str) -> str:
    return f"""\
# My Codex config. Comments, blank lines and order must survive purplemux.
model = "gpt-5.5"              # a model Codex knows
model_provider = "fake"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake"
base_url = "{base_url}"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0


[projects."{project}"]
trust_level = "trusted"

# my own hook, trusted by me
[hooks.state."{own_key}"]
trusted_hash = "{own_hash}"

[tui]
screen_reader_detection_done = true
"""


def spooled_events(spool: Path) -> list[str]:
    """hook_event_name of every event the status hook spooled (headers, blank line, payload)."""
    names = []
    for path in sorted(spool.glob("*.spool")):
        body = path.read_text().split("\n\n", 1)[1]
        names.append(json.loads(body)["hook_event_name"])
    return names


def wait_for(predicate: Any, timeout: float = 30.0) -> None:
    """Poll until predicate() holds; the hook script delivers in the background."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return
        time.sleep(0.05)


def codex_exec(home: Path, codex_home: Path, project: Path) -> subprocess.CompletedProcess[str]:
    """One turn of `codex exec` in the throw-away HOME, without bypassing hook trust."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "FAKE_OPENAI_KEY": "sk-fake",
    }
    return subprocess.run(
        [str(codex_bin()), "exec", "--skip-git-repo-check", "hello"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_installed_hooks_run_trusted_in_codex_exec_and_uninstall_restores(
    tmp_path: Path, responses_api: str
) -> None:
    home, project, pmx = tmp_path / "home", tmp_path / "proj", tmp_path / "pmx"
    codex_home = home / ".codex"
    for folder in (codex_home, project, pmx):
        folder.mkdir(parents=True)
    # The user's own hook, on Stop, trusted by them: it must keep running next to ours.
    own_log = tmp_path / "own-hook.log"
    own_group = {"hooks": [{"type": "command", "command": f"cat >> '{own_log}'", "timeout": 5}]}
    hooks_path = codex_home / "hooks.json"
    hooks_before = (json.dumps({"hooks": {"Stop": [own_group]}}, indent=2) + "\n").encode()
    hooks_path.write_bytes(hooks_before)
    own_key = state_key(hooks_path, "stop", 0, 0)
    config_before = user_config(
        responses_api, project, own_key, trusted_hash("stop", own_group)
    ).encode()
    (codex_home / "config.toml").write_bytes(config_before)

    script = install.install_script(pmx)
    command = ci.hook_command(script, pmx)
    assert ci.install(ci.codex_home_from_env({"CODEX_HOME": str(codex_home)}, home), command)
    assert ci.status(codex_home, command).trusted

    run = codex_exec(home, codex_home, project)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Hi." in run.stdout
    ran = {line.removeprefix("hook: ") for line in run.stderr.splitlines()}
    assert ran >= TURN_EVENTS, run.stderr[-3000:]

    # One spooled event per hook that fired, each from our command, none missing.
    expected = Counter({event: 1 for event in TURN_EVENTS | {"SessionEnd"}})
    spool = pmx / "spool"
    wait_for(lambda: Counter(spooled_events(spool)) == expected)
    assert Counter(spooled_events(spool)) == expected
    assert json.loads(own_log.read_text())["hook_event_name"] == "Stop"  # theirs ran too

    result = ci.uninstall(codex_home)
    assert result.changed
    assert (codex_home / "config.toml").read_bytes() == config_before
    assert hooks_path.read_bytes() == hooks_before


def test_the_command_tells_the_script_that_codex_calls(tmp_path: Path, responses_api: str) -> None:
    """Codex runs hook commands through a shell: the PURPLEMUX_AGENT=codex prefix reaches the
    script (a recording stand-in named like ours, reached through the same command shape)."""
    home, project, pmx = tmp_path / "home", tmp_path / "proj", tmp_path / "purplemux home"
    codex_home = home / ".codex"
    for folder in (codex_home, project, pmx):
        folder.mkdir(parents=True)
    (codex_home / "config.toml").write_text(user_config(responses_api, project, "x", "y"))
    log = tmp_path / "calls.log"
    script = pmx / "status-hook.sh"
    script.write_text(
        "#!/bin/sh\n"
        f"printf '%s|%s\\n' \"$PURPLEMUX_AGENT\" \"$PURPLEMUX_HOME\" >> '{log}'\n"
        "cat > /dev/null\n"
    )
    script.chmod(0o755)
    ci.install(codex_home, ci.hook_command(script, pmx))
    run = codex_exec(home, codex_home, project)
    assert run.returncode == 0, run.stderr[-3000:]
    calls = log.read_text().splitlines()
    assert len(calls) == len(TURN_EVENTS) + 1  # SessionEnd too
    assert set(calls) == {f"codex|{pmx}"}
