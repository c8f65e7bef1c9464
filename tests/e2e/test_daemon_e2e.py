"""The real daemon against the real Claude Code CLI: what the WS feed shows for each user action.

Each test starts ``purplemux serve`` (home ``tmp/pmx``, ``CLAUDE_CONFIG_DIR`` = the throw-away
HOME's ``.claude``) before Claude, registers the installed status hook for every event (the
``hook_command`` override below), and records ``WS /api/stream`` from a thread with receive
stamps. Claude runs in a private tmux server (see README.md). A scenario asserts the states the
feed showed for the session (consecutive duplicates collapsed) and orders them against the hooks
in the daemon's own event log (``GET /api/sessions/{id}/events``, source ``hook``; an event's
``at`` is the hook script's start time, comparable with the feed's wall-clock receive time).

Latencies the product promises are measured, printed in the timing summary and appended to
``benchmarks/results/e2e-latencies.json`` for the benchmark report; they are never asserted.
Every wait polls with a generous deadline; nothing sleeps a fixed time.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import Daemon
from tests.support.e2e_report import REPORT_LINES

from .conftest import FeedRecorder, SessionUpdate, StartClaude
from .fake_api import DONE_ANSWER, PLAIN_ANSWER
from .harness import (
    ANSWERED_DIALOG_HOOKS,
    NO_STATE_HOOKS,
    PERMISSION_QUESTION,
    REPO_ROOT,
    ClaudeHome,
    StatusChange,
    TmuxClaude,
    input_box,
    record_timing,
    wait_until,
)
from .versions import OLDEST, Profile

# Every test here runs on each release of .ci/claude-versions, except the one marked for
# 2.1.197's classic flow (`sleep` runs unasked there; 2.1.332's flow is in
# test_current_release_e2e.py). The profile gives each release's arguments, key guard and sleep.
pytestmark = pytest.mark.e2e

FEED_TIMEOUT = 15.0
"""A state must show on the feed within this long (a correctness bound, not a latency target)."""

LATENCY_FILE = REPO_ROOT / "benchmarks" / "results" / "e2e-latencies.json"
TARGETS: dict[str, tuple[str, float]] = {
    "dialog_hook_to_needs_input": ("PermissionRequest hook start -> needs-input on the feed", 0.25),
    "dialog_to_needs_input": ("dialog on screen -> needs-input on the feed", 0.25),
    "approval_to_busy": ("approval (Enter) -> busy on the feed", 0.5),
    "esc_to_idle": ("Esc -> idle on the feed", 0.5),
    "exit_to_ended": ("/exit (Enter) -> ended on the feed", 2.0),
}
LATENCIES: dict[str, list[float]] = {key: [] for key in TARGETS}
LATENCIES["screen_poll_step_s"] = []  # the granularity of each "dialog on screen" stamp
CLAUDE_KEYS = frozenset(LATENCIES)
"""This module's keys (test_codex_daemon_e2e.py adds its own to LATENCIES and merges them)."""
DIALOG_SAMPLES = 5


@pytest.fixture
def hook_command(daemon_hook_command: str) -> str:
    """Claude's hooks run the real status hook of this test's daemon (started first)."""
    return daemon_hook_command


@pytest.fixture(scope="module", autouse=True)
def latency_report() -> Iterator[None]:
    """After the module: merge its latencies into benchmarks/results/e2e-latencies.json and
    list them against their targets in the summary at the end of the run.

    The module can be set up more than once in a run (its tests are ordered by release, and
    pytest-xdist spreads them over workers): each time merges only what it measured since."""
    yield
    mine = {key: values for key, values in LATENCIES.items() if key in CLAUDE_KEYS}
    if not any(mine.values()):
        return
    merge_latencies(LATENCY_FILE, mine)
    REPORT_LINES.append(f"e2e latencies (appended to {LATENCY_FILE}):")
    for key, values in mine.items():
        if key in TARGETS:
            label, target = TARGETS[key]
            shown = ", ".join(f"{v:.3f}" for v in values) or "not measured"
            REPORT_LINES.append(f"  {label}: {shown} s (target {target} s)")
        LATENCIES[key] = []


