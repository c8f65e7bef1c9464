"""The real daemon and the real Codex CLI (0.171.0) in tmux: the badge, on the right pane.

Codex runs its threads and hooks in a shared app-server daemon, so its hooks name no pane: every
row here must be placed by what is true of the panes (agents/codex/pane_watch.py). Each test drives
the real TUI against the local Responses API stand-in, with the real status hook installed as
``install-hooks`` installs it, and watches what the dashboard's feed shows.

Latencies (dialog -> needs-input, approval -> busy, Esc -> idle) are recorded into
``benchmarks/results/e2e-latencies.json`` beside Claude's; they are never asserted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents import install
from purplemux.agents.codex import install as codex_install
from tests.support import Daemon

from .codex_fixtures import StartCodex
from .codex_harness import CodexHome, CodexPane, TmuxCodex
from .conftest import FeedRecorder
from .fake_responses import FakeResponsesAPI
from .harness import record_timing, wait_until
from .test_daemon_e2e import LATENCIES, LATENCY_FILE, TARGETS, merge_latencies

pytestmark = pytest.mark.e2e

CODEX_TARGETS = {
    "codex_dialog_hook_to_needs_input": ("Codex PermissionRequest hook -> needs-input", 0.25),
    "codex_approval_to_busy": ("Codex approval (y) -> busy on the feed", 0.5),
    "codex_esc_to_idle": ("Codex Esc -> idle on the feed", 0.5),
    "codex_exit_to_ended": ("Codex /exit (quit) -> ended on the feed", 2.0),
}


def measured(key: str, seconds: float) -> None:
    label, target = CODEX_TARGETS[key]
    TARGETS.setdefault(key, (label, target))
    LATENCIES.setdefault(key, []).append(round(seconds, 4))
    record_timing(f"daemon: {label} (target {target}s)", seconds)


@pytest.fixture(scope="module", autouse=True)
def codex_latency_report() -> Iterator[None]:
    yield
    mine = {k: v for k, v in LATENCIES.items() if k in CODEX_TARGETS and v}
    if mine:
        merge_latencies(LATENCY_FILE, mine)
        for key in mine:
            LATENCIES[key] = []


@pytest.fixture
def codex_hook_command(tmp_path: Path) -> str:
    """The real status hook in the daemon's home, with the agent as the installer names it."""
    home = tmp_path / "pmx"
    script = install.install_script(home)
    return codex_install.hook_command(script, home)


@pytest.fixture
def daemon(tmp_path: Path, codex_home: CodexHome, codex_tmux: TmuxCodex) -> Iterator[Daemon]:
    """`purplemux serve` watching this test's CODEX_HOME (and an empty Claude dir); stopped
    before the tmux server's teardown, which checks that no process of that home is left."""
    d = Daemon(
        home=tmp_path / "pmx",
        claude_dir=tmp_path / "claude",
        env_extra={"CODEX_HOME": str(codex_home.codex_home)},
    )
    d.start()
    yield d
    d.stop()


@pytest.fixture
def feed(daemon: Daemon, connect_feed: Callable[[Daemon], FeedRecorder]) -> FeedRecorder:
    return connect_feed(daemon)


def on_pane(feed: FeedRecorder, pane: CodexPane, since: int = 0, **fields: Any) -> dict[str, Any]:
    """The first update of a Codex session placed on this pane (with these field values)."""

    def here(s: dict[str, Any]) -> bool:
        tmux = s.get("tmux") or {}
        return (
            s.get("agent") == "codex"
            and tmux.get("pane") == pane.pane_id
            and not s.get("ended")
            and all(s.get(k) == v for k, v in fields.items())
        )

    return feed.wait(None, here, since=since, timeout=30, what=f"a Codex row on {pane.pane_id}")


def prompt(pane: CodexPane, text: str) -> float:
    pane.send_text(text)
    return time.time()


def sees_the_dialog(pane: CodexPane) -> None:
    """Wait as a person does: until the dialog is drawn and its title says so (the title is
    the daemon's only sign of an answer, so it must have shown "Action Required" first)."""
    pane.wait_for_screen("Would you like to run the following command?")
    pane.wait_title(lambda t: "Action Required" in t, what="Action Required")


def test_a_fresh_tui_is_listed_idle_on_its_own_pane_before_any_prompt(
    daemon: Daemon, feed: FeedRecorder, start_codex: StartCodex
) -> None:
    pane = start_codex()
    # Under load the first look can catch the title's start-up spinner (busy while it boots);
    # before any prompt the row must settle on idle, on this pane.
    row = on_pane(feed, pane, state="idle").session
    assert (row["state"], row["agent"], row["view"]["agent_label"]) == ("idle", "codex", "Codex")
    assert row["tmux"]["socket"] and row["pid"]
    assert daemon.session(row["id"])["tmux"]["pane"] == pane.pane_id


