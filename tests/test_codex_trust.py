"""Codex's hook trust hash: every hash the real Codex 0.171.0 wrote (or accepted) reproduces."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from purplemux.agents.codex.trust import (
    EVENT_LABELS,
    normalized_timeout,
    state_key,
    trusted_hash,
)

SAMPLES = Path(__file__).parent / "samples" / "codex-0.171.0"
VECTORS: list[dict[str, Any]] = json.loads((SAMPLES / "hash-vectors.json").read_text())


def _group(vector: dict[str, Any]) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": [vector["handler"]]}
    if vector["matcher"] is not None:
        group["matcher"] = vector["matcher"]
    return group


@pytest.mark.parametrize("vector", VECTORS, ids=[v["state_key"] for v in VECTORS])
def test_every_vector_reproduces(vector: dict[str, Any]) -> None:
    label = EVENT_LABELS[vector["event"]]
    expected = vector.get("trusted_hash_written_by_codex", vector["computed"])
    assert trusted_hash(label, _group(vector)) == expected
    file, _, rest = vector["state_key"].rpartition(f":{label}:")
    gi, hi = (int(n) for n in rest.split(":"))
    assert state_key(file, label, gi, hi) == vector["state_key"]


def test_the_vectors_are_what_codex_wrote_after_trust_all() -> None:
    """run1: the 12 entries `/hooks` -> `t` wrote (paths rewritten in the sample, hashes not)."""
    config = tomllib.loads((SAMPLES / "run1-config-after-trust-all.toml").read_text())
    written = {
        key.rsplit(":", 3)[1]: e["trusted_hash"] for key, e in config["hooks"]["state"].items()
    }
    from_codex = {
        EVENT_LABELS[v["event"]]: v["trusted_hash_written_by_codex"]
        for v in VECTORS
        if "trusted_hash_written_by_codex" in v
    }
    assert len(written) == 12
    assert written == from_codex


def test_the_example_config_trusts_all_14_example_hooks() -> None:
    """Including PreModelRequest/PostModelRequest, which ran in the real Codex with these."""
    config = tomllib.loads((SAMPLES / "example-config.toml").read_text())
    hooks = json.loads((SAMPLES / "example-hooks.json").read_text())["hooks"]
    written = config["hooks"]["state"]
    assert set(hooks) == set(EVENT_LABELS)
    for event, label in EVENT_LABELS.items():
        key = state_key("/home/user/.codex/hooks.json", label, 0, 0)
        assert trusted_hash(label, hooks[event][0]) == written[key]["trusted_hash"], event


def test_timeout_normalisation() -> None:
    assert normalized_timeout("stop", None) == 600
    assert normalized_timeout("stop", 0) == 1
    assert normalized_timeout("stop", 42) == 42
    assert normalized_timeout("session_end", None) == 1
    assert normalized_timeout("session_end", 0) == 1
    assert normalized_timeout("interrupt", 10) == 3
    assert normalized_timeout("interrupt", 2) == 2
    with pytest.raises(ValueError):
        normalized_timeout("stop", "5")
    with pytest.raises(ValueError):
        normalized_timeout("stop", True)


def test_clamped_and_unset_timeouts_hash_as_codex_runs_them() -> None:
    handler = {"type": "command", "command": "x"}
    assert trusted_hash("interrupt", {"hooks": [{**handler, "timeout": 10}]}) == trusted_hash(
        "interrupt", {"hooks": [{**handler, "timeout": 3}]}
    )
    assert trusted_hash("stop", {"hooks": [handler]}) == trusted_hash(
        "stop", {"hooks": [{**handler, "timeout": 600, "async": False}]}
    )


def test_matcher_counts_except_for_prompt_submit_and_stop() -> None:
    handler = {"type": "command", "command": "x", "timeout": 5}
    for label in ("user_prompt_submit", "stop"):
        assert trusted_hash(label, {"matcher": "m", "hooks": [handler]}) == trusted_hash(
            label, {"hooks": [handler]}
        )
    assert trusted_hash("session_start", {"matcher": "m", "hooks": [handler]}) != trusted_hash(
        "session_start", {"hooks": [handler]}
    )


def test_status_message_counts_only_when_set_and_each_handler_has_its_own_hash() -> None:
    a = {"type": "command", "command": "a", "timeout": 5}
    b = {"type": "command", "command": "b", "timeout": 5}
    assert trusted_hash("stop", {"hooks": [{**a, "statusMessage": None}]}) == trusted_hash(
        "stop", {"hooks": [a]}
    )
    assert trusted_hash("stop", {"hooks": [{**a, "statusMessage": "hi"}]}) != trusted_hash(
        "stop", {"hooks": [a]}
    )
    assert trusted_hash("stop", {"hooks": [a, b]}, 1) == trusted_hash("stop", {"hooks": [b]})


def test_all_14_events_have_labels() -> None:
    assert len(EVENT_LABELS) == 14
    assert len(set(EVENT_LABELS.values())) == 14