def measured(key: str, seconds: float) -> None:
    label, target = TARGETS[key]
    LATENCIES[key].append(round(seconds, 4))
    record_timing(f"daemon: {label} (target {target}s)", seconds)


def claude_file_reference(claude: TmuxClaude, status: str, action: Stamp, label: str) -> None:
    """Record when Claude's own sessions/<pid>.json turned ``status`` after ``action`` (the
    harness polls it every 10 ms): the part of a latency that is Claude's, not the daemon's."""
    watcher = claude.status_watcher
    if watcher is None:
        return

    def probe() -> StatusChange | None:
        return next(
            (c for c in watcher.changes() if c.status == status and c.ts >= action.wall), None
        )

    try:
        change = wait_until(probe, timeout=5.0)
    except TimeoutError:
        return
    record_timing(f"claude: {label} -> sessions file {status} (reference)", change.ts - action.wall)


def merge_latencies(path: Path, new: dict[str, list[float]]) -> None:
    """Append to the lists already in the file (a broken file is started afresh).

    Under an exclusive lock on a file beside it: pytest-xdist workers may finish their modules at
    the same moment, and a read-modify-write without it would lose one's values."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            data = {}
        if not isinstance(data, dict):
            data = {}
        for key, values in new.items():
            old = data.get(key)
            data[key] = (old if isinstance(old, list) else []) + values
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=2) + "\n")
        tmp.replace(path)


# ---------------------------------------------------------------------------------------------
# Driving and reading


@dataclass(frozen=True)
class Stamp:
    mono: float
    wall: float

    @classmethod
    def now(cls) -> Stamp:
        return cls(time.monotonic(), time.time())


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def submit(claude: TmuxClaude, text: str, timeout: float = 30.0) -> Stamp:
    """Type ``text``, wait until it is in the input box, press Enter; return when the first
    Enter was pressed (as TmuxClaude.send_text, which does not tell).

    Enter is pressed again when the text still sits in the box 2 s later (an Enter taken in
    with a paste is lost). On a loaded machine Claude may take that long to redraw after an
    Enter it did take: the first press then submitted the text, and its UserPromptSubmit hook
    started before the second. The first press is the one time no hook of this prompt precedes,
    so `since` filters keep them; a latency from it can only come out longer, never shorter."""
    claude.type_text(text)
    needle = _squash(text)[-40:]

    def in_box() -> bool:
        box = input_box(claude.screen())
        return box is not None and needle in _squash(box)

    wait_until(in_box, timeout, describe=lambda: f"{text!r} in the input box:\n{claude.screen()}")
    deadline = time.monotonic() + timeout
    first: Stamp | None = None
    while True:
        pressed = Stamp.now()
        first = first or pressed
        claude.press("Enter")
        try:
            wait_until(lambda: not in_box() or claude.pane_dead(), timeout=2.0)
            return first
        except TimeoutError:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"Enter did not submit {text!r}:\n{claude.screen()}") from None


def press(claude: TmuxClaude, key: str) -> Stamp:
    pressed = Stamp.now()
    claude.press(key)
    return pressed


def screen_shows(claude: TmuxClaude, text: str, timeout: float = 30.0) -> Stamp:
    """Poll the screen every ~10 ms until it shows ``text``; the stamp is taken just before the
    capture that showed it."""

    def probe() -> Stamp | None:
        stamp = Stamp.now()
        return stamp if text in claude.screen() else None

    return wait_until(
        probe, timeout, interval=0.01, describe=lambda: f"{text!r} on screen:\n{claude.screen()}"
    )


def screen_shows_stepped(
    claude: TmuxClaude, text: str, timeout: float = 30.0
) -> tuple[Stamp, float]:
    """As screen_shows, and the poll step that found it: the text appeared between the capture
    before (which did not show it) and this one, so the step is the stamp's granularity."""
    probes: list[Stamp] = []

    def probe() -> Stamp | None:
        stamp = Stamp.now()
        probes.append(stamp)
        return stamp if text in claude.screen() else None

    found = wait_until(
        probe, timeout, interval=0.01, describe=lambda: f"{text!r} on screen:\n{claude.screen()}"
    )
    step = found.mono - probes[-2].mono if len(probes) > 1 else float("nan")
    return found, step


