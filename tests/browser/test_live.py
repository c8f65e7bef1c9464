"""The live page: hook-to-DOM latency, dismiss, daemon restart, seq gaps, focus, notifications."""

from __future__ import annotations

import json
import os
import re
import statistics
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, WebSocketRoute, expect

from purplemux.core.listing import board
from purplemux.core.model import Session, State, TmuxLocation
from purplemux.core.present import SessionView, present, session_json
from tests.support import Daemon
from tests.support.browser import PROMPT_TOOL, hook, make, poll, sign_in, wait_state

pytestmark = pytest.mark.browser

# Resolves once the row shows `state`, with the wall-clock time (ms) the DOM changed.
WATCH = """([sid, state]) => {
  window.__changedAt = null;
  const seen = () => {
    const row = document.getElementById("session-" + sid);
    if (row && row.dataset.state === state && window.__changedAt === null) {
      window.__changedAt = performance.timeOrigin + performance.now();
      observer.disconnect();
    }
  };
  const observer = new MutationObserver(seen);
  observer.observe(document.body, {subtree: true, childList: true, attributes: true,
                                   attributeFilter: ["data-state"]});
}"""


def row(page: Page, sid: str) -> Any:
    return page.locator(f'[data-session-id="{sid}"]')


def test_a_hook_changes_the_row_without_a_reload(dashboard: Page, daemon: Daemon) -> None:
    make(daemon, "live", "idle")
    expect(row(dashboard, "live")).to_have_attribute("data-state", "idle")
    dashboard.evaluate("window.__sameDocument = true")
    latencies: list[float] = []
    hook_times: list[float] = []
    for n in range(10):
        target, name, extra = (
            ("busy", "UserPromptSubmit", {"prompt": f"p{n}"})
            if n % 2 == 0
            else ("review", "Stop", {"last_assistant_message": f"answer {n}"})
        )
        dashboard.evaluate(WATCH, ["live", target])
        start = time.time() * 1000
        hook_times.append(hook(daemon, "live", name, **extra))
        dashboard.wait_for_function("() => window.__changedAt !== null", timeout=10_000)
        latencies.append(dashboard.evaluate("window.__changedAt") - start)
        expect(row(dashboard, "live")).to_have_attribute("data-state", target)
    expect(row(dashboard, "live").locator(".detail")).to_contain_text("answer 9")
    assert dashboard.evaluate("window.__sameDocument") is True  # never reloaded
    print(
        f"\nhook call -> DOM change over {len(latencies)} transitions: "
        f"median {statistics.median(latencies):.1f} ms, max {max(latencies):.1f} ms "
        f"(hook script foreground: median {statistics.median(hook_times) * 1000:.1f} ms)"
    )


def test_each_row_marks_its_agent_and_a_new_codex_row_arrives_marked(
    dashboard: Page, daemon: Daemon
) -> None:
    """The chip comes from the view (agent_label), on the page's first render and live."""
    make(daemon, "from-claude", "idle")
    expect(row(dashboard, "from-claude").locator('[data-slot="agent"]')).to_have_text("Claude")
    hook(daemon, "from-codex", "UserPromptSubmit", agent="codex", prompt="go")
    chip = row(dashboard, "from-codex").locator('[data-slot="agent"]')
    expect(chip).to_have_text("Codex")
    expect(chip).to_have_attribute("data-agent", "codex")
    dashboard.reload()  # rendered on the server the same way
    expect(row(dashboard, "from-codex").locator('[data-slot="agent"]')).to_have_text("Codex")


def test_dismiss_is_one_click_and_the_api_agrees(dashboard: Page, daemon: Daemon) -> None:
    make(daemon, "seen", "review", pane="%4")
    expect(dashboard).to_have_title("(1) purplemux")
    row(dashboard, "seen").locator('[data-action="dismiss"]').click()
    expect(row(dashboard, "seen")).to_have_attribute("data-state", "idle")
    expect(row(dashboard, "seen").locator('[data-action="dismiss"]')).to_have_count(0)
    expect(dashboard).to_have_title("purplemux")
    assert wait_state(daemon, "seen", "idle")["state"] == "idle"


def test_a_daemon_restart_is_survived(dashboard: Page, daemon: Daemon) -> None:
    make(daemon, "survivor", "review", pane="%2")
    connection = dashboard.locator("#connection")
    daemon.stop()
    expect(connection).to_have_attribute("data-connection", "disconnected")
    expect(connection).to_contain_text("offline since")  # app-shell.js: since the last live
    expect(connection).to_contain_text("reconnecting")
    expect(row(dashboard, "survivor")).to_have_attribute("data-state", "review")  # last known
    again = Daemon(home=daemon.home, claude_dir=daemon.claude_dir, port=daemon.port).start()
    try:
        expect(connection).to_have_attribute("data-connection", "live", timeout=15_000)
        hook(again, "survivor", "UserPromptSubmit", pane="%2", prompt="after the restart")
        expect(row(dashboard, "survivor")).to_have_attribute("data-state", "busy")
        expect(dashboard).to_have_title("purplemux")
    finally:
        again.stop()


