"""The command line's parser: every command, its arguments and their help."""

from __future__ import annotations

import argparse
from pathlib import Path

from purplemux import __version__
from purplemux.agents import facts as agent_facts

SESSION_ID = "session id (a unique prefix is enough)"


def build_parser() -> argparse.ArgumentParser:
    """The `purplemux` parser: one sub-parser per command."""
    parser = argparse.ArgumentParser(
        prog="purplemux",
        description="Know at a glance what each Claude Code and Codex session is doing.",
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
    # Several machines, one view (purplemux/hosts): a shared Redis.
    serve.add_argument(
        "--broker",
        metavar="URL",
        help="redis:// or rediss:// URL shared by the daemons of several machines "
        "(env PURPLEMUX_BROKER; password from PURPLEMUX_BROKER_PASSWORD_FILE)",
    )
    serve.add_argument(
        "--host-name", help="this machine's name on the shared view (default: the hostname)"
    )
    serve.add_argument(
        "--no-input",
        action="store_true",
        help="never type into panes: answering prompts is refused (env PURPLEMUX_INPUT=off)",
    )

    install = sub.add_parser(
        "install-hooks",
        help="register the hook script with Claude Code (settings.json) and Codex (hooks.json and"
        " its trust entries in config.toml, where $CODEX_HOME exists)",
    )
    install.add_argument(
        "--settings", metavar="FILE", help="write a standalone Claude settings file instead"
    )
    install.add_argument("--agent", choices=agent_facts.names(), help="only this agent's hooks")
    uninstall = sub.add_parser("uninstall-hooks", help="remove exactly purplemux's hook entries")
    uninstall.add_argument("--agent", choices=agent_facts.names(), help="only this agent's hooks")
    for hooks_command in (install, uninstall):
        hooks_command.add_argument(
            "--account",
            metavar="LABEL",
            help="only this account's config (PURPLEMUX_CLAUDE_DIRS, PURPLEMUX_CODEX_HOMES)",
        )
    sub.add_parser("states", help="print the state machine (Markdown and mermaid)")

    status = sub.add_parser("status", help="table of live sessions")
    status.add_argument("--json", action="store_true", help="print JSON")
    status.add_argument("--all", action="store_true", help="include ended sessions")
    status.add_argument("--watch", action="store_true", help="redraw on every change until Ctrl-C")

    dismiss = sub.add_parser("dismiss", help="mark a review as seen (review -> idle)")
    dismiss.add_argument("id", nargs="?", help=SESSION_ID)
    dismiss.add_argument("--all", action="store_true", help="dismiss every session in review")

    peek = sub.add_parser("peek", help="print a session's screen and the prompt on it")
    peek.add_argument("id", help=SESSION_ID)
    peek.add_argument("--json", action="store_true", help="print the JSON of GET /screen")

    answer = sub.add_parser("answer", help="answer the prompt a session shows now")
    answer.add_argument("id", help=SESSION_ID)
    how = answer.add_mutually_exclusive_group(required=True)
    how.add_argument("--option", metavar="LABEL", help="the option to pick, by its label as shown")
    how.add_argument("--text", help="a free-text answer to a question")
    how.add_argument("--cancel", action="store_true", help="press Esc on the prompt")

    resume = sub.add_parser(
        "resume", help="type 'continue' into a session shortly after its usage limit resets"
    )
    resume.add_argument("id", help=SESSION_ID)
    when = resume.add_mutually_exclusive_group(required=True)
    when.add_argument(
        "--at-reset", action="store_true", help="arm it: once, if it still waits at the limit"
    )
    when.add_argument("--cancel", action="store_true", help="cancel an armed resume")

    jump = sub.add_parser("jump", help="bring a session's pane to the front (switches your client)")
    jump.add_argument("id", help=SESSION_ID)

    open_ = sub.add_parser("open", help="print the dashboard login link")
    open_.add_argument("--browser", action="store_true", help="also open it in a web browser")

    tmux = sub.add_parser("tmux-status", help="a short badge line for tmux's status-right")
    tmux.add_argument(
        "--format",
        metavar="FMT",
        help="instead of the badge, FMT with {needs_input} {review} {busy} {idle} {unknown} "
        "{total} (counts), {badge} and {needs_names} (names of the sessions that need you)",
    )
    tmux.add_argument(
        "--tmux-colours",
        "--tmux-colors",
        action="store_true",
        help="colour the badge with tmux #[fg=...] markup",
    )

    report = sub.add_parser("report", help="where the time went: waits, prompts, answer times")
    report.add_argument(
        "--since",
        default="today",
        help="today (default: since local midnight), yesterday, YYYY-MM-DD[THH:MM], "
        "a unix time, or an age such as 8h, 7d",
    )
    report.add_argument("--until", help="the end of the period, same forms (default: now)")
    report.add_argument("--json", action="store_true", help="print the summary's JSON")

    sub.add_parser("doctor", help="check every part and say what to fix")
    sub.add_parser("logout-all", help="sign every browser out of the dashboard")

    service = sub.add_parser("service", help="run the daemon at login (systemd or launchd)")
    actions = service.add_subparsers(dest="action", metavar="ACTION", required=True)
    svc_install = actions.add_parser("install", help="write the user service file")
    svc_install.add_argument(
        "--enable", action="store_true", help="also run the commands that start it"
    )
    svc_uninstall = actions.add_parser("uninstall", help="remove the user service file")
    svc_uninstall.add_argument(
        "--disable", action="store_true", help="stop and disable it before removing it"
    )
    for action in (svc_install, svc_uninstall):
        # For tests and packagers: where the file goes, and which init system it is for.
        action.add_argument("--unit-dir", type=Path, help=argparse.SUPPRESS)
        action.add_argument("--kind", choices=("systemd", "launchd"), help=argparse.SUPPRESS)
    return parser