def session_id_of(claude: TmuxClaude) -> str:
    data = claude.session_file()
    assert data is not None, "start_claude waits for sessions/<pid>.json"
    return str(data["sessionId"])


def log_events(daemon: Daemon, sid: str, since: float = 0.0) -> list[dict[str, Any]]:
    """The daemon's event log for a session from wall time ``since`` on (source time order)."""
    events = daemon.api("GET", f"/api/sessions/{sid}/events")["events"]
    return [e for e in events if float(e.get("at") or 0.0) >= since]


def hooks(daemon: Daemon, sid: str, since: float = 0.0) -> list[str]:
    """The hook events the daemon logged for a session from ``since`` on, in source order."""
    return [str(e["name"]) for e in log_events(daemon, sid, since) if e.get("source") == "hook"]


def expect_hooks(
    daemon: Daemon, sid: str, since: float, expected: list[str], skip: tuple[str, ...] = ()
) -> None:
    """The hooks logged from ``since`` on (without ``skip``) become exactly ``expected``. Hook
    deliveries run in the background and may land after the state they confirm was already
    shown (from the session file or the transcript), so this waits for them."""

    def got() -> list[str]:
        return [h for h in hooks(daemon, sid, since) if h not in skip + NO_STATE_HOOKS]

    try:
        wait_until(lambda: got() == expected, timeout=20.0)
    except TimeoutError:
        raise AssertionError(f"hooks in the event log: {got()}, expected {expected}") from None


def wait_log(
    daemon: Daemon,
    sid: str,
    predicate: Callable[[dict[str, Any]], bool],
    since: float,
    what: str,
    timeout: float = 20.0,
) -> dict[str, Any]:
    return wait_until(
        lambda: next((e for e in log_events(daemon, sid, since) if predicate(e)), None),
        timeout,
        describe=lambda: f"{what} in the event log; hooks: {hooks(daemon, sid, since)}",
    )


def wait_hook(daemon: Daemon, sid: str, name: str, since: float) -> dict[str, Any]:
    return wait_log(
        daemon,
        sid,
        lambda e: e.get("source") == "hook" and e.get("name") == name,
        since,
        f"hook {name}",
    )


def wait_file_idle(daemon: Daemon, sid: str, since: float) -> dict[str, Any]:
    """The session file's ``idle`` for a turn, applied by the daemon: it comes ~60 ms after the
    Stop hook, so once it is in the log the turn's states are final (no idle flicker left)."""
    return wait_log(
        daemon,
        sid,
        lambda e: e.get("source") == "session_file" and e.get("kind") == "status_idle",
        since,
        "the session file's idle",
    )


def tmux_of(session: dict[str, Any]) -> dict[str, Any]:
    return session.get("tmux") or {}


def current(daemon: Daemon, sid: str) -> dict[str, Any]:
    session = daemon.session(sid)
    assert session is not None, f"the daemon does not know {sid}"
    return session


def socket_path(claude: TmuxClaude) -> str:
    return claude.tmux("display-message", "-p", "#{socket_path}").stdout.strip()


def wait_found(feed: FeedRecorder, sid: str, claude: TmuxClaude) -> dict[str, Any]:
    """The daemon matched the session to Claude's process and pane."""
    return feed.wait(
        sid,
        lambda s: (
            s.get("alive") is True
            and s.get("pid") == claude.pane_pid
            and tmux_of(s).get("pane") == claude.pane_id
            and tmux_of(s).get("socket") == socket_path(claude)
        ),
        timeout=FEED_TIMEOUT,
        what="alive with Claude's pid and pane",
    ).session


def busy_then_review(
    daemon: Daemon, feed: FeedRecorder, claude: TmuxClaude, sid: str, prompt: str
) -> tuple[Stamp, SessionUpdate]:
    """Submit `prompt`: the feed shows exactly busy, then review, and the session file is idle
    again. (When it was sent, the review update.)"""
    mark = feed.mark()
    sent = submit(claude, prompt)
    busy = feed.wait_state(sid, "busy", since=mark, timeout=FEED_TIMEOUT)
    review = feed.wait_state(sid, "review", since=busy.index, timeout=FEED_TIMEOUT)
    wait_file_idle(daemon, sid, sent.wall)
    assert feed.states(sid, mark) == ["busy", "review"]
    return sent, review


