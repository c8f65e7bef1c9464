"""What a person sees of several hosts outside the page: the CLI's HOST column, tmux-status
leaving an offline host's rows out, doctor's broker line; and a Redis that wants a password
(`--requirepass`, read by the daemons from PURPLEMUX_BROKER_PASSWORD_FILE)."""

from __future__ import annotations

from pathlib import Path

from tests.support import Daemon, wait_for
from tests.support.hosts import RedisServer, health, hook, host_daemon, post_hook, row, start_all


def cli(d: Daemon, *args: str) -> str:
    """What `purplemux ARGS` prints on that daemon's machine (stdout and stderr)."""
    done = d.cli(*args)
    return done.stdout + done.stderr


def test_cli_tmux_status_and_doctor_with_several_hosts_behind_a_password(
    daemons: list[Daemon], base: Path
) -> None:
    server = RedisServer(base / "redis-pw", password="correct horse battery").start()
    try:
        secret = base / "broker.pw"
        secret.write_text("correct horse battery\n")
        secret.chmod(0o600)
        pw = {"PURPLEMUX_BROKER_PASSWORD_FILE": str(secret)}
        alpha = host_daemon(base, "alpha", server, **pw)
        bravo = host_daemon(base, "bravo", server, **pw)
        charlie = host_daemon(base, "charlie", server)  # no password: refused by Redis
        daemons.extend([alpha, bravo, charlie])
        start_all([alpha, bravo, charlie])
        for d in (alpha, bravo):
            wait_for(lambda d=d: health(d)["broker"]["state"] == "connected", timeout=30)
        down = wait_for(
            lambda: (b := health(charlie)["broker"])["state"] == "down" and b.get("error") and b,
            timeout=30,
        )
        assert "auth" in down["error"].lower(), down
        assert "correct horse" not in str(down)

        # doctor says how the link is, on each machine.
        assert "connected: this daemon shares its sessions" in cli(bravo, "doctor")
        said = cli(charlie, "doctor")
        assert "down since" in said and "PURPLEMUX_BROKER_PASSWORD_FILE" in said, said

        asks, mine = "a5c00000-0000-4000-8000-00000000000a", "b0b00000-0000-4000-8000-00000000000b"
        tool = {"command": "make deploy"}
        post_hook(alpha, hook("SessionStart", asks, cwd="/src/deploy"), pane="%4")
        post_hook(alpha, hook("UserPromptSubmit", asks, cwd="/src/deploy", prompt="go"), pane="%4")
        post_hook(
            alpha,
            hook("PermissionRequest", asks, cwd="/src/deploy", tool_name="Bash", tool_input=tool),
            pane="%4",
        )
        post_hook(bravo, hook("SessionStart", mine, cwd="/src/site"), pane="%1")
        wait_for(lambda: (r := row(bravo, asks)) is not None and r["state"] == "needs-input")

        # The CLI on bravo: a HOST column first, each row its owner's name.
        table = cli(bravo, "status").splitlines()
        assert table[0].split()[:2] == ["HOST", "STATE"], table
        lines = {line.split()[0]: line for line in table[1:]}
        assert "needs input" in lines["alpha"] and "deploy" in lines["alpha"]
        assert "idle" in lines["bravo"] and "site" in lines["bravo"]
        # tmux-status on bravo counts alpha's prompt while alpha beats.
        assert cli(bravo, "tmux-status").strip() == "⚠1"

        alpha.kill()  # the machine goes away without a word
        wait_for(lambda: (r := row(bravo, asks)) is not None and r["stale"], timeout=20)
        stale = row(bravo, asks)
        assert stale is not None and stale["view"]["offline"] == "alpha: host offline since"
        assert stale["view"]["actions"] == []  # nothing can be asked of a host that is gone
        table = cli(bravo, "status").splitlines()
        assert any(line.startswith("alpha (offline)") for line in table), table
        # Its state is not known any more: tmux-status leaves it out.
        assert cli(bravo, "tmux-status").strip() == ""
    finally:
        server.kill()
