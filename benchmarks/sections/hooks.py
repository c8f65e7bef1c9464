"""Section 1. What Claude waits per hook: the hook script against a real daemon."""

# ruff: noqa: RUF001  (the report is prose: its multiplication signs, dashes and mu are meant)
from __future__ import annotations

from pathlib import Path

from benchmarks import (
    hook_latency,
)
from benchmarks.report import (
    Section,
    Sizes,
    cores,
    ms,
    payload_bytes,
    table,
    verdict,
)


def section_hooks(root: Path, sizes: Sizes) -> Section:
    r = hook_latency.run(root, sizes.hook_runs)
    s = {k: r.stats(k) for k in r.cases}
    ratio_up = s["hook_up"].median / s["curl_up"].median
    ratio_down = s["hook_down"].median / s["curl_down"].median
    sec = Section("1. What Claude waits per hook")
    sec.lines += [
        "Foreground wall time of one hook call, measured as Claude makes it: `sh -c '<command>'` "
        f"with the payload (a PermissionRequest, {payload_bytes()} bytes) on stdin, until the "
        "process has exited "
        "and its stdout and stderr are closed. Our command is the installed one "
        "(`PURPLEMUX_HOME=… ~/.purplemux/status-hook.sh`); the baseline is the usual synchronous "
        "hook, `sh -c 'curl … --data-binary @- http://127.0.0.1:PORT/api/hooks'` with the port "
        "written in, posting the same payload to the same daemon. Daemon down: the port file "
        "names a closed port. The cases run interleaved, "
        f"{r.runs} times each; each run waits for the previous background delivery to finish.",
        "",
        *table(
            ["case", "min ms", "median ms", "max ms"],
            [[hook_latency.LABELS[k], ms(v.min), ms(v.median), ms(v.max)] for k, v in s.items()],
        ),
        "",
        f"- Median, daemon up: **{ms(s['hook_up'].median)} ms**, {ratio_up:.2f}× the curl "
        f"baseline ({ms(s['curl_up'].median)} ms). Goal ≤ 3 ms: "
        f"{verdict(s['hook_up'].median <= 3)}; ≤ 0.2× baseline: {verdict(ratio_up <= 0.2)}.",
        f"- Median, daemon down: **{ms(s['hook_down'].median)} ms**, {ratio_down:.2f}× the curl "
        f"baseline ({ms(s['curl_down'].median)} ms). Goal ≤ 3 ms: "
        f"{verdict(s['hook_down'].median <= 3)}; ≤ 0.2× baseline: "
        f"{verdict(ratio_down <= 0.2)}.",
        f"- Nothing lost: with the daemon up {r.delivered} events were logged for "
        f"{2 * r.runs} calls (hook + curl); with it down, {r.spooled} of {r.runs} hook calls "
        "were spooled for the next start.",
    ]
    missed = s["hook_up"].median > 3 or ratio_up > 0.2
    if missed:
        sec.lines += [
            "",
            "**Why the goal is missed.** The script's foreground starts three programs — `date` "
            "(the source timestamp, which must be taken before Claude moves on), `cat` (saves "
            "stdin, so the event survives a daemon that is down) and `setsid` (the detached "
            "delivery) — each a fork and exec. That floor alone, with no script around it, "
            f"measures {ms(s['programs'].median)} ms median here "
            f"({s['programs'].median / s['curl_up'].median:.2f}× the baseline), and a shell "
            f"that does nothing {ms(s['floor'].median)} ms: our script adds "
            f"{s['hook_up'].median - s['programs'].median:+.2f} ms to its own floor. The floor "
            f"is process start-up on this machine ({cores()} cores; see the load average "
            "below).",
        ]
    sec.summary += [
        [
            "1",
            "hook wall time, median (daemon up / down)",
            f"{ms(s['hook_up'].median)} / {ms(s['hook_down'].median)} ms; "
            f"{ratio_up:.2f}× / {ratio_down:.2f}× curl",
            "≤ 3 ms, ≤ 0.2× curl",
            verdict(
                max(s["hook_up"].median, s["hook_down"].median) <= 3
                and max(ratio_up, ratio_down) <= 0.2
            ),
        ]
    ]
    return sec
