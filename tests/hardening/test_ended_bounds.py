"""/history and GET /api/sessions?all=1 have a fixed ceiling however many ended sessions the
store holds (before the hourly retention pass, or with PURPLEMUX_KEEP_ENDED set high): the
newest ended ones, how many older ones were left out, and a way to page to them."""

from __future__ import annotations

import html
import json
import re
import time
import urllib.error
import urllib.request
from datetime import date, datetime
from pathlib import Path
from typing import Any

from purplemux.core import events as ev
from purplemux.core.model import Session, State
from purplemux.io.store import Store
from purplemux.server.history import local_midnight
from tests.support import Daemon

ENDED = 2000
SESSIONS_CEILING = 256 * 1024
"""Bytes of GET /api/sessions?all=1 at most (it was 4.1 MB with 2,000 ended sessions)."""
HISTORY_CEILING = 256 * 1024
"""Bytes of /history at most (it was 2.7 MB with 2,000 ended sessions)."""


def seed(db: Path, base: float) -> None:
    """2,000 ended sessions, one every 10 s from `base` (each started, prompted, stopped and
    ended), and one live session; through the store the daemon writes."""
    store = Store(db)
    try:
        sessions: list[Session] = []
        events: list[ev.Event] = []
        for i in range(ENDED):
            sid, at = f"ended-{i:04d}", base + 10 * i
            sessions.append(
                Session(id=sid, ended=True, updated_at=at + 8, state_since=at + 8, cwd="/w/proj")
            )
            events += [
                ev.SessionStart(session_id=sid, at=at, id=f"{sid}:0", cwd="/w/proj"),
                ev.Prompt(session_id=sid, at=at + 1, id=f"{sid}:1", prompt="p", cwd="/w/proj"),
                ev.Stop(session_id=sid, at=at + 5, id=f"{sid}:2", cwd="/w/proj"),
                ev.SessionEnd(session_id=sid, at=at + 8, id=f"{sid}:3", cwd="/w/proj"),
            ]
        live = base + 10 * ENDED
        sessions.append(Session(id="live-one", state=State.IDLE, updated_at=live, cwd="/w/live"))
        events.append(ev.SessionStart(session_id="live-one", at=live, id="live:0", cwd="/w/live"))
        store.commit(events, sessions)
    finally:
        store.close()


def get(d: Daemon, path: str) -> bytes:
    req = urllib.request.Request(d.url + path)
    req.add_header("Authorization", f"Bearer {d.token}")
    with urllib.request.urlopen(req, timeout=60) as r:
        return bytes(r.read())


def lanes(page: str) -> list[str]:
    return re.findall(r'<div class="lane" data-session-id="([^"]+)"', page)


def test_two_thousand_ended_sessions_answer_within_a_ceiling(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    # Yesterday from 01:00: 2,000 sessions 10 s apart all end within that day.
    base = local_midnight(local_midnight(time.time()) - 3600) + 3600
    day: date = datetime.fromtimestamp(base).date()
    seed(home / "state.db", base)
    d = Daemon.under(tmp_path, PURPLEMUX_KEEP_ENDED="10000").start(timeout=60)
    try:
        raw = get(d, "/api/sessions?all=1")
        answer: dict[str, Any] = json.loads(raw)
        ids = [s["id"] for s in answer["sessions"]]
        assert len(raw) < SESSIONS_CEILING, len(raw)
        assert "live-one" in ids
        assert ids[1:4] == ["ended-1999", "ended-1998", "ended-1997"]  # the newest, first
        shown = [i for i in ids if i.startswith("ended-")]
        assert answer["ended_total"] == ENDED
        assert answer["left_out"] == ENDED - len(shown) > 0
        # The next page, from where this one stops.
        older = json.loads(get(d, f"/api/sessions?ended=1&before={answer['before']}&limit=10"))
        assert older["sessions"][0]["id"] == f"ended-{ENDED - len(shown) - 1:04d}"
        assert older["left_out"] == ENDED - len(shown) - 10

        page = get(d, f"/history?day={day.isoformat()}").decode()
        assert len(page) < HISTORY_CEILING, len(page)
        drawn = [sid for sid in lanes(page) if sid.startswith("ended-")]
        assert "ended-1999" in drawn and "ended-1998" in drawn and "live-one" in lanes(page)
        left = ENDED - len(drawn)
        assert left > 0
        assert f"{left} older sessions not shown" in page
        link = html.unescape(re.findall(r'href="(/history\?day=[^"]*before=[^"]+)"', page)[0])
        second = get(d, link).decode()
        assert len(second) < HISTORY_CEILING
        assert f"ended-{ENDED - len(drawn) - 1:04d}" in lanes(second)  # the next older
        assert not set(lanes(second)) & set(drawn)

        for bad in ("limit=0", "limit=501", "limit=x", "before=soon", "before=nan"):
            for path in (f"/history?day={day.isoformat()}&{bad}", f"/api/sessions?all=1&{bad}"):
                try:
                    get(d, path)
                except urllib.error.HTTPError as exc:
                    assert exc.code == 400 and b"error" in exc.read(), path
                else:
                    raise AssertionError(f"{path} was answered")

        status = d.cli("status", "--all")
        assert status.returncode == 0, status.stderr
        table = status.stdout.splitlines()
        assert sum(1 for line in table if "(ended)" in line) == len(shown)  # the page, no more
        assert f"{answer['left_out']} older ended sessions not shown" in status.stdout
    finally:
        d.stop()