def test_a_turn_is_busy_then_review_with_the_answer_and_its_tokens(
    daemon: Daemon, feed: FeedRecorder, start_codex: StartCodex
) -> None:
    pane = start_codex()
    sid = on_pane(feed, pane).session["id"]
    mark = feed.mark()
    prompt(pane, "hello there")
    feed.wait_state(sid, "busy", since=mark)
    done = feed.wait_state(sid, "review", since=mark, timeout=30).session
    assert done["tmux"]["pane"] == pane.pane_id  # the hook's pane (the daemon's) never wins
    assert done["view"]["headline"].startswith("Codex · ")
    assert "Hello from the fake model." in (done["snippet"] or "")
    # The rollout's token_count: tokens, and the context of the model's own window.
    counted = feed.wait(sid, lambda s: bool(s["context"]), since=mark, what="context").session
    assert counted["tokens"]["input"] + counted["tokens"]["cache_read"] > 0
    assert counted["context"]["window"] == 258400


def test_two_panes_on_one_app_server_each_on_their_own_row(
    daemon: Daemon,
    feed: FeedRecorder,
    start_codex: StartCodex,
    codex_home: CodexHome,
) -> None:
    one = start_codex()
    two = start_codex()
    # Both TUIs share one app-server daemon (its process list settles once both are up).
    wait_until(lambda: len(codex_home.daemons()) == 1, 15, describe="one app-server daemon")
    first = on_pane(feed, one).session["id"]
    second = on_pane(feed, two).session["id"]
    assert first != second
    mark = feed.mark()
    prompt(two, "hello from pane two")  # its hooks carry pane one's $TMUX_PANE
    feed.wait_state(second, "review", since=mark, timeout=30)
    prompt(one, "hello from pane one")
    feed.wait_state(first, "review", since=mark, timeout=30)
    rows = {s["id"]: s for s in daemon.sessions()}
    assert rows[first]["tmux"]["pane"] == one.pane_id
    assert rows[second]["tmux"]["pane"] == two.pane_id
    assert feed.states(first, since=mark)[-1] == "review"


def test_approvals_are_needs_input_then_busy_when_approved_then_review(
    daemon: Daemon, feed: FeedRecorder, start_codex: StartCodex, codex_home: CodexHome
) -> None:
    """Five dialogs, each needs-input, then busy when approved with `y` (no hook fires at the
    answer: the pane title leaving "Action Required" says so), then review; five samples for
    the latencies to be judged. The first command runs a while, so busy shows while it runs."""
    pane = start_codex()
    sid = on_pane(feed, pane).session["id"]
    for n in range(5):
        mark = feed.mark()
        prompt(pane, f"RUN:{'sleep 2 && ' if n == 0 else ''}touch round-{n}.txt")
        asked = feed.wait_state(sid, "needs-input", since=mark, timeout=30)
        assert f"touch round-{n}.txt" in (asked.session["waiting_for"] or "")
        events = daemon.api("GET", f"/api/sessions/{sid}/events")["events"]
        hook_at = [e["at"] for e in events if e["name"] == "PermissionRequest"][-1]
        measured("codex_dialog_hook_to_needs_input", asked.wall - hook_at)
        sees_the_dialog(pane)
        mark = feed.mark()
        pressed = time.time()
        pane.answer_dialog("y")
        busy = feed.wait_state(sid, "busy", since=mark)
        measured("codex_approval_to_busy", busy.wall - pressed)
        feed.wait_state(sid, "review", since=mark, timeout=30)
        assert (codex_home.project / f"round-{n}.txt").exists()


def test_a_denied_approval_is_idle_at_once(
    daemon: Daemon, feed: FeedRecorder, start_codex: StartCodex, codex_home: CodexHome
) -> None:
    pane = start_codex()
    sid = on_pane(feed, pane).session["id"]
    mark = feed.mark()
    prompt(pane, "RUN:touch denied.txt")
    feed.wait_state(sid, "needs-input", since=mark, timeout=30)
    sees_the_dialog(pane)
    mark = feed.mark()
    pressed = time.time()
    pane.send_keys("Escape")
    idle = feed.wait_state(sid, "idle", since=mark)
    measured("codex_esc_to_idle", idle.wall - pressed)
    assert not (codex_home.project / "denied.txt").exists()