def listed(*sessions: dict[str, Any]) -> dict[str, Any]:
    """The dashboard's list (listing.Board) the daemon would send with these sessions."""
    return board(_VIEWS[id(s)] for s in sessions).to_json()


_VIEWS: dict[int, SessionView] = {}


def fake(sid: str, state: str, seq: int, **fields: Any) -> dict[str, Any]:
    """A Session as the stream sends it (with its view)."""
    now = time.time()
    tmux = TmuxLocation(socket="/tmp/tmux-1/default", session="dev", window="1", pane="%7")
    session = Session(
        id=sid,
        state=State(state),
        state_since=now,
        cwd="/w/mock",
        tmux=tmux,
        seq=seq,
        updated_at=now,
        **fields,
    )
    data = session_json(session)
    _VIEWS[id(data)] = present(session)
    return data


def test_a_seq_gap_resyncs_and_visibility_is_reported(page: Page, daemon: Daemon) -> None:
    sockets: list[tuple[WebSocketRoute, list[dict[str, Any]]]] = []

    def accept(ws: WebSocketRoute) -> None:
        received: list[dict[str, Any]] = []
        ws.on_message(lambda m: received.append(json.loads(m)))
        sockets.append((ws, received))

    # The page talks to this stand-in instead of the daemon's stream.
    page.route_web_socket(re.compile(r"/api/stream$"), accept)
    page.goto(f"{daemon.url}/?token={daemon.token}")
    poll(page, lambda: len(sockets) == 1)
    first, said = sockets[0]
    poll(page, lambda: len(said) == 1)
    visibility = said[0]
    assert visibility["type"] == "visibility"
    assert isinstance(visibility["visible"], bool) and isinstance(visibility["focused"], bool)
    page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
    poll(page, lambda: len(said) >= 2)

    m = fake("m", "idle", 1)
    first.send(json.dumps({"type": "snapshot", "seq": 5, "sessions": [m], "list": listed(m)}))
    expect(row(page, "m")).to_have_attribute("data-state", "idle")
    expect(page.locator(".group-label")).to_have_text("dev")
    expect(page.locator(".window-head")).to_have_text("window 1")

    def change(seq: int, s: dict[str, Any]) -> str:
        return json.dumps({"type": "sessions", "seq": seq, "sessions": [s], "list": listed(s)})

    first.send(change(6, fake("m", "busy", 2)))
    expect(row(page, "m")).to_have_attribute("data-state", "busy")
    first.send(change(6, fake("m", "idle", 2)))
    first.send(change(8, fake("m", "review", 4)))
    poll(page, lambda: len(sockets) == 2)
    second = sockets[1][0]
    expect(row(page, "m")).to_have_attribute("data-state", "busy")  # neither replay nor gap
    both = [fake("m", "review", 4, snippet="done"), fake("n", "needs-input", 1)]
    second.send(json.dumps({"type": "snapshot", "seq": 8, "sessions": both, "list": listed(*both)}))
    expect(row(page, "m")).to_have_attribute("data-state", "review")
    expect(row(page, "n")).to_have_attribute("data-state", "needs-input")
    gone = {"type": "sessions", "seq": 9, "sessions": [], "removed": ["n"], "list": listed(both[0])}
    second.send(json.dumps(gone))
    expect(row(page, "n")).to_have_count(0)
    assert len(sockets) == 2


def test_one_message_carries_what_changed_together(page: Page, daemon: Daemon) -> None:
    """Protocol 3: a `sessions` message holds every session a batch changed, the ids it
    removed and the list after it; the page applies them all (rows, title, recent list) and
    takes the next seq."""
    sockets: list[WebSocketRoute] = []

    def accept(ws: WebSocketRoute) -> None:
        sockets.append(ws)  # the page talks to this stand-in instead of the daemon's stream

    page.route_web_socket(re.compile(r"/api/stream$"), accept)
    page.goto(f"{daemon.url}/?token={daemon.token}")
    poll(page, lambda: len(sockets) == 1)
    ws = sockets[0]
    snapshot = [fake("m", "idle", 1), fake("gone", "busy", 1)]
    ws.send(
        json.dumps(
            {
                "type": "snapshot",
                "seq": 3,
                "protocol": 3,
                "sessions": snapshot,
                "list": listed(*snapshot),
            }
        )
    )
    expect(row(page, "gone")).to_have_attribute("data-state", "busy")
    together = [fake("m", "review", 3, snippet="all done"), fake("n", "needs-input", 1)]
    ws.send(
        json.dumps(
            {
                "type": "sessions",
                "seq": 4,
                "sessions": together,
                "removed": ["gone"],
                "list": listed(*together),
            }
        )
    )
    expect(row(page, "m")).to_have_attribute("data-state", "review")
    expect(row(page, "n")).to_have_attribute("data-state", "needs-input")
    expect(row(page, "gone")).to_have_count(0)
    expect(page).to_have_title("(2) purplemux")
    expect(page.locator('[data-slot="recent"] > *')).to_have_count(2)
    n = fake("n", "busy", 2)
    ws.send(
        json.dumps({"type": "sessions", "seq": 5, "sessions": [n], "list": listed(together[0], n)})
    )
    expect(row(page, "n")).to_have_attribute("data-state", "busy")
    expect(page).to_have_title("(1) purplemux")
    assert len(sockets) == 1  # every seq followed on: no resync


