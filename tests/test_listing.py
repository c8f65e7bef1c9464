"""The dashboard's list, decided once (purplemux/core/listing.py), the feed's Python follower
(purplemux/cli/follow.py) and the ended sessions' pages (GET /api/sessions?ended=1)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from purplemux.cli.follow import Follower, Step
from purplemux.core.listing import ENDED_PAGE, board, broker_badge
from purplemux.core.model import Session, State, TmuxLocation
from purplemux.core.present import present
from purplemux.daemon.feed import Feed


def pane(sid: str, state: State, since: float, socket: str, p: str, **fields: object) -> Session:
    tmux = TmuxLocation(socket=socket, pane=p)
    return Session(id=sid, state=state, state_since=since, updated_at=since, tmux=tmux, **fields)  # type: ignore[arg-type]


def test_one_attention_set_drives_title_favicon_recent_and_counts() -> None:
    views = [
        present(pane("ask", State.NEEDS_INPUT, 30.0, "/t/a", "%1")),
        present(pane("done", State.REVIEW, 40.0, "/t/b", "%2")),
        present(pane("work", State.BUSY, 50.0, "/t/a", "%3")),
        present(pane("gone", State.REVIEW, 60.0, "/t/c", "%4", ended=True)),  # ended: not waiting
    ]
    b = board(views)
    assert b.attention == ("done", "ask")  # newest first
    assert b.title == "(2) purplemux"
    assert b.favicon == "needs-input"  # the most urgent live state
    assert [(r.id, r.state, r.colour) for r in b.recent] == [
        ("done", "review", "magenta"),
        ("ask", "needs-input", "yellow"),
    ]
    assert {c.state: c.n for c in b.counts} == {
        "needs-input": 1,
        "review": 1,
        "busy": 1,
        "idle": 0,
        "unknown": 0,
    }
    assert [g.place.key for g in b.groups] == ["socket:/t/a", "socket:/t/b"]
    assert [w.ids for w in b.groups[0].windows] == [("ask", "work")]  # %1 before %3
    assert b.ended == ("gone",) and b.ended_total == 1 and b.active == 3
    assert board([]).title == "purplemux" and board([]).favicon == "idle"


def test_the_ended_page_is_the_newest_fifty() -> None:
    views = [
        present(Session(id=f"e{i:03d}", ended=True, updated_at=1000.0 - i)) for i in range(120)
    ]
    b = board(views)
    assert b.ended == tuple(f"e{i:03d}" for i in range(ENDED_PAGE))
    assert b.ended_total == 120


def test_the_broker_badge_says_state_and_since() -> None:
    assert broker_badge(None).hidden and broker_badge({"state": "off"}).text == ""
    assert broker_badge({"state": "connected", "since": 5.0}).text == "broker connected"
    down = broker_badge({"state": "down", "since": 5.0})
    assert (down.text, down.since, down.hidden) == ("broker down since", 5.0, False)


def test_a_change_message_carries_the_layout_only_when_it_changed() -> None:
    sessions = {"a": present(pane("a", State.IDLE, 1.0, "/t/a", "%1"))}
    feed = Feed(lambda: [], lambda: board(sessions.values()), clock=lambda: 7.0)
    sub, snap = feed.subscribe()
    assert snap["protocol"] == 3 and snap["at"] == 7.0
    assert snap["list"]["layout"][0]["windows"][0]["ids"] == ["a"]

    def sent() -> dict[str, object]:
        import json

        text = sub.queue.get_nowait()
        assert text is not None
        message: dict[str, object] = json.loads(text)
        return message

    feed.publish_changes([{"id": "a"}])
    first = sent()
    assert first["at"] == 7.0 and "layout" in first["list"]  # type: ignore[operator]
    sessions["a"] = present(pane("a", State.REVIEW, 2.0, "/t/a", "%1"))
    feed.publish_changes([{"id": "a"}])
    second = sent()
    assert "layout" not in second["list"]  # type: ignore[operator]
    assert second["list"]["title"] == "(1) purplemux"  # type: ignore[index]
    sessions["b"] = present(pane("b", State.IDLE, 3.0, "/t/b", "%2"))
    feed.publish_changes([{"id": "b"}])
    assert len(sent()["list"]["layout"]) == 2  # type: ignore[index]


def test_the_follower_takes_the_next_seq_ignores_a_replay_and_resyncs_on_a_gap() -> None:
    f = Follower()
    assert f.take({"type": "sessions", "seq": 1, "sessions": [{"id": "x"}]}) is Step.SAME
    snap = {"type": "snapshot", "seq": 4, "protocol": 3, "sessions": [{"id": "a"}]}
    assert f.take({**snap, "list": {"layout": [1], "title": "t"}}) is Step.CHANGED
    assert set(f.sessions) == {"a"}
    change = {"type": "sessions", "seq": 5, "sessions": [{"id": "b"}], "removed": ["a"]}
    assert f.take({**change, "list": {"title": "u"}}) is Step.CHANGED
    assert set(f.sessions) == {"b"}
    assert f.listing == {"layout": [1], "title": "u"}  # the layout kept across messages
    assert f.take({"type": "sessions", "seq": 5, "sessions": [{"id": "c"}]}) is Step.SAME
    assert set(f.sessions) == {"b"}  # a replay changes nothing
    assert f.take({"type": "sessions", "seq": 7, "sessions": [{"id": "d"}]}) is Step.RESYNC
    assert set(f.sessions) == {"b"}
    f.reset()
    assert f.take({"type": "sessions", "seq": 8, "sessions": [{"id": "d"}]}) is Step.SAME
    assert f.take({"type": "snapshot", "seq": 8, "sessions": [{"id": "d"}]}) is Step.CHANGED
    assert set(f.sessions) == {"d"}
    badge = {"state": "down", "text": "broker down since", "since": 1.0, "hidden": False}
    assert f.take({"type": "broker", "seq": 9, "badge": badge}) is Step.CHANGED
    assert f.badge == badge


def test_ended_sessions_are_paged_by_the_api(client: TestClient) -> None:
    engine = client.app.state.runtime.engine  # type: ignore[attr-defined]
    for i in range(120):
        s = Session(id=f"e{i:03d}", ended=True, updated_at=1000.0 - i, state_since=1.0)
        engine.sessions[s.id] = s
    first = client.get("/api/sessions?ended=1").json()
    assert [s["id"] for s in first["sessions"]] == [f"e{i:03d}" for i in range(50)]
    assert first["more"] is True and first["before"] == 951.0
    rest = client.get(f"/api/sessions?ended=1&before={first['before']}&limit=100").json()
    assert [s["id"] for s in rest["sessions"]] == [f"e{i:03d}" for i in range(50, 120)]
    assert rest["more"] is False and rest["before"] is None
    for bad in ("limit=0", "limit=501", "limit=x", "before=nan", "before=soon"):
        got = client.get(f"/api/sessions?ended=1&{bad}")
        assert got.status_code == 400 and "error" in got.json(), bad
    # Every session with all=1: the live ones and the first page of ended ones (a ceiling).
    everything = client.get("/api/sessions?all=1").json()
    assert [s["id"] for s in everything["sessions"]] == [f"e{i:03d}" for i in range(50)]
    assert everything["ended_total"] == 120 and everything["left_out"] == 70
    assert everything["before"] == first["before"]
