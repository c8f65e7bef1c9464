"""The list, decided once (core/listing.py): the live page shows what a reload shows, item by
item; the ended list is paged; the feed's follower (follow.js) resyncs on a gap on every page and
says when the page falls behind."""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, WebSocketRoute, expect

from purplemux.core.model import Session, State, TmuxLocation
from purplemux.io.store import Store
from tests.support import Daemon, run_hook, wait_for
from tests.support.browser import PROMPT_TOOL, new_page, poll, sign_in
from tests.support.hosts import post_hook

pytestmark = pytest.mark.browser

# Everything the list shows beyond the ticking clocks, read off the page as a user sees it.
PICTURE = """() => {
  const t = (el) => (el ? el.textContent.replace(/\\s+/g, " ").trim() : null);
  const shown = (el) => Boolean(el) && !el.hidden;
  const slot = (r, name) => {
    const el = r.querySelector(`[data-slot="${name}"]`);
    return shown(el) ? t(el) : "";
  };
  const row = (r) => ({
    id: r.dataset.sessionId,
    state: r.dataset.state,
    colour: r.dataset.colour,
    actions: r.dataset.actions,
    ended: r.hasAttribute("data-ended"),
    label: t(r.querySelector('[data-slot="label"]')),
    name: t(r.querySelector('[data-slot="project"]')),
    pane: slot(r, "pane"),
    detail: slot(r, "detail"),
    error: slot(r, "error"),
    dismiss: r.querySelectorAll('[data-action="dismiss"]').length,
  });
  const broker = document.getElementById("broker");
  return {
    title: document.title,
    favicon: document.querySelector("link[data-favicon]").getAttribute("href"),
    counts: [...document.querySelectorAll("[data-count]")].map((c) => ({
      state: c.dataset.count, colour: c.dataset.colour, n: t(c.querySelector('[data-slot="n"]')),
      zero: c.hasAttribute("data-zero"),
    })),
    groups: [...document.querySelectorAll('[data-slot="groups"] > .group')].map((g) => ({
      key: g.dataset.group,
      head: t(g.querySelector(".group-head")),
      windows: [...g.querySelectorAll(".window")].map((w) => ({
        key: w.dataset.window,
        head: t(w.querySelector(".window-head")),
        rows: [...w.querySelectorAll(".row")].map(row),
      })),
    })),
    empty: shown(document.querySelector('[data-slot="empty"]')),
    ended: [...document.querySelectorAll('[data-slot="ended"] > .row')].map(row),
    endedCount: t(document.querySelector('[data-slot="ended-count"]')),
    endedShown: shown(document.querySelector('[data-slot="ended-section"]')),
    recent: [...document.querySelectorAll(".recent-item")].map((i) => ({
      key: i.dataset.key, state: i.dataset.state, colour: i.dataset.colour,
      label: t(i.querySelector(".recent-state")), where: t(i.querySelector(".recent-project")),
      why: t(i.querySelector(".recent-why")),
    })),
    recentEmpty: shown(document.querySelector('[data-slot="recent-empty"]')),
    broker: { state: broker.dataset.broker, shown: shown(broker) },
  };
}"""

SERVERS = ("/tmp/tmux-burst/alpha", "/tmp/tmux-burst/bravo", "/tmp/tmux-burst/charlie")


def burst(daemon: Daemon) -> dict[str, str]:
    """Hook events over three tmux servers, as Claude sends them: sessions enter needs-input and
    review and leave them again; the states they end in (by id)."""
    final: dict[str, str] = {}

    def send(sid: str, name: str, server: str, pane: str, **extra: Any) -> None:
        payload = {"session_id": sid, "hook_event_name": name, "cwd": f"/w/{sid}", **extra}
        run_hook(daemon.home, payload, pane, tmux=f"{server},1,0")

    tool = {"tool_name": "Bash", "tool_input": PROMPT_TOOL}
    for n in range(9):
        server, pane, sid = SERVERS[n % 3], f"%{n}", f"burst-{n}"
        send(sid, "SessionStart", server, pane, source="startup")
        send(sid, "UserPromptSubmit", server, pane, prompt="go")
        send(sid, "PreToolUse", server, pane, tool_use_id=f"tu-{n}", **tool)
        send(sid, "PermissionRequest", server, pane, **tool)  # needs-input
        if n % 3 == 0:
            final[sid] = "needs-input"
            continue
        send(sid, "PostToolUse", server, pane, tool_use_id=f"tu-{n}", **tool)  # answered: busy
        send(sid, "Stop", server, pane, last_assistant_message=f"done {n}")  # review
        if n % 3 == 1:
            final[sid] = "review"
            continue
        send(sid, "UserPromptSubmit", server, pane, prompt="again")  # review seen: busy
        final[sid] = "busy"
    return final


def settled(daemon: Daemon, final: dict[str, str]) -> bool:
    states = {s["id"]: s["state"] for s in daemon.sessions()}
    return all(states.get(sid) == state for sid, state in final.items())


