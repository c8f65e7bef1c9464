"""Codex's state DBs read read-only: real SQLite files with Codex 0.171.0's own schema, filled
with the captured rows (state-db.txt), written the way the daemon writes them (WAL)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents.codex import threads as threads_module
from purplemux.agents.codex.threads import (
    HISTORY_DB,
    OPENED_DIR,
    STATE_DB,
    Thread,
    latest_turns,
    opened_threads,
    read_threads,
    thread_id_of_rollout,
    uuid7_time,
)
from tests.agents.codex.samples import SAMPLES, rollouts, state_db, thread_id

SCENARIOS = sorted(p.parent.name for p in SAMPLES.glob("*/state-db.txt"))
SCHEMA = (SAMPLES / "schema.sql").read_text().split("-- thread_history_1.sqlite")


def writer(path: Path, schema: str) -> sqlite3.Connection:
    """A connection that writes as Codex's daemon does: WAL, no automatic checkpoint, kept open."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.executescript(schema)
    return conn


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path


def fill(home: Path, scenario: str) -> tuple[sqlite3.Connection, sqlite3.Connection]:
    """Both DBs of a scenario, as Codex left them (the writers stay open, like the daemon's)."""
    tables = state_db(scenario)
    state = writer(home / STATE_DB, SCHEMA[0])
    for row in tables["state_5.sqlite: threads"]:
        state.execute(
            "INSERT INTO threads (id, rollout_path, created_at, updated_at, source,"
            " model_provider, cwd, title, sandbox_policy, approval_mode, tokens_used, originator,"
            " first_user_message)"
            " VALUES (?, ?, ?, ?, ?, 'fake', '/home/user/proj', ?, '{}', ?, ?, ?, ?)",
            (
                row["id"],
                row["rollout_path"],
                int(row["created_at"]),
                int(row["updated_at"]),
                row["source"],
                row["title"],
                row["approval_mode"],
                int(row["tokens_used"]),
                row["originator"],
                row["title"],
            ),
        )
    history = writer(home / HISTORY_DB, SCHEMA[1])
    for n, row in enumerate(tables["thread_history_1.sqlite: thread_turns"]):
        history.execute(
            "INSERT INTO thread_turns (thread_id, turn_id, rollout_ordinal, status, error_json,"
            " started_at, completed_at, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row["thread_id"],
                row["turn_id"],
                n,
                row["status"],
                row["error_json"] or None,
                int(row["started_at"]),
                int(row["completed_at"]) if row["completed_at"] else None,
                int(row["duration_ms"]) if row["duration_ms"] else None,
            ),
        )
    return state, history


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_captured_thread_reads_back(home: Path, scenario: str) -> None:
    state, history = fill(home, scenario)
    expected = state_db(scenario)["state_5.sqlite: threads"]
    got = read_threads(home)
    assert got.reason is None
    assert {t.id: (t.title, t.rollout_path) for t in got.rows} == {
        r["id"]: (r["title"] or None, r["rollout_path"]) for r in expected
    }
    # The TUI is "vscode" through the daemon, "cli" with --no-daemon (in-process server).
    source = "cli" if scenario == "g2_quit_no_daemon" else "vscode"
    assert all(t.originator == "codex-tui" and t.source == source for t in got.rows)
    for t in got.rows:
        # The id is a UUIDv7 minted when the thread was made: created_at is its second.
        minted = uuid7_time(t.id)
        assert minted is not None and t.created_at is not None
        assert t.created_at <= minted < t.created_at + 1
    turns = latest_turns(home)
    assert turns.reason is None
    newest = {}
    for r in state_db(scenario)["thread_history_1.sqlite: thread_turns"]:
        newest[r["thread_id"]] = r
    assert {t.thread_id: (t.turn_id, t.status) for t in turns.rows} == {
        k: (r["turn_id"], r["status"]) for k, r in newest.items()
    }
    state.close()
    history.close()


