"""The captured Codex CLI 0.171.0 samples (tests/samples/codex-0.171.0, see its README)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "codex-0.171.0"


def rollouts(scenario: str) -> list[Path]:
    """The scenario's rollout files, oldest first (their names start with the creation time)."""
    return sorted((SAMPLES / scenario / "rollout").glob("rollout-*.jsonl"))


def rollout(scenario: str) -> Path:
    """The scenario's only rollout file."""
    (path,) = rollouts(scenario)
    return path


def thread_id(path: Path) -> str:
    """The thread id at the end of a rollout file's name."""
    return "-".join(path.stem.split("-")[-5:])


def screen_titles(scenario: str) -> list[str]:
    """The pane titles the capture saw, in order (timeline.jsonl's screen entries)."""
    out = []
    for line in (SAMPLES / scenario / "timeline.jsonl").read_text().splitlines():
        entry: dict[str, Any] = json.loads(line)
        if entry.get("src") == "screen":
            out.append(str(entry["title"]))
    return out


def state_db(scenario: str) -> dict[str, list[dict[str, str]]]:
    """state-db.txt's tables: {"state_5.sqlite: threads": [row, ...], ...} (cells as text)."""
    tables: dict[str, list[dict[str, str]]] = {}
    lines = (SAMPLES / scenario / "state-db.txt").read_text().splitlines()
    name, header = "", [""]
    for line in lines:
        if line.startswith("== "):
            db, query = line[3:].split(": ", 1)
            name = f"{db}: {query.rsplit(' from ', 1)[1]}"
            tables[name] = []
            header = []
        elif not header:
            header = line.split(" | ")
        elif line.strip():
            tables[name].append(dict(zip(header, line.split(" | "), strict=True)))
    return tables
