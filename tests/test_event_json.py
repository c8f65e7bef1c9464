"""An event's JSON in the log (Event.to_json) is every field of its class, in order, with the
flat dataclasses it holds written as objects: for every kind of event, the same as a walk of
`dataclasses.fields` makes (the store writes one per event, so it no longer walks them)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from purplemux.core import events as ev
from purplemux.core.model import BackgroundTask, RateLimits, TmuxLocation, Tokens


def every_event_class() -> list[type[ev.Event]]:
    out: list[type[ev.Event]] = []
    todo: list[type[ev.Event]] = [ev.Event]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if "kind" in vars(cls):  # a kind of event, not a shared base (_ToolCall, _Status)
            out.append(cls)
    return out


def reference(e: ev.Event) -> dict[str, Any]:
    """What the log held before: a walk of dataclasses.fields at every call."""

    def flat(obj: Any) -> dict[str, Any]:
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}

    out: dict[str, Any] = {"kind": e.kind.value}
    for f in dataclasses.fields(e):
        value = getattr(e, f.name)
        if isinstance(value, TmuxLocation | Tokens | RateLimits):
            value = flat(value)
        elif isinstance(value, tuple):
            value = [flat(t) for t in value]
        out[f.name] = value
    out["name"] = e.label
    return out


def test_every_kind_of_events_json_is_its_fields_in_order() -> None:
    classes = every_event_class()
    assert len(classes) >= 30 and ev.TranscriptFacts in classes and ev.Stop in classes
    nested: dict[str, Any] = {
        "tmux": TmuxLocation("%3", "/tmp/tmux-1/default", "work", "2"),
        "tokens": Tokens(input=10, output=5, cache_read=100, cache_creation=1),
        "rate_limits": RateLimits(primary_percent=12.5, primary_window_minutes=300),
        "background_tasks": (BackgroundTask(id="t1", type="shell", description="npm test"),),
    }
    for cls in classes:
        names = {f.name for f in dataclasses.fields(cls)}
        given = {k: v for k, v in nested.items() if k in names}
        e = cls(session_id="s", at=1.5, id=f"{cls.__name__}-1", cwd="/p", **given)
        got = e.to_json()
        assert got == reference(e) and list(got) == list(reference(e)), cls.__name__
        assert got["tmux"] == {
            "pane": "%3",
            "socket": "/tmp/tmux-1/default",
            "session": "work",
            "window": "2",
        }
        json.dumps(got)  # what the store writes
