"""`purplemux report`: GET /api/summary as a table (pure formatting; the CLI fetches it)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date, datetime, timedelta
from typing import Any

from purplemux.agents import facts as agent_facts
from purplemux.core.history import waited
from purplemux.core.termtext import clean
from purplemux.core.timefmt import duration

_AGO = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
STATES = ("busy", "needs-input", "review", "idle", "unknown")
BOLD, RESET = "\033[1m", "\033[0m"


def parse_when(text: str, now: float) -> float:
    """A point in time: today, yesterday, YYYY-MM-DD[THH:MM], a unix time, or an age (90m, 8h,
    7d: that long ago). ValueError says what is accepted."""
    raw = text.strip().lower()
    midnight = datetime.combine(datetime.fromtimestamp(now).date(), datetime.min.time())
    if raw in ("today", ""):
        return midnight.timestamp()
    if raw == "yesterday":
        return (midnight - timedelta(days=1)).timestamp()
    if raw == "now":
        return now
    ago = _AGO.match(raw)
    if ago:
        return now - float(ago.group(1)) * _UNITS[ago.group(2)]
    try:
        return float(raw) if raw.replace(".", "", 1).isdigit() else _iso(raw)
    except ValueError:
        raise ValueError(
            f"cannot read {text!r} as a time: use today, yesterday, YYYY-MM-DD, "
            "YYYY-MM-DDTHH:MM, a unix time, or an age such as 90m, 8h, 7d"
        ) from None


def _iso(raw: str) -> float:
    if len(raw) == 10:
        return datetime.combine(date.fromisoformat(raw), datetime.min.time()).timestamp()
    return datetime.fromisoformat(raw.replace(" ", "T")).timestamp()


def headline(data: Mapping[str, Any]) -> str:
    """The headline of a summary's JSON (`/api/summary`): its totals and its agents'."""
    totals = data.get("totals") or {}
    median = totals.get("answer_median_s")
    return waited(
        float(totals.get("waited_on_you_s") or 0),
        int(totals.get("prompts") or 0),
        float(median) if median is not None else None,
        {a: float(t.get("waited_on_you_s") or 0) for a, t in (data.get("agents") or {}).items()},
    )


def _tokens(t: Mapping[str, Any] | None) -> str:
    if not t:
        return "-"
    total = int(t.get("total") or 0)
    if total >= 1_000_000:
        return f"{total / 1_000_000:.1f}M"
    if total >= 1000:
        return f"{total / 1000:.1f}k"
    return str(total)


def _cost(c: object) -> str:
    return f"${float(c):.2f}" if isinstance(c, int | float) else "-"


def _secs(x: object) -> str:
    value = float(x or 0)  # type: ignore[arg-type]
    return duration(value) if value else "-"


def several_accounts(sessions: Iterable[Mapping[str, Any]]) -> bool:
    """Whether some agent's sessions here run under more than one account (then every table
    names each session's account)."""
    seen: dict[object, set[object]] = {}
    for s in sessions:
        seen.setdefault(s.get("agent"), set()).add(s.get("account"))
    return any(len(accounts) > 1 for accounts in seen.values())


def render_report(data: Mapping[str, Any], colours: Mapping[str, str] | None = None) -> str:
    """The summary as a headline and a table; `colours` (state -> escape) only on a terminal."""
    since = datetime.fromtimestamp(float(data["since"])).strftime("%Y-%m-%d %H:%M")
    until = datetime.fromtimestamp(float(data["until"])).strftime("%Y-%m-%d %H:%M")
    totals = data["totals"]
    lines = [f"{since} → {until}", headline(data), ""]
    sessions = data.get("sessions") or []
    if not sessions:
        return "\n".join([*lines[:2], "no sessions in this period"]) + "\n"
    head = ["SESSION", "AGENT", "PANE", "WAITED", "PROMPTS", "MEDIAN", *(s.upper() for s in STATES)]
    head += ["TOKENS", "COST", "ID"]
    accounts = several_accounts(sessions)
    rows: list[list[str]] = []
    total_row = {**totals, "id": "", "project": "total", "tmux": None}
    for s in [*sessions, total_row]:
        pane = (s.get("tmux") or {}).get("pane") or "-"
        median = s.get("answer_median_s")
        rows.append(
            [
                clean(s.get("project") or str(s["id"])[:8])[:32],
                clean(agent_facts.label(str(s.get("agent")))) if s["id"] else "",
                clean(pane)[:8],
                _secs(s.get("waited_on_you_s")),
                str(s.get("prompts") or 0),
                duration(float(median)) if median is not None else "-",
                *(_secs((s.get("seconds") or {}).get(state)) for state in STATES),
                _tokens(s.get("tokens")),
                _cost(s.get("cost_usd")),
                clean(s["id"])[:8],
            ]
        )
    shift = 0
    if accounts:  # an ACCOUNT column after AGENT
        shift = 1
        head.insert(2, "ACCOUNT")
        for row, s in zip(rows, [*sessions, total_row], strict=True):
            row.insert(2, clean(str(s.get("account") or "-"))[:40] if s["id"] else "")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    numeric = set(range(3 + shift, len(head) - 1))

    def fmt(row: list[str], n: int) -> str:
        cells = [
            c.rjust(widths[i]) if i in numeric else c.ljust(widths[i]) for i, c in enumerate(row)
        ]
        if colours:
            if n == 0:
                cells = [f"{BOLD}{c}{RESET}" for c in cells]
            else:
                for i, state in enumerate(STATES, start=6 + shift):
                    if row[i] != "-" and state in colours:
                        cells[i] = f"{colours[state]}{cells[i]}{RESET}"
                if n == len(rows):
                    cells[0] = f"{BOLD}{cells[0]}{RESET}"
        return "  ".join(cells).rstrip()

    lines.append(fmt(head, 0))
    lines += [fmt(r, n) for n, r in enumerate(rows, start=1)]
    return "\n".join(lines) + "\n"
