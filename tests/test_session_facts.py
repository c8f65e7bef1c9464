"""What a session is, costs and still runs, on the real 2.1.332 samples (tests/samples)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from purplemux.agents.claude.sessions import parse_session_file, status_event
from purplemux.agents.claude.transcript import TranscriptReader
from purplemux.core import events as ev
from purplemux.core import facts as sf
from purplemux.core.machine import step
from purplemux.core.model import BackgroundTask, Session, State
from purplemux.io.settings import Settings
from purplemux.io.store import Store
from purplemux.server.app import create_app
from purplemux.sources.hooks import to_event
from tests.support import settings_for

SAMPLES = Path(__file__).resolve().parent / "samples" / "claude-code-2.1.332"
AUTO = "ee8719e1-84c3-4bb6-8582-308c4825fd4d"
MANUAL = "c30e5fa2-c490-405f-a87f-3065ce108a97"
FAILED = "58351cd7-3504-4754-98c7-68dc411a0ca3"


def lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (SAMPLES / name).read_text().splitlines() if x.strip()]


def hook_events(name: str) -> list[ev.Event]:
    out = []
    for n, line in enumerate(lines(name)):
        headers = {
            "x-purplemux-event-id": f"h{n}",
            "x-purplemux-ts": str(int(line["ts"] * 1e9)),
            "x-purplemux-pane": line.get("tmux_pane") or "",
        }
        out.append(to_event(line["payload"], headers, line["ts"]))
    return out


def fold_transcript(session_id: str) -> Iterator[tuple[dict[str, Any], list[ev.Event]]]:
    """Each transcript line with the events the reader made of it."""
    reader = TranscriptReader(session_id)
    for raw in (SAMPLES / "transcripts" / f"{session_id}.jsonl").read_bytes().splitlines():
        yield json.loads(raw), reader.feed(raw + b"\n")


def facts(events: list[ev.Event]) -> list[ev.TranscriptFacts]:
    return [e for e in events if isinstance(e, ev.TranscriptFacts)]


# --- bands and windows ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("percent", "band"),
    [
        (0.0, "healthy"),
        (69.9, "healthy"),
        (70.0, "warning"),
        (84.9, "warning"),
        (85.0, "critical"),
        (94.9, "critical"),
        (95.0, "compacting"),
        (120.0, "compacting"),
    ],
)
def test_bands(percent: float, band: str) -> None:
    assert sf.band(percent) == band


def test_compacting_while_pre_to_post_compact_runs_whatever_the_size() -> None:
    assert sf.band(10.0, compacting=True) == "compacting"
    session = Session(id="s", context_tokens=1000, model="claude-opus-5-5", compacting=True)
    assert session.to_json()["context"]["band"] == "compacting"


def test_windows_by_family_the_1m_suffix_and_the_override() -> None:
    assert sf.context_window("claude-opus-5-5") == 200_000
    assert sf.context_window("claude-opus-4-8[1m]") == 1_000_000
    assert sf.context_window("claude-opus-4-8", long_context=True) == 1_000_000
    assert sf.context_window(None) == 200_000
    assert sf.context_window("claude-opus-4-8[1m]", override=500_000) == 500_000
    ctx = sf.context(400_000, "claude-sonnet-4-5", window_override=500_000)
    assert ctx == {"tokens": 400_000, "window": 500_000, "percent": 80.0, "band": "warning"}


def test_two_daemons_in_one_process_keep_their_own_window(tmp_path: Path) -> None:
    """The setting goes to each app's engine (no module-level override): a second app with
    another window, started later, leaves the first one's sessions as they were."""
    session = Session(id="w1", context_tokens=400_000, model="claude-sonnet-4-5", cwd="/w/p")
    windows = {"a": 500_000, "b": None}
    apps = {k: create_app(settings_for(tmp_path / k, context_window=w)) for k, w in windows.items()}
    with TestClient(apps["a"]) as a, TestClient(apps["b"]) as b:
        for name, c in (("a", a), ("b", b)):
            c.app.state.runtime.engine.load([session])  # type: ignore[attr-defined]
            token = (tmp_path / name / "home" / "token").read_text().strip()
            c.headers["Authorization"] = f"Bearer {token}"
        got = a.get("/api/sessions/w1").json()
        assert got["context"]["window"] == 500_000 and got["view"]["context_percent"] == 80.0
        got = b.get("/api/sessions/w1").json()
        assert got["context"]["window"] == 200_000 and got["view"]["context_percent"] == 200.0


def test_the_override_setting_is_read_and_checked() -> None:
    env = {"PURPLEMUX_HOME": "/x", "PURPLEMUX_CONTEXT_WINDOW": "1000000"}
    assert Settings.from_env(env).context_window == 1_000_000
    with pytest.raises(ValueError, match="PURPLEMUX_CONTEXT_WINDOW"):
        Settings.from_env({**env, "PURPLEMUX_CONTEXT_WINDOW": "-3"})


