"""Every field of a remote row, fed every hostile value a writer to the shared Redis can store
(a 400-digit integer as a JSON number and as a string, NaN, infinities, wrong types, lists and
objects where a value goes, over-long text): each such row is skipped ("bad row", logged a
bounded number of times), never raised out of the check, and the good row beside it is listed.
First through RemoteView alone (each case named when it fails), then through a real
redis-server and a real daemon, across a restart."""

from __future__ import annotations

import json
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import redis as redis_lib

from purplemux.hosts.remote import LOG_PER_HOST, RemoteView, Sink
from purplemux.hosts.rows import MAX_ID, MAX_PATH, MAX_TASKS, MAX_TEXT, MAX_TIME, MAX_WORD
from tests.support import Daemon, wait_for
from tests.support.hosts import RedisServer, boot, forge, forged_row, health, row, start_hosts

HUGE = 10**400
"""The integer of the report: math.isfinite(HUGE) raises OverflowError."""
NAN, INF = float("nan"), float("inf")

# Each leaf of a row: (kind, optional, text limit). Every leaf of FULL is here (checked below).
SCHEMA: dict[str, tuple[str, bool, int]] = {
    "id": ("id", False, MAX_ID),
    "state": ("state", False, 0),
    "state_since": ("time", False, 0),
    "alive": ("flag", True, 0),
    "ended": ("flag", False, 0),
    "cwd": ("text", True, MAX_PATH),
    "project": ("text", True, MAX_PATH),
    "pid": ("integer", True, 0),
    "tmux": ("object", True, 0),
    "tmux.pane": ("text", False, MAX_ID),
    "tmux.socket": ("text", True, MAX_PATH),
    "tmux.session": ("text", True, MAX_WORD),
    "tmux.window": ("text", True, MAX_WORD),
    "transcript_path": ("text", True, MAX_PATH),
    "seq": ("integer", False, 0),
    "last_event": ("object", True, 0),
    "last_event.name": ("text", False, MAX_WORD),
    "last_event.at": ("time", False, 0),
    "current_tool": ("text", True, MAX_WORD),
    "waiting_for": ("text", True, MAX_TEXT),
    "snippet": ("text", True, MAX_TEXT),
    "tokens": ("object", False, 0),
    "tokens.input": ("integer", False, 0),
    "tokens.output": ("integer", False, 0),
    "tokens.cache_read": ("integer", False, 0),
    "tokens.cache_creation": ("integer", False, 0),
    "model": ("text", True, MAX_WORD),
    "compacting": ("flag", False, 0),
    "error": ("text", True, MAX_TEXT),
    "updated_at": ("time", False, 0),
    "name": ("text", True, MAX_TEXT),
    "title": ("text", True, MAX_TEXT),
    "permission_mode": ("text", True, MAX_WORD),
    "context": ("object", True, 0),
    "context.tokens": ("integer", True, 0),
    "context.window": ("integer", True, 0),
    "context.percent": ("number", True, 0),
    "context.band": ("text", False, MAX_WORD),
    "cost_usd": ("number", True, 0),
    "cost_source": ("text", True, MAX_WORD),
    "retries": ("integer", False, 0),
    "error_kind": ("text", True, MAX_WORD),
    "background_tasks": ("list", True, 0),
    "background_tasks.0": ("object", False, 0),
    "background_tasks.0.id": ("text", False, MAX_ID),
    "background_tasks.0.type": ("text", False, MAX_WORD),
    "background_tasks.0.description": ("text", True, MAX_TEXT),
    "background_tasks.0.status": ("text", False, MAX_WORD),
    "superseded": ("flag", False, 0),
    "account": ("text", True, MAX_WORD),
    "background": ("flag", False, 0),
    "job_id": ("text", True, MAX_ID),
    "limit": ("object", True, 0),
    "limit.window": ("text", True, MAX_WORD),
    "limit.resets_at": ("time", True, 0),
    "limit.auto_resume_at": ("time", True, 0),
    "limit.at": ("time", False, 0),
    "resume": ("object", True, 0),
    "resume.wall_at": ("time", False, 0),
    "resume.state": ("text", False, MAX_WORD),
    "resume.by": ("text", False, MAX_WORD),
    "resume.at": ("time", False, 0),
    "resume.reason": ("text", True, MAX_TEXT),
}

