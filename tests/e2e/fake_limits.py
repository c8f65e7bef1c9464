"""Usage limits for the fake Messages API (fake_api.py): the ``LIMIT:`` prompts and the
per-server control that puts a subscription's unified rate-limit headers on every answer.

Why a module of its own: Claude Code 2.1.332 reads ``anthropic-ratelimit-unified-*`` response
headers (claude-code-bg-and-limits.md, "B. Usage limits") and shows a limit wall, a retry
banner or the statusLine's ``rate_limits`` from them, depending on the login. Tests of issue
#25 need to produce each of these on demand; the header sets here are the ones the captured
stand-in sent (samples/claude-code-2.1.332/bg-and-limits/fake-api-requests.log).

========================  =====================================================================
prompt (main requests)    answer
========================  =====================================================================
``LIMIT:plain``           429 ``rate_limit_error`` "Number of request tokens has exceeded your
                          per-minute rate limit", no unified headers
``LIMIT:5h``              429 ``rate_limit_error`` "This request would exceed your account's
                          rate limit. ..." plus the unified headers of a subscription at its
                          5-hour limit (status rejected, claim five_hour, 5h utilization 1.0,
                          7d 0.62 allowed)
``LIMIT:7d``              the same at the weekly limit (claim seven_day, 7d 1.0, 5h 0.35)
========================  =====================================================================

The control is an attribute, ``FakeAnthropicAPI.limits`` (a :class:`LimitControl`), read
afresh on every request, so a test changes it between turns (assign fields, or a whole new
object); nothing on disk:

- ``headers``: added to every 200 (main and side calls, streamed or not). ``"{now+N}"`` in a
  value becomes the unix time N seconds after the request; :func:`usage_headers` builds a
  subscription's "allowed" set (e.g. 5h 42 %, 7d 81 %, resets in the future).
- ``retry_after``: the ``retry-after`` header (seconds) of every LIMIT 429; None sends none.
- ``reset_in``: the rejected window's reset (``-reset`` and ``-5h-reset``/``-7d-reset``),
  seconds after the request. The other window resets a week (or 5 h) out.
- ``ok_after``: a unix time; from then on a LIMIT prompt is answered like any other text (200).
  Needed because Claude merges a failed prompt with the next one, so after a wall the next
  request still ends in ``LIMIT:...`` (and Claude's own auto-continue resends it).
- ``should_retry``: the ``x-should-retry`` header of a LIMIT 429. None (the default) sends
  none: Claude's SDK then retries a 429 (API key and gateway logins: 10 times, cut with
  ``CLAUDE_CODE_MAX_RETRIES``); False stops the retries.

Side calls (no tools: the session title) are never rejected; a real server at its limit would
reject them too, but Claude's screen and hooks follow the main request.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

PREFIX = "anthropic-ratelimit-unified-"
LIMIT_KINDS = ("plain", "5h", "7d")
PLAIN_MESSAGE = "Number of request tokens has exceeded your per-minute rate limit"
ACCOUNT_MESSAGE = "This request would exceed your account's rate limit. Please try again later."
FIVE_HOURS = 5 * 3600
SEVEN_DAYS = 7 * 24 * 3600

_LIMIT_RE = re.compile(r"^LIMIT:\s*(plain|5h|7d)\b", re.IGNORECASE)
_NOW_RE = re.compile(r"\{now\+(\d+)\}")


def limit_kind(text: str | None) -> str | None:
    """``plain``, ``5h`` or ``7d`` when ``text`` is a LIMIT prompt, else None."""
    match = _LIMIT_RE.match(text or "")
    return match.group(1).lower() if match else None


def expand(value: str, now: float) -> str:
    """``{now+N}`` in a header value → the unix time (integer seconds) N s after ``now``."""
    return _NOW_RE.sub(lambda m: str(int(now) + int(m.group(1))), value)


def usage_headers(
    five_hour: float = 0.42,
    seven_day: float = 0.81,
    *,
    five_hour_reset_in: int = 7200,
    seven_day_reset_in: int = 3 * 24 * 3600,
    status: str = "allowed",
    surpassed: float | None = None,
) -> dict[str, str]:
    """The unified headers of a subscription under its limits (for ``LimitControl.headers``):
    utilizations 0..1, resets as ``{now+N}``. ``status`` "allowed_warning" with ``surpassed``
    (e.g. 0.75) on the 7-day window is the warning the facts file shows."""
    headers = {
        f"{PREFIX}status": status,
        f"{PREFIX}reset": f"{{now+{five_hour_reset_in}}}",
        f"{PREFIX}representative-claim": "seven_day" if surpassed is not None else "five_hour",
        f"{PREFIX}5h-utilization": f"{five_hour}",
        f"{PREFIX}5h-reset": f"{{now+{five_hour_reset_in}}}",
        f"{PREFIX}5h-status": "allowed",
        f"{PREFIX}7d-utilization": f"{seven_day}",
        f"{PREFIX}7d-reset": f"{{now+{seven_day_reset_in}}}",
        f"{PREFIX}7d-status": "allowed_warning" if surpassed is not None else "allowed",
    }
    if surpassed is not None:
        headers[f"{PREFIX}7d-surpassed-threshold"] = f"{surpassed}"
    return headers


def rejected_headers(kind: str, now: float, reset_in: int) -> dict[str, str]:
    """The unified headers of a 429 at the 5-hour (``5h``) or weekly (``7d``) limit, exactly
    the set of the captured stand-in; ``{}`` for ``plain``."""
    if kind not in ("5h", "7d"):
        return {}
    reset = int(now) + reset_in
    five_h = kind == "5h"
    other_reset = int(now) + (SEVEN_DAYS if five_h else FIVE_HOURS)
    return {
        f"{PREFIX}status": "rejected",
        f"{PREFIX}representative-claim": "five_hour" if five_h else "seven_day",
        f"{PREFIX}reset": str(reset),
        f"{PREFIX}fallback": "unavailable",
        f"{PREFIX}overage-status": "rejected",
        f"{PREFIX}overage-disabled-reason": "org_level_disabled",
        f"{PREFIX}5h-utilization": "1.0" if five_h else "0.35",
        f"{PREFIX}5h-reset": str(reset if five_h else other_reset),
        f"{PREFIX}5h-status": "rejected" if five_h else "allowed",
        f"{PREFIX}7d-utilization": "0.62" if five_h else "1.0",
        f"{PREFIX}7d-reset": str(other_reset if five_h else reset),
        f"{PREFIX}7d-status": "allowed" if five_h else "rejected",
    }


@dataclass
class LimitControl:
    """What the fake does about usage limits; see the module docstring."""

    headers: dict[str, str] = field(default_factory=dict)
    retry_after: float | None = None
    reset_in: int = 7200
    ok_after: float | None = None
    should_retry: bool | None = None

    def ok_headers(self, now: float) -> dict[str, str]:
        """The headers to add to a 200 answered at ``now``."""
        return {k: expand(v, now) for k, v in self.headers.items()}

    def rejection(self, text: str | None, now: float) -> tuple[str, dict[str, str]] | None:
        """For a main request whose prompt is ``text``: None (answer normally), or the 429's
        (message, headers) when it is a LIMIT prompt and ``ok_after`` has not come."""
        kind = limit_kind(text)
        if kind is None or (self.ok_after is not None and now >= self.ok_after):
            return None
        headers = rejected_headers(kind, now, self.reset_in)
        if self.retry_after is not None:
            headers["retry-after"] = f"{self.retry_after:g}"
        if self.should_retry is not None:
            headers["x-should-retry"] = str(self.should_retry).lower()
        return (PLAIN_MESSAGE if kind == "plain" else ACCOUNT_MESSAGE), headers

    def allow_from_now(self) -> None:
        """LIMIT prompts answer 200 from now on (``ok_after`` = now)."""
        self.ok_after = time.time()
