"""Regenerate docs/screenshot.png: a real daemon, sessions in every state, the page in Chromium:
Claude sessions of two accounts seeded through the hook route (one at its 5-hour limit, one
in the background), and two real Codex TUIs in tmux beside them; a gauge per account on top.

Usage: .venv/bin/python -m scripts.screenshot [--out docs/screenshot.png] [--width 1280]
       [--dark] [--phone PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tests.chromium import CHROMIUM, LAUNCH_ARGS
from tests.support import Daemon, wait_for

if TYPE_CHECKING:
    from playwright.sync_api import Page

REPO = Path(__file__).resolve().parent.parent

DEFAULT = "/tmp/tmux-1000/default"
WORK = "/tmp/tmux-1000/work"
HOME = "/home/dev/src"

# (session id, cwd, tmux socket or None, pane, [(seconds ago, hook event, payload fields), ...])
Scene = tuple[str, str, str | None, str, list[tuple[float, str, dict[str, Any]]]]
ASK = {"questions": [{"question": "Keep 7 or 30 days of offline history on the phone?"}]}
WEB_ANSWER = (
    "I moved the settings form to React Hook Form and added validation for the webhook URL. "
    "Three new tests cover the rules; all of them pass."
)
DEPLOY = {"command": "docker compose up -d db && alembic upgrade head"}
WALL_IN = 85 * 60
"""Seconds until the data-pipeline session's 5-hour limit resets."""
WALL = "You've hit your 5-hour limit · resets {clock} (UTC)"
"""Claude's StopFailure message at a limit (2.1.332); {clock} as Claude writes it, "10:32pm"."""
ACCOUNTS = {DEFAULT: "claude", WORK: "work"}
"""Which config dir (account) each tmux server's Claude sessions run under."""
SCENES: list[Scene] = [
    (
        "s-pmx",
        f"{HOME}/purplemux",
        DEFAULT,
        "%0",
        [
            (1500, "SessionStart", {"source": "startup"}),
            (72, "UserPromptSubmit", {"prompt": "run the browser tests"}),
            (
                41,
                "PreToolUse",
                {
                    "tool_name": "Bash",
                    "tool_use_id": "t1",
                    "tool_input": {"command": "pytest -q tests/browser"},
                },
            ),
        ],
    ),
    (
        "s-api",
        f"{HOME}/api-server",
        DEFAULT,
        "%1",
        [
            (2400, "SessionStart", {"source": "startup"}),
            (190, "UserPromptSubmit", {"prompt": "migrate the db"}),
            (26, "PreToolUse", {"tool_name": "Bash", "tool_use_id": "t2", "tool_input": DEPLOY}),
            (25, "PermissionRequest", {"tool_name": "Bash", "tool_input": DEPLOY}),
        ],
    ),
    (
        "s-infra",
        f"{HOME}/infra",
        DEFAULT,
        "%2",
        [
            (900, "SessionStart", {"source": "startup"}),
            (300, "UserPromptSubmit", {"prompt": "plan the terraform change"}),
            (
                248,
                "StopFailure",
                {"error": "overloaded", "last_assistant_message": "API Error: 529 Overloaded"},
            ),
        ],
    ),
    (
        "s-web",
        f"{HOME}/web-frontend",
        WORK,
        "%4",
        [
            (3000, "SessionStart", {"source": "startup"}),
            (400, "UserPromptSubmit", {"prompt": "validate the webhook form"}),
            (
                131,
                "Stop",
                {"last_assistant_message": WEB_ANSWER},
            ),
        ],
    ),
    (
        "s-mobile",
        f"{HOME}/mobile-app",
        WORK,
        "%5",
        [
            (700, "SessionStart", {"source": "startup"}),
            (95, "UserPromptSubmit", {"prompt": "add an offline cache"}),
            (
                8,
                "PreToolUse",
                {"tool_name": "AskUserQuestion", "tool_use_id": "t3", "tool_input": ASK},
            ),
        ],
    ),
    (
        "s-data",
        f"{HOME}/data-pipeline",
        WORK,
        "%6",
        [
            (640, "SessionStart", {"source": "startup"}),
            (140, "UserPromptSubmit", {"prompt": "why is the nightly job slow?"}),
            (12, "StopFailure", {"error": "rate_limit", "last_assistant_message": WALL}),
        ],
    ),
    (
        "s-docs",
        f"{HOME}/design-docs",
        WORK,
        "%7",
        [
            (5000, "SessionStart", {"source": "startup"}),
            (1300, "UserPromptSubmit", {"prompt": "link the glossary"}),
            (
                1100,
                "Stop",
                {"last_assistant_message": "Done: every glossary term now links to its first use."},
            ),
        ],
    ),
    (
        "s-notes",
        "/home/dev/notes",
        None,
        "",
        [
            (3700, "SessionStart", {"source": "startup"}),
        ],
    ),
    (
        "s-old",
        f"{HOME}/legacy-migration",
        DEFAULT,
        "%3",
        [
            (7200, "SessionStart", {"source": "startup"}),
            (4000, "SessionEnd", {"reason": "prompt_input_exit"}),
        ],
    ),
]
EXPECTED = {
    "s-pmx": "busy",
    "s-api": "needs-input",
    "s-infra": "review",
    "s-web": "review",
    "s-mobile": "needs-input",
    "s-data": "review",
    "s-bg": "busy",
    "s-docs": "review",
    "s-notes": "idle",
    "s-old": "idle",
}