# --- the price table --------------------------------------------------------------------------


def test_price_table_ships_with_its_date_and_covers_every_family() -> None:
    data = json.loads(sf.prices_path().read_text())
    assert data["as_of"] == sf.prices().as_of
    assert len(data["as_of"]) == 10 and data["as_of"][4] == "-"
    for model in (
        "claude-opus-5-5",
        "claude-opus-4-8[1m]",
        "claude-sonnet-4-5",
        "claude-haiku-4-5",
    ):
        price = sf.prices().for_model(model)
        assert 0 < price.cache_read < price.input < price.cache_write and price.input < price.output


@pytest.mark.parametrize("session_id", [AUTO, MANUAL])
def test_computed_cost_matches_claudes_own_figure(session_id: str) -> None:
    """Claude's cost-state totals on 2.1.332 come out of the table to the cent's hundredth."""
    entries = [e for e, _ in fold_transcript(session_id)]
    state = [e for e in entries if e.get("type") == "cost-state"][-1]
    ((model, usage),) = state["modelUsage"].items()
    ours = sf.cost(
        model,
        usage["inputTokens"],
        usage["outputTokens"],
        usage["cacheReadInputTokens"],
        usage["cacheCreationInputTokens"],
    )
    assert ours == pytest.approx(state["totalCostUSD"], abs=1e-9)


# --- transcript entries new in 2.1.332 --------------------------------------------------------


def test_context_is_the_newest_reply_and_compaction_forgets_it() -> None:
    seen: list[int | None] = []
    for entry, events in fold_transcript(MANUAL):
        for f in facts(events):
            if f.context_tokens is not None:
                seen.append(f.context_tokens)
            if f.compacted:
                seen.append(None)
        if entry.get("type") == "system" and entry.get("subtype") == "compact_boundary":
            assert seen[-2:] == [150_000, None]  # CTX:150000, then /compact
    assert 150_000 in seen and 50 in seen


def test_cost_state_entries_give_claudes_figure() -> None:
    cost: float | None = None
    source: str | None = None
    computed_before: float | None = None
    for entry, events in fold_transcript(MANUAL):
        for f in facts(events):
            cost = f.cost_usd if f.cost_usd is not None else cost
            source = f.cost_source or source
        if entry.get("type") == "cost-state":
            assert source == "claude"
            assert cost == pytest.approx(entry["totalCostUSD"], abs=1e-6)
        elif source == "computed":
            computed_before = cost
    # Before Claude wrote its figure (at /clear) the table's figure was the same but for the two
    # compaction calls (50 + 10 tokens each, $0.0004 each) that the main chain does not show.
    assert computed_before == pytest.approx(0.6034 - 2 * 0.0004, abs=1e-6)


def test_api_request_entries_count_retries_and_the_error_entry_says_why() -> None:
    retries: list[int] = []
    failures: list[ev.StopFailure] = []
    for _, events in fold_transcript(FAILED):
        retries += [f.retries for f in facts(events) if f.retries is not None]
        failures += [e for e in events if isinstance(e, ev.StopFailure)]
    assert max(retries) == 10  # 11 requests for one prompt: 10 retries
    assert [f.error_kind for f in failures] == [
        "server_error",
        "authentication_failed",
        "authentication_failed",
    ]
    assert retries[-1] == 0


def test_task_notification_turn_and_queue_operation_entries() -> None:
    stops = 0
    for entry, events in fold_transcript(AUTO):
        stops += sum(isinstance(e, ev.Stop) for e in events)
        if entry.get("type") == "queue-operation":
            assert not [e for e in events if not isinstance(e, ev.TranscriptFacts)]
    assert stops == 4  # hello, RUN, BG, and the self-woken <task-notification> turn


def test_custom_and_ai_titles_newest_wins() -> None:
    reader = TranscriptReader("s")
    got = reader.feed(
        b'{"type":"ai-title","aiTitle":"Fix the build","sessionId":"s"}\n'
        b'{"type":"custom-title","customTitle":"api-server","sessionId":"s"}\n'
    )
    assert facts(got)[-1].title == "api-server"
    s = Session(id="s", cwd="/home/dev/proj", title="proj-3a", title_at=10.0)
    s, _ = step(s, ev.TranscriptFacts(session_id="s", at=20.0, id="t", title="api-server"))
    assert s.to_json()["name"] == "api-server"
    s, _ = step(s, ev.TranscriptFacts(session_id="s", at=5.0, id="t2", title="older"))
    assert s.title == "api-server"


# --- hooks and session files ------------------------------------------------------------------


