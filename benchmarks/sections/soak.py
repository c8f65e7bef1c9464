"""Section 7. Soak: the daemon under a steady load for minutes."""

from __future__ import annotations

import json
import subprocess
import sys

from benchmarks.common import REPO
from benchmarks.report import (
    Section,
    Sizes,
    table,
    verdict,
)


def section_soak(sizes: Sizes) -> Section:
    """7. The soak script (benchmarks/soak.py): memory, descriptors and events over a long run."""
    sec = Section("7. Soak: simulated sessions through the real hook script")
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.soak",
        "--seconds",
        str(sizes.soak_seconds),
        "--sessions",
        str(sizes.soak_sessions),
        "--json",
    ]
    out = subprocess.run(
        cmd, cwd=REPO, capture_output=True, text=True, timeout=sizes.soak_seconds + 600
    )
    data = json.loads(out.stdout.strip().splitlines()[-1])
    start, end, peak = data["start"], data["end"], data["peak"]
    equal = data["sent"] == data["logged"] == data["distinct_logged"]
    flat = end["fds"] <= start["fds"] + 5 and end["rss_mib"] <= start["rss_mib"] * 1.25
    sec.lines += [
        f"`python -m benchmarks.soak --seconds {sizes.soak_seconds} "
        f"--sessions {sizes.soak_sessions}`: "
        "each session runs prompt, tool, stop turns through the installed hook script (one hook "
        f"a second per session) against a daemon the script starts; events are counted in the "
        "database.",
        "",
        *table(
            ["", "start", "peak", "end"],
            [
                ["daemon RSS (MiB)", *(f"{x['rss_mib']:.1f}" for x in (start, peak, end))],
                ["open file descriptors", start["fds"], peak["fds"], end["fds"]],
                ["threads", start["threads"], peak["threads"], end["threads"]],
            ],
        ),
        "",
        f"Events sent {data['sent']}, logged {data['logged']} ({data['distinct_logged']} distinct "
        f"ids); spool left {data['spool_left']}; hook wall time median "
        f"{data['hook_ms']['median']} ms, p99 {data['hook_ms']['p99']} ms; log errors "
        f"{data['log_errors']}, warnings {data['log_warnings']}.",
    ]
    sec.summary.append(
        [
            "7",
            f"soak {sizes.soak_seconds} s x {sizes.soak_sessions} sessions: sent / logged; "
            "RSS and fds start → end",
            f"{data['sent']} / {data['logged']}; {start['rss_mib']:.0f} → {end['rss_mib']:.0f} MiB,"
            f" {start['fds']} → {end['fds']} fds",
            "equal; flat",
            verdict(equal and flat),
        ]
    )
    return sec