def test_uuid7_time_matches_the_rollout_name_of_every_sample() -> None:
    paths = sorted(SAMPLES.glob("*/rollout/rollout-*.jsonl"))
    assert len(paths) == 22
    for path in paths:
        tid = thread_id_of_rollout(path)
        assert tid == thread_id(path)
        stamp = path.name[len("rollout-") : len("rollout-2026-12-01T20-16-43")]
        named = datetime.strptime(stamp, "%Y-%m-%dT%H-%M-%S").replace(tzinfo=UTC).timestamp()
        minted = uuid7_time(tid)
        assert minted is not None and named <= minted < named + 1


def test_uuid7_time_refuses_what_is_not_a_uuid7() -> None:
    assert uuid7_time("01a2344b-91a1-74e0-b89b-739beb72e476") == 1796173697.441
    assert uuid7_time("01A2344B-91A1-74E0-B89B-739BEB72E476") == 1796173697.441
    assert uuid7_time("6ba7b810-9dad-11d1-80b4-00c04fd430c8") is None  # a v1
    assert uuid7_time("01a2344b-91a1-74e0-b89b") is None
    assert uuid7_time("") is None
    assert thread_id_of_rollout("/x/history.jsonl") is None


def test_f_api_errors_the_failed_turn_and_its_message(home: Path) -> None:
    fill(home, "f_api_errors")
    (turn,) = latest_turns(home).rows
    assert turn.status == "failed"
    assert turn.error == "stream disconnected before completion: scripted stream failure"
    assert turn.error_kind == "other"
    history = sqlite3.connect(home / HISTORY_DB, isolation_level=None)
    history.execute("DELETE FROM thread_turns WHERE rollout_ordinal = 3")  # the 401 is newest now
    (turn,) = latest_turns(home).rows
    assert (turn.error_kind, turn.error) == (
        "http_connection_failed",
        "unexpected status 401 Unauthorized: scripted failure 401, url: "
        "http://127.0.0.1:18192/v1/responses",
    )
    history.close()


def test_the_wal_is_read_while_the_writer_holds_it(home: Path) -> None:
    """Codex's daemon keeps its connection and its uncheckpointed WAL: a read-only reader still
    sees every commit, a turn in progress as such, and the change when it ends."""
    state, history = fill(home, "b_plain")
    assert os.path.getsize(home / (HISTORY_DB + "-wal")) > 0
    tid = "01a23340-a2c4-7502-926d-fb0b0c5a9685"
    history.execute(
        "INSERT INTO thread_turns (thread_id, turn_id, rollout_ordinal, status, started_at)"
        " VALUES (?, '01a23340-ffff-7000-8000-000000000000', 99, 'inProgress', 1796156300)",
        (tid,),
    )
    (turn,) = latest_turns(home, [tid]).rows
    assert turn.status == "inProgress" and turn.completed_at is None
    history.execute("UPDATE thread_turns SET status = 'interrupted' WHERE rollout_ordinal = 99")
    (turn,) = latest_turns(home, [tid]).rows
    assert turn.status == "interrupted"
    assert latest_turns(home, ["01a23340-0000-7000-8000-000000000000"]).rows == ()
    assert latest_turns(home, []).rows == ()
    state.close()
    history.close()


def test_ids_and_limit_select_rows(home: Path) -> None:
    fill(home, "l_two_panes")
    every = read_threads(home).rows
    assert len(every) == 4
    assert [t.created_at for t in every] == sorted((t.created_at for t in every), reverse=True)
    (one,) = read_threads(home, [every[2].id]).rows
    assert one == every[2]
    assert len(read_threads(home, limit=2).rows) == 2
    assert read_threads(home, []).rows == ()


def test_a_locked_database_is_a_reason_not_an_error(home: Path) -> None:
    state, _ = fill(home, "b_plain")
    state.execute("PRAGMA locking_mode=EXCLUSIVE")
    state.execute("BEGIN EXCLUSIVE")
    got = read_threads(home, timeout=0.05)
    assert got.rows == () and got.reason is not None and "locked" in got.reason
    state.execute("ROLLBACK")
    state.close()
    assert read_threads(home).reason is None