WRONG_SHAPES: list[Any] = [[], {}, [HUGE], {"n": HUGE}, [[[[]]]]]
BAD_NUMBERS: list[Any] = [HUGE, -HUGE, str(HUGE), "1", NAN, INF, -INF, 1e400, -1, 1e16, True]


def hostile(kind: str, optional: bool, limit: int) -> list[Any]:
    """The values that can never be valid for a leaf of this kind."""
    out: list[Any] = list(WRONG_SHAPES)
    if kind in ("number", "integer", "time"):
        out += BAD_NUMBERS + ([1.5] if kind == "integer" else [])
        out += [1e15, MAX_TIME + 1] if kind == "time" else []  # no clock shows year 31690708
    elif kind in ("text", "id"):
        out += [HUGE, -HUGE, 1, 1.5, NAN, INF, True, "x" * (limit + 1)]
        out += ["", " "] if kind == "id" else []
    elif kind == "flag":
        out += [HUGE, str(HUGE), 0, 1, "true", NAN, INF]
    elif kind == "state":
        out += [HUGE, str(HUGE), "bogus", ["idle"], {"idle": 1}, NAN, True]
    elif kind == "object":
        out = [HUGE, str(HUGE), [], [{}], "x", NAN, INF, True, 1, {"zzz": 1}]
    elif kind == "list":
        out = [HUGE, str(HUGE), {}, "x", NAN, True, [HUGE], [{}] * (MAX_TASKS + 1)]
    if not optional:  # a missing field may take its default; a null one is what it says
        out.append(None)
    return out


def full(sid: str) -> dict[str, Any]:
    """A row with every object and list present, as a host with everything set publishes it."""
    now = time.time()
    return forged_row(
        sid,
        cwd="/src/full",
        pid=4242,
        tmux={"pane": "%3", "socket": "/tmp/tmux-1/default", "session": "work", "window": "1"},
        last_event={"name": "Stop", "at": now},
        context={"tokens": 1000, "window": 200000, "percent": 0.5, "band": "ok"},
        cost_usd=1.25,
        background_tasks=[{"id": "t1", "type": "shell", "description": "build", "status": "ok"}],
        limit={"window": "five_hour", "resets_at": now + 60, "auto_resume_at": None, "at": now},
        resume={"wall_at": now, "state": "armed", "by": "user", "at": now, "reason": None},
    )