def test_auto_session_background_shell_listed_after_stop_and_cleared_by_the_wake_turn() -> None:
    events = hook_events("hooks-auto.jsonl")
    s = Session(id=AUTO)
    after: list[tuple[str, Session]] = []
    for e in events:
        s, _ = step(s, e)
        after.append((e.label, s))
    assert {x.permission_mode for _, x in after[1:]} == {"auto"}
    bg_stop = next(x for name, x in after if name == "Stop" and x.background_tasks)
    assert bg_stop.background_tasks == (
        BackgroundTask("b0nd3l8ym", "shell", "background job", "running"),
    )
    assert bg_stop.state is State.REVIEW
    assert (
        sf.review_text(bg_stop.to_json()["background_tasks"]) == "finished · 1 task still running"
    )
    # MessageDisplay after that Stop does not move the badge.
    i = after.index(("Stop", bg_stop))
    assert after[i + 1][0] == "MessageDisplay" and after[i + 1][1].state is State.REVIEW
    wake = next(x for name, x in after[i:] if name == "UserPromptSubmit")
    assert wake.background_tasks == () and wake.state is State.BUSY
    assert after[-1][1].background_tasks == ()


def test_post_tool_use_background_task_id_lists_the_task_before_stop() -> None:
    post = next(
        e
        for e in hook_events("hooks-auto.jsonl")
        if isinstance(e, ev.ToolEnd) and e.background_task_id
    )
    s, _ = step(Session(id=AUTO, state=State.BUSY), post)
    assert [t.id for t in s.background_tasks] == ["b0nd3l8ym"]
    assert s.background_tasks[0].description == "background job"


def test_manual_session_mode_and_subagent_stops_without_starts() -> None:
    s = Session(id=MANUAL)
    for e in hook_events("hooks-manual.jsonl"):
        if e.session_id != MANUAL:
            break
        s, _ = step(s, e)
        assert s.background_tasks == ()  # /compact's SubagentStops had no start
    assert s.permission_mode == "default"


def test_subagents_are_counted_like_background_tasks() -> None:
    s = Session(id="s", state=State.BUSY)
    start = ev.Subagent(session_id="s", at=1, id="a", agent_id="ag1", agent_type="Explore")
    s, _ = step(s, start)
    s, _ = step(s, ev.Stop(session_id="s", at=2, id="b", background_tasks=()))
    assert s.state is State.REVIEW and [t.type for t in s.background_tasks] == ["agent"]
    s, _ = step(s, ev.Subagent(session_id="s", at=3, id="c", agent_id="ag1", started=False))
    assert s.background_tasks == () and s.state is State.REVIEW


def test_stop_failure_reason_and_retries_cleared() -> None:
    failure = next(
        e for e in hook_events("hooks-stopfailure.jsonl") if isinstance(e, ev.StopFailure)
    )
    s = Session(id=FAILED, state=State.BUSY, retries=10)
    s, _ = step(s, failure)
    assert s.error_kind == "server_error" and s.retries == 0 and s.state is State.REVIEW
    assert sf.failure_reason(s.error_kind) == "overloaded or failing API"
    assert sf.retry_text(3, "overloaded") == "retrying (3): overloaded"


def test_session_file_name_pane_shell_and_dialog_open() -> None:
    rows = [r["content"] for r in lines("sessions-pid-files-auto.jsonl") if r["content"]]
    files = [parse_session_file(json.dumps(c).encode()) for c in rows]
    events = [status_event(f) for f in files if f is not None]
    first = next(e for e in events if e is not None)
    assert isinstance(first, ev.StatusIdle)
    assert first.title == "proj-3a"
    assert first.tmux is not None and (first.tmux.pane, first.tmux.session) == ("%0", "w")
    shell = [e for e in events if isinstance(e, ev.StatusIdle) and e.shell]
    assert shell, "the file's `shell` status"
    dialog = next(e for e in events if isinstance(e, ev.StatusWaiting))
    assert "auto mode can't check" in (dialog.waiting_for or "")
    # Folded: named after the file, placed on its pane, needs-input at once for the dialog.
    s = Session(id=AUTO, cwd="/home/dev/proj")
    s, _ = step(s, first)
    assert s.to_json()["name"] == "proj-3a" and s.tmux is not None and s.tmux.pane == "%0"
    s, _ = step(s, ev.Prompt(session_id=AUTO, at=dialog.at - 1, id="p"))
    s, _ = step(s, dialog)
    assert s.state is State.NEEDS_INPUT and "auto mode" in (s.waiting_for or "")


def test_without_a_name_the_project_names_the_row() -> None:
    assert Session(id="abc", cwd="/home/dev/api-server").to_json()["name"] == "api-server"