def start_found(
    start_claude: StartClaude, feed: FeedRecorder, args: Sequence[str] = ()
) -> tuple[TmuxClaude, str]:
    """Start Claude and wait until the daemon matched its session to the process and pane:
    (claude, session id)."""
    claude = start_claude(args=args)
    sid = session_id_of(claude)
    wait_found(feed, sid, claude)
    return claude, sid


# ---------------------------------------------------------------------------------------------
# Scenarios 1-9: one Claude, one action after the other


@pytest.mark.claude_versions(OLDEST)
def test_one_session_through_its_life(
    purplemux_daemon: Daemon,
    start_claude: StartClaude,
    claude_home: ClaudeHome,
    connect_feed: Callable[[Daemon], FeedRecorder],
    claude_profile: Profile,
) -> None:
    daemon = purplemux_daemon
    assert daemon.claude_dir == claude_home.config_dir
    feed = connect_feed(daemon)
    # The classic permission dialog (2.1.332 starts in auto mode unless told otherwise).
    claude = start_claude(args=claude_profile.manual_args)
    sid = session_id_of(claude)

    # 1. Start: the session appears idle, with Claude's pane and pid, alive.
    session = wait_found(feed, sid, claude)
    assert session["state"] == "idle"
    assert session["ended"] is False
    assert session["cwd"] == str(claude_home.project)
    assert feed.states(sid) == ["idle"]
    expect_hooks(daemon, sid, 0.0, ["SessionStart"])

    # 2. A plain turn: exactly busy -> review, the answer as snippet.
    sent, review = busy_then_review(daemon, feed, claude, sid, "hello there")
    expect_hooks(daemon, sid, sent.wall, ["UserPromptSubmit", "Stop"])
    assert review.session["error"] is None
    assert current(daemon, sid)["snippet"] == PLAIN_ANSWER
    claude.wait_ready()

    # 3. A permission dialog: needs-input naming the command, long before the Notification
    #    hook (~6 s after the dialog opens).
    mark = feed.mark()
    sent = submit(claude, "RUN:touch x")
    on_screen = screen_shows(claude, PERMISSION_QUESTION)
    needs = feed.wait_state(sid, "needs-input", since=mark, timeout=FEED_TIMEOUT)
    measured("dialog_to_needs_input", needs.mono - on_screen.mono)
    # The session file may say "waiting" first ("permission prompt"); the PermissionRequest
    # hook names the command.
    named = feed.wait(
        sid,
        lambda s: s.get("state") == "needs-input" and "touch x" in (s.get("waiting_for") or ""),
        since=needs.index,
        what="needs-input naming the command",
    )
    notification = wait_hook(daemon, sid, "Notification", sent.wall)
    assert named.wall < notification["at"], "the command was named only with the Notification"
    assert needs.wall < notification["at"], "needs-input came only with the Notification hook"
    assert feed.states(sid, mark) == ["busy", "needs-input"]
    time.sleep(claude_profile.dialog_guard)  # 2.1.332's dialog ignores keys for about 1 s
    approve = press(claude, "Enter")
    done = feed.wait_state(sid, "review", since=needs.index, timeout=FEED_TIMEOUT)
    wait_file_idle(daemon, sid, approve.wall)
    # The approved tool takes milliseconds: busy may come and go within one engine batch.
    assert feed.states(sid, mark) in (
        ["busy", "needs-input", "busy", "review"],
        ["busy", "needs-input", "review"],
    )
    assert done.session["waiting_for"] is None
    assert (claude_home.project / "x").exists()
    expect_hooks(daemon, sid, sent.wall, ANSWERED_DIALOG_HOOKS)
    assert current(daemon, sid)["snippet"] == DONE_ANSWER
    claude.wait_ready()

    # 4. Approve a tool that runs 3 s: busy on approval (the session file), before PostToolUse.
    mark = feed.mark()
    run_y = f"touch y && {claude_profile.sleep_command(3)}"  # plain `sleep` refused on 2.1.332
    sent = submit(claude, f"RUN:{run_y}")
    on_screen = screen_shows(claude, PERMISSION_QUESTION)
    needs = feed.wait_state(sid, "needs-input", since=mark, timeout=FEED_TIMEOUT)
    measured("dialog_to_needs_input", needs.mono - on_screen.mono)
    feed.wait(
        sid,
        lambda s: run_y in (s.get("waiting_for") or ""),
        since=needs.index,
        what="needs-input naming the command",
    )
    time.sleep(claude_profile.dialog_guard)  # 2.1.332's dialog ignores keys for about 1 s
    approve = press(claude, "Enter")
    busy = feed.wait_state(sid, "busy", since=needs.index, timeout=FEED_TIMEOUT)
    measured("approval_to_busy", busy.mono - approve.mono)
    claude_file_reference(claude, "busy", approve, "approval (Enter)")
    post = wait_hook(daemon, sid, "PostToolUse", sent.wall)
    assert busy.wall < post["at"], "busy came only with PostToolUse"
    feed.wait_state(sid, "review", since=busy.index, timeout=FEED_TIMEOUT)
    wait_file_idle(daemon, sid, post["at"])
    assert feed.states(sid, mark) == ["busy", "needs-input", "busy", "review"]
    assert (claude_home.project / "y").exists()
    expected = ["UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop"]
    # Notification(permission_prompt) comes ~6 s after the dialog only if it is still open.
    expect_hooks(daemon, sid, sent.wall, expected, skip=("Notification",))
    claude.wait_ready()

    # 5. Esc while a tool runs: no hook fires; the transcript marker and the session file
    #    bring the session back to idle.
    mark = feed.mark()
    esc_turn = submit(claude, f"RUN:{claude_profile.sleep_command(30)}")
    wait_hook(daemon, sid, "PreToolUse", esc_turn.wall)
    claude.wait_screen("Running…")
    busy = feed.wait_state(sid, "busy", since=mark, timeout=FEED_TIMEOUT)
    esc = press(claude, "Escape")
    idle = feed.wait_state(sid, "idle", since=busy.index, timeout=FEED_TIMEOUT)
    measured("esc_to_idle", idle.mono - esc.mono)
    claude_file_reference(claude, "idle", esc, "Esc")
    claude.wait_screen("Interrupted")
    wait_file_idle(daemon, sid, esc.wall)
    wait_log(daemon, sid, lambda e: e.get("kind") == "interrupt", esc.wall, "the interrupt")
    assert feed.states(sid, mark) == ["busy", "idle"]
    claude.wait_ready()

    # 6. An API error: review, with the error. (Its hooks also prove that Esc fired none.)
    # The transcript's error entry may bring review before the StopFailure hook lands.
    _, failed = busy_then_review(daemon, feed, claude, sid, "FAIL:400")
    assert "400" in (failed.session["error"] or "")
    assert feed.updates(sid)[-1].session["error"] == "API Error: 400 scripted failure 400"
    expect_hooks(
        daemon,
        sid,
        esc_turn.wall,
        ["UserPromptSubmit", "PreToolUse", "UserPromptSubmit", "StopFailure"],
    )
    claude.wait_screen("API Error: 400 scripted failure 400")
    claude.wait_ready()

    # 7. /compact: compacting true, then false. The compact hooks change no state (DESIGN:
    #    SessionStart compact = unchanged), but Claude's session file is busy while it
    #    summarises and idle after, so the review becomes busy, then idle (no Stop: no turn).
    mark = feed.mark()
    sent = submit(claude, "/compact")
    on = feed.wait(sid, lambda s: s.get("compacting") is True, since=mark, what="compacting")
    feed.wait(sid, lambda s: s.get("compacting") is False, since=on.index + 1, what="compacted")
    wait_hook(daemon, sid, "PostCompact", sent.wall)
    wait_file_idle(daemon, sid, sent.wall)
    feed.wait_state(sid, "idle", since=mark, timeout=FEED_TIMEOUT)
    assert feed.states(sid, mark) == ["busy", "idle"]
    assert feed.updates(sid)[-1].session["compacting"] is False
    expect_hooks(
        daemon, sid, sent.wall, ["PreCompact", "SubagentStop", "SessionStart", "PostCompact"]
    )
    claude.wait_ready()

    # 8. /clear: the old id ends, the pane's row moves to a new id.
    mark = feed.mark()
    sent = submit(claude, "/clear")
    new_sid = str(
        feed.wait(
            None,
            lambda s: s.get("id") != sid and tmux_of(s).get("pane") == claude.pane_id,
            since=mark,
            what="a new session on the pane",
        ).session["id"]
    )
    wait_found(feed, new_sid, claude)
    feed.wait_state(new_sid, "idle", timeout=FEED_TIMEOUT)
    wait_file_idle(daemon, new_sid, sent.wall)
    # Claude marks its file busy while it runs /clear, before SessionStart(clear).
    assert feed.states(new_sid) in (["idle"], ["busy", "idle"])
    old = feed.wait(sid, lambda s: s.get("ended") is True, since=mark, what="the old id ended")
    assert old.session["alive"] is False
    # Retired from the sidebar, whichever of SessionEnd / SessionStart(clear) landed first.
    wait_until(lambda: feed.removed(sid, mark), FEED_TIMEOUT, describe="the old row removed")
    # Claude marks its file busy for the /clear itself just after SessionEnd, still under the
    # old id: once ended, the old session must not turn busy (before the SessionEnd hook lands
    # it may, for a moment).
    assert {u.state for u in feed.updates(sid, mark) if u.session["ended"]} == {"idle"}
    assert feed.updates(sid)[-1].session["state"] == "idle"
    live = [s["id"] for s in daemon.sessions(all=False)]
    assert new_sid in live
    assert sid not in live
    expect_hooks(daemon, sid, sent.wall, ["SessionEnd"])
    expect_hooks(daemon, new_sid, 0.0, ["SessionStart"])
    assert session_id_of(claude) == new_sid
    claude.wait_ready()

    # 9. /exit: ended.
    mark = feed.mark()
    sent = submit(claude, "/exit")
    ended = feed.wait(new_sid, lambda s: s.get("ended") is True, since=mark, what="ended")
    measured("exit_to_ended", ended.mono - sent.mono)
    assert ended.session["alive"] is False
    claude.wait_exit()
    expect_hooks(daemon, new_sid, sent.wall, ["SessionEnd"])
    assert new_sid not in [s["id"] for s in daemon.sessions(all=False)]
    assert feed.states(new_sid, mark) == []  # ended, still idle