def leaves(data: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield from leaves(value, f"{prefix}{key}.") if value else ()
            yield f"{prefix}{key}"
    elif isinstance(data, list) and data:
        yield f"{prefix}0"
        yield from leaves(data[0], f"{prefix}0.")


def with_value(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of `data` with the leaf at `path` set to `value`."""
    out = json.loads(json.dumps(data))
    *parents, last = path.split(".")
    at: Any = out
    for key in parents:
        at = at[int(key)] if isinstance(at, list) else at[key]
    if isinstance(at, list):
        at[int(last)] = value
    else:
        at[last] = value
    return out


def cases() -> list[tuple[str, Any]]:
    return [(path, v) for path, spec in SCHEMA.items() for v in hostile(*spec)]


CASES = cases()


def case_id(n: int) -> str:
    return f"{n:08d}-bad0-4bad-8bad-000000000000"


GOOD = "00000000-900d-4900-8900-000000000000"


def bad_rows() -> dict[str, Any]:
    """Each case as a row filed under its own id (JSON text: NaN and Infinity as Python's
    json writes them, which json.loads reads back)."""
    out: dict[str, Any] = {}
    for n, (path, value) in enumerate(CASES):
        sid = case_id(n)
        data = with_value(full(sid), path, value)
        out[sid] = json.dumps(data)
    return out


def test_the_schema_covers_every_field_and_the_full_row_is_good() -> None:
    assert set(leaves(full(GOOD))) - {"agent"} == set(SCHEMA)  # agent: not read from a row
    view = RemoteView("bravo", Sink(lambda _r: None, lambda _s: None, lambda _r: None), 0.0)
    view.replace_host("mallory", {GOOD: full(GOOD)})
    assert [r["id"] for r in view.snapshot(True)] == [GOOD]


@pytest.mark.parametrize("path,value", CASES, ids=[f"{p}={str(v)[:12]}" for p, v in CASES])
def test_each_hostile_value_skips_its_row_and_keeps_the_good_one(
    path: str, value: Any, caplog: pytest.LogCaptureFixture
) -> None:
    served: list[str] = []
    sink = Sink(lambda r: served.append(r["id"]), lambda _s: None, lambda _r: None)
    view = RemoteView("bravo", sink, 0.0)
    bad = json.loads(json.dumps(with_value(full("bad-row"), path, value)))
    view.replace_host("mallory", {"bad-row": bad, GOOD: full(GOOD)})  # a (re)load
    view.apply("mallory", bad)  # a change from the stream
    assert [r["id"] for r in view.snapshot(True)] == [GOOD]
    assert served == [GOOD]
    assert view.get("bad-row") is None
    refused = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(refused) == 1 and "'mallory'" in refused[0], refused  # once, row read twice


def raw_client(redis: RedisServer) -> redis_lib.Redis:
    return redis_lib.Redis(host="127.0.0.1", port=redis.port, password=redis.password)


def restart(d: Daemon) -> None:
    """SIGTERM, then start again on the same home (the rows stay in Redis)."""
    assert d.proc is not None
    d.proc.send_signal(signal.SIGTERM)
    d.proc.wait(timeout=30)
    boot(d)
    wait_for(lambda: health(d)["broker"]["state"] == "connected", timeout=60)


def test_the_400_digit_row_is_skipped_with_every_link_up_across_a_restart(
    redis: RedisServer, daemons: list[Daemon], base: Path
) -> None:
    a, b = start_hosts(daemons, base, redis, "alpha", "bravo")
    number, text, good = case_id(1), case_id(2), GOOD
    rows = {
        number: forged_row(number, updated_at=HUGE),  # a JSON number: OverflowError before
        text: forged_row(text, tokens={**forged_row(text)["tokens"], "input": str(HUGE)}),
        good: forged_row(good, cwd="/src/good"),
    }
    forge(redis, "mallory", rows, stream=True)
    for d in (a, b):
        wait_for(lambda d=d: row(d, good) is not None, timeout=30)
        assert health(d)["broker"]["state"] == "connected"
        assert row(d, number) is None and row(d, text) is None
    said = b.logs()
    assert "updated_at is out of range" in said and "tokens.input is str, not a number" in said
    restart(b)
    wait_for(lambda: row(b, good) is not None, timeout=30)
    assert row(b, number) is None and row(b, text) is None
    assert health(a)["broker"]["state"] == "connected" and "Traceback" not in b.logs()


def test_every_hostile_row_is_skipped_with_every_link_up_across_a_restart(
    redis: RedisServer, daemons: list[Daemon], base: Path
) -> None:
    a, b = start_hosts(daemons, base, redis, "alpha", "bravo")
    rows: dict[str, Any] = {GOOD: full(GOOD), **bad_rows()}
    deep = "00000001-dee9-4dee-8dee-000000000000"
    rows[deep] = "[" * 30_000  # JSON nested past Python's recursion limit, under the size cap
    forge(redis, "mallory", rows, stream=True)  # in mallory's hash and down the change stream
    client = raw_client(redis)
    try:  # bytes that are not UTF-8, as a row, a row's id, a host's name and a heartbeat
        client.hset(
            "purplemux:host:mallory:sessions", "00000002-0bad-4bad-8bad-000000000000", b"\xff{"
        )
        client.hset("purplemux:host:mallory:sessions", b"\xfe\xff", b'{"id": "\xff"}')
        client.sadd("purplemux:hosts", b"host\xff", "trudy")
        client.set("purplemux:host:trudy:alive", str(HUGE), ex=3600)
        client.hset(
            "purplemux:host:trudy:sessions", GOOD[:-1] + "1", json.dumps(full(GOOD[:-1] + "1"))
        )
        client.xadd(
            "purplemux:changes", {"host": b"\xff", "kind": "session", "id": "x", "data": b"\xff"}
        )
        client.xadd("purplemux:changes", {"host": "trudy", "kind": "sync"})
    finally:
        client.close()

    def listed(d: Daemon) -> bool:
        ids = {s["id"] for s in d.sessions()}
        return GOOD in ids and GOOD[:-1] + "1" in ids

    for d in (a, b):
        wait_for(lambda d=d: listed(d), timeout=60)
        assert health(d)["broker"]["state"] == "connected"
        assert row(d, GOOD)["host"] == "mallory"  # type: ignore[index]
        shown = {s["id"] for s in d.sessions()}
        assert not shown & {case_id(n) for n in range(len(CASES))}
        status = d.cli("status")
        assert status.returncode == 0 and GOOD[:8] in status.stdout, status.stderr
    # Bounded: LOG_PER_HOST lines (and one saying so) per followed host, as many for hosts not
    # followed (yet), whatever the number of bad rows.
    refusals = [line for line in b.logs().splitlines() if "refuse" in line]
    assert 0 < len(refusals) <= 2 * (LOG_PER_HOST + 1), len(refusals)
    assert len(CASES) > 10 * LOG_PER_HOST
    assert "Traceback" not in b.logs() and "reconnecting" not in b.logs()

    restart(b)  # the rows stay in Redis; bravo reads them all again
    wait_for(lambda: listed(b), timeout=60)
    assert not {s["id"] for s in b.sessions()} & {case_id(n) for n in range(len(CASES))}
    assert health(a)["broker"]["state"] == "connected"
    assert "Traceback" not in b.logs()


def test_an_answer_to_a_command_that_is_not_one_is_a_502_and_the_link_stays_up(
    redis: RedisServer, daemons: list[Daemon], base: Path
) -> None:
    """What comes back on a command's reply key is remote too: each hostile answer is a 502
    with a reason for the API's caller, never a 500, and the link stays up."""
    (b,) = start_hosts(daemons, base, redis, "bravo")
    theirs = case_id(7)
    forge(redis, "mallory", {theirs: forged_row(theirs)})
    wait_for(lambda: row(b, theirs) is not None, timeout=30)
    answers = [
        b"not json",
        b"[" * 30_000,
        b"\xff\xfe",
        json.dumps({"status": HUGE, "body": {}}).encode(),
        json.dumps({"status": "200", "body": {}}).encode(),
        json.dumps({"status": 99, "body": {}}).encode(),
        json.dumps({"status": 200, "body": []}).encode(),
        b'{"status": 200, "body": {"text": NaN}}',
        json.dumps([200, {}]).encode(),
    ]
    client = raw_client(redis)
    last = "0-0"

    def ask() -> tuple[int, dict[str, Any]]:
        req = urllib.request.Request(f"{b.url}/api/sessions/{theirs}/screen")
        req.add_header("Authorization", f"Bearer {b.token}")
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    try:
        with ThreadPoolExecutor(1) as pool:
            good = json.dumps({"status": 200, "body": {"ok": 1}}).encode()
            for answer in [*answers, good]:  # the good one last: the path itself works
                asked = pool.submit(ask)
                got = client.xread({"purplemux:host:mallory:commands": last}, block=30_000)
                assert got, "no command reached mallory"
                last, fields = got[0][1][-1]
                assert fields[b"kind"] == b"screen" and fields[b"session"] == theirs.encode()
                client.lpush(b"purplemux:reply:" + fields[b"id"], answer)
                status, body = asked.result(timeout=60)
                if answer == good:
                    assert (status, body) == (200, {"ok": 1})
                else:
                    assert status == 502, (answer[:40], status, body)
                    assert "mallory" in body["error"] and "not one" in body["error"]
                assert health(b)["broker"]["state"] == "connected"
    finally:
        client.close()
    assert "Traceback" not in b.logs()
