"""Usage limits for the fake Responses API (fake_responses.py): ``LIMIT:`` prompts and the
per-server control that puts Codex's rate-limit headers on every answer.

Why: Codex 0.171.0 reads ``x-codex-{primary,secondary}-{used-percent,window-minutes,reset-at}``
(and ``x-codex-rate-limit-reached-type``) from the response headers into the rollout's
``token_count.rate_limits`` (codex.md), and ends a turn on a 429 with "exceeded retry limit,
last status: 429 Too Many Requests". Issue #25's tests need each of these on demand.

====================  ==========================================================================
prompt (turns only)   answer
====================  ==========================================================================
``LIMIT:5h``          429 ``usage_limit_reached`` (the body of a ChatGPT plan at its limit:
                      ``plan_type``, ``resets_at``, ``resets_in_seconds``) with the primary
                      (5-hour) window at 100 % (secondary 62 %) in the headers and
                      ``x-codex-rate-limit-reached-type: rate_limit_reached``
``LIMIT:7d``          the same with the secondary (weekly) window at 100 % (primary 35 %)
``LIMIT:plain``       429 ``rate_limit_exceeded``, no rate-limit headers
====================  ==========================================================================

Seen on 0.171.0 (README.md has the rollout): a ``usage_limit_reached`` 429 writes a
``token_count`` with the 429's windows and ``rate_limit_reached_type`` and fails the turn with
"You've hit your usage limit. ... try again at <time>."; any other 429 is retried
(``request_max_retries``) and fails with "exceeded retry limit, last status: 429 Too Many
Requests", writing no ``token_count`` (its headers are not read).

The control is the attribute ``FakeResponsesAPI.limits`` (a :class:`CodexLimitControl`), read
afresh per request:

- ``primary`` / ``secondary``: used percent sent on every answer that has no headers of its
  own (200s, and the 429 of ``reject``); None leaves that window out.
- ``primary_reset_in`` / ``secondary_reset_in``: seconds from the request to ``-reset-at``.
- ``reject``: a LIMIT kind ("5h", "7d", "plain") every turn request gets, whatever its
  prompt; None (default) rejects only LIMIT prompts.
- ``reached_type``: the ``x-codex-rate-limit-reached-type`` of the 5h/7d 429s (None: no
  header; the values Codex knows: rate_limit_reached, workspace_owner_credits_depleted,
  workspace_member_credits_depleted, workspace_owner_usage_limit_reached,
  workspace_member_usage_limit_reached).
- ``ok_after``: a unix time from which LIMIT prompts (and ``reject``) are answered with 200.

The hidden title request and follow-ups after a tool output are never rejected.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

PRIMARY_WINDOW_MINUTES = 300
SECONDARY_WINDOW_MINUTES = 10080
LIMIT_KINDS = ("5h", "7d", "plain")
REACHED_TYPE = "rate_limit_reached"
PLAN_TYPE = "pro"
RATE_LIMIT_MESSAGE = "Rate limit reached for requests (scripted)."
USAGE_LIMIT_MESSAGE = "The usage limit has been reached"

_LIMIT_RE = re.compile(r"^LIMIT:\s*(5h|7d|plain)\b", re.IGNORECASE)


def limit_kind(text: str | None) -> str | None:
    match = _LIMIT_RE.match(text or "")
    return match.group(1).lower() if match else None


def window_headers(
    primary: float | None,
    secondary: float | None,
    now: float,
    primary_reset_in: int = PRIMARY_WINDOW_MINUTES * 60,
    secondary_reset_in: int = SECONDARY_WINDOW_MINUTES * 60,
) -> dict[str, str]:
    """The ``x-codex-*`` window headers: used %, window length, reset (unix s)."""
    out: dict[str, str] = {}
    for name, used, minutes, reset_in in (
        ("primary", primary, PRIMARY_WINDOW_MINUTES, primary_reset_in),
        ("secondary", secondary, SECONDARY_WINDOW_MINUTES, secondary_reset_in),
    ):
        if used is None:
            continue
        out[f"x-codex-{name}-used-percent"] = f"{used:g}"
        out[f"x-codex-{name}-window-minutes"] = str(minutes)
        out[f"x-codex-{name}-reset-at"] = str(int(now) + reset_in)
    return out


@dataclass
class CodexLimitControl:
    """What the fake Responses API does about usage limits; see the module docstring."""

    primary: float | None = None
    secondary: float | None = None
    primary_reset_in: int = PRIMARY_WINDOW_MINUTES * 60
    secondary_reset_in: int = SECONDARY_WINDOW_MINUTES * 60
    reject: str | None = None
    reached_type: str | None = REACHED_TYPE
    ok_after: float | None = None

    def ok_headers(self, now: float) -> dict[str, str]:
        """The window headers of every answer that brings none of its own."""
        return window_headers(
            self.primary, self.secondary, now, self.primary_reset_in, self.secondary_reset_in
        )

    def rejection(
        self, text: str | None, now: float
    ) -> tuple[dict[str, Any], dict[str, str]] | None:
        """For a turn request whose prompt is ``text``: None (answer normally) or the 429's
        (body, headers)."""
        kind = limit_kind(text) or self.reject
        if kind is None or (self.ok_after is not None and now >= self.ok_after):
            return None
        if kind == "plain":
            return _error("rate_limit_exceeded", RATE_LIMIT_MESSAGE), {}
        five_h = kind == "5h"
        headers = window_headers(
            100 if five_h else 35,
            62 if five_h else 100,
            now,
            self.primary_reset_in,
            self.secondary_reset_in,
        )
        if self.reached_type is not None:
            headers["x-codex-rate-limit-reached-type"] = self.reached_type
        body = _error("usage_limit_reached", USAGE_LIMIT_MESSAGE)
        reset_in = self.primary_reset_in if five_h else self.secondary_reset_in
        body["error"].update(
            plan_type=PLAN_TYPE, resets_at=int(now) + reset_in, resets_in_seconds=reset_in
        )
        return body, headers

    def allow_from_now(self) -> None:
        self.ok_after = time.time()


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}
