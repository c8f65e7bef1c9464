"""The command line: main(argv) -> exit code."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from purplemux import __version__
from purplemux.client import ApiError, Client, DaemonUnreachable
from purplemux.settings import Settings

STATE_COLOURS = {
    "idle": "\033[90m",
    "busy": "\033[36m",
    "needs-input": "\033[33;1m",
    "review": "\033[35;1m",
    "unknown": "\033[37m",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="purplemux",
        description="Know at a glance what each Claude Code session is doing.",
    )
    parser.add_argument("--version", action="version", version=f"purplemux {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the daemon (API, feed, dashboard)")
    serve.add_argument("--host", help="listen address (default 127.0.0.1, env PURPLEMUX_HOST)")
    serve.add_argument("--port", type=int, help="listen port (default 8022, env PURPLEMUX_PORT)")
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow listening on a non-loopback address (read SECURITY.md first)",
    )

    install = sub.add_parser("install-hooks", help="register the hook script in Claude's settings")
    install.add_argument("--settings", metavar="FILE", help="write a standalone settings file")
    sub.add_parser("uninstall-hooks", help="remove exactly purplemux's hook entries")
    sub.add_parser("states", help="print the state machine (Markdown and mermaid)")

    status = sub.add_parser("status", help="table of live sessions")
    status.add_argument("--json", action="store_true", help="print JSON")
    status.add_argument("--all", action="store_true", help="include ended sessions")

    dismiss = sub.add_parser("dismiss", help="mark a review as seen (review -> idle)")
    dismiss.add_argument("id", nargs="?", help="session id (a unique prefix is enough)")
    dismiss.add_argument("--all", action="store_true", help="dismiss every session in review")

    sub.add_parser("open", help="print the dashboard login link")
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run one command; returns the process exit code."""
    out = out or sys.stdout
    args = build_parser().parse_args(argv)
    if not args.command:
        build_parser().print_help(out)
        return 0
    try:
        settings = Settings.from_env(
            host=getattr(args, "host", None), port=getattr(args, "port", None)
        )
    except ValueError as exc:
        print(f"purplemux: {exc}", file=sys.stderr)
        return 2
    handler = COMMANDS[args.command]
    try:
        return handler(args, settings, out)
    except DaemonUnreachable as exc:
        print(f"purplemux: {exc}", file=sys.stderr)
        return 1
    except ApiError as exc:
        print(f"purplemux: {exc} (HTTP {exc.status})", file=sys.stderr)
        return 1


def cmd_serve(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.serve import serve

    return serve(settings, allow_remote=args.allow_remote, out=out)


def cmd_install_hooks(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from pathlib import Path

    from purplemux import install
    from purplemux.server.auth import ensure_home

    ensure_home(settings.home)
    script = install.install_script(settings.home)
    command = install.hook_command(script, settings.home)
    if args.settings:
        path = Path(args.settings).expanduser()
        install.write_standalone(path, command)
        print(f"wrote {path}; run: claude --settings {path}", file=out)
        return 0
    try:
        result = install.install(settings.settings_json, command)
    except install.SettingsError as exc:
        print(f"purplemux: {exc}", file=sys.stderr)
        return 2
    print(_install_summary(result, settings, installed=True), file=out)
    return 0


def cmd_uninstall_hooks(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux import install

    try:
        result = install.uninstall(settings.settings_json)
    except install.SettingsError as exc:
        print(f"purplemux: {exc}", file=sys.stderr)
        return 2
    print(_install_summary(result, settings, installed=False), file=out)
    return 0


def _install_summary(result: Any, settings: Settings, installed: bool) -> str:
    path = settings.settings_json
    if not getattr(result, "changed", False):
        why = "already installed" if installed else "no purplemux hooks"
        return f"{path}: nothing to change ({why})"
    backup = getattr(result, "backup", None)
    verb = "installed purplemux hooks in" if installed else "removed purplemux hooks from"
    return f"{verb} {path}" + (f" (backup: {backup})" if backup else "")


def cmd_states(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.machine import describe

    out.write(describe())
    return 0


def cmd_status(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    data = Client(settings).request("GET", "/api/sessions" + ("?all=1" if args.all else ""))
    sessions = data["sessions"]
    if args.json:
        json.dump(sessions, out, indent=2)
        out.write("\n")
        return 0
    out.write(render_table(sessions, time.time(), colour=out.isatty()))
    return 0


def render_table(sessions: list[dict[str, Any]], now: float, colour: bool) -> str:
    """The status table: state, project, pane, time in state, what it waits for / does / said."""
    if not sessions:
        return "no sessions\n"
    rows = [("STATE", "PROJECT", "PANE", "FOR", "DETAIL", "ID")]
    for s in sessions:
        pane = (s.get("tmux") or {}).get("pane") or "-"
        detail = s.get("error") or s.get("waiting_for") or s.get("current_tool") or s.get("snippet")
        rows.append(
            (
                s["state"] + (" (ended)" if s.get("ended") else ""),
                s.get("project") or "-",
                pane,
                _ago(now - float(s.get("state_since") or now)),
                (detail or "").replace("\n", " ")[:60],
                s["id"][:8],
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row)]
        if colour and n:
            state = row[0].split(" ")[0]
            cells[0] = f"{STATE_COLOURS.get(state, '')}{cells[0]}\033[0m"
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}m"
    return f"{seconds // 86400}d"


def cmd_dismiss(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    client = Client(settings)
    sessions = client.request("GET", "/api/sessions")["sessions"]
    if args.all:
        targets = [s["id"] for s in sessions if s["state"] == "review"]
    elif args.id:
        matches = [s["id"] for s in sessions if s["id"].startswith(args.id)]
        if len(matches) != 1:
            what = "no session" if not matches else f"{len(matches)} sessions"
            print(f"purplemux: {what} match {args.id!r}; see `purplemux status`", file=sys.stderr)
            return 2
        targets = matches
    else:
        print("purplemux: name a session id or use --all", file=sys.stderr)
        return 2
    for sid in targets:
        client.request("POST", f"/api/sessions/{sid}/dismiss")
        print(f"dismissed {sid}", file=out)
    if not targets:
        print("nothing in review", file=out)
    return 0


def cmd_open(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    client = Client(settings)
    print(f"{client.base_url}/?token={client.token()}", file=out)
    return 0


COMMANDS = {
    "serve": cmd_serve,
    "install-hooks": cmd_install_hooks,
    "uninstall-hooks": cmd_uninstall_hooks,
    "states": cmd_states,
    "status": cmd_status,
    "dismiss": cmd_dismiss,
    "open": cmd_open,
}


if __name__ == "__main__":
    raise SystemExit(main())
