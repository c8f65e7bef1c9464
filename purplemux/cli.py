"""The command line: main(argv) -> exit code."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from purplemux import __version__
from purplemux.settings import Settings
from purplemux.termtext import clean
from purplemux.timefmt import duration

if TYPE_CHECKING:
    from websockets.sync.client import ClientConnection

    from purplemux.service import Kind

# The daemon client (and what it imports) loads only in the commands that need it:
# `tmux-status` runs every few seconds from tmux and must start in milliseconds.
LIGHT_COMMANDS = frozenset({"tmux-status"})
WATCH_REDRAW = 1.0
"""Seconds between redraws of `status --watch` on a terminal, so the FOR column keeps time."""

TERMINAL_COLOURS = {
    "yellow": "\033[33;1m",
    "magenta": "\033[35;1m",
    "cyan": "\033[36m",
    "grey": "\033[90m",
    "white": "\033[37m",
}
"""ANSI codes for the colour tokens of purplemux.present.LOOKS."""
SESSION_ID = "session id (a unique prefix is enough)"


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

    install = sub.add_parser("install-hooks", help="register the hook script in Claude's settings")
    install.add_argument("--settings", metavar="FILE", help="write a standalone settings file")
    sub.add_parser("uninstall-hooks", help="remove exactly purplemux's hook entries")
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
    handler = COMMANDS[args.command]
    if args.command in LIGHT_COMMANDS:
        return handler(args, settings, out)
    from purplemux.client import ApiError, DaemonUnreachable

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
    from purplemux.client import Client

    if args.watch:
        return watch_status(settings, out, include_ended=args.all, as_json=args.json)
    data = Client(settings).request("GET", "/api/sessions" + ("?all=1" if args.all else ""))
    sessions = data["sessions"]
    if args.json:
        json.dump(sessions, out, indent=2)
        out.write("\n")
        return 0
    out.write(render_table(sessions, time.time(), colour=out.isatty()))
    return 0


def render_table(sessions: list[dict[str, Any]], now: float, colour: bool) -> str:
    """The status table: state, name, pane, time in state, what it waits for / does / said, and
    mode, context, cost and background tasks."""
    if not sessions:
        return "no sessions\n"
    rows: list[tuple[str, ...]] = [("STATE", "NAME", "PANE", "FOR", "DETAIL", "FACTS", "ID")]
    colours = [""]
    for s in sessions:
        v = s["view"]  # what purplemux.present decided a person reads about it
        # Session text may hold escape sequences or line breaks: plain text only (each field
        # cleaned once, before it is cut); the colour added below is ours.
        rows.append(
            (
                clean(v["label"]) + (" (ended)" if v["ended"] else ""),
                clean(v["name"]),
                clean(v["pane"] or "-"),
                duration(now - float(v["since"] or now)),
                clean(v["reason"])[:60],
                clean(v["facts"] or "-"),
                clean(s["id"])[:8],
            )
        )
        colours.append(TERMINAL_COLOURS.get(v["colour"], ""))
    rows, colours = _with_hosts(rows, colours, sessions)
    at = 1 if rows[0][0] == "HOST" else 0
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row)]
        if colour and n:
            cells[at] = f"{colours[n]}{cells[at]}\033[0m"
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _with_hosts(
    rows: list[tuple[str, ...]], colours: list[str], sessions: list[dict[str, Any]]
) -> tuple[list[tuple[str, ...]], list[str]]:
    """Several hosts (a shared broker): a HOST column first, "(offline)" on a stale host's rows."""
    views = [s["view"] for s in sessions]
    if len({v.get("host") for v in views}) < 2:
        return rows, colours
    out = []
    for row, colour, v in zip(rows[1:], colours[1:], views, strict=True):
        host = str(v.get("host") or "-") + (" (offline)" if v.get("stale") else "")
        out.append(((host, *row), colour))
    out.sort(key=lambda r: r[0][0])  # by host first, newest first within one (a stable sort)
    return [("HOST", *rows[0]), *(r for r, _ in out)], ["", *(c for _, c in out)]


