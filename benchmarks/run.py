"""Run every benchmark on this machine and rewrite BENCHMARKS.md (`make bench`).

    .venv/bin/python -m benchmarks.run                 # the full run (about 10-15 minutes)
    .venv/bin/python -m benchmarks.run --quick --output /tmp/B.md   # smoke mode, under a minute
    .venv/bin/python -m benchmarks.run --only hooks ws # some sections

Generated inputs (transcripts, 2.7 GB) are made once into $PURPLEMUX_BENCH_CACHE
(default ~/.cache/purplemux-bench) and reused; --quick makes tiny ones in a temporary folder.
Every daemon runs on 127.0.0.1 with its own home, Claude dir and private tmux socket folder.
Each section is a module of benchmarks/sections; the frame of the report is benchmarks/report.
"""

from __future__ import annotations

import argparse
import datetime
import shutil
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from benchmarks import common
from benchmarks.common import REPO
from benchmarks.report import FULL, QUICK, Section, render
from benchmarks.sections.answer import section_answer
from benchmarks.sections.e2e import DEFAULT_E2E, section_e2e
from benchmarks.sections.history import section_history
from benchmarks.sections.hooks import section_hooks
from benchmarks.sections.hosts import section_hosts
from benchmarks.sections.idle import section_idle
from benchmarks.sections.ingest import section_ingest
from benchmarks.sections.restart import section_restart
from benchmarks.sections.scale import section_scale
from benchmarks.sections.soak import section_soak
from benchmarks.sections.start import section_start
from benchmarks.sections.tail import section_tail
from benchmarks.sections.ws import section_ws

TIGHT_DISK = 5 << 30

SECTIONS = (
    *("hooks", "ws", "ingest", "scale", "tail", "e2e", "soak"),
    *("answer", "history", "idle", "hosts", "restart", "start"),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run, < 1 min")
    parser.add_argument("--output", type=Path, default=REPO / "BENCHMARKS.md")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, help="run only these sections")
    parser.add_argument("--e2e-json", type=Path, default=DEFAULT_E2E)
    parser.add_argument(
        "--clean-cache", action="store_true", help="delete the generated inputs afterwards"
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    wanted = args.only or list(SECTIONS)
    started = time.monotonic()
    when = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    info = common.machine()
    info["Load"] = f"1-minute load average {common.loadavg():.2f} at the start of the run"
    sections: list[Section] = []
    with common.tempdir("purplemux-bench-") as name:
        root = Path(name)
        cache = root / "cache" if args.quick else common.cache_root()
        jobs: dict[str, Callable[[], Section]] = {
            "hooks": lambda: section_hooks(root, sizes),
            "ws": lambda: section_ws(root, sizes),
            "ingest": lambda: section_ingest(root, sizes),
            "scale": lambda: section_scale(root, sizes, cache),
            "tail": lambda: section_tail(root, sizes, cache),
            "e2e": lambda: section_e2e(args.e2e_json),
            "soak": lambda: section_soak(sizes),
            "answer": lambda: section_answer(sizes),
            "history": lambda: section_history(root, sizes),
            "idle": lambda: section_idle(root, sizes),
            "hosts": lambda: section_hosts(root, sizes),
            "restart": lambda: section_restart(root, sizes, cache),
            "start": lambda: section_start(root, sizes),
        }
        for key in SECTIONS:
            if key not in wanted:
                continue
            print(f"[bench] {key} …", file=sys.stderr, flush=True)
            t0, l0 = time.monotonic(), common.loadavg()
            try:
                sec = jobs[key]()
            except Exception as exc:
                traceback.print_exc()
                sec = Section(key, [f"**This section failed**: `{type(exc).__name__}: {exc}`"])
                sec.summary.append(["", key, "failed", "", "**failed**"])
                sec.failed = True
            if key != "e2e":
                sec.load = (l0, common.loadavg())
                sec.seconds = time.monotonic() - t0
            sections.append(sec)
            print(f"[bench] {key} done in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    if args.clean_cache or (not args.quick and common.free_bytes(Path.home()) < TIGHT_DISK):
        shutil.rmtree(common.cache_root(), ignore_errors=True)
    duration = time.monotonic() - started
    meta = {
        "when": when,
        "mode": "quick mode: tiny sizes, a smoke test" if args.quick else "full mode",
        "duration": f"{duration / 60:.1f} min" if duration > 90 else f"{duration:.0f} s",
    }
    args.output.write_text(render(sections, info, meta))
    print(f"[bench] wrote {args.output} in {duration:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
