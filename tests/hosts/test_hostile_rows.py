"""What anyone who can write to the shared Redis can put there, written straight into a real
redis-server: malformed rows, rows that escape to the terminal, too many rows, rows that claim
another session's id. Each is refused or cleaned; the links stay up and good rows still show."""

from __future__ import annotations

import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

from purplemux.cli import TERMINAL_COLOURS
from purplemux.hosts.remote import MAX_HOST_ROWS
from purplemux.hosts.rows import MAX_ROW_BYTES
from tests.support import Daemon, wait_for
from tests.support.hosts import (
    RedisServer,
    boot,
    forge,
    forged_row,
    health,
    hook,
    post_hook,
    row,
    start_hosts,
)

REFUSED = "refused a session row"


def sid(n: int) -> str:
    return f"{n:08d}-f0e9-4ed0-8000-000000000000"  # the first 8 characters differ (the ID column)


def seen(d: Daemon, *ids: str) -> bool:
    listed = {s["id"] for s in d.sessions()}
    return all(i in listed for i in ids)


def test_a_malformed_row_leaves_every_link_up_and_every_good_row_listed(
    redis: RedisServer, daemons: list[Daemon], base: Path
) -> None:
    a, b = start_hosts(daemons, base, redis, "alpha", "bravo")
    mine = sid(1)
    post_hook(a, hook("SessionStart", mine, cwd="/src/alpha-work"))
    good, bad = sid(2), sid(3)
    rows = {good: forged_row(good, cwd="/src/good"), bad: forged_row(bad, cwd=123)}
    forge(redis, "mallory", rows, stream=True)  # in mallory's hash, and down the change stream
    for d in (a, b):
        wait_for(lambda d=d: seen(d, mine, good), timeout=20)
        assert health(d)["broker"]["state"] == "connected"
        assert row(d, bad) is None
        assert row(d, good)["host"] == "mallory" and row(d, good)["project"] == "good"
    assert row(b, mine)["host"] == "alpha"

    # Read again and again (each `sync` reloads mallory's hash): nothing more in the log.
    for n in range(4, 7):
        forge(redis, "mallory", {sid(n): forged_row(sid(n))})
    wait_for(lambda: seen(b, sid(6)), timeout=20)
    refused = [line for line in b.logs().splitlines() if REFUSED in line]
    assert len(refused) == 1, refused
    assert bad in refused[0] and "mallory" in refused[0] and "cwd is int" in refused[0]

    # Across a restart: the row is still there, the link still comes up, one more line.
    assert b.proc is not None
    b.proc.send_signal(signal.SIGTERM)
    b.proc.wait(timeout=30)
    boot(b)
    wait_for(lambda: health(b)["broker"]["state"] == "connected", timeout=30)
    wait_for(lambda: seen(b, mine, good, sid(6)), timeout=20)
    assert row(b, bad) is None
    assert sum(REFUSED in line for line in b.logs().splitlines()) == 2  # once in each run
    assert health(a)["broker"]["state"] == "connected"


