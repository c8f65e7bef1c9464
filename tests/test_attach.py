"""How the daemon runs `claude attach <job>` for a background session (agents/claude/attach.py):
with the session's own HOME / config dir, and only for a job id that is one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from purplemux.agents.claude.attach import AttachError, attach_command, session_env
from purplemux.core.model import Session


def test_the_workers_own_home_and_config_dir_win() -> None:
    worker = {"HOME": "/home/u", "CLAUDE_CONFIG_DIR": "/home/u/.claude-work"}
    assert session_env(worker, Path("/elsewhere/.claude")) == (worker, False)
    assert session_env({"HOME": "/home/u"}, Path("/x")) == ({"HOME": "/home/u"}, True)


def test_without_the_workers_environment_the_daemons_config_dir_says() -> None:
    # ~/.claude: that HOME, and no CLAUDE_CONFIG_DIR (Claude then reads ~/.claude.json).
    assert session_env(None, Path("/home/u/.claude")) == ({"HOME": "/home/u"}, True)
    # Any other folder: CLAUDE_CONFIG_DIR (Claude then reads .claude.json inside it).
    assert session_env(None, Path("/home/u/work")) == ({"CLAUDE_CONFIG_DIR": "/home/u/work"}, False)


def test_the_command_names_the_job_and_unsets_a_config_dir_the_session_does_not_have() -> None:
    me = Session(id="s", background=True, job_id="4c5f61e3", pid=os.getpid())
    argv = attach_command(me, Path("/nowhere/.claude"))
    assert argv[-2:] == ["attach", "4c5f61e3"]
    assert argv[0] == "env" and f"HOME={os.environ['HOME']}" in argv
    if "CLAUDE_CONFIG_DIR" not in os.environ:
        assert argv[1:3] == ["-u", "CLAUDE_CONFIG_DIR"]


@pytest.mark.parametrize("job", [None, "", "4c5f; rm -rf ~", "-h", "x" * 65])
def test_no_attach_without_a_job_id_that_is_one(job: str | None) -> None:
    with pytest.raises(AttachError):
        attach_command(Session(id="s", background=True, job_id=job), Path("/h/.claude"))