def watch_status(settings: Settings, out: TextIO, include_ended: bool, as_json: bool) -> int:
    """Follow WS /api/stream and redraw the table on each change; Ctrl-C ends it (exit 0)."""
    from websockets.exceptions import ConnectionClosed

    from purplemux.follow import Follower, Step

    tty = out.isatty()
    follower = Follower()

    def draw() -> None:
        shown = sorted(
            (s for s in follower.sessions.values() if include_ended or not s.get("ended")),
            key=lambda s: float(s.get("updated_at") or 0),
            reverse=True,
        )
        if as_json:
            out.write(json.dumps(shown) + "\n")
        elif tty:
            stamp = time.strftime("%H:%M:%S")
            head = f"purplemux status  {stamp}  (Ctrl-C to quit)\n\n"
            out.write("\033[H\033[2J" + head + render_table(shown, time.time(), colour=True))
        else:
            out.write(f"-- {time.strftime('%H:%M:%S')}\n" + render_table(shown, time.time(), False))
        out.flush()

    try:
        while True:  # one pass per connection; a gap in seq means resync from a new snapshot
            with _open_feed(settings) as ws:
                follower.reset()
                while True:
                    try:
                        raw = ws.recv(timeout=WATCH_REDRAW if tty and not as_json else None)
                    except TimeoutError:
                        draw()  # nothing changed, but the time in state did
                        continue
                    except ConnectionClosed:
                        print(
                            "purplemux: the daemon closed the feed (it stopped?); "
                            "run `purplemux status --watch` again once it is back",
                            file=sys.stderr,
                        )
                        return 1
                    step = follower.take(json.loads(raw))
                    if step is Step.RESYNC:
                        break  # missed a change: reconnect for a fresh snapshot
                    if step is Step.CHANGED:
                        draw()
    except KeyboardInterrupt:
        if tty:
            out.write("\n")
        return 0


def _open_feed(settings: Settings) -> ClientConnection:
    """Connect to WS /api/stream with the token; DaemonUnreachable says why it failed."""
    from websockets.exceptions import InvalidStatus, WebSocketException
    from websockets.sync.client import connect

    from purplemux.client import Client, DaemonUnreachable

    client = Client(settings)
    token = client.token()
    try:
        return connect(
            "ws" + client.base_url.removeprefix("http") + "/api/stream",
            additional_headers={"Authorization": f"Bearer {token}"},
            open_timeout=client.timeout,
            proxy=None,  # the daemon is local: a proxy in the environment must not see it
            max_size=64 * 1024 * 1024,
        )
    except InvalidStatus as exc:
        raise DaemonUnreachable(
            f"the daemon refused the feed (HTTP {exc.response.status_code}): "
            f"is {settings.token_path} the token of the running daemon?"
        ) from None
    except (OSError, WebSocketException) as exc:
        raise DaemonUnreachable(
            f"the daemon does not answer at {client.base_url} ({exc}): "
            "start it with `purplemux serve`"
        ) from None


