"""History: timelines and the day's summary for 1,000 sessions x 200 events.

Generates a day of work (seeded, so every run folds the same log): each session starts, then runs
turns of prompt → tools (some behind a permission dialog that waits for an answer) → transcript
token totals → stop, each review dismissed after a while. Then it measures, on this machine:

- fold: every session's events folded again through the state machine (core.history.replay)
  plus the summary over the day (summarize), from typed events in memory: the pure core;
- from the store: the same from a real SQLite event log (Store.commit of all of them), reading
  and decoding the rows first, as GET /api/summary does;
- one timeline: one session's 200 events from the store, as GET /api/sessions/{id}/timeline does;
- over HTTP: a real daemon started on that database, wall time as a client sees it: the first
  GET /api/summary (cold: it folds every session), again with nothing new (the replays are kept),
  again after one session got a new event (only that one is folded again), and one timeline.

    python -m benchmarks.history [--sessions 1000] [--events 200] [--runs 3] [--no-daemon]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import Daemon, Stats, api, bench_daemon, tempdir
from purplemux.core import events as ev
from purplemux.core.events import Event, Source
from purplemux.core.history import Ledger, events_from_rows, replay, summarize
from purplemux.core.model import Tokens
from purplemux.io.store import Store
from tests.support.hooks import send_hook

DAY0 = 1_790_000_000.0
"""Where the generated day starts (fixed, so runs compare)."""
GOAL_COLD_S = 60.0
"""The first summary after a daemon start folds the whole log: 1,000 x 200 events within this."""
GOAL_WARM_MS = 500.0
"""A later summary (nothing new, or one session with a new event): a page load."""
GOAL_TIMELINE_MS = 100.0
"""One session's timeline (200 events folded again)."""


def session_events(sid: str, n: int, rng: random.Random) -> list[Event]:
    """About n events of one session's working day, in source-time order."""
    cwd = f"/home/dev/src/project-{rng.randrange(40)}"
    at = DAY0 + rng.uniform(0, 3 * 3600)
    out: list[Event] = []
    k = 0

    def add(cls: type[Event], gap: float, **kw: Any) -> None:
        nonlocal at, k
        at += gap
        k += 1
        kw.setdefault("source", Source.HOOK)
        out.append(cls(session_id=sid, at=at, id=f"{sid}-{k}", cwd=cwd, **kw))

    add(ev.SessionStart, 0.0, origin="startup", model="claude-opus-4")
    tokens = Tokens()
    while len(out) < n:
        add(ev.Prompt, rng.uniform(20, 600), prompt="do the next thing")
        for t in range(rng.randrange(1, 6)):
            tid = f"tu-{k}-{t}"
            dig = f"{rng.getrandbits(64):016x}"
            add(ev.ToolStart, rng.uniform(1, 30), tool_name="Bash", tool_use_id=tid, digest=dig)
            if rng.random() < 0.3:
                add(ev.Permission, 0.05, tool_name="Bash", digest=dig, waiting_for="make deploy")
                add(ev.ToolEnd, rng.uniform(3, 120), tool_name="Bash", tool_use_id=tid, digest=dig)
            else:
                add(ev.ToolEnd, rng.uniform(0.1, 20), tool_name="Bash", tool_use_id=tid, digest=dig)
        tokens = Tokens(
            tokens.input + rng.randrange(10, 500),
            tokens.output + rng.randrange(100, 4000),
            tokens.cache_read + rng.randrange(1000, 40000),
            tokens.cache_creation + rng.randrange(0, 2000),
        )
        add(ev.TranscriptFacts, 0.5, source=Source.TRANSCRIPT, tokens=tokens, snippet="Done.")
        add(ev.Stop, 0.1, last_message="Done: the change is in and the tests pass.")
        if rng.random() < 0.6:
            add(ev.Dismiss, rng.uniform(5, 900), source=Source.USER)
    return out[:n]


def generate(sessions: int, events: int, seed: int = 17) -> dict[str, list[Event]]:
    rng = random.Random(seed)
    return {f"s{i:04d}": session_events(f"s{i:04d}", events, rng) for i in range(sessions)}


@dataclass
class Result:
    sessions: int
    events: int
    fold: Stats
    store: Stats
    timeline: Stats
    http_cold: float = float("nan")
    http_restart: float = float("nan")
    http_warm: Stats | None = None
    http_one_changed: Stats | None = None
    http_timeline: Stats | None = None
    waited_s: float = 0.0
    prompts: int = 0
    notes: list[str] = field(default_factory=list)


def _times(fn: Callable[[], Any], runs: int) -> Stats:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return Stats.of(out)