# ---------------------------------------------------------------------------------------------
# 10. A session that runs no hooks


def test_a_session_without_hooks_is_listed_with_its_pane(
    purplemux_daemon: Daemon,
    start_claude: StartClaude,
    claude_home: ClaudeHome,
    connect_feed: Callable[[Daemon], FeedRecorder],
) -> None:
    """Known from its session file, placed by the process poller. The poller lists the panes
    of the default tmux server and of the servers hooks reported ($TMUX): a Claude without
    hooks on a server nobody reported stays without a pane. So the hookless Claude runs in a
    second window of the first Claude's private server, whose socket the first one's hooks
    made known."""
    daemon = purplemux_daemon
    feed = connect_feed(daemon)
    first = start_claude()
    wait_found(feed, session_id_of(first), first)

    second = start_claude(args=["--settings", '{"disableAllHooks": true}'], window_of=first)
    sid = session_id_of(second)
    assert second.pane_id != first.pane_id
    session = wait_found(feed, sid, second)
    assert session["state"] == "idle"
    assert session["ended"] is False
    assert session["cwd"] == str(claude_home.project)
    assert feed.states(sid) == ["idle"]

    # A turn: busy from the session file, then the transcript's end of turn stands in for
    # the Stop hook. It streams for a second: Claude writes its status in the file lazily, and
    # a turn as short as the fake's plain answer (~0.1 s) may never show busy there; without
    # hooks nothing else says a turn started, and the end-of-turn alone leaves idle as it is.
    mark = feed.mark()
    sent = submit(second, "SLOW:1")
    busy = feed.wait_state(sid, "busy", since=mark, timeout=FEED_TIMEOUT)
    feed.wait_state(sid, "review", since=busy.index, timeout=FEED_TIMEOUT)
    wait_file_idle(daemon, sid, sent.wall)
    second.wait_screen("Slow line 10.")
    assert feed.states(sid, mark) == ["busy", "review"]
    assert (feed.updates(sid)[-1].session["snippet"] or "").startswith("Slow line 1.")
    assert hooks(daemon, sid) == []