def test_esc_while_it_streams_is_idle(
    daemon: Daemon, feed: FeedRecorder, start_codex: StartCodex
) -> None:
    pane = start_codex()
    sid = on_pane(feed, pane).session["id"]
    mark = feed.mark()
    prompt(pane, "SLOW:8 take your time")
    feed.wait_state(sid, "busy", since=mark)
    pane.wait_for_screen("Slow line")
    mark = feed.mark()
    pressed = time.time()
    pane.send_keys("Escape")
    idle = feed.wait_state(sid, "idle", since=mark)
    measured("codex_esc_to_idle", idle.wall - pressed)


def test_a_failed_turn_is_not_left_busy(
    daemon: Daemon, feed: FeedRecorder, start_codex: StartCodex, fake_responses: FakeResponsesAPI
) -> None:
    """An API error: Codex fires no Stop and no failure hook; the row must still settle."""
    pane = start_codex()
    sid = on_pane(feed, pane).session["id"]
    mark = feed.mark()
    prompt(pane, "ERROR:500 please")
    feed.wait_state(sid, "busy", since=mark)
    # The rollout's task_complete with an error ends it: a review that says why.
    failed = feed.wait(
        sid, lambda s: s["state"] == "review" and bool(s["error"]), since=mark, timeout=30
    ).session
    assert failed["view"]["error"]
    # Named by the project, or by its thread's title once its pane title has shown it.
    headline = failed["view"]["headline"]
    assert headline.startswith("Codex · ") and " · failed (internal server error): " in headline


def test_a_question_is_needs_input_and_its_answer_moves_on(
    daemon: Daemon, feed: FeedRecorder, start_codex: StartCodex
) -> None:
    pane = start_codex()
    sid = on_pane(feed, pane).session["id"]
    mark = feed.mark()
    prompt(pane, "ASK:Which colour do you want?|Red|Blue")
    # (The title's "Action Required" may land before the hook that names the question.)
    feed.wait(
        sid,
        lambda s: s["state"] == "needs-input" and s["waiting_for"] == "Which colour do you want?",
        since=mark,
        timeout=30,
        what="needs-input, waiting for the question",
    )
    pane.wait_for_screen("enter to submit answer")
    mark = feed.mark()
    pane.send_keys("Enter")
    feed.wait(
        sid, lambda s: s["state"] in ("busy", "review"), since=mark, what="answered", timeout=30
    )


def test_clear_starts_a_new_session_on_the_same_pane(
    daemon: Daemon, feed: FeedRecorder, start_codex: StartCodex
) -> None:
    pane = start_codex()
    old = on_pane(feed, pane).session["id"]
    mark = feed.mark()
    prompt(pane, "hello before clear")
    feed.wait_state(old, "review", since=mark, timeout=30)
    mark = feed.mark()
    pane.send_text("/clear")
    pane.wait_ready()
    prompt(pane, "hello after clear")
    new = feed.wait(
        None,
        lambda s: (
            s["id"] != old
            and s.get("agent") == "codex"
            and (s.get("tmux") or {}).get("pane") == pane.pane_id
            and s["state"] == "review"
        ),
        since=mark,
        timeout=30,
        what="the new session on the same pane",
    ).session["id"]
    gone = daemon.session(old) or {}
    assert gone.get("ended")  # the old thread left the pane at the /clear
    here = [s["id"] for s in daemon.sessions() if (s["tmux"] or {}).get("pane") == pane.pane_id]
    assert here == [new]


def test_quitting_the_tui_ends_the_row_at_once(
    daemon: Daemon, feed: FeedRecorder, start_codex: StartCodex
) -> None:
    """Codex fires nothing at a quit (SessionEnd comes ~60 s later): the pane says it."""
    pane = start_codex()
    sid = on_pane(feed, pane).session["id"]
    mark = feed.mark()
    pressed = time.time()
    pane.send_text("/exit")
    ended = feed.wait(sid, lambda s: bool(s.get("ended")), since=mark, what="ended", timeout=30)
    measured("codex_exit_to_ended", ended.wall - pressed)


def test_a_restart_while_busy_is_re_verified_from_the_pane(
    daemon: Daemon, feed: FeedRecorder, start_codex: StartCodex
) -> None:
    pane = start_codex()
    sid = on_pane(feed, pane).session["id"]
    mark = feed.mark()
    prompt(pane, "SLOW:10 a long answer")
    feed.wait_state(sid, "busy", since=mark)
    daemon.stop()
    daemon.start()
    wait_until(
        lambda: (daemon.session(sid) or {}).get("state") == "busy",
        timeout=10,
        describe="busy again after the restart (the title's spinner)",
    )
    wait_until(
        lambda: (daemon.session(sid) or {}).get("state") == "review",
        timeout=30,
        describe="review once the slow answer ends",
    )
    assert daemon.session(sid)["tmux"]["pane"] == pane.pane_id


