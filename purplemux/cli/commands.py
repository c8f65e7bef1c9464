"""The command line's commands: one function a command, (args, settings, out) -> exit code."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from purplemux.cli.render import (
    TERMINAL_COLOURS,
    headline,
    render_limits,
    render_prompt,
    render_table,
)
from purplemux.core.termtext import clean
from purplemux.io.settings import Settings

if TYPE_CHECKING:
    from websockets.sync.client import ClientConnection

    from purplemux.cli.client import ApiError
    from purplemux.cli.service import Kind

WATCH_REDRAW = 1.0
"""Seconds between redraws of `status --watch` on a terminal, so the FOR column keeps time."""
WATCH_TICK = 0.5
"""Seconds `status --watch` waits on the feed at most before it looks again: Ctrl-C is taken
only by the main thread's next step, and the signal may reach another thread (the feed's
reader), so an endless wait could hold it (seen under load)."""
WATCH_HANG_UP = 1.0
"""Seconds `status --watch` waits, once it is done with a feed (Ctrl-C, a resync), for the daemon
to answer its close. websockets would wait 10 s: a busy or stopped daemon held Ctrl-C that long."""


def cmd_serve(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.server.serve import serve

    return serve(settings, allow_remote=args.allow_remote, out=out)


def cmd_install_hooks(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from pathlib import Path

    from purplemux.agents import install, registry
    from purplemux.agents.hookfiles import InstallError
    from purplemux.io.home import ensure_home

    ensure_home(settings.home)
    script = install.install_script(settings.home)
    if args.settings:
        path = Path(args.settings).expanduser()
        standalone = registry.get(args.agent).installer.standalone
        if standalone is None:
            label = registry.get(args.agent).label
            print(
                f"purplemux: --settings: {label} takes no settings file of its own", file=sys.stderr
            )
            return 2
        try:
            print(standalone(path, script, settings.home), file=out)
        except InstallError as exc:
            print(f"purplemux: {exc}", file=sys.stderr)
            return 2
        return 0
    return _change_hooks(settings, args, script, out, installed=True)


def cmd_uninstall_hooks(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    return _change_hooks(settings, args, None, out, installed=False)


def _change_hooks(
    settings: Settings, args: argparse.Namespace, script: Any, out: TextIO, installed: bool
) -> int:
    """(Un)install the hooks of each account set up here (or of `--agent` / `--account`), each
    through its agent's installer, and say what it did for each; 2 when one refused (its files
    were left untouched; the others were still done)."""
    from purplemux.agents import install, registry
    from purplemux.agents.hookfiles import InstallError

    code = 0
    try:
        targets = install.targets(settings, args.agent, getattr(args, "account", None))
    except install.UnknownAccount as exc:
        print(f"purplemux: {exc}", file=sys.stderr)
        return 2
    for target in targets:
        installer = registry.get(target.agent).installer
        several = len(settings.accounts_of(target.agent)) > 1
        label = f"{target.account}: " if several and target.account else ""
        if not target.present:
            print(f"{label}{target.path}: {installer.missing}", file=sys.stderr)
            code = 2
            continue
        try:
            if installed:
                done = installer.install(target.path, script, settings.home)
            else:
                done = installer.uninstall(target.path)
        except InstallError as exc:
            print(f"purplemux: {label}{exc}", file=sys.stderr)
            code = 2
            continue
        for line in done.lines:
            print(label + line, file=out)
        for note in done.notes:
            print(f"purplemux: {label}{note}", file=sys.stderr)
    return code


def cmd_states(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.core.machine import describe

    out.write(describe())
    return 0


def cmd_status(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.cli.client import Client

    if args.watch:
        return watch_status(settings, out, include_ended=args.all, as_json=args.json)
    data = Client(settings).request("GET", "/api/sessions" + ("?all=1" if args.all else ""))
    sessions = data["sessions"]
    if args.json:
        json.dump(sessions, out, indent=2)
        out.write("\n")
        return 0
    out.write(render_table(sessions, time.time(), colour=out.isatty()))
    if data.get("left_out"):  # --all shows the newest page of ended sessions
        out.write(f"{data['left_out']} older ended sessions not shown\n")
    out.write(render_limits(_limits(Client(settings)), time.time()))
    return 0


def _limits(client: Any) -> list[dict[str, Any]]:
    """The usage-limit readings per account; none from a daemon too old to have them."""
    from purplemux.cli.client import ApiError

    try:
        found = client.request("GET", "/api/limits")
    except ApiError as exc:
        if exc.status == 404:
            return []
        raise
    return [r for r in found if isinstance(r, dict)] if isinstance(found, list) else []


def watch_status(settings: Settings, out: TextIO, include_ended: bool, as_json: bool) -> int:
    """Follow WS /api/stream and redraw the table on each change; Ctrl-C ends it (exit 0)."""
    from websockets.exceptions import ConnectionClosed

    from purplemux.cli.follow import Follower, Step

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
            table = render_table(shown, time.time(), colour=True)
            limits = render_limits(follower.limits, time.time())
            out.write("\033[H\033[2J" + head + table + limits)
        else:
            table = render_table(shown, time.time(), False)
            limits = render_limits(follower.limits, time.time())
            out.write(f"-- {time.strftime('%H:%M:%S')}\n" + table + limits)
        out.flush()

    # Ctrl-C (KeyboardInterrupt) interrupts whatever runs: the read (a wait on a queue, which a
    # signal interrupts), a redraw, a reconnection. Then the feed is closed without waiting long
    # for the daemon (_hang_up), and the command ends with 0 and no traceback.
    ws: ClientConnection | None = None
    redraws = tty and not as_json
    try:
        while True:  # one pass per connection; a gap in seq means resync from a new snapshot
            ws = _open_feed(settings)
            follower.reset()
            next_draw = time.monotonic() + WATCH_REDRAW
            while True:
                try:
                    raw = ws.recv(timeout=WATCH_TICK)
                except TimeoutError:
                    if redraws and time.monotonic() >= next_draw:
                        next_draw = time.monotonic() + WATCH_REDRAW
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
            _hang_up(ws)
    except KeyboardInterrupt:
        if tty:
            out.write("\n")
        return 0
    finally:
        if ws is not None:
            _hang_up(ws)


def _hang_up(ws: ClientConnection) -> None:
    """Close a feed, waiting at most WATCH_HANG_UP for the daemon's answer; idempotent.

    The close frame goes at once; the wait for the daemon's reply runs in a daemon thread, so
    nothing the daemon does (busy, stopped) and nothing in the library's locks can hold the
    command past the bound. A second Ctrl-C ends the wait as well."""
    closer = threading.Thread(target=ws.close, name="purplemux-feed-close", daemon=True)
    closer.start()
    with contextlib.suppress(KeyboardInterrupt):
        closer.join(WATCH_HANG_UP)


def _open_feed(settings: Settings) -> ClientConnection:
    """Connect to WS /api/stream with the token; DaemonUnreachable says why it failed."""
    from websockets.exceptions import InvalidStatus, WebSocketException
    from websockets.sync.client import connect

    from purplemux.cli.client import Client, DaemonUnreachable

    client = Client(settings)
    token = client.token()
    try:
        return connect(
            "ws" + client.base_url.removeprefix("http") + "/api/stream",
            additional_headers={"Authorization": f"Bearer {token}"},
            open_timeout=client.timeout,
            close_timeout=WATCH_HANG_UP,  # then the socket is dropped: see _hang_up
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
    from purplemux.cli.client import Client

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


def cmd_peek(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.cli.client import ApiError, Client
    from purplemux.io.tmux import plain

    client = Client(settings)
    session = _resolve(client, args.id)
    if session is None:
        return 2
    sid = session["id"]
    try:
        shown = client.request("GET", f"/api/sessions/{sid}/screen")
    except ApiError as exc:
        print(f"purplemux: {clean(session['view']['where'])}: {exc}", file=sys.stderr)
        return 1
    if args.json:
        json.dump(shown, out, indent=2)
        out.write("\n")
        return 0
    # What the session's view says (a limit's time in this terminal's local time).
    out.write(f"{clean(headline(session['view'], time.time()))}\n\n")
    out.write(plain(shown["text"]).rstrip("\n") + "\n")
    prompt = shown.get("prompt")
    out.write("\n" + (render_prompt(prompt) if prompt else "(nothing is asked)\n"))
    return 0


ANSWER_FIXES = {
    403: "answering is off on this daemon: restart it without --no-input, or with "
    "PURPLEMUX_INPUT=on",
    409: "run `purplemux peek {id}` to see what the pane shows now, then answer again",
    422: "pick one of the options listed above, by its label",
    502: "tmux refused the keys: is the pane still there? `purplemux peek {id}` shows it",
    503: "the host that owns this session cannot be reached now; answer on that host, or try "
    "again once the broker shows it online",
    504: "the keys went but the dialog did not go: run `purplemux peek {id}` to see the pane",
}
"""What to do next, by the status of a refused or unconfirmed answer (actions.ActionError)."""


def explain_refusal(exc: ApiError, sid: str) -> None:
    """A refused answer on stderr: the daemon's reason, the keys it typed already, the prompt
    on screen now when it changed, and what to do next."""
    print(f"purplemux: {exc} (HTTP {exc.status})", file=sys.stderr)
    typed = exc.body.get("typed") or exc.body.get("keys")
    if isinstance(typed, list) and typed:
        print(f"purplemux: keys typed: {' '.join(map(str, typed))}", file=sys.stderr)
    prompt = exc.body.get("prompt")
    if exc.status == 409 and isinstance(prompt, dict):
        sys.stderr.write("purplemux: the pane asks now:\n" + render_prompt(prompt))
    fix = ANSWER_FIXES.get(exc.status, "")
    if fix:
        print(f"purplemux: {fix.format(id=sid[:8])}", file=sys.stderr)


def cmd_answer(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.cli.client import ApiError, Client

    client = Client(settings, timeout=30.0)
    session = _resolve(client, args.id)
    if session is None:
        return 2
    sid, where = session["id"], clean(session["view"]["where"])
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
        explain_refusal(exc, sid)
        return 1
    out.write(f"answered: {clean(result['answered'])}\n")
    return 0


RESUME_FIXES = {
    403: "typing into panes is off on this daemon: restart it without --no-input, or with "
    "PURPLEMUX_INPUT=on",
    409: "`purplemux status` shows whether the session waits at a usage limit (and whether "
    "Claude continues it by itself)",
}
"""What to do next, by the status of a refused resume."""


def cmd_resume(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.cli.client import ApiError, Client

    client = Client(settings)
    session = _resolve(client, args.id)
    if session is None:
        return 2
    sid, where = session["id"], clean(session["view"]["where"])
    try:
        if args.cancel:
            result = client.request("DELETE", f"/api/sessions/{sid}/resume")
        else:
            body = {"at_reset": True, "by": "cli"}
            result = client.request("POST", f"/api/sessions/{sid}/resume", body)
    except ApiError as exc:
        print(f"purplemux: {where}: {exc} (HTTP {exc.status})", file=sys.stderr)
        if fix := RESUME_FIXES.get(exc.status):
            print(f"purplemux: {fix}", file=sys.stderr)
        return 1
    said = clean(result["view"].get("resume") or "")
    out.write(f"{where}: {said}\n" if said else f"{where}: resume at the reset cancelled\n")
    return 0


def cmd_jump(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.cli.client import ApiError, Client
    from purplemux.io import tmux

    client = Client(settings)
    session = _resolve(client, args.id)
    if session is None:
        return 2
    sid, where = session["id"], clean(session["view"]["where"])
    if "jump" not in session["view"]["actions"]:
        print(f"purplemux: {where} is not in a tmux pane; nothing to jump to", file=sys.stderr)
        return 1
    body: dict[str, Any] = {}
    try:  # inside tmux, this client is the one to switch (tmux reads $TMUX itself)
        mine = tmux.run_blocking(None, "display-message", "-p", "#{client_name}").strip()
        if mine:
            body["client"] = mine
    except tmux.TmuxError:
        pass
    try:
        done = client.request("POST", f"/api/sessions/{sid}/focus", body)
    except ApiError as exc:
        print(f"purplemux: {where}: {exc} (HTTP {exc.status})", file=sys.stderr)
        return 1
    # The session's view names it (project · pane); the focus reply says where tmux put it.
    if done.get("pane") and done["pane"] != session["view"]["pane"]:
        where = f"{where} (now {clean(done['pane'])})"
    if done.get("client"):
        out.write(f"switched {clean(done['client'])} to {where}\n")
    else:
        out.write(f"selected {where}; no tmux client is attached to that server\n")
    return 0


def cmd_open(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.cli.client import Client

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
    from purplemux.cli import tmux_status

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

    from purplemux.cli.client import Client
    from purplemux.cli.report import parse_when, render_report

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
    from purplemux.core.present import LOOKS

    # Each state's terminal colour, from its token in the one state table.
    colours = {state.value: TERMINAL_COLOURS.get(lk.colour, "") for state, lk in LOOKS.items()}
    out.write(render_report(data, colours if out.isatty() else None))
    return 0


def cmd_doctor(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.cli import doctor

    return doctor.report(doctor.run_checks(settings), out, colour=out.isatty())


def cmd_logout_all(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from purplemux.io.logins import logout_all

    count = logout_all(settings.home)
    print(
        f"signed out {count} dashboard login(s), their page keys and their push notifications; "
        "sign in again with `purplemux open`",
        file=out,
    )
    return 0


def cmd_service(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    import shutil

    from purplemux.agents import facts as agent_facts
    from purplemux.cli import service

    kind: Kind = args.kind or service.default_kind()
    user_home = Path.home()
    unit_dir = args.unit_dir or service.default_dir(kind, user_home)
    # The PATH the daemon needs (tmux, curl, the agents), found without reading the environment
    # ourselves.
    tools = ("tmux", "curl", *(agent.command for agent in agent_facts.known()))
    found = [shutil.which(tool) for tool in tools]
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
    "resume": cmd_resume,
    "tmux-status": cmd_tmux_status,
    "report": cmd_report,
    "doctor": cmd_doctor,
    "logout-all": cmd_logout_all,
    "service": cmd_service,
}