def test_the_live_list_is_what_a_reload_shows_after_a_burst(
    browser: Browser, dashboard: Page, daemon: Daemon
) -> None:
    """After a burst over three tmux servers the live page and the server's page agree on every
    item: groups and their order, each row, counts, title, favicon, the recent list, the broker
    badge. (The script used to keep every entry into needs-you in its recent list: 6 live where
    a reload showed 3.)"""
    final = burst(daemon)
    wait_for(lambda: settled(daemon, final), timeout=20)
    with new_page(browser, java_script_enabled=False) as static:
        static.goto(f"{daemon.url}/?token={daemon.token}")
        # The sign-in page goes on to / by its <noscript> refresh when JavaScript is off.
        static.wait_for_url(f"{daemon.url}/")
        static.wait_for_load_state()
        served = static.evaluate(PICTURE)
    assert [g["key"] for g in served["groups"]] == [f"socket:{s}" for s in SERVERS]
    assert len(served["recent"]) == 6  # 3 waiting for an answer, 3 for a review
    assert served["title"] == "(6) purplemux"

    def live() -> dict[str, Any]:
        picture: dict[str, Any] = dashboard.evaluate(PICTURE)
        return picture

    with contextlib.suppress(AssertionError):  # the feed may still deliver the last changes
        wait_for(lambda: live() == served, timeout=10)
    now = live()
    for item in ("title", "favicon", "counts", "recent", "recentEmpty", "broker", "empty"):
        assert now[item] == served[item], item
    assert [g["key"] for g in now["groups"]] == [g["key"] for g in served["groups"]]
    for mine, theirs in zip(now["groups"], served["groups"], strict=True):
        assert mine["head"] == theirs["head"]
        assert mine["windows"] == theirs["windows"]
    assert now["ended"] == served["ended"] and now["endedCount"] == served["endedCount"]
    assert now == served


def fill_ended(home: Path, count: int, now: float) -> None:
    """`count` ended sessions, one a second apart (the newest a minute ago), and one live."""
    home.mkdir(mode=0o700, exist_ok=True)
    store = Store(home / "state.db")
    try:
        for start in range(0, count, 2000):
            store.commit(
                [],
                [
                    Session(
                        id=f"ended-{i:05d}",
                        ended=True,
                        updated_at=now - 60 - i,
                        state_since=now - 60 - i,
                        cwd=f"/w/p{i}",
                    )
                    for i in range(start, min(count, start + 2000))
                ],
            )
        store.commit([], [Session(id="alive", state=State.IDLE, updated_at=now, state_since=now)])
    finally:
        store.close()


def test_ten_thousand_ended_sessions_come_fifty_at_a_time(tmp_path: Path, page: Page) -> None:
    """10k ended sessions (kept: PURPLEMUX_KEEP_ENDED above them): the page and the feed's
    snapshot carry the newest 50 and say there are 10,000; "Show more" fetches the next 50."""
    home = tmp_path / "home"
    fill_ended(home, 10_000, time.time())
    claude = tmp_path / "claude"
    claude.mkdir()
    daemon = Daemon(home=home, claude_dir=claude, env_extra={"PURPLEMUX_KEEP_ENDED": "20000"})
    daemon.start()
    try:
        req = urllib.request.Request(daemon.url + "/")
        req.add_header("Authorization", f"Bearer {daemon.token}")
        with urllib.request.urlopen(req, timeout=10) as r:
            html = r.read()
        assert html.count(b'class="row"') == 51 + 1  # 50 ended, 1 live, the blank template
        assert len(html) < 300_000  # it was 16.6 MB
        from websockets.sync.client import connect

        headers = {"Authorization": f"Bearer {daemon.token}"}
        with connect(f"ws://127.0.0.1:{daemon.port}/api/stream", additional_headers=headers) as ws:
            raw = ws.recv(timeout=10)
        snapshot = json.loads(raw)
        assert len(raw) < 300_000  # it was 15.9 MB
        assert len(snapshot["sessions"]) == 51
        assert snapshot["list"]["ended_total"] == 10_000
        assert snapshot["list"]["ended"] == [f"ended-{i:05d}" for i in range(50)]

        sign_in(page, daemon)
        ended = page.locator('[data-slot="ended"] > .row')
        expect(ended).to_have_count(50)
        expect(page.locator('[data-slot="ended-count"]')).to_have_text("10000")
        page.locator("details.ended > summary").click()
        more = page.locator('[data-action="more-ended"]')
        more.click()
        expect(ended).to_have_count(100)
        ids = ended.evaluate_all("rows => rows.map((r) => r.dataset.sessionId)")
        assert ids == [f"ended-{i:05d}" for i in range(100)]  # newest first, no gap, no repeat
        more.click()
        expect(ended).to_have_count(150)
        expect(more).to_be_visible()
    finally:
        daemon.stop()


def stand_in(page: Page, pattern: str = r"/api/stream$") -> list[WebSocketRoute]:
    """The page's feed goes to this stand-in; the sockets it opened, in order."""
    sockets: list[WebSocketRoute] = []

    def accept(ws: WebSocketRoute) -> None:
        sockets.append(ws)

    page.route_web_socket(re.compile(pattern), accept)
    return sockets


