"""Several daemons, one real Redis: each lists every host's sessions; the owner alone writes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from websockets.sync.client import connect

from tests.support.daemon import Daemon, wait_for
from tests.support.hooks import run_hook
from tests.support.hosts import (
    RedisServer,
    boot,
    fake_notify_send,
    health,
    hook,
    host_daemon,
    post_hook,
    row,
    start_all,
    start_hosts,
)
from tests.support.screens import call


@pytest.fixture
def three(redis: RedisServer, daemons: list[Daemon], base: Path) -> list[Daemon]:
    """alpha, bravo and charlie on one Redis, each connected."""
    return start_hosts(daemons, base, redis, "alpha", "bravo", "charlie")


def test_a_session_on_one_host_is_listed_live_on_the_others_with_its_host(
    three: list[Daemon],
) -> None:
    a, b, c = three
    sid = "5e551011-0000-4000-8000-00000000000a"
    auth = {"Authorization": f"Bearer {b.token}"}
    with connect(f"ws://127.0.0.1:{b.port}/api/stream", additional_headers=auth) as ws:
        snapshot = json.loads(ws.recv(timeout=5))
        assert snapshot["type"] == "snapshot"
        run_hook(a.home, hook("SessionStart", sid, source="startup"), pane="%3")
        run_hook(a.home, hook("UserPromptSubmit", sid, prompt="hi"), pane="%3")
        seqs = [snapshot["seq"]]
        while True:  # the feed on bravo carries alpha's session, then its turn
            msg = json.loads(ws.recv(timeout=10))
            seqs.append(msg["seq"])
            busy = [s for s in msg.get("sessions", []) if s["state"] == "busy"]
            if msg["type"] == "sessions" and busy:
                break
    assert busy[0]["id"] == sid
    assert busy[0]["host"] == "alpha" and busy[0]["stale"] is False
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # the feed's seq stays gap-free
    for d in (b, c):
        listed = wait_for(lambda d=d: row(d, sid), timeout=5)
        assert listed["host"] == "alpha" and listed["state"] == "busy"
        assert listed["tmux"]["pane"] == "%3" and listed["project"] == "proj"
        assert d.session(sid) == listed
    own = a.session(sid)
    assert own is not None and own["host"] == "alpha" and own["stale"] is False
    # Each host's own sessions carry its own name.
    b_sid = "5e551011-0000-4000-8000-00000000000b"
    post_hook(b, hook("SessionStart", b_sid))
    assert wait_for(lambda: row(a, b_sid), timeout=5)["host"] == "bravo"
    assert b.session(b_sid)["host"] == "bravo"  # type: ignore[index]
    hosts = {s["id"]: s["host"] for s in c.sessions()}
    assert hosts == {sid: "alpha", b_sid: "bravo"}


def test_a_dismiss_on_another_host_reaches_the_owner(
    redis: RedisServer, daemons: list[Daemon], base: Path
) -> None:
    a, b = start_hosts(daemons, base, redis, "alpha", "bravo")
    sid = "d15a1550-0000-4000-8000-00000000000a"
    for name in ("SessionStart", "UserPromptSubmit", "Stop"):
        post_hook(a, hook(name, sid, prompt="x", last_assistant_message="Done."))
    wait_for(lambda: (r := row(b, sid)) is not None and r["state"] == "review", timeout=5)
    answer = b.api("POST", f"/api/sessions/{sid}/dismiss")
    assert answer["state"] == "idle" and answer["host"] == "alpha"
    assert a.session(sid)["state"] == "idle"  # type: ignore[index]
    events = a.api("GET", f"/api/sessions/{sid}/events")["events"]
    assert events[-1]["kind"] == "dismiss"
    assert b.session(sid)["state"] == "idle"  # type: ignore[index]
    # Refusals are the owner's: a second dismiss is a 409 with its reason, and nothing changes.
    status, body = call(b, "POST", f"/api/sessions/{sid}/dismiss")
    assert status == 409 and "not in review" in body["error"]
    assert len(a.api("GET", f"/api/sessions/{sid}/events")["events"]) == len(events)


def test_redis_killed_and_restarted_empty_while_a_turn_ends_others_converge(
    redis: RedisServer, three: list[Daemon]
) -> None:
    a, b, c = three
    sid = "c0ffee00-0000-4000-8000-00000000000a"
    post_hook(a, hook("SessionStart", sid))
    post_hook(a, hook("UserPromptSubmit", sid, prompt="go"))
    for d in (b, c):
        wait_for(lambda d=d: (r := row(d, sid)) is not None and r["state"] == "busy", timeout=5)
    redis.kill()
    for d in (a, b, c):
        wait_for(lambda d=d: health(d)["broker"]["state"] == "down", timeout=10)
    down = health(a)["broker"]
    assert down["since"] <= time.time()
    post_hook(a, hook("Stop", sid, last_assistant_message="All done."))
    assert a.session(sid)["state"] == "review"  # type: ignore[index]  # local work goes on
    assert row(b, sid)["state"] == "busy"  # type: ignore[index]  # nothing reached bravo yet
    redis.start()  # the same port, no data: Redis lost everything
    for d in (b, c):
        converged = wait_for(
            lambda d=d: (r := row(d, sid)) is not None and r["state"] == "review" and r, timeout=15
        )
        assert converged["host"] == "alpha" and converged["snippet"] == "All done."
    for d in (a, b, c):
        wait_for(lambda d=d: health(d)["broker"]["state"] == "connected", timeout=10)


def test_three_hosts_thirty_sessions_each_listed_everywhere(three: list[Daemon]) -> None:
    hosts = three
    expected: dict[str, str] = {}
    for n, d in enumerate(hosts):
        for i in range(30):
            sid = f"{n:08x}-0000-4000-8000-{i:012x}"
            post_hook(d, hook("SessionStart", sid, cwd=f"/src/p{i}"))
            expected[sid] = d.env_extra["PURPLEMUX_HOST_NAME"]

    def listed(d: Daemon) -> dict[str, str]:
        return {s["id"]: s["host"] for s in d.sessions()}

    for d in hosts:
        wait_for(lambda d=d: listed(d) == expected, timeout=20, interval=0.1)


def test_a_killed_host_goes_stale_and_comes_back(three: list[Daemon]) -> None:
    a, b, c = three
    sid = "57a1e000-0000-4000-8000-00000000000c"
    post_hook(c, hook("SessionStart", sid))
    for d in (a, b):
        assert wait_for(lambda d=d: row(d, sid), timeout=5)["stale"] is False
    c.kill()  # SIGKILL: no goodbye, the heartbeat simply stops
    killed_at = time.time()
    for d in (a, b):
        stale = wait_for(lambda d=d: (r := row(d, sid)) is not None and r["stale"] and r, 20)
        assert stale["host"] == "charlie"
        assert killed_at - 5 <= stale["offline_since"] <= time.time()
    page = _page(a)
    assert "charlie: host offline since" in page
    boot(c)  # the same machine, back
    for d in (a, b):
        wait_for(lambda d=d: (r := row(d, sid)) is not None and r["stale"] is False, 15)


def _page(d: Daemon) -> str:
    import urllib.request

    req = urllib.request.Request(d.url + "/")
    req.add_header("Authorization", f"Bearer {d.token}")
    with urllib.request.urlopen(req, timeout=5) as r:
        return str(r.read().decode())


def test_each_daemon_serves_its_own_sessions_while_redis_is_down(
    redis: RedisServer, daemons: list[Daemon], base: Path
) -> None:
    redis.kill()
    a = host_daemon(base, "alpha", redis)
    b = host_daemon(base, "bravo", redis)
    daemons.extend([a, b])
    start_all([a, b])  # they start without it
    for d, sid in (
        (a, "0ff11e00-0000-4000-8000-00000000000a"),
        (b, "0ff11e00-0000-4000-8000-00000000000b"),
    ):
        post_hook(d, hook("SessionStart", sid))
        post_hook(d, hook("UserPromptSubmit", sid, prompt="x"))
        listed = d.sessions()
        assert [(s["id"], s["host"], s["state"]) for s in listed] == [
            (sid, d.env_extra["PURPLEMUX_HOST_NAME"], "busy")
        ]
        broker = health(d)["broker"]
        assert broker["state"] in ("down", "connecting") and broker["since"] <= time.time()
    wait_for(lambda: health(a)["broker"]["state"] == "down", timeout=10)
    assert "broker down since" in _page(a)
    # The page's badge follows the link live: the feed's snapshot says how it is, then a
    # "broker" message when it changes.
    auth = {"Authorization": f"Bearer {a.token}"}
    with connect(f"ws://127.0.0.1:{a.port}/api/stream", additional_headers=auth) as ws:
        snapshot = json.loads(ws.recv(timeout=5))
        assert snapshot["type"] == "snapshot" and snapshot["broker"]["state"] == "down"
        redis.start()
        while True:
            msg = json.loads(ws.recv(timeout=20))
            if msg["type"] == "broker":
                break
        assert msg["broker"]["state"] == "connected"
    for d in (a, b):
        wait_for(lambda d=d: len(d.sessions()) == 2, timeout=15)


def test_a_remote_entry_notifies_once_and_never_again_on_a_reconnect(
    redis: RedisServer, daemons: list[Daemon], base: Path
) -> None:
    record = base / "notify-send.log"
    path = fake_notify_send(base / "bin", record)
    a = host_daemon(base, "alpha", redis)
    b = host_daemon(base, "bravo", redis, PURPLEMUX_DESKTOP_NOTIFY="1", PATH=path)
    daemons.extend([a, b])
    start_all([a, b])
    for d in (a, b):
        wait_for(lambda d=d: health(d)["broker"]["state"] == "connected", timeout=30)
    sid = "a1e47000-0000-4000-8000-00000000000a"
    cwd = "/src/remote-proj"
    post_hook(a, hook("SessionStart", sid, cwd=cwd))
    post_hook(a, hook("UserPromptSubmit", sid, cwd=cwd, prompt="go"))
    post_hook(a, hook("Stop", sid, cwd=cwd, last_assistant_message="Finished the remote job."))
    wait_for(lambda: record.exists() and record.read_text(), timeout=15)
    lines = record.read_text().splitlines()
    assert len(lines) == 1 and "remote-proj" in lines[0]
    # It names the host.
    assert lines[0].startswith("Claude · remote-proj · review: finished on alpha|"), lines
    # Redis loses everything; alpha republishes, bravo reloads: the same entry, no new notice.
    redis.kill()
    wait_for(lambda: health(b)["broker"]["state"] == "down", timeout=15)
    redis.start()
    wait_for(lambda: health(b)["broker"]["state"] == "connected", timeout=15)
    wait_for(lambda: health(a)["broker"]["state"] == "connected", timeout=15)
    wait_for(lambda: (r := row(b, sid)) is not None and r["state"] == "review", timeout=10)
    # A new entry still notifies: the dedupe is per entry, not per session.
    post_hook(a, hook("UserPromptSubmit", sid, cwd=cwd, prompt="again"))
    post_hook(a, hook("Stop", sid, cwd=cwd, last_assistant_message="Second job done."))
    wait_for(lambda: len(record.read_text().splitlines()) == 2, timeout=15)
    assert "Finished the remote job." not in record.read_text().splitlines()[1]