def test_missing_files_are_a_reason_and_nothing_is_created(home: Path) -> None:
    assert read_threads(home).reason == "no state_5.sqlite"
    assert latest_turns(home).reason == "no thread_history_1.sqlite"
    assert sorted(os.listdir(home)) == []
    assert read_threads(home / "nowhere").rows == ()


def test_missing_tables_and_columns(home: Path) -> None:
    other = sqlite3.connect(home / STATE_DB)
    other.execute("CREATE TABLE something (x)")
    other.commit()
    assert read_threads(home).reason == "no table threads"
    other.execute("CREATE TABLE threads (id TEXT, rollout_path TEXT)")  # an older schema
    other.execute("INSERT INTO threads VALUES ('01a23340-a2c4-7502-926d-fb0b0c5a9685', '/r')")
    other.commit()
    assert read_threads(home).rows == (
        Thread(id="01a23340-a2c4-7502-926d-fb0b0c5a9685", rollout_path="/r"),
    )
    other.close()
    turns = sqlite3.connect(home / HISTORY_DB)
    turns.execute("CREATE TABLE thread_turns (thread_id TEXT, turn_id TEXT)")
    turns.commit()
    turns.close()
    assert latest_turns(home).reason == "thread_turns lacks thread_id, turn_id or status"


def test_a_file_that_is_not_a_database(home: Path) -> None:
    (home / STATE_DB).write_bytes(b"not a database at all" * 100)
    got = read_threads(home)
    assert got.rows == () and got.reason is not None and STATE_DB in got.reason


def test_no_connection_stays_open(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writers = fill(home, "c_approve")  # Codex's own connections stay open meanwhile
    opened: list[sqlite3.Connection] = []
    connect = sqlite3.connect

    def recording(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        opened.append(conn)
        return conn

    monkeypatch.setattr(threads_module.sqlite3, "connect", recording)
    assert read_threads(home).rows and latest_turns(home).rows
    assert len(opened) == 2
    for conn in opened:  # each read closed its connection: using one now fails
        with pytest.raises(sqlite3.ProgrammingError):
            conn.execute("SELECT 1")
    assert all(w.execute("SELECT 1").fetchone() == (1,) for w in writers)


def test_odd_paths_are_quoted_into_the_uri(tmp_path: Path) -> None:
    home = tmp_path / "a dir?with#odd%chars"
    home.mkdir()
    fill(home, "b_plain")
    assert len(read_threads(home).rows) == 1


def test_opened_threads_are_the_capability_files(home: Path) -> None:
    folder = home / OPENED_DIR
    assert opened_threads(home) == ()
    folder.mkdir()
    for name, at in (
        ("01a2344c-2af9-73f2-a583-d58c474fbc7f", 1796173736.741),
        ("01a2344b-91a1-74e0-b89b-739beb72e476", 1796173697.497),
        ("not-an-id", 1.0),
    ):
        (folder / name).touch()
        os.utime(folder / name, (at, at))
    (folder / "01a2344c-4ce3-7ca3-b279-00278fbfb3c4").mkdir()
    got = opened_threads(home)
    assert [t.id for t in got] == [
        "01a2344b-91a1-74e0-b89b-739beb72e476",
        "01a2344c-2af9-73f2-a583-d58c474fbc7f",
    ]
    assert got[0].opened_at == pytest.approx(1796173697.497)
    minted = uuid7_time(got[0].id)
    assert minted is not None and 0 <= got[0].opened_at - minted < 0.2


def test_rollout_names_of_a_scenario_match_its_db_rows(home: Path) -> None:
    fill(home, "g_quit")
    by_path = {Path(t.rollout_path or "").name: t.id for t in read_threads(home).rows}
    assert {p.name: thread_id(p) for p in rollouts("g_quit")} == by_path