def test_the_history_page_resyncs_on_a_seq_gap(page: Page, daemon: Daemon) -> None:
    """The history page follows the feed with the dashboard's follower: a missed seq means a new
    connection (a fresh snapshot), a replayed one is ignored."""
    sign_in(page, daemon)  # (its page moves itself on to "/": wait, or it races the next goto)
    sockets = stand_in(page)
    page.goto(f"{daemon.url}/history")
    poll(page, lambda: len(sockets) == 1)
    first = sockets[0]
    first.send(json.dumps({"type": "snapshot", "seq": 3, "protocol": 3, "sessions": []}))
    expect(page.locator("body")).to_have_attribute("data-connection", "live")
    first.send(json.dumps({"type": "sessions", "seq": 3, "sessions": [], "removed": []}))
    first.send(json.dumps({"type": "sessions", "seq": 4, "sessions": [], "removed": []}))
    page.wait_for_timeout(200)
    assert len(sockets) == 1  # a replay and the next seq: followed on
    first.send(json.dumps({"type": "sessions", "seq": 6, "sessions": [], "removed": []}))
    poll(page, lambda: len(sockets) == 2)  # seq 5 was lost: a fresh snapshot


def test_a_page_behind_the_feed_says_so_and_resyncs(page: Page, daemon: Daemon) -> None:
    """A message that waited in the page far longer than the feed's pace (the page fell behind):
    the label says "behind — catching up", the page takes a fresh snapshot and is live again."""
    sockets = stand_in(page)
    page.goto(f"{daemon.url}/?token={daemon.token}")
    poll(page, lambda: len(sockets) == 1)
    now = time.time()
    first = sockets[0]
    first.send(json.dumps({"type": "snapshot", "seq": 1, "at": now, "sessions": []}))
    connection = page.locator("#connection")
    expect(connection).to_have_attribute("data-connection", "live")
    page.evaluate(
        """() => { window.__labels = [];
        new MutationObserver(() => window.__labels.push(
          document.getElementById("connection").dataset.connection))
        .observe(document.getElementById("connection"), {attributes: true}); }"""
    )
    late = {"type": "sessions", "seq": 2, "at": now - 30, "sessions": [], "removed": []}
    first.send(json.dumps(late))
    poll(page, lambda: len(sockets) == 2)
    assert "behind" in page.evaluate("window.__labels")
    expect(connection).to_have_text("behind — catching up")
    sockets[1].send(json.dumps({"type": "snapshot", "seq": 9, "at": time.time(), "sessions": []}))
    expect(connection).to_have_attribute("data-connection", "live")


def fill_live(home: Path, count: int, now: float) -> None:
    """`count` idle sessions in tmux panes of one server."""
    home.mkdir(mode=0o700, exist_ok=True)
    store = Store(home / "state.db")
    try:
        sessions = [
            Session(
                id=f"row-{i:04d}",
                state=State.IDLE,
                updated_at=now,
                state_since=now,
                cwd=f"/w/r{i}",
                tmux=TmuxLocation(socket="/tmp/tmux-rows/default", pane=f"%{i}"),
            )
            for i in range(count)
        ]
        store.commit([], sessions)
    finally:
        store.close()


def test_a_thousand_rows_under_a_burst_end_live_and_right(tmp_path: Path, page: Page) -> None:
    """1,000 rows and a bounded burst of hook events from four clients: the page keeps up or
    says it is behind and resyncs; either way it ends live, every row in its state."""
    home = tmp_path / "home"
    fill_live(home, 1000, time.time())
    claude = tmp_path / "claude"
    claude.mkdir()
    daemon = Daemon(home=home, claude_dir=claude).start()
    try:
        sign_in(page, daemon)
        expect(page.locator(".row[data-session-id]")).to_have_count(1000)
        page.evaluate(
            """() => { window.__labels = [];
            new MutationObserver(() => window.__labels.push(
              document.getElementById("connection").dataset.connection))
            .observe(document.getElementById("connection"), {attributes: true}); }"""
        )

        moved = [f"row-{i:04d}" for i in range(0, 1000, 5)]

        def client(k: int) -> None:  # each of 50 sessions: a prompt, then the turn ends
            for sid in moved[k::4]:
                for name in ("UserPromptSubmit", "Stop"):
                    post_hook(daemon, {"session_id": sid, "hook_event_name": name, "cwd": "/w"})

        threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        want = {f"row-{i:04d}": "idle" for i in range(1000)} | {sid: "review" for sid in moved}
        wait_for(lambda: {s["id"]: s["state"] for s in daemon.sessions()} == want, timeout=30)

        def shown() -> dict[str, str]:
            got: dict[str, str] = page.evaluate(
                """() => Object.fromEntries([...document.querySelectorAll(".row[data-session-id]")]
                .map((r) => [r.dataset.sessionId, r.dataset.state]))"""
            )
            return got

        wait_for(lambda: shown() == want, timeout=30)
        expect(page.locator("#connection")).to_have_attribute("data-connection", "live")
        labels = page.evaluate("window.__labels")
        print(f"\nconnection labels during the burst: {labels}")
        assert set(labels) <= {"live", "behind", "connecting"}
    finally:
        daemon.stop()
