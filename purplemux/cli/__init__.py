"""The command line: main(argv) -> exit code (parser, commands and rendering are its modules)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from purplemux.cli.commands import COMMANDS, watch_status
from purplemux.cli.parser import build_parser
from purplemux.cli.render import TERMINAL_COLOURS, render_prompt, render_table
from purplemux.io.settings import Settings

__all__ = [
    "COMMANDS",
    "TERMINAL_COLOURS",
    "build_parser",
    "main",
    "render_prompt",
    "render_table",
    "watch_status",
]

# The daemon client (and what it imports) loads only in the commands that need it:
# `tmux-status` runs every few seconds from tmux and must start in milliseconds.
LIGHT_COMMANDS = frozenset({"tmux-status", "serve"})


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run one command; returns the process exit code."""
    out = out or sys.stdout
    args = build_parser().parse_args(argv)
    if not args.command:
        build_parser().print_help(out)
        return 0
    try:
        settings = Settings.from_env(
            host=getattr(args, "host", None),
            port=getattr(args, "port", None),
            broker=getattr(args, "broker", None),
            host_name=getattr(args, "host_name", None),
            input=False if getattr(args, "no_input", False) else None,
        )
    except ValueError as exc:
        print(f"purplemux: {exc}", file=sys.stderr)
        return 2
    try:
        return _run(args, settings, out)
    except OSError as exc:  # a read-only or full disk: the folder and the fix, no traceback
        from purplemux.io.home import cannot_write

        line = cannot_write(exc, settings.home)
        if line is None:
            raise
        print(f"purplemux: {line}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    handler = COMMANDS[args.command]
    if args.command in LIGHT_COMMANDS:
        return handler(args, settings, out)
    from purplemux.cli.client import ApiError, DaemonUnreachable

    try:
        return handler(args, settings, out)
    except DaemonUnreachable as exc:
        print(f"purplemux: {exc}", file=sys.stderr)
        return 1
    except ApiError as exc:
        print(f"purplemux: {exc} (HTTP {exc.status})", file=sys.stderr)
        return 1