# Stands in for the browser's notification UI, and for a window the user has switched away from.
UNFOCUSED = """
window.__notes = [];
window.Notification = class {
  constructor(title, options) { window.__notes.push({title, ...options}); }
  static get permission() { return "granted"; }
  static requestPermission() { return Promise.resolve("granted"); }
  addEventListener() {}
  close() {}
};
document.hasFocus = () => false;
// The dashboard's service worker shows it when it is active (push.js): record that path too.
ServiceWorkerRegistration.prototype.showNotification = function (title, options) {
  window.__notes.push({title, ...options});
  return Promise.resolve();
};
"""


def test_an_unfocused_page_notifies_entries_into_attention(page: Page, daemon: Daemon) -> None:
    make(daemon, "before", "review", pane="%1")
    page.add_init_script(UNFOCUSED)
    sign_in(page, daemon)
    make(daemon, "ask", "needs-input", pane="%2", cwd="/w/asker")
    expect(row(page, "ask")).to_have_attribute("data-state", "needs-input")
    poll(page, lambda: bool(page.evaluate("window.__notes")))
    notes = page.evaluate("window.__notes")
    assert len(notes) == 1  # the review that was there before the page opened is not news
    wants = f"Claude · asker · needs your approval: Bash {PROMPT_TOOL['command']}"
    assert notes[0]["title"] == wants
    assert notes[0]["tag"] == "purplemux-ask"
    assert notes[0]["body"].startswith("pane %2")
    hook(
        daemon,
        "ask",
        "PostToolUse",
        pane="%2",
        cwd="/w/asker",
        tool_name="Bash",
        tool_input=PROMPT_TOOL,
        tool_use_id="tu-ask",
    )
    hook(daemon, "ask", "Stop", pane="%2", cwd="/w/asker", last_assistant_message="Deployed.")
    expect(row(page, "ask")).to_have_attribute("data-state", "review")
    poll(page, lambda: len(page.evaluate("window.__notes")) == 2)
    notes = page.evaluate("window.__notes")
    assert notes[1]["body"] == "Deployed."


def test_enable_notifications_reports_its_result(dashboard: Page) -> None:
    result = dashboard.locator('[data-slot="notify-result"]')
    expect(result).to_be_hidden()
    dashboard.locator('[data-action="enable-notifications"]').click()
    expect(result).to_be_visible()
    expect(result).not_to_have_text("Turning on notifications…", timeout=20_000)
    expect(result).to_have_attribute("data-ok", re.compile("^(true|false)$"))
    assert (result.text_content() or "").strip()


def test_a_background_session_is_marked_on_its_row_live_and_on_reload(
    dashboard: Page, daemon: Daemon
) -> None:
    """A `claude --bg` job (its session file: kind bg, jobId) gets the background chip; a
    session in a pane does not."""
    make(daemon, "in-a-pane", "idle")
    me = os.getpid()
    ticks = Path(f"/proc/{me}/stat").read_bytes().rpartition(b")")[2].split()[19].decode()
    body = {
        "pid": me,
        "sessionId": "bg-job",
        "cwd": "/w/proj",
        "startedAt": 1_600_000_000_000,
        "procStart": ticks,
        "kind": "bg",
        "jobId": "4c5f61e3",
        "status": "busy",
        "statusUpdatedAt": int(time.time() * 1000),
    }
    sessions = daemon.claude_dir / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    (sessions / f"{me}.json").write_text(json.dumps(body))
    chip = row(dashboard, "bg-job").locator('[data-slot="background"]')
    expect(chip).to_be_visible()
    expect(chip).to_have_text("background")
    expect(row(dashboard, "bg-job").locator('[data-slot="pane"]')).to_be_hidden()
    expect(row(dashboard, "in-a-pane").locator('[data-slot="background"]')).to_be_hidden()
    dashboard.reload()  # rendered on the server the same way
    expect(row(dashboard, "bg-job").locator('[data-slot="background"]')).to_be_visible()
    expect(row(dashboard, "in-a-pane").locator('[data-slot="background"]')).to_be_hidden()