def test_record_round_trip_keeps_the_new_fields() -> None:
    s = Session(
        id="s",
        title="proj-3a",
        title_at=3.0,
        permission_mode="bypassPermissions",
        context_tokens=150_000,
        long_context=True,
        cost_usd=0.6,
        cost_source="computed",
        retries=2,
        error_kind="server_error",
        background_tasks=(BackgroundTask("b1", "shell", "job"),),
    )
    assert Session.from_record(json.loads(json.dumps(s.to_record()))) == s
    data = s.to_json()
    assert data["context"] == {
        "tokens": 150_000,
        "window": 1_000_000,
        "percent": 15.0,
        "band": "healthy",
    }
    assert sf.mode_tag(data["permission_mode"]) == "BYPASS"


def test_event_log_round_trip_of_new_event_fields() -> None:
    stop = next(
        e for e in hook_events("hooks-auto.jsonl") if isinstance(e, ev.Stop) and e.background_tasks
    )
    assert ev.event_from_json(json.loads(json.dumps(stop.to_json()))) == stop


# --- usage: the store and the API -------------------------------------------------------------


def test_usage_per_day_and_project(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.db")
    day = 86400.0
    now = 1_796_000_000.0
    a = Session(id="a", cwd="/p/api", cost_usd=1.0, updated_at=now - 2 * day)
    store.commit([], [a])
    store.commit([], [Session(id="a", cwd="/p/api", cost_usd=1.5, updated_at=now)])
    store.commit([], [Session(id="b", cwd="/p/web", cost_usd=0.25, updated_at=now)])
    store.commit([], [Session(id="old", cwd="/p/web", cost_usd=9.0, updated_at=now - 30 * day)])
    out = store.usage(7, now)
    assert [d["cost_usd"] for d in out["days"]] == [0, 0, 0, 0, 1.0, 0, 0.75]
    assert out["projects"] == [
        {"project": "api", "cost_usd": 1.5, "tokens": 0},
        {"project": "web", "cost_usd": 0.25, "tokens": 0},
    ]
    assert out["total_usd"] == 1.75
    assert store.usage(1, now)["total_usd"] == 0.75  # only today's part of a's spend
    store.close()


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(
        home=tmp_path / "home",
        claude_dir=tmp_path / "claude",
        port=0,
        watch_sources=False,
        allowed_hosts=("testserver",),  # TestClient's Host
    )
    with TestClient(create_app(settings)) as c:
        c.headers["Authorization"] = f"Bearer {(tmp_path / 'home' / 'token').read_text().strip()}"
        yield c


def test_usage_api_and_bad_days(client: TestClient) -> None:
    for n, line in enumerate(lines("hooks-auto.jsonl")[:3]):
        client.post(
            "/api/hooks",
            content=json.dumps(line["payload"]),
            headers={"X-Purplemux-Event-Id": f"e{n}", "X-Purplemux-Ts": str(int(line["ts"] * 1e9))},
        )
    session = client.get(f"/api/sessions/{AUTO}").json()
    assert session["permission_mode"] == "auto"
    assert session["name"] == "proj" and session["background_tasks"] == []
    ok = client.get("/api/usage?days=7").json()
    assert len(ok["days"]) == 7 and ok["window_days"] == 7 and ok["prices_as_of"]
    before = client.get("/api/sessions").json()
    for bad in ("0", "-1", "abc", "367", "1.5", ""):
        r = client.get(f"/api/usage?days={bad}")
        assert r.status_code == 400, bad
        assert "days" in r.json()["error"]
    assert client.get("/api/sessions").json() == before


# --- what the row, the CLI and notifications show ---------------------------------------------


def test_row_cli_and_notification_show_name_mode_context_and_tasks() -> None:
    from purplemux.cli import render_table
    from purplemux.core.present import session_json
    from purplemux.notify.message import push_payload
    from purplemux.server.page import render_dashboard

    s = Session(
        id="abc12345",
        state=State.REVIEW,
        cwd="/home/dev/proj",
        title="api-server",
        permission_mode="bypassPermissions",
        context_tokens=180_000,
        model="claude-opus-5-5",
        cost_usd=0.61,
        snippet="Done.",
        background_tasks=(BackgroundTask("b1", "shell", "background job"),),
    )
    data = session_json(s)
    html = render_dashboard([s], 0.0, {"days": [{"day": "2026-11-30", "cost_usd": 0.61}]})
    assert ">api-server<" in html and "data-bypass" in html and ">BYPASS<" in html
    assert 'class="ctx" data-slot="ctx" data-band="critical"' in html and 'value="90.0"' in html
    assert "finished · 1 task still running" in html
    assert 'title="2026-11-30: $0.61"' in html
    table = render_table([data], 0.0, colour=False)
    assert "api-server" in table and "BYPASS · ctx 90% · $0.61 · 1 task still running" in table
    payload = push_payload(s)
    assert payload["title"] == "Claude · api-server · review: finished · 1 task still running"
    assert payload["body"] == "Done."