def cmd_dismiss(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.client import Client

    client = Client(settings)
    sessions = client.request("GET", "/api/sessions")["sessions"]
    if args.all:
        targets = [s["id"] for s in sessions if "dismiss" in s["view"]["actions"]]
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
        print(f"dismissed {clean(sid)}", file=out)
    if not targets:
        print("nothing in review", file=out)
    return 0


def _resolve(client: Any, prefix: str) -> dict[str, Any] | None:
    """The one session (with its view) whose id starts with `prefix`, or None (after saying
    why)."""
    sessions = client.request("GET", "/api/sessions")["sessions"]
    exact = [s for s in sessions if s["id"] == prefix]
    matches = exact or [s for s in sessions if s["id"].startswith(prefix)]
    if len(matches) != 1:
        what = "no session" if not matches else f"{len(matches)} sessions"
        print(f"purplemux: {what} match {prefix!r}; see `purplemux status`", file=sys.stderr)
        return None
    return dict(matches[0])


def render_prompt(prompt: dict[str, Any]) -> str:
    """A prompt as the terminal shows it: title, question, options with the marker."""
    from purplemux.tmux import plain

    lines = [f"[{prompt['kind']}] {plain(prompt['title'])}"]
    question = prompt.get("question")
    if question and question != prompt["title"]:
        lines.append(f"  {plain(question)}")
    for option in prompt["options"]:
        mark = "\u276f" if option.get("selected") else " "
        extra = "  (free text: --text)" if option.get("free_text") else ""
        lines.append(f"  {mark} {plain(option['label'])}{extra}")
    lines.append(f"  prompt id {prompt['id']}")
    return "\n".join(lines) + "\n"


def cmd_peek(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.client import ApiError, Client
    from purplemux.tmux import plain

    client = Client(settings)
    session = _resolve(client, args.id)
    if session is None:
        return 2
    sid = session["id"]
    try:
        shown = client.request("GET", f"/api/sessions/{sid}/screen")
    except ApiError as exc:
        print(f"purplemux: {session['view']['where']}: {exc}", file=sys.stderr)
        return 1
    if args.json:
        json.dump(shown, out, indent=2)
        out.write("\n")
        return 0
    out.write(f"{session['view']['headline']}\n\n")  # what the session's view says of it
    out.write(plain(shown["text"]).rstrip("\n") + "\n")
    prompt = shown.get("prompt")
    out.write("\n" + (render_prompt(prompt) if prompt else "(nothing is asked)\n"))
    return 0


ANSWER_FIXES = {
    403: "answering is off on this daemon: restart it without --no-input, or with "
    "PURPLEMUX_INPUT=on",
    409: "run `purplemux peek {id}` to see what the pane shows now, then answer again",
    422: "pick one of the options listed above, by its label",
}


def cmd_answer(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.client import ApiError, Client

    client = Client(settings, timeout=30.0)
    session = _resolve(client, args.id)
    if session is None:
        return 2
    sid, where = session["id"], session["view"]["where"]
    try:
        shown = client.request("GET", f"/api/sessions/{sid}/screen")
    except ApiError as exc:
        print(f"purplemux: {where}: {exc}", file=sys.stderr)
        return 1
    prompt = shown.get("prompt")
    if not prompt:
        print(f"purplemux: nothing is asked in {where} now; nothing was typed", file=sys.stderr)
        return 1
    out.write(render_prompt(prompt))
    body: dict[str, Any] = {"prompt_id": prompt["id"], "by": "cli"}
    if args.cancel:
        body["cancel"] = True
    elif args.text is not None:
        body["text"] = args.text
    else:
        body["option"] = args.option
    try:
        result = client.request("POST", f"/api/sessions/{sid}/answer", body)
    except ApiError as exc:
        fix = ANSWER_FIXES.get(exc.status, "")
        print(f"purplemux: {exc} (HTTP {exc.status})", file=sys.stderr)
        if fix:
            print(f"purplemux: {fix.format(id=sid[:8])}", file=sys.stderr)
        return 1
    out.write(f"answered: {result['answered']}\n")
    return 0


def cmd_jump(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    import subprocess

    from purplemux.client import ApiError, Client

    client = Client(settings)
    session = _resolve(client, args.id)
    if session is None:
        return 2
    sid, where = session["id"], session["view"]["where"]
    if "jump" not in session["view"]["actions"]:
        print(f"purplemux: {where} is not in a tmux pane; nothing to jump to", file=sys.stderr)
        return 1
    body: dict[str, Any] = {}
    try:  # inside tmux, this client is the one to switch (tmux reads $TMUX itself)
        mine = subprocess.run(
            ["tmux", "display-message", "-p", "#{client_name}"],
            capture_output=True,
            text=True,
            timeout=3,
            check=False,
        )
        if mine.returncode == 0 and mine.stdout.strip():
            body["client"] = mine.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        done = client.request("POST", f"/api/sessions/{sid}/focus", body)
    except ApiError as exc:
        print(f"purplemux: {where}: {exc} (HTTP {exc.status})", file=sys.stderr)
        return 1
    # The session's view names it (project · pane); the focus reply says where tmux put it.
    if done.get("pane") and done["pane"] != session["view"]["pane"]:
        where = f"{where} (now {done['pane']})"
    if done.get("client"):
        out.write(f"switched {done['client']} to {where}\n")
    else:
        out.write(f"selected {where}; no tmux client is attached to that server\n")
    return 0


def cmd_open(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.client import Client

    client = Client(settings)
    link = f"{client.base_url}/?token={client.token()}"
    print(link, file=out)
    if args.browser:
        import webbrowser

        if not webbrowser.open(link):
            print("purplemux: no browser found; open the link above", file=sys.stderr)
            return 1
    return 0


def cmd_tmux_status(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux import tmux_status

    try:  # a bad --format is told at once, daemon or not
        tmux_status.render(tmux_status.count([]), args.format, args.tmux_colours)
    except ValueError as exc:
        print(f"purplemux: {exc}", file=sys.stderr)
        return 2
    line = tmux_status.status_line(settings, args.format, args.tmux_colours)
    if line:  # nothing at all otherwise: tmux shows an empty #() as nothing
        out.write(line + "\n")
    return 0


def cmd_report(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from urllib.parse import urlencode

    from purplemux.client import Client
    from purplemux.report import parse_when, render_report

    now = time.time()
    try:
        query = {"since": parse_when(args.since, now)}
        if args.until:
            query["until"] = parse_when(args.until, now)
    except ValueError as exc:
        print(f"purplemux: {exc}", file=sys.stderr)
        return 2
    data = Client(settings, timeout=60).request("GET", "/api/summary?" + urlencode(query))
    if args.json:
        json.dump(data, out, indent=2)
        out.write("\n")
        return 0
    from purplemux.present import LOOKS

    # Each state's terminal colour, from its token in the one state table.
    colours = {state.value: TERMINAL_COLOURS.get(lk.colour, "") for state, lk in LOOKS.items()}
    out.write(render_report(data, colours if out.isatty() else None))
    return 0


def cmd_doctor(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux import doctor

    return doctor.report(doctor.run_checks(settings), out, colour=out.isatty())


def cmd_logout_all(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.server.logins import logout_all

    count = logout_all(settings.home)
    print(f"signed out {count} dashboard login(s); sign in again with `purplemux open`", file=out)
    return 0


def cmd_service(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    import shutil

    from purplemux import service

    kind: Kind = args.kind or service.default_kind()
    user_home = Path.home()
    unit_dir = args.unit_dir or service.default_dir(kind, user_home)
    # The PATH the daemon needs (tmux, curl), found without reading the environment ourselves.
    found = [shutil.which(tool) for tool in ("tmux", "curl", "claude")]
    dirs = dict.fromkeys([str(Path(p).parent) for p in found if p] + service.BASE_PATH)
    p = service.plan(settings, kind, unit_dir, user_home, service.serve_command(), ":".join(dirs))
    if args.action == "install":
        changed = service.write(p)
        print(f"{'wrote' if changed else 'unchanged:'} {p.path}", file=out)
        if args.enable:
            return service.run_commands(p.enable)
        print(f"start it now and at each login: {service.shell_line(p.enable)}", file=out)
        return 0
    if args.disable and p.path.exists():
        code = service.run_commands(p.disable)
        if code:
            return code
    if not service.remove(p):
        print(f"no service file at {p.path}", file=out)
        return 0
    print(f"removed {p.path}", file=out)
    if args.disable:
        return service.run_commands(p.reload)
    print(f"stop what still runs: {service.shell_line(p.stop)}", file=out)
    return 0


COMMANDS = {
    "serve": cmd_serve,
    "install-hooks": cmd_install_hooks,
    "uninstall-hooks": cmd_uninstall_hooks,
    "states": cmd_states,
    "status": cmd_status,
    "dismiss": cmd_dismiss,
    "open": cmd_open,
    "peek": cmd_peek,
    "answer": cmd_answer,
    "jump": cmd_jump,
    "tmux-status": cmd_tmux_status,
    "report": cmd_report,
    "doctor": cmd_doctor,
    "logout-all": cmd_logout_all,
    "service": cmd_service,
}


if __name__ == "__main__":
    raise SystemExit(main())
