"""Accounts: one daemon watching several Claude config dirs (a work and a personal login with
CLAUDE_CONFIG_DIR) and several Codex homes. The setting that lists them, the rule that names a
path's account, the service unit that passes them on, and a real daemon whose rows each carry
their own account."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from purplemux.cli import main
from purplemux.cli.render import render_table
from purplemux.cli.report import render_report
from purplemux.cli.service import service_environment
from purplemux.io.settings import Account, Settings
from tests.support import Daemon, run_hook, wait_for
from tests.support.fake_claude import CWD, FakeClaude

HOME = Path.home()
SAMPLES = Path(__file__).resolve().parent / "samples"


def settings(**env: str) -> Settings:
    return Settings.from_env({"PURPLEMUX_HOME": "/tmp/pmx-accounts", **env})


# --- the setting --------------------------------------------------------------------------------


def test_by_default_one_account_per_agent_as_today() -> None:
    s = settings()
    assert s.accounts == (
        Account("claude", "claude", HOME / ".claude"),
        Account("codex", "codex", HOME / ".codex"),
    )
    assert s.claude_dir == HOME / ".claude"
    assert s.accounts_of("codex")[0].dir == HOME / ".codex"
    s = settings(CLAUDE_CONFIG_DIR="/srv/me/.claude-work")
    assert [(a.label, a.dir) for a in s.accounts_of("claude")] == [
        ("claude-work", Path("/srv/me/.claude-work"))
    ]


def test_several_claude_dirs_and_codex_homes_with_and_without_labels(tmp_path: Path) -> None:
    work, personal = tmp_path / ".claude-work", tmp_path / "me" / ".claude"
    codex_a, codex_b = tmp_path / "cx-a", tmp_path / "cx-b"
    s = settings(
        PURPLEMUX_CLAUDE_DIRS=f"{work}, personal={personal}",
        PURPLEMUX_CODEX_HOMES=f"{codex_a},b={codex_b}",
        CLAUDE_CONFIG_DIR="/ignored/when/the/list/is/set",
    )
    assert s.accounts == (
        Account("claude", "claude-work", work),
        Account("claude", "personal", personal),
        Account("codex", "cx-a", codex_a.resolve()),
        Account("codex", "b", codex_b.resolve()),
    )
    # The first of each agent is what code that knows one dir keeps using.
    assert s.claude_dir == work and s.settings_json == work / "settings.json"
    assert s.accounts_of("codex")[0].dir == codex_a.resolve()


@pytest.mark.parametrize(
    ("env", "says"),
    [
        (
            {"PURPLEMUX_CLAUDE_DIRS": "/a/.claude,/b/.claude"},
            "two folders have the label 'claude' (/a/.claude and /b/.claude); give each its own "
            "with label=path",
        ),
        ({"PURPLEMUX_CLAUDE_DIRS": "work=/a,work=/b"}, "give each its own with label=path"),
        ({"PURPLEMUX_CLAUDE_DIRS": "/a/.claude,/a/.claude"}, "is listed twice"),
        ({"PURPLEMUX_CLAUDE_DIRS": "relative/dir"}, "is not an absolute path; write it from /"),
        ({"PURPLEMUX_CLAUDE_DIRS": "my work=/a"}, "must be 1-40 letters, digits"),
        ({"PURPLEMUX_CODEX_HOMES": "x="}, "names no folder; write path or label=path"),
        ({"PURPLEMUX_CODEX_HOMES": " , "}, "lists no folder; unset it or list some"),
    ],
)
def test_a_bad_list_is_refused_naming_the_setting_and_the_fix(
    env: dict[str, str], says: str
) -> None:
    with pytest.raises(ValueError) as caught:
        settings(**env)
    assert says in str(caught.value)
    assert next(iter(env)) in str(caught.value)  # which setting to fix


def test_the_cli_refuses_a_bad_list_before_doing_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PURPLEMUX_HOME", str(tmp_path / "pmx"))
    monkeypatch.setenv("PURPLEMUX_CLAUDE_DIRS", f"{tmp_path}/a/.claude,{tmp_path}/b/.claude")
    assert main(["install-hooks"], out=io.StringIO()) == 2
    assert "give each its own with label=path" in capsys.readouterr().err
    assert not (tmp_path / "pmx").exists() and not (tmp_path / "a").exists()


def test_account_dir_is_the_labelled_accounts_else_the_agents_first(tmp_path: Path) -> None:
    s = settings(PURPLEMUX_CLAUDE_DIRS=f"{tmp_path}/a,b={tmp_path}/b")
    assert s.account_dir("claude", "b") == tmp_path / "b"
    assert s.account_dir("claude", None) == tmp_path / "a"
    assert s.account_dir("claude", "gone") == tmp_path / "a"


def test_account_of_names_the_account_whose_dir_holds_the_path(tmp_path: Path) -> None:
    work, home = tmp_path / ".claude-work", tmp_path / ".claude"
    inner = work / "nested"
    s = settings(
        PURPLEMUX_CLAUDE_DIRS=f"{work},home={home},inner={inner}",
        PURPLEMUX_CODEX_HOMES=f"cx={tmp_path / 'codex'}",
    )
    assert s.account_of("claude", f"{work}/projects/-w-app/abc.jsonl") == "claude-work"
    assert s.account_of("claude", home / "sessions" / "123.json") == "home"
    assert s.account_of("claude", f"{inner}/projects/x.jsonl") == "inner"  # the deepest dir
    assert s.account_of("claude", f"{work}/../.claude/projects/x.jsonl") == "home"
    assert s.account_of("claude", f"{tmp_path}/.claude-workshop/x.jsonl") is None  # a prefix
    assert s.account_of("claude", "/elsewhere/x.jsonl") is None
    assert s.account_of("claude", None) is None
    for odd in ("/x/\0/a.jsonl", "/x/\ud800.jsonl"):  # what a hostile payload may carry
        assert s.account_of("claude", odd) is None
    # Codex's rollouts are under its home; an agent's path never names another agent's account.
    rollout = tmp_path / "codex" / "sessions" / "2026" / "rollout-1.jsonl"
    assert s.account_of("codex", rollout) == "cx"
    assert s.account_of("claude", rollout) is None
    assert s.account_of("codex", f"{work}/projects/x.jsonl") is None
    # Through a link: where the file really is decides.
    link = tmp_path / "link"
    work.mkdir()
    link.symlink_to(work)
    assert s.account_of("claude", link / "projects" / "x.jsonl") == "claude-work"


def test_the_service_unit_passes_the_accounts_on(tmp_path: Path) -> None:
    s = settings(
        PURPLEMUX_CLAUDE_DIRS=f"work={tmp_path}/w,{tmp_path}/.claude",
        PURPLEMUX_CODEX_HOMES=f"{tmp_path}/codex-x",
    )
    env = service_environment(s, HOME)
    assert env["PURPLEMUX_CLAUDE_DIRS"] == f"work={tmp_path}/w,claude={tmp_path}/.claude"
    assert env["CLAUDE_CONFIG_DIR"] == f"{tmp_path}/w"
    assert env["CODEX_HOME"] == str((tmp_path / "codex-x").resolve())
    assert "PURPLEMUX_CODEX_HOMES" not in env  # one home with its own name: CODEX_HOME says it
    again = Settings.from_env({**env, "PURPLEMUX_HOME": "/tmp/pmx-accounts"})
    assert again.accounts == s.accounts
    assert "PURPLEMUX_CLAUDE_DIRS" not in service_environment(settings(), HOME)


# --- the status table and the report ----------------------------------------------------------


def _row(sid: str, account: str, label: str = "Idle") -> dict[str, object]:
    view = {
        "label": label,
        "ended": False,
        "name": f"proj-{sid}",
        "agent_label": "Claude",
        "pane": "%1",
        "since": 0,
        "reason": "",
        "facts": "",
        "colour": "grey",
        "account": account,
    }
    return {"id": sid, "view": view}


def test_status_has_an_account_column_only_when_an_agent_has_several() -> None:
    table = render_table([_row("aaaaaaaa1", "work"), _row("bbbbbbbb1", "home")], 0, False)
    head, first, second = table.splitlines()
    assert head.split()[:5] == ["STATE", "NAME", "AGENT", "ACCOUNT", "PANE"]
    assert first.split()[:4] == ["Idle", "proj-aaaaaaaa1", "Claude", "work"]
    assert second.split()[:4] == ["Idle", "proj-bbbbbbbb1", "Claude", "home"]
    single = render_table([_row("aaaaaaaa1", "")], 0, False)
    assert "ACCOUNT" not in single


def test_report_names_each_sessions_account_when_an_agent_has_several() -> None:
    def session(sid: str, account: str | None) -> dict[str, object]:
        return {"id": sid, "project": f"p-{sid}", "agent": "claude", "account": account}

    data = {
        "since": 0,
        "until": 3600,
        "totals": {"waited_on_you_s": 0, "prompts": 0},
        "sessions": [session("s1", "work"), session("s2", "home")],
    }
    lines = render_report(data).splitlines()
    head = next(line for line in lines if line.startswith("SESSION"))
    assert head.split()[:4] == ["SESSION", "AGENT", "ACCOUNT", "PANE"]
    assert any(line.split()[:3] == ["p-s1", "Claude", "work"] for line in lines)
    assert any(line.split()[:3] == ["p-s2", "Claude", "home"] for line in lines)
    data["sessions"] = [session("s1", "work"), session("s2", "work")]
    assert "ACCOUNT" not in render_report(data)


# --- a real daemon watching two Claude config dirs ----------------------------------------------


def _job_state() -> dict[str, Any]:
    """A captured 2.1.332 state.json of a job waiting on a permission dialog."""
    rows = (SAMPLES / "claude-code-2.1.332" / "bg" / "jobs-files-over-time.jsonl").read_text()
    for line in rows.splitlines():
        content = json.loads(line).get("content")
        if isinstance(content, dict) and content.get("tempo") == "blocked":
            return dict(content)
    raise AssertionError("no blocked job in the captures")


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[FakeClaude, FakeClaude]]:
    work = FakeClaude(tmp_path / "a", tmp_path / "a" / ".claude-work", str(uuid.uuid4()))
    home = FakeClaude(tmp_path / "b", tmp_path / "b" / ".claude", str(uuid.uuid4()))
    yield work, home
    work.kill()
    home.kill()


def _where(d: Daemon, sid: str, **want: object) -> dict[str, object] | None:
    s = d.session(sid)
    return s if s and all(s.get(k) == v for k, v in want.items()) else None


def test_a_daemon_watching_two_claude_dirs_gives_each_row_its_own_account(
    tmp_path: Path, two: tuple[FakeClaude, FakeClaude]
) -> None:
    work, home = two
    dirs = f"{work.claude_dir},personal={home.claude_dir}"
    work.status("idle")
    home.status("idle")
    (home.claude_dir / "jobs").mkdir()
    d = Daemon(
        home=tmp_path / "pmx", claude_dir=work.claude_dir, env_extra={"PURPLEMUX_CLAUDE_DIRS": dirs}
    ).start()
    try:
        # Each found from its own dir's session file, no hook: its account is that dir's.
        a = wait_for(lambda: _where(d, work.sid, account="claude-work"), timeout=15)
        b = wait_for(lambda: _where(d, home.sid, account="personal"), timeout=15)
        assert a["cwd"] == CWD and b["cwd"] == CWD
        assert (a["view"]["account"], b["view"]["account"]) == ("claude-work", "personal")
        # Each transcript is followed under its own dir: states and answers stay apart.
        work.prompt("first")
        work.status("busy")
        home.prompt("second")
        home.status("busy")
        wait_for(lambda: _where(d, work.sid, state="busy"))
        wait_for(lambda: _where(d, home.sid, state="busy"))
        home.answer("The personal answer.")
        home.status("idle")
        b = wait_for(lambda: _where(d, home.sid, state="review"))
        assert b["snippet"] == "The personal answer." and b["account"] == "personal"
        assert (d.session(work.sid) or {})["state"] == "busy"
        work.answer("The work answer.")
        work.status("idle")
        a = wait_for(lambda: _where(d, work.sid, state="review"))
        assert a["snippet"] == "The work answer." and a["account"] == "claude-work"
        # A hook-only session: its transcript_path names its account.
        sid = str(uuid.uuid4())
        run_hook(
            d.home,
            {
                "session_id": sid,
                "hook_event_name": "UserPromptSubmit",
                "cwd": "/w/hooked",
                "transcript_path": str(home.claude_dir / "projects" / "-w-hooked" / f"{sid}.jsonl"),
                "prompt": "hello",
            },
        )
        hooked = wait_for(lambda: _where(d, sid, state="busy"))
        assert hooked["account"] == "personal" and hooked["view"]["account"] == "personal"
        # A background job (claude --bg) under the personal dir: its row is that account's.
        state = _job_state()
        job = home.claude_dir / "jobs" / state["sessionId"][:8]
        job.mkdir(parents=True)
        (job / "state.json").write_text(json.dumps(state))
        bg = wait_for(lambda: _where(d, state["sessionId"], state="needs-input"), timeout=15)
        assert bg["account"] == "personal" and bg["background"] is True
        # `status` has the account column.
        out = d.cli("status", check=True).stdout
        head = out.splitlines()[0].split()
        assert head[:4] == ["STATE", "NAME", "AGENT", "ACCOUNT"]
        rows = {line.split()[-1]: line.split() for line in out.splitlines()[1:]}
        assert rows[work.sid[:8]][3] == "claude-work" and rows[home.sid[:8]][3] == "personal"
    finally:
        d.stop()


def test_with_one_claude_dir_rows_carry_the_account_but_show_no_chip(
    tmp_path: Path, two: tuple[FakeClaude, FakeClaude]
) -> None:
    work, _ = two
    work.status("idle")
    d = Daemon(home=tmp_path / "pmx", claude_dir=work.claude_dir).start()
    try:
        s = wait_for(lambda: _where(d, work.sid, account="claude-work"), timeout=15)
        assert s["view"]["account"] == ""  # every row would say the same
        assert "ACCOUNT" not in d.cli("status", check=True).stdout
    finally:
        d.stop()


# --- the hook route: the payload's transcript_path names the account ------------------------


def _recorded(path: Path) -> list[dict[str, object]]:
    return [json.loads(line)["payload"] for line in path.read_text().splitlines() if line]


@pytest.mark.parametrize(
    ("agent", "sample"),
    [
        ("claude", "claude-code-2.1.332/hooks-manual.jsonl"),
        ("claude", "claude-code-2.1.332/hooks-auto.jsonl"),
        ("codex", "codex-0.171.0/b_plain/hooks.jsonl"),
        ("codex", "codex-0.171.0/c_approve/hooks.jsonl"),
    ],
)
def test_every_recorded_hook_names_its_account_from_its_transcript_path(
    agent: str, sample: str
) -> None:
    """The real payloads (2.1.332, Codex 0.171.0) all carry transcript_path: the hook script
    sends nothing more, and the route names the account."""
    from purplemux.sources.hooks import to_event

    s = settings(
        PURPLEMUX_CLAUDE_DIRS="personal=/home/me/.claude,work=/home/dev/.claude",
        PURPLEMUX_CODEX_HOMES="/home/me/.codex-x,cx=/home/user/.codex",
    )
    payloads = _recorded(SAMPLES / sample)
    assert payloads
    headers = {"x-purplemux-agent": agent}
    accounts = {to_event(p, headers, 0.0, s.account_of).account for p in payloads}
    assert accounts == {"work" if agent == "claude" else "cx"}
    # Outside every listed dir (or without the rule): no account, the row just shows none.
    assert {to_event(p, headers, 0.0).account for p in payloads} == {None}
    other = settings(PURPLEMUX_CLAUDE_DIRS="/elsewhere/.claude")
    assert to_event(payloads[0], headers, 0.0, other.account_of).account is None


def test_a_hook_spooled_while_the_daemon_was_down_keeps_its_account(tmp_path: Path) -> None:
    work, personal = tmp_path / ".claude-work", tmp_path / "me" / ".claude"
    env = {"PURPLEMUX_CLAUDE_DIRS": f"{work},personal={personal}"}
    d = Daemon(home=tmp_path / "pmx", claude_dir=work, env_extra=env).start()
    d.stop()
    sid = str(uuid.uuid4())
    run_hook(
        d.home,
        {
            "session_id": sid,
            "hook_event_name": "UserPromptSubmit",
            "cwd": "/w/spooled",
            "transcript_path": str(personal / "projects" / "-w-spooled" / f"{sid}.jsonl"),
            "prompt": "while you were out",
        },
    )
    wait_for(lambda: list((d.home / "spool").glob("*.spool")))  # (the script spools behind)
    again = Daemon(home=d.home, claude_dir=work, port=d.port, env_extra=env).start()
    try:
        s = wait_for(lambda: _where(again, sid, state="busy"), timeout=15)
        assert s["account"] == "personal" and s["view"]["account"] == "personal"
    finally:
        again.stop()


def test_a_limit_reading_names_the_account_of_its_transcript(tmp_path: Path) -> None:
    """A statusLine input or a rollout no session names yet: its file's account, else the
    agent's first (what branch `limits` reads its gauges under)."""
    from purplemux.daemon.limit_keeper import default_account

    work, personal = tmp_path / ".claude-work", tmp_path / "me" / ".claude"
    s = settings(PURPLEMUX_CLAUDE_DIRS=f"{work},personal={personal}")
    assert default_account(s, "claude", f"{personal}/projects/-w-p/a.jsonl") == "personal"
    assert default_account(s, "claude", f"{work}/projects/-w-p/a.jsonl") == "claude-work"
    assert default_account(s, "claude", None) == "claude-work"
    assert default_account(s, "claude", "/elsewhere/a.jsonl") == "claude-work"
    assert default_account(s, "codex", None) == "codex"