# ---------------------------------------------------------------------------------------------
# 11. The daemon dies while a turn ends


def test_daemon_killed_while_a_turn_ends(
    purplemux_daemon: Daemon,
    start_claude: StartClaude,
    connect_feed: Callable[[Daemon], FeedRecorder],
) -> None:
    """SIGKILL mid-turn: the Stop hook finds no daemon and is spooled; the daemon restarted on
    the same home and port drains the spool and shows review."""
    daemon = purplemux_daemon
    feed = connect_feed(daemon)
    claude, sid = start_found(start_claude, feed)

    mark = feed.mark()
    sent = submit(claude, "SLOW:3")
    feed.wait_state(sid, "busy", since=mark, timeout=FEED_TIMEOUT)
    claude.wait_screen("Slow line 1.")
    daemon.kill()
    wait_until(lambda: feed.closed, 10, describe="the feed to close with the daemon")

    claude.wait_screen("Slow line 10.")
    claude.wait_ready()
    claude.wait_session_status("idle")
    spool = daemon.home / "spool"
    wait_until(
        lambda: any('"Stop"' in f.read_text(errors="replace") for f in spool.glob("*.spool")),
        describe=f"the Stop hook spooled in {spool}",
    )

    restart = Stamp.now()
    daemon.start()  # same home, same port; returns once /api/health answers
    healthy = Stamp.now()
    feed = connect_feed(daemon)
    # Within 5 s of the daemon being back (the spool is drained before it serves).
    review = feed.wait_state(sid, "review", timeout=5.0)
    record_timing("daemon: restart -> healthy", healthy.mono - restart.mono)
    record_timing("daemon: restart -> review on the feed", review.mono - restart.mono)
    assert review.session["ended"] is False
    assert review.session["snippet"], "the answer's first words"
    wait_found(feed, sid, claude)
    assert feed.states(sid) == ["review"]  # the spool is drained before the daemon serves
    assert not list(spool.glob("*.spool")), "the spool was drained"
    expect_hooks(daemon, sid, sent.wall, ["UserPromptSubmit", "Stop"])