def post_hook(
    d: Daemon, n: int, at: float, pane: str, socket: str | None, payload: dict[str, Any]
) -> None:
    """POST one event as the hook script does, stamped `at` (so the ages look lived-in)."""
    req = urllib.request.Request(
        d.url + "/api/hooks", data=json.dumps(payload).encode(), method="POST"
    )
    req.add_header("Authorization", f"Bearer {d.token}")
    req.add_header("Content-Type", "application/json")
    req.add_header("X-Purplemux-Event-Id", f"shot-{n}")
    req.add_header("X-Purplemux-Ts", str(int(at * 1e9)))
    req.add_header("X-Purplemux-Pane", pane)
    req.add_header("X-Purplemux-Tmux", f"{socket},4242,0" if socket else "")
    with urllib.request.urlopen(req, timeout=5) as r:
        assert r.status == 202, r.status


def seed(d: Daemon) -> None:
    now = time.time()
    root = d.home.parent
    reset = time.gmtime(now + WALL_IN)
    clock = time.strftime("%I:%M%p", reset).lstrip("0").lower()
    n = 0
    for sid, cwd, socket, pane, steps in SCENES:
        account = ACCOUNTS.get(socket or "", "claude")
        transcript = root / account / "projects" / "-".join(cwd.split("/")) / f"{sid}.jsonl"
        for ago, name, fields in steps:
            n += 1
            payload = {
                "session_id": sid,
                "hook_event_name": name,
                "cwd": cwd,
                "transcript_path": str(transcript),
                **fields,
            }
            if name == "StopFailure" and fields.get("error") == "rate_limit":
                payload["last_assistant_message"] = WALL.format(clock=clock)
            post_hook(d, n, now - ago, pane, socket, payload)
    # Each login's statusLine input, as the wrapper hands it on: the header's gauges.
    for sid, account, five, seven in (("s-pmx", "claude", 42, 81), ("s-web", "work", 93, 40)):
        limits = {
            "five_hour": {"used_percentage": five, "resets_at": now + 2 * 3600 + 1500},
            "seven_day": {"used_percentage": seven, "resets_at": now + 3 * 86400},
        }
        path = root / account / "projects" / "p" / f"{sid}.jsonl"
        post_json(
            d,
            "/api/statusline",
            {"session_id": sid, "transcript_path": str(path), "rate_limits": limits},
        )
    background_job(root / "claude", now)
    # The data-pipeline session waits for its reset: resume it then (the row's button).
    wait_for(lambda: (d.session("s-data") or {}).get("limit"), timeout=10)
    d.api("POST", "/api/sessions/s-data/resume", {"at_reset": True})
    # The design-docs turn was looked at: dismiss its review, as a click on the page would.
    d.api("POST", "/api/sessions/s-docs/dismiss")
    EXPECTED["s-docs"] = "idle"
    wait_for(lambda: {s["id"]: s["state"] for s in d.sessions()} == EXPECTED, timeout=10)


def post_json(d: Daemon, path: str, body: dict[str, Any]) -> None:
    req = urllib.request.Request(d.url + path, data=json.dumps(body).encode(), method="POST")
    req.add_header("Authorization", f"Bearer {d.token}")
    with urllib.request.urlopen(req, timeout=5) as r:
        assert r.status == 200, r.status


def background_job(claude_dir: Path, now: float) -> None:
    """A `claude --bg` job at work, as its state.json says (the jobs watcher lists it)."""
    job = claude_dir / "jobs" / "5e1f0c2a"
    job.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(now - 50))
    state = {
        "state": "working",
        "tempo": "active",
        "detail": "Running pytest -q tests/reports",
        "intent": "make the weekly report tests pass",
        "sessionId": "s-bg",
        "cwd": f"{HOME}/weekly-reports",
        "createdAt": stamp,
        "updatedAt": stamp,
        "template": "bg",
        "backend": "daemon",
    }
    part = job / "state.json.tmp"
    part.write_text(json.dumps(state))
    part.rename(job / "state.json")


