"""What a session is, costs and still runs: pure helpers over the session's new fields.

The context bar (tokens, window, percent, band), the price table, the display name and the short
texts the row, the CLI, tmux-status and notifications show ("finished · 1 task still running",
"retrying (3)"). No I/O except reading the shipped price table once. Renderers call these; the
view model (present.py) can re-use them as they are.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

# --- context ----------------------------------------------------------------------------------

DEFAULT_WINDOW = 200_000
LONG_WINDOW = 1_000_000
WINDOWS: tuple[tuple[str, int], ...] = (
    # (substring of the model id, context window in tokens); the first match wins. A model id
    # ending in "[1m]" (Claude Code's 1M-context variants) always gets LONG_WINDOW.
    ("opus", DEFAULT_WINDOW),
    ("sonnet", DEFAULT_WINDOW),
    ("haiku", DEFAULT_WINDOW),
)
BANDS: tuple[tuple[float, str], ...] = (
    # (percent below which, band): seed 000's bands.
    (70.0, "healthy"),
    (85.0, "warning"),
    (95.0, "critical"),
)
COMPACTING = "compacting"


def context_window(
    model: str | None, long_context: bool = False, override: int | None = None
) -> int:
    """The model's context window: the override (PURPLEMUX_CONTEXT_WINDOW, from the settings),
    the [1m] suffix, the family table."""
    if override:
        return override
    name = (model or "").lower()
    if long_context or name.endswith("[1m]"):
        return LONG_WINDOW
    for needle, window in WINDOWS:
        if needle in name:
            return window
    return DEFAULT_WINDOW


def band(percent: float, compacting: bool = False) -> str:
    """healthy < 70 <= warning < 85 <= critical < 95 <= compacting; compacting while it runs."""
    if compacting:
        return COMPACTING
    for limit, name in BANDS:
        if percent < limit:
            return name
    return COMPACTING


def context(
    tokens: int | None,
    model: str | None,
    long_context: bool = False,
    compacting: bool = False,
    window_override: int | None = None,
) -> dict[str, Any] | None:
    """The public `context` object, or None before any reply was seen."""
    if tokens is None:
        return (
            {"tokens": None, "window": None, "percent": None, "band": COMPACTING}
            if compacting
            else None
        )
    window = context_window(model, long_context, window_override)
    percent = round(100.0 * tokens / window, 1) if window else 0.0
    return {
        "tokens": tokens,
        "window": window,
        "percent": percent,
        "band": band(percent, compacting),
    }


# --- prices -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float


@dataclass(frozen=True, slots=True)
class PriceTable:
    as_of: str
    families: tuple[tuple[str, Price], ...]
    default: Price

    def for_model(self, model: str | None) -> Price:
        name = (model or "").lower()
        for needle, price in self.families:
            if needle in name:
                return price
        return self.default


def parse_prices(data: Mapping[str, Any]) -> PriceTable:
    families: list[tuple[str, Price]] = []
    for row in data["families"]:
        price = Price(
            float(row["input"]),
            float(row["output"]),
            float(row["cache_read"]),
            float(row["cache_write"]),
        )
        families.append((str(row["match"]).lower(), price))
    default = dict(families).get(str(data.get("default", "")).lower()) or families[0][1]
    return PriceTable(str(data["as_of"]), tuple(families), default)


def prices_path() -> Path:
    return Path(str(resources.files("purplemux") / "data" / "prices.json"))


@functools.cache
def prices() -> PriceTable:
    """The shipped price table (purplemux/data/prices.json)."""
    return parse_prices(json.loads(prices_path().read_text()))


def cost(
    model: str | None, input: int, output: int, cache_read: int = 0, cache_write: int = 0
) -> float:
    """What one reply's usage costs, in USD, by the price table."""
    p = prices().for_model(model)
    return (
        input * p.input
        + output * p.output
        + cache_read * p.cache_read
        + cache_write * p.cache_write
    ) / 1_000_000


# --- waiting ----------------------------------------------------------------------------------

WAITING_FOR: dict[str, str] = {
    # 2.1.332's session-file waitingFor values, said the way the row shows them.
    "dialog open": "a dialog: auto mode can't check this action (no hook fires for it)",
    "input needed": "a question",
}
FILE_WAITING = frozenset(
    {
        *WAITING_FOR.values(),
        "permission prompt",
        "sandbox request",
        "worker request",
        "goal proposal",
    }
)
"""waiting_for texts that came from a session file: a newer file value may replace them."""

# --- names and texts --------------------------------------------------------------------------