def write_store(path: Path, log: dict[str, list[Event]]) -> None:
    store = Store(path)
    try:
        for evs in log.values():
            store.commit(evs, [])
    finally:
        store.close()


def run(root: Path, sessions: int, events: int, runs: int, daemon: bool = True) -> Result:
    log = generate(sessions, events)
    since, until = DAY0, DAY0 + 86_400
    now = until
    probe = f"s{sessions // 2:04d}"

    def fold() -> Any:
        replays = {sid: replay(sid, evs, now) for sid, evs in log.items()}
        return summarize(replays, since, until, now)

    fold_times = _times(fold, runs)
    summary = fold()
    home = root / "history" / "home"
    home.mkdir(parents=True, exist_ok=True)
    db = home / "state.db"
    write_store(db, log)
    store = Store(db)

    def from_store() -> Any:
        ledger = Ledger()
        ledger.add(events_from_rows(store.events_after(0, store.event_bounds()[1])))
        return summarize(ledger.replays(now), since, until, now)

    def one_timeline() -> Any:
        rows = store.session_log(probe, store.event_bounds()[1])
        return [s.to_json() for s in replay(probe, events_from_rows(rows), now).spans]

    try:
        assert from_store().to_json() == summary.to_json()
        result = Result(
            sessions,
            events,
            fold=fold_times,
            store=_times(from_store, runs),
            timeline=_times(one_timeline, 20),
            waited_s=summary.total.waited_on_you_s,
            prompts=summary.total.prompts,
        )
    finally:
        store.close()
    if daemon:
        d = bench_daemon(root, "history", PURPLEMUX_WATCH_SOURCES="0")
        d.home = home
        _over_http(d, result, since, until, probe, runs)
    return result


def _over_http(
    d: Daemon, result: Result, since: float, until: float, probe: str, runs: int
) -> None:
    """A real daemon on that database: the first summary folds everything, later ones reuse."""
    d.start()
    try:
        path = f"/api/summary?since={since}&until={until}"
        t0 = time.perf_counter()
        data = api(d, path, timeout=600)
        result.http_cold = time.perf_counter() - t0
        assert data["totals"]["sessions"] == result.sessions, data["totals"]
        result.http_warm = _times(lambda: api(d, path, timeout=600), max(runs, 5))
        n = 0

        def one_changed() -> None:
            nonlocal n
            n += 1
            post_hook(d, probe, n)
            api(d, path, timeout=600)

        result.http_one_changed = _times(one_changed, max(runs, 5))
        result.http_timeline = _times(lambda: api(d, f"/api/sessions/{probe}/timeline"), 20)
        d.stop()
        d.start()  # the folds were kept in the store: a restart folds nothing again
        t0 = time.perf_counter()
        api(d, path, timeout=600)
        result.http_restart = time.perf_counter() - t0
    finally:
        d.stop()


def post_hook(d: Daemon, sid: str, n: int) -> None:
    """One new event for a session (a prompt, stamped just after the day), as the script posts."""
    payload = {"session_id": sid, "hook_event_name": "UserPromptSubmit"}
    stamp = int((DAY0 + 86_400 + n) * 1e9)
    send_hook(d.url, d.token, payload, f"bench-history-{n}", stamp, timeout=30)


def report(r: Result) -> list[str]:
    n = r.sessions * r.events
    lines = [
        f"{r.sessions} sessions x {r.events} events = {n:,} events; the day's summary: "
        f"waited on you {r.waited_s / 3600:.1f} h over {r.prompts:,} prompts",
        f"fold + summary, events in memory    median {r.fold.median:7.3f} s  "
        f"({r.fold.median / n * 1e6:.1f} µs/event)",
        f"read + decode + fold + summary      median {r.store.median:7.3f} s",
        f"one timeline (200 events) from store median {r.timeline.median * 1000:6.2f} ms",
    ]
    if r.http_warm and r.http_one_changed and r.http_timeline:
        lines += [
            f"GET /api/summary, first (cold)      {r.http_cold:7.3f} s",
            f"GET /api/summary, first after restart {r.http_restart:5.3f} s",
            f"GET /api/summary, nothing changed   median {r.http_warm.median * 1000:7.1f} ms",
            f"GET /api/summary, one session new   median "
            f"{r.http_one_changed.median * 1000:7.1f} ms (incl. the POST)",
            f"GET /api/sessions/{{id}}/timeline    median {r.http_timeline.median * 1000:7.1f} ms",
        ]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-daemon", action="store_true", help="skip the HTTP measurement")
    args = parser.parse_args()
    with tempdir("purplemux-history-") as tmp:
        r = run(Path(tmp), args.sessions, args.events, args.runs, daemon=not args.no_daemon)
    print("\n".join(report(r)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
