"""One door per agent (agents/base.py `Agent`, agents/registry.py): every registered agent fills
every field of the record, nothing outside agents/ branches on an agent's name or imports one
agent's package, and a toy third agent (tests/agents/toy_agent) that registers through the same
door is listed, installed and watched with no change outside its own package."""

from __future__ import annotations

import ast
import dataclasses
import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_type_hints

import pytest
from fastapi.testclient import TestClient

from purplemux.agents import base, facts, registry
from purplemux.cli import doctor, main
from purplemux.io.settings import Settings
from purplemux.parts import sources
from purplemux.server.app import create_app
from tests.agents import toy_agent
from tests.support.daemon import REPO, wait_for
from tests.support.hooks import hook_headers, settings_for

PACKAGE = REPO / "purplemux"


@pytest.fixture
def toy() -> Iterator[base.Agent]:
    registry.register(toy_agent.AGENT)
    try:
        yield toy_agent.AGENT
    finally:
        registry.unregister(toy_agent.AGENT.name)


# --- the record ------------------------------------------------------------------------------


def test_every_field_of_the_record_has_no_default() -> None:
    """An agent that leaves a field out does not construct: the record has no defaults."""
    for field in dataclasses.fields(base.Agent):
        assert field.default is dataclasses.MISSING, field.name
        assert field.default_factory is dataclasses.MISSING, field.name


@pytest.mark.parametrize("name", registry.names())
def test_every_registered_agent_fills_every_field(name: str) -> None:
    agent = registry.get(name)
    hints = get_type_hints(base.Agent, vars(base))
    for field in dataclasses.fields(base.Agent):
        value = getattr(agent, field.name)
        optional = "None" in str(hints[field.name])
        assert value is not None or optional, f"{name}: {field.name} is None"
        if (
            callable(hints[field.name])
            and value is not None
            and "Callable" in str(hints[field.name])
        ):
            assert callable(value), f"{name}: {field.name} is not callable"
    assert agent.facts.name == name and agent.label == agent.facts.label
    installer = agent.installer
    for field in dataclasses.fields(base.Installer):
        value = getattr(installer, field.name)
        assert value is not None or field.name in ("standalone", "cli"), field.name
    live = agent.live(Settings(home=Path("/nonexistent/home"), claude_dir=Path("/nonexistent")))
    assert live.parts and all(callable(p) for p in live.parts)
    assert callable(live.judge)


def test_the_toy_agent_fills_the_record_too() -> None:
    assert toy_agent.AGENT.name == "toy" and toy_agent.AGENT.label == "Toy"


def test_register_refuses_a_taken_name_and_unregister_keeps_the_built_in_ones(
    toy: base.Agent,
) -> None:
    with pytest.raises(ValueError, match="registered already"):
        registry.register(toy)
    for name in ("claude", "codex"):
        with pytest.raises(ValueError, match="built in"):
            registry.unregister(name)


# --- nothing outside agents/ knows an agent by name -----------------------------------------


def _outside_agents() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if "agents" in path.relative_to(PACKAGE).parts[:1]:
            continue
        yield path, ast.parse(path.read_text(), str(path))


def _names(node: ast.AST) -> set[str]:
    return {
        n.value
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in AGENT_NAMES
    }


AGENT_NAMES = {"claude", "codex"}


def test_no_branch_on_an_agents_name_outside_agents() -> None:
    """No comparison, membership test or match with an agent's name as a string: a grep of
    `== "claude"`, `!= "codex"`, `in ("claude", …)` and `case "codex"` over every module
    outside agents/, read as Python (not as text: docstrings may name them)."""
    found = []
    for path, tree in _outside_agents():
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and _names(node):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
            if isinstance(node, ast.match_case) and _names(node.pattern):
                found.append(f"{path.relative_to(REPO)}:{node.pattern.lineno}")
    assert found == []


def test_no_import_of_one_agents_package_outside_agents() -> None:
    """The grep that agrees with the import-linter contract "One door per agent"."""
    found = []
    for path, tree in _outside_agents():
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            if any(
                n.startswith(("purplemux.agents.claude", "purplemux.agents.codex")) for n in names
            ):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert found == []


def test_the_package_top_level_holds_a_handful_of_modules() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert top == ["__init__.py", "__main__.py"]


# --- the toy agent: listed, installed, watched -----------------------------------------------