EVIL = "\x1b]0;pwned\x07\x1b[2J\x1b[H\x1b]52;c;ZXZpbA==\x07\u202e\r\nFAKE ROW\x9b1m\x07"
OURS = re.compile("|".join(re.escape(c) for c in [*TERMINAL_COLOURS.values(), "\x1b[0m"]))
SGR = re.compile(r"\x1b\[[0-9;]*m")  # doctor's own colours (its labels)
STRAY = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def on_a_terminal(d: Daemon, *args: str, codes: tuple[int, ...] = (0,)) -> str:
    """What `purplemux ARGS` writes to a terminal (a pty, through `script`)."""
    command = shlex.join([sys.executable, "-m", "purplemux", *args])
    out = subprocess.run(
        ["script", "-qec", command, "/dev/null"],
        env={**d.env, "TERM": "xterm"},
        capture_output=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode in codes, out
    return out.stdout.decode("utf-8").replace("\r\n", "\n")


def first_watch_table(d: Daemon, *ids: str) -> str:
    """`status --watch` (piped): its first table that lists every one of `ids`."""
    argv = [sys.executable, "-m", "purplemux", "status", "--watch"]
    proc = subprocess.Popen(argv, env=d.env, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    try:
        text = ""
        while not all(i[:8] in text.rsplit("-- ", 1)[-1] for i in ids):
            line = proc.stdout.readline().decode("utf-8")
            assert line, "status --watch ended"
            text += line
        return text.rsplit("-- ", 1)[-1]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()


def test_escape_sequences_in_remote_host_names_and_fields_never_reach_a_terminal(
    redis: RedisServer, daemons: list[Daemon], base: Path
) -> None:
    (b,) = start_hosts(daemons, base, redis, "bravo")
    local, asks = sid(10), sid(11)
    post_hook(b, hook("SessionStart", local, cwd="/src/site"), pane="%1")
    tmux = {"pane": f"%7{EVIL}", "socket": f"/tmp/{EVIL}", "session": EVIL, "window": EVIL}
    task = {"id": EVIL, "type": "shell", "description": EVIL, "status": "running"}
    hostile = forged_row(
        asks,
        state="needs-input",
        cwd=f"/src/{EVIL}deploy",
        title=f"deploy{EVIL}",
        name=f"deploy{EVIL}",
        waiting_for=f"Bash: rm {EVIL}",
        current_tool=f"Bash{EVIL}",
        snippet=EVIL,
        error=EVIL,
        model=EVIL,
        permission_mode=EVIL,
        tmux=tmux,
        background_tasks=[task],
    )
    named = sid(12)  # a host whose name carries the escapes: not a host name, never listed
    forge(redis, f"evil{EVIL}host", {named: forged_row(named, cwd="/src/named")})
    forge(redis, "mallory", {asks: hostile})  # after it in the stream: read once this is seen
    wait_for(lambda: seen(b, local, asks), timeout=20)

    table = on_a_terminal(b, "status")
    plain = OURS.sub("", table)
    assert not STRAY.search(plain), repr(plain)
    assert table.count("\x1b[0m") == 2  # our colour on each state badge: it ran on a terminal
    lines = plain.splitlines()
    assert len(lines) == 3, lines  # the header and the two rows: nothing faked a row
    assert lines[0].split()[:2] == ["HOST", "STATE"]
    assert "pwned" not in plain and "ZXZpbA" not in plain
    assert {line.split()[0] for line in lines[1:]} == {"bravo", "mallory"}

    watched = first_watch_table(b, local, asks)
    assert not STRAY.search(watched.replace("\n", " ")), repr(watched)
    assert "mallory" in watched and "pwned" not in watched

    status = b.cli("tmux-status", "--format", "{needs_input}: {needs_names}")
    assert status.returncode == 0, status
    assert status.stdout.startswith("1: deploy") and not STRAY.search(status.stdout.rstrip("\n"))

    assert row(b, named) is None and "not a host name" in b.logs()
    doctor = on_a_terminal(b, "doctor", codes=(0, 1))  # 1: no Claude CLI on this PATH
    assert "broker" in doctor
    assert not STRAY.search(SGR.sub("", doctor).replace("\n", " ")), repr(doctor)


def test_rows_are_capped_per_host_and_in_size(
    redis: RedisServer, daemons: list[Daemon], base: Path
) -> None:
    (b,) = start_hosts(daemons, base, redis, "bravo")
    flood = {sid(100_000 + n): forged_row(sid(100_000 + n)) for n in range(50_000)}
    forge(redis, "mallory", flood)
    big = sid(9)
    forge(redis, "trudy", {big: forged_row(big, pad="x" * MAX_ROW_BYTES)})
    small = sid(8)
    forge(redis, "trudy", {small: forged_row(small)})
    wait_for(lambda: seen(b, small), timeout=30)

    def from_mallory() -> int:
        return sum(s["host"] == "mallory" for s in b.sessions())

    wait_for(lambda: from_mallory() == MAX_HOST_ROWS, timeout=30)
    assert row(b, big) is None
    logs = b.logs()
    assert logs.count(f"more than {MAX_HOST_ROWS} sessions: the rest are not shown") == 1, logs
    assert logs.count(f"longer than {MAX_ROW_BYTES} bytes") == 1
    assert health(b)["broker"]["state"] == "connected"


def test_a_remote_row_never_shadows_a_local_session_or_another_hosts(
    redis: RedisServer, daemons: list[Daemon], base: Path
) -> None:
    a, b = start_hosts(daemons, base, redis, "alpha", "bravo")
    ours, theirs = sid(20), sid(21)
    post_hook(b, hook("SessionStart", ours, cwd="/src/bravo-own"))
    post_hook(a, hook("SessionStart", theirs, cwd="/src/alpha-own"))
    wait_for(lambda: seen(a, ours, theirs) and seen(b, ours, theirs), timeout=20)
    later = sid(22)  # a remote row first; then a local session with that id starts
    claims = {
        i: forged_row(i, state="needs-input", cwd="/evil/claim", waiting_for="Bash: approve me")
        for i in (ours, theirs, later)
    }
    forge(redis, "mallory", claims, stream=True)
    sentinel = sid(23)
    forge(redis, "mallory", {sentinel: forged_row(sentinel)}, stream=True)
    wait_for(lambda: seen(b, sentinel, later) and seen(a, sentinel), timeout=20)
    post_hook(b, hook("SessionStart", later, cwd="/src/bravo-later"))
    wait_for(lambda: (r := row(b, later)) is not None and r["host"] == "bravo", timeout=20)

    for d, owner in ((a, {ours: "bravo", theirs: "alpha"}), (b, {ours: "bravo", theirs: "alpha"})):
        listed = d.sessions()
        for i, host in owner.items():
            rows = [s for s in listed if s["id"] == i]
            assert len(rows) == 1 and rows[0]["host"] == host, rows
            assert rows[0]["cwd"] != "/evil/claim" and rows[0]["state"] == "idle"
    assert [s["host"] for s in b.sessions() if s["id"] == later] == ["bravo"]
    assert b.session(ours)["cwd"] == "/src/bravo-own"  # the API's single row: the local one
    said = b.logs()
    assert "it has the id of a session of this host" in said
    assert "host 'alpha' has a session with that id" in said
