"""How long from answering a permission prompt (the click: POST /api/sessions/{id}/answer) to
Claude running the tool, through the real daemon and the real Claude Code CLI in tmux.

For each sample: Claude is asked to `touch` a file, the permission dialog shows, /screen gives
its prompt id, and the answer "Yes" is posted. Measured from just before the POST:
- `response`: the answer call returned (keys sent, the dialog seen gone);
- `tool_ran`: the PostToolUse hook started (the hook script's own clock): the tool has run;
- `file`: the file exists (polled every 10 ms).
Two cases: the dialog has been on screen for 2 s already ("settled"), and the answer is posted
the moment /screen first shows the prompt ("fresh": the daemon then waits out Claude's ~1 s key
guard, 1.5 s from when it first saw the dialog).

    python -m benchmarks.answer_latency [-n 3] [--version 2.1.332] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from purplemux.agents import install
from purplemux.agents.claude.install import hook_command
from tests.e2e.fake_api import FakeAnthropicAPI
from tests.e2e.harness import (
    TmuxClaude,
    install_claude,
    make_claude_home,
    wait_until,
)
from tests.support import Daemon

ARGS = {"2.1.197": [], "2.1.332": ["--permission-mode", "default"]}


def post(daemon: Daemon, path: str, body: Any) -> Any:
    req = urllib.request.Request(daemon.url + path, data=json.dumps(body).encode(), method="POST")
    req.add_header("Authorization", f"Bearer {daemon.token}")
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def prompt_of(daemon: Daemon, sid: str) -> dict[str, Any] | None:
    body = daemon.api("GET", f"/api/sessions/{sid}/screen")
    prompt = body.get("prompt")
    return prompt if prompt and body.get("state") == "needs-input" else None


def sample(
    daemon: Daemon, claude: TmuxClaude, sid: str, name: str, settle: float
) -> dict[str, float]:
    claude.send_text(f"RUN:touch {name}")
    prompt = wait_until(lambda: prompt_of(daemon, sid), timeout=45, interval=0.02)
    if settle:
        time.sleep(settle)
    t0 = time.time()
    post(daemon, f"/api/sessions/{sid}/answer", {"prompt_id": prompt["id"], "option": "Yes"})
    response = time.time() - t0
    path = claude.cwd / name
    wait_until(path.exists, timeout=30, interval=0.01)
    file = time.time() - t0

    def post_tool() -> float | None:
        events = daemon.api("GET", f"/api/sessions/{sid}/events")["events"]
        hits = [float(e["at"]) for e in events if e.get("name") == "PostToolUse" and e["at"] > t0]
        return min(hits) if hits else None

    tool = wait_until(post_tool, timeout=30) - t0
    claude.wait_ready(30)
    return {"response": response, "tool_ran": tool, "file": file}


def run(version: str, n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="purplemux-answer-") as tmp:
        root = Path(tmp)
        daemon = Daemon(home=root / "pmx", claude_dir=root / "home" / ".claude").start()
        try:
            command = hook_command(install.install_script(daemon.home), daemon.home)
            home = make_claude_home(root, command)
            with FakeAnthropicAPI() as api:
                claude = TmuxClaude(install_claude(version), home, api.base_url, args=ARGS[version])
                with claude:
                    claude.wait_started(60)
                    data = claude.session_file()
                    assert data is not None
                    sid = str(data["sessionId"])
                    wait_until(lambda: (daemon.session(sid) or {}).get("tmux"), timeout=20)
                    out: dict[str, list[dict[str, float]]] = {"settled": [], "fresh": []}
                    for i in range(n):
                        out["settled"].append(sample(daemon, claude, sid, f"s{i}.txt", 2.0))
                        out["fresh"].append(sample(daemon, claude, sid, f"f{i}.txt", 0.0))
        finally:
            daemon.stop()
    return {"version": version, "n": n, **out}


def summary(results: dict[str, Any]) -> list[str]:
    lines = [f"Claude Code {results['version']}, n={results['n']} per case (seconds):"]
    for case in ("settled", "fresh"):
        for key in ("response", "tool_ran", "file"):
            values = [s[key] for s in results[case]]
            lines.append(
                f"  {case:8} click -> {key:9} min {min(values):.3f}  "
                f"median {statistics.median(values):.3f}  max {max(values):.3f}"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("-n", type=int, default=3, help="samples per case")
    parser.add_argument("--version", default="2.1.332", choices=sorted(ARGS))
    parser.add_argument("--json", action="store_true", help="end with one line of JSON")
    args = parser.parse_args(argv)
    results = run(args.version, args.n)
    print("\n".join(summary(results)))
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