def test_the_toy_agent_is_listed_with_its_accounts(toy: base.Agent, tmp_path: Path) -> None:
    home = tmp_path / "toyhome"
    settings = Settings.from_env({"PURPLEMUX_HOME": str(tmp_path / "pmx"), "TOY_HOME": str(home)})
    assert [(a.agent, a.label, a.dir) for a in settings.accounts_of("toy")] == [
        ("toy", "toyhome", home)
    ]
    assert facts.label("toy") == "Toy"
    several = Settings.from_env({"PURPLEMUX_TOY_HOMES": f"a={tmp_path / 'a'},{tmp_path / 'b'}"})
    assert [a.label for a in several.accounts_of("toy")] == ["a", "b"]


def test_the_toy_agent_is_installed_and_uninstalled_by_the_cli(
    toy: base.Agent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "toyhome"
    home.mkdir()
    monkeypatch.setenv("PURPLEMUX_HOME", str(tmp_path / "pmx"))
    monkeypatch.setenv("TOY_HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    out = io.StringIO()
    assert main(["install-hooks", "--agent", "toy"], out=out) == 0
    assert out.getvalue() == f"installed purplemux hooks in {home / 'hooks.txt'}\n"
    line = (home / "hooks.txt").read_text()
    assert str(tmp_path / "pmx" / "status-hook.sh") in line and "PURPLEMUX_AGENT=toy" in line
    checks = doctor.run_checks(Settings.from_env())
    assert [(c.name, c.level) for c in checks if c.name.startswith("toy")] == [
        ("toy hooks (toyhome)", "ok")
    ]
    out = io.StringIO()
    assert main(["uninstall-hooks", "--agent", "toy"], out=out) == 0
    assert not (home / "hooks.txt").exists()
    assert "removed purplemux hooks" in out.getvalue()


def test_the_toy_agents_hooks_make_its_row(toy: base.Agent, tmp_path: Path) -> None:
    with TestClient(create_app(settings_for(tmp_path))) as c:
        c.headers["Authorization"] = "Bearer " + (tmp_path / "home" / "token").read_text().strip()
        now = time.time()
        for n, name in enumerate(("Start", "Prompt")):
            payload = {"session_id": "toy-1", "hook_event_name": name, "cwd": "/w/toy"}
            headers = {**hook_headers(f"toy-{n}", int((now + n) * 1e9)), "X-Purplemux-Agent": "toy"}
            assert (
                c.post("/api/hooks", content=json.dumps(payload), headers=headers).status_code
                == 202
            )
        rows = wait_for(
            lambda: [s for s in c.get("/api/sessions").json()["sessions"] if s["id"] == "toy-1"],
            what="a row for toy-1 in /api/sessions",
        )
        assert rows[0]["agent"] == "toy" and rows[0]["state"] == "busy"
        assert "Toy" in json.dumps(rows[0]["view"])


def test_the_toy_agents_live_source_is_watched(toy: base.Agent, tmp_path: Path) -> None:
    toy_home = tmp_path / "toyhome"
    (toy_home / "status").mkdir(parents=True)
    settings = Settings.from_env(
        {"TOY_HOME": str(toy_home)},
        home=tmp_path / "home",
        claude_dir=tmp_path / "claude",
        port=0,
        allowed_hosts=("testserver",),
    )
    # The parts the daemon runs for its agents, through the same door: the toy's is among them.
    made = {p.__name__: p for p in sources.parts(settings)}
    assert {"toy_status", "session_files", "codex_panes", "recovery"} <= set(made)
    with TestClient(create_app(settings, components=[made["toy_status"]])) as c:
        c.headers["Authorization"] = "Bearer " + (tmp_path / "home" / "token").read_text().strip()
        (toy_home / "status" / "toy-2").write_text("busy\n")

        def row() -> dict[str, Any] | None:
            found = [s for s in c.get("/api/sessions").json()["sessions"] if s["id"] == "toy-2"]
            return found[0] if found and found[0]["state"] == "busy" else None

        shown = wait_for(row, what="toy-2 busy in /api/sessions")
        assert shown["agent"] == "toy" and shown["account"] == "toyhome"
        (toy_home / "status" / "toy-2").write_text("idle\n")
        wait_for(
            lambda: (
                [
                    s["state"]
                    for s in c.get("/api/sessions").json()["sessions"]
                    if s["id"] == "toy-2"
                ]
                in (["idle"], ["review"])
            ),
            what="toy-2 no longer busy in /api/sessions",
        )