def test_hooks_fired_while_the_daemon_was_down_are_kept(
    daemon: Daemon, start_codex: StartCodex
) -> None:
    pane = start_codex()
    sid = wait_until(
        lambda: next((s["id"] for s in daemon.sessions() if s["agent"] == "codex"), None),
        timeout=30,
        describe="the Codex row",
    )
    daemon.stop()
    pane.send_text("hello while nobody listens")
    pane.wait_idle()
    spool = daemon.home / "spool"
    assert wait_until(lambda: list(spool.glob("*.spool")), timeout=10, describe="spooled hooks")
    daemon.start()
    wait_until(
        lambda: (daemon.session(sid) or {}).get("state") == "review",
        timeout=20,
        describe="the spooled Stop applied",
    )
    names = [e["name"] for e in daemon.api("GET", f"/api/sessions/{sid}/events")["events"]]
    assert "UserPromptSubmit" in names and "Stop" in names


def test_an_approval_answered_by_label_through_the_api_runs_the_command(
    daemon: Daemon, feed: FeedRecorder, start_codex: StartCodex, codex_home: CodexHome
) -> None:
    """/screen reads Codex's dialog with Codex's eyes; /answer presses the key its label shows
    (no key guard to wait for), audited; the command runs."""
    pane = start_codex()
    sid = on_pane(feed, pane).session["id"]
    mark = feed.mark()
    prompt(pane, "RUN:touch by-label.txt")
    feed.wait_state(sid, "needs-input", since=mark, timeout=30)
    shown = wait_until(
        lambda: (daemon.api("GET", f"/api/sessions/{sid}/screen") or {}).get("prompt"),
        timeout=10,
        describe="the dialog on /screen",
    )
    assert shown["kind"] == "permission" and shown["title"] == "Run: touch by-label.txt"
    assert shown["options"][0]["label"] == "Yes, proceed"
    done = daemon.api(
        "POST",
        f"/api/sessions/{sid}/answer",
        {"prompt_id": shown["id"], "option": "Yes, proceed", "by": "api"},
    )
    assert done["answered"] == "Yes, proceed" and done["keys"] == ["y"]
    wait_until(lambda: (codex_home.project / "by-label.txt").exists(), 15, describe="it ran")
    feed.wait_state(sid, "review", since=mark, timeout=30)
    audit = daemon.api("GET", f"/api/sessions/{sid}/events")["events"]
    answers = [e for e in audit if e["kind"] == "answer"]
    assert [(a["by"], a["option"]) for a in answers] == [("api", "Yes, proceed")]