def display_name(title: str | None, project: str | None, session_id: str = "") -> str:
    """Claude's own name for the session, else the project, else the id's head."""
    return title or project or (f"session {session_id[:8]}" if session_id else "session")


BYPASS = "bypassPermissions"
MODE_TAGS: dict[str, str] = {
    "default": "manual",
    "auto": "auto",
    "plan": "plan",
    "acceptEdits": "accept edits",
    BYPASS: "BYPASS",
    "dontAsk": "don't ask",
}


def mode_tag(permission_mode: str | None) -> str | None:
    """The short tag for a permission mode; bypass is shouted."""
    if not permission_mode:
        return None
    return MODE_TAGS.get(permission_mode, permission_mode)


def is_bypass(permission_mode: str | None) -> bool:
    return permission_mode == BYPASS


def running_tasks(tasks: Any) -> int:
    """How many background tasks (shells, agents) still run."""
    if not isinstance(tasks, list | tuple):
        return 0
    return sum(1 for t in tasks if _get(t, "status") in (None, "running"))


def tasks_text(count: int) -> str:
    return f"{count} task{'s' if count != 1 else ''} still running"


def review_text(tasks: Any) -> str:
    """What a review row says: "finished", with the tasks still running after the turn."""
    n = running_tasks(tasks)
    return f"finished · {tasks_text(n)}" if n else "finished"


def retry_text(retries: int, reason: str | None = None) -> str | None:
    """ "retrying (3): overloaded" while Claude retries a failing API call."""
    if retries <= 0:
        return None
    return f"retrying ({retries})" + (f": {reason}" if reason else "")


ERROR_REASONS: dict[str, str] = {
    "server_error": "overloaded or failing API",
    "authentication_failed": "authentication failed",
    "rate_limit": "rate limited",
    "billing_error": "billing",
    "invalid_request": "invalid request",
    "model_not_found": "model not found",
}


def failure_reason(error_kind: str | None) -> str | None:
    """StopFailure's `error` in words."""
    if not error_kind:
        return None
    return ERROR_REASONS.get(error_kind, error_kind.replace("_", " "))


def money(usd: float | None) -> str:
    if usd is None:
        return ""
    return f"${usd:.2f}" if usd >= 0.995 or usd == 0 else f"${usd:.3f}".rstrip("0").rstrip(".")


_TASK_ID = re.compile(r"<task-id>\s*([^<\s]+)\s*</task-id>")
_TASK_STATUS = re.compile(r"<status>\s*([^<\s]+)\s*</status>")
TASK_NOTIFICATION = "<task-notification>"


def task_notification(prompt: str) -> tuple[str, str] | None:
    """(task id, status) of the self-woken `<task-notification>` turn's prompt, else None."""
    if not prompt.lstrip().startswith(TASK_NOTIFICATION):
        return None
    found = _TASK_ID.search(prompt)
    if not found:
        return None
    status = _TASK_STATUS.search(prompt)
    return found.group(1), status.group(1) if status else "completed"


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


# --- what a row shows (for the dashboard, the CLI and notifications) --------------------------


def row_facts(session: Mapping[str, Any]) -> dict[str, Any]:
    """The new facts of one session JSON (Session.to_json), ready to show."""
    ctx = session.get("context") or None
    tasks = running_tasks(session.get("background_tasks"))
    mode = session.get("permission_mode")
    retrying = (
        retry_text(int(session.get("retries") or 0)) if session.get("state") == "busy" else None
    )
    return {
        "name": session.get("name")
        or display_name(None, session.get("project"), session.get("id", "")),
        "mode": mode_tag(mode),
        "bypass": is_bypass(mode),
        "context": ctx,
        "context_text": f"ctx {ctx['percent']:.0f}%"
        if ctx and ctx.get("percent") is not None
        else "",
        "cost": money(session.get("cost_usd")),
        "tasks": tasks_text(tasks) if tasks else "",
        "review": review_text(session.get("background_tasks"))
        if session.get("state") == "review"
        else "",
        "retrying": retrying or "",
        "failure": failure_reason(session.get("error_kind")) or "",
    }


def facts_line(session: Mapping[str, Any]) -> str:
    """One line: "auto · ctx 75% · $0.60 · 1 task still running" (empty parts left out)."""
    return line_of(row_facts(session))


def line_of(facts: Mapping[str, Any]) -> str:
    """facts_line() of a session's row_facts(), for a caller that has them."""
    parts = [facts["mode"] or "", facts["context_text"], facts["cost"]]
    parts.append(facts["retrying"] or facts["tasks"])
    return " · ".join(p for p in parts if p)