def shoot(
    d: Daemon,
    show: Callable[[Page], None],
    out: Path,
    size: tuple[int, int],
    dark: bool,
    phone: Path | None,
) -> None:
    """Sign in to `d`, let `show` bring up what is to be seen, save the page at `size` (and at a
    phone's size when `phone` names a file)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            scheme: Literal["dark", "light"] = "dark" if dark else "light"
            sizes = [(out, *size, 1)] + ([(phone, 390, 844, 2)] if phone else [])
            for path, w, h, scale in sizes:
                context = browser.new_context(
                    viewport={"width": w, "height": h},
                    device_scale_factor=scale,
                    color_scheme=scheme,
                    reduced_motion="reduce",
                )
                page = context.new_page()
                page.goto(f"{d.url}/?token={d.token}")
                page.wait_for_url(f"{d.url}/")  # the login page keeps the page key, then goes
                show(page)
                path.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(path), full_page=True)
                context.close()
                print(f"wrote {path}")
        finally:
            browser.close()


@contextlib.contextmanager
def codex_world(root: Path) -> Iterator[tuple[dict[str, str], Callable[[Daemon], None]]]:
    """The real Codex CLI (the e2e tier's pinned one) in two tmux panes against the local
    Responses API stand-in: (the daemon's environment, a function that runs their turns)."""
    from purplemux.agents import install
    from purplemux.agents.codex.install import hook_command
    from tests.e2e.codex_harness import CodexPane, TmuxCodex, install_codex, make_codex_home
    from tests.e2e.fake_responses import FakeResponsesAPI

    home = root / "home"
    script = install.install_script(home)
    with FakeResponsesAPI() as api:
        api.limits.primary, api.limits.secondary = 23, 57  # the Codex account's gauge
        world = make_codex_home(
            root / "codex",
            api.base_url,
            hook_command=hook_command(script, home),
            project_name="billing-service",
        )
        with TmuxCodex(install_codex(), world) as server:
            panes: list[CodexPane] = []

            def turns(d: Daemon) -> None:
                ask, done = server.start_pane(()), server.start_pane(())
                panes.extend((ask, done))
                for pane in (ask, done):
                    pane.wait_ready()
                ask.send_text("RUN:npm run migrate -- --env staging")
                done.send_text("why do the invoice retries double-charge?")
                want = {"needs-input", "review"}
                wait_for(
                    lambda: (
                        {s["state"] for s in d.sessions(all=False) if s["agent"] == "codex"} == want
                    ),
                    timeout=60,
                )

            yield {"CODEX_HOME": str(world.codex_home)}, turns
            for pane in panes:
                pane.send_keys("Escape")  # deny the open dialog: its daemon then stops at once


def run(
    argv: list[str] | None,
    doc: str,
    out: str,
    height: int,
    stage: Callable[[Daemon], Callable[[Page], None]],
    codex: bool = False,
    accounts: bool = False,
) -> int:
    """The screenshot scripts' command line: a real daemon in a temporary home, which `stage`
    fills and then says how the page shows it; the screenshots go to docs/OUT by default.
    `codex`: real Codex TUIs in tmux beside the seeded Claude sessions; `accounts`: two Claude
    config dirs (ACCOUNTS), each a login of its own."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / out)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--dark", action="store_true", help="prefers-color-scheme: dark")
    parser.add_argument("--phone", type=Path, help="also save a phone-sized screenshot here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="purplemux-shot-") as tmp:
        root = Path(tmp)
        with contextlib.ExitStack() as stack:
            env, turns = stack.enter_context(codex_world(root)) if codex else ({}, None)
            if accounts:
                for account in ACCOUNTS.values():
                    (root / account / "jobs").mkdir(parents=True)
                dirs = ",".join(f"{a}={root / a}" for a in ACCOUNTS.values())
                env = {**env, "PURPLEMUX_CLAUDE_DIRS": dirs}
            d = Daemon(home=root / "home", claude_dir=root / "claude", env_extra=env).start()
            try:
                show = stage(d)
                if turns is not None:
                    turns(d)
                shoot(d, show, args.out, (args.width, height), args.dark, args.phone)
            finally:
                d.stop()
    return 0


def show_dashboard(page: Page) -> None:
    """The dashboard live, with its ended sessions opened."""
    from playwright.sync_api import expect

    expect(page.locator("#connection")).to_have_attribute("data-connection", "live")
    expect(page.locator('[data-slot="limits"] .limit')).to_have_count(3)  # the usage gauges
    page.locator("details.ended summary").click()
    page.evaluate("window.scrollTo(0, 0)")  # the click scrolled to the summary: the page's top


def stage(d: Daemon) -> Callable[[Page], None]:
    seed(d)
    return show_dashboard


def main(argv: list[str] | None = None) -> int:
    return run(argv, __doc__ or "", "screenshot.png", 980, stage, codex=True, accounts=True)


if __name__ == "__main__":
    sys.exit(main())