def test_peek_and_jump_from_the_cli_reach_a_codex_session(
    daemon: Daemon,
    feed: FeedRecorder,
    start_codex: StartCodex,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`purplemux peek` shows Codex's dialog read with Codex's eyes; `jump` (POST /focus) goes
    to the pane the row is on, not the pane its hooks name."""
    import io

    from purplemux.cli import main
    from tests.support import cli_sees

    cli_sees(daemon, monkeypatch)
    pane = start_codex()
    sid = on_pane(feed, pane).session["id"]
    mark = feed.mark()
    prompt(pane, "RUN:touch peeked.txt")
    feed.wait_state(sid, "needs-input", since=mark, timeout=30)
    sees_the_dialog(pane)
    out = io.StringIO()
    assert main(["peek", sid], out=out) == 0
    shown = out.getvalue()
    assert "Run: touch peeked.txt" in shown and "Yes, proceed" in shown
    out = io.StringIO()
    assert main(["jump", sid], out=out) == 0
    focused = daemon.api("POST", f"/api/sessions/{sid}/focus", {})
    assert focused["pane"] == pane.pane_id
    pane.send_keys("Escape")  # leave no dialog open for the teardown
    feed.wait_state(sid, "idle", since=mark, timeout=15)


# --- safe to act, round three: the pane a row is placed on is that thread's own ---------------
# Codex draws the thread's first prompt verbatim in its pane title (`<prompt> | proj`). A first
# prompt holding another thread's id (`… | <B's id>`) or shaped like the title's own structure
# (`[ ! ] Action Required`) is text the user wrote: it must move nobody's pane or state. Before
# the fix, a TUI whose first prompt held B's id, started before B's, took B's pane link, and
# answering B's dialog "Yes, proceed" typed `y` into A's pane.


def dialog(daemon: Daemon, sid: str, command: str) -> dict[str, object]:
    """The dialog /screen reads for that session, once it shows `command`."""

    def shown() -> dict[str, object] | None:
        prompt = (daemon.api("GET", f"/api/sessions/{sid}/screen") or {}).get("prompt")
        return prompt if prompt and command in str(prompt.get("title")) else None

    return wait_until(shown, timeout=20, describe=f"{sid}'s dialog for {command} on /screen")


@pytest.mark.parametrize("shown", ["whole", "prefix"])
def test_a_first_prompt_holding_another_threads_id_takes_nobodys_pane(
    daemon: Daemon,
    feed: FeedRecorder,
    start_codex: StartCodex,
    codex_home: CodexHome,
    shown: str,
) -> None:
    """A (started first) has the first prompt `x | <B's id>` (a plain turn) or `RUN:>a |
    <B's id's 29 characters>...` (a dialog of its own); Codex draws a thread title of up to
    about 45 characters whole, so the id is in A's title as Codex draws an id."""
    one = start_codex()  # A
    two = start_codex()  # B
    a, b = on_pane(feed, one).session["id"], on_pane(feed, two).session["id"]
    assert a != b
    mark = feed.mark()
    if shown == "whole":
        one.send_text(f"x | {b}")
        feed.wait_state(a, "review", since=mark, timeout=30)
        one.wait_title(lambda t: t == f"x | {b} | proj", what="A's idle title holding B's id")
    else:
        one.send_text(f"RUN:>a | {b[:29]}...")
        feed.wait_state(a, "needs-input", since=mark, timeout=30)
        one.wait_title(lambda t: f"{b[:29]}... | proj" in t, what="A's title holding B's id")
    two.send_text("RUN:touch b-ran.txt")
    feed.wait_state(b, "needs-input", since=mark, timeout=30)
    two.wait_title(lambda t: "Action Required" in t, what="B's dialog in B's title")
    rows = {s["id"]: s for s in daemon.sessions()}
    assert rows[a]["tmux"]["pane"] == one.pane_id
    assert rows[b]["tmux"]["pane"] == two.pane_id
    # Answering B's dialog types into B's pane only: B's command runs; A is untouched.
    prompt = dialog(daemon, b, "touch b-ran.txt")
    done = daemon.api(
        "POST",
        f"/api/sessions/{b}/answer",
        {"prompt_id": prompt["id"], "option": "Yes, proceed", "by": "api"},
    )
    assert done["answered"] == "Yes, proceed" and done["keys"] == ["y"]
    wait_until(lambda: (codex_home.project / "b-ran.txt").exists(), 15, describe="B's ran")
    feed.wait_state(b, "review", since=mark, timeout=30)
    if shown == "whole":
        assert one.composer() == ""  # no `y` typed into A's prompt box
        assert daemon.session(a)["state"] == "review"
    else:
        assert "Would you like to run the following command?" in one.capture()
        assert not (codex_home.project / "a").exists()
        assert daemon.session(a)["state"] == "needs-input"
    answers = [e for e in daemon.api("GET", f"/api/sessions/{a}/events")["events"]
               if e["kind"] == "answer"]  # fmt: skip
    assert answers == []
    if shown == "prefix":  # A's own dialog, denied at its terminal: its command never ran
        one.send_keys("Escape")
        feed.wait_state(a, "idle", since=mark, timeout=30)
        assert not (codex_home.project / "a").exists()


def test_a_first_prompt_shaped_like_action_required_is_a_plain_turn(
    daemon: Daemon, feed: FeedRecorder, start_codex: StartCodex
) -> None:
    """Its title reads "⠸ [ ! ] Action Required | proj" while busy and "[ ! ] Action Required
    | proj" once idle: busy then review, never needs-input (no push for a plain turn)."""
    pane = start_codex()
    sid = on_pane(feed, pane).session["id"]
    mark = feed.mark()
    sent = time.time()
    pane.send_text("[ ! ] Action Required")
    feed.wait_state(sid, "review", since=mark, timeout=30)
    pane.wait_title(lambda t: t.startswith("[ ! ] Action Required | "), what="its idle title")

    def idle_title_read() -> bool:
        # The daemon's own event for the idle title after this turn's busy one (other events
        # may follow it, so not necessarily the newest).
        events = daemon.api("GET", f"/api/sessions/{sid}/events")["events"]
        return any(e["name"] == "title: idle" and e["at"] >= sent for e in events)

    wait_until(idle_title_read, 30, describe=lambda: f"the idle title read: {daemon.session(sid)}")
    assert "needs-input" not in feed.states(sid, since=mark)
    row = daemon.session(sid)
    assert row["state"] == "review" and row["tmux"]["pane"] == pane.pane_id