def test_permission_dialog_latency_samples(
    purplemux_daemon: Daemon,
    start_claude: StartClaude,
    connect_feed: Callable[[Daemon], FeedRecorder],
    claude_profile: Profile,
) -> None:
    """DIALOG_SAMPLES permission dialogs in one session, each timed from the PermissionRequest
    hook's own start stamp (the script takes it as Claude draws the dialog) to needs-input on the
    feed, and from the screen poll that first showed it (with that poll's step). Measured, never
    asserted; the states each dialog goes through are asserted."""
    daemon = purplemux_daemon
    feed = connect_feed(daemon)
    claude, sid = start_found(start_claude, feed, claude_profile.manual_args)  # the classic dialog
    for n in range(DIALOG_SAMPLES):
        mark = feed.mark()
        sent = submit(claude, f"RUN:touch dialog-{n}")
        on_screen, step = screen_shows_stepped(claude, PERMISSION_QUESTION)
        needs = feed.wait_state(sid, "needs-input", since=mark, timeout=FEED_TIMEOUT)
        hook = wait_hook(daemon, sid, "PermissionRequest", sent.wall)
        measured("dialog_hook_to_needs_input", needs.wall - float(hook["at"]))
        measured("dialog_to_needs_input", needs.mono - on_screen.mono)
        LATENCIES["screen_poll_step_s"].append(round(step, 4))
        time.sleep(claude_profile.dialog_guard)  # 2.1.332's dialog ignores keys for about 1 s
        press(claude, "Enter")
        feed.wait_state(sid, "review", since=needs.index, timeout=FEED_TIMEOUT)
        wait_file_idle(daemon, sid, sent.wall)
        assert feed.states(sid, mark)[:2] == ["busy", "needs-input"]
        assert feed.states(sid, mark)[-1] == "review"
        claude.wait_ready()
