"""The command line's rendering: the status table, a prompt, the install summary (pure text)."""

from __future__ import annotations

from typing import Any

from purplemux.core.termtext import clean
from purplemux.core.timefmt import duration

TERMINAL_COLOURS = {
    "yellow": "\033[33;1m",
    "magenta": "\033[35;1m",
    "cyan": "\033[36m",
    "grey": "\033[90m",
    "white": "\033[37m",
}
"""ANSI codes for the colour tokens of purplemux.core.present.LOOKS."""


def render_table(sessions: list[dict[str, Any]], now: float, colour: bool) -> str:
    """The status table: state, name, agent, pane, time in state, what it waits for / does /
    said, and mode, context, cost and background tasks."""
    if not sessions:
        return "no sessions\n"
    rows: list[tuple[str, ...]] = [
        ("STATE", "NAME", "AGENT", "PANE", "FOR", "DETAIL", "FACTS", "ID")
    ]
    colours = [""]
    for s in sessions:
        v = s["view"]  # what purplemux.core.present decided a person reads about it
        # Session text may hold escape sequences or line breaks: plain text only (each field
        # cleaned once, before it is cut); the colour added below is ours.
        rows.append(
            (
                clean(v["label"]) + (" (ended)" if v["ended"] else ""),
                clean(v["name"]),
                # a host of an older version: Claude; a background session: "Claude bg"
                clean(v.get("agent_label") or "Claude") + (" bg" if v.get("background") else ""),
                clean(v["pane"] or "-"),
                duration(now - float(v["since"] or now)),
                clean(wall_line(v, now) or v["reason"])[:60],
                _facts(v),
                clean(s["id"])[:8],
            )
        )
        colours.append(TERMINAL_COLOURS.get(v["colour"], ""))
    if any(s["view"].get("account") for s in sessions):  # several accounts of an agent
        accounts = [clean(s["view"].get("account") or "-") for s in sessions]
        rows = [(*r[:3], a, *r[3:]) for r, a in zip(rows, ["ACCOUNT", *accounts], strict=True)]
    rows, colours = _with_hosts(rows, colours, sessions)
    at = 1 if rows[0][0] == "HOST" else 0
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row)]
        if colour and n:
            cells[at] = f"{colours[n]}{cells[at]}\033[0m"
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _facts(v: dict[str, Any]) -> str:
    """The FACTS cell: the view's facts, then resume at the reset ("resumes after 22:32")."""
    facts = [clean(v["facts"]), clean(v.get("resume") or "")]
    return " · ".join(f for f in facts if f) or "-"


def wall_line(view: dict[str, Any], now: float) -> str:
    """A view's limit wall in this terminal's local time ("limit hit · resets 22:32", "continues
    at 22:40"), or "" when the session is at no wall."""
    from purplemux.core.present import wall_text

    wall = view.get("wall")
    if not isinstance(wall, str) or not wall:
        return ""
    at = view.get("wall_at")
    return wall_text(wall, float(at) if isinstance(at, int | float) else None, now)


def headline(view: dict[str, Any], now: float) -> str:
    """The view's headline, its limit wall's time in this terminal's local time."""
    wall = wall_line(view, now)
    if not wall:
        return str(view["headline"])
    agent = str(view.get("agent_label") or "Claude")
    account = view.get("account")
    if isinstance(account, str) and account:
        agent = f"{agent} ({account})"
    return f"{agent} · {view['name']} · {wall}"


def _with_hosts(
    rows: list[tuple[str, ...]], colours: list[str], sessions: list[dict[str, Any]]
) -> tuple[list[tuple[str, ...]], list[str]]:
    """Several hosts (a shared broker): a HOST column first, "(offline)" on a stale host's rows."""
    views = [s["view"] for s in sessions]
    if len({v.get("host") for v in views}) < 2:
        return rows, colours
    out = []
    for row, colour, v in zip(rows[1:], colours[1:], views, strict=True):
        host = clean(v.get("host") or "-") + (" (offline)" if v.get("stale") else "")
        out.append(((host, *row), colour))
    out.sort(key=lambda r: r[0][0])  # by host first, newest first within one (a stable sort)
    return [("HOST", *rows[0]), *(r for r, _ in out)], ["", *(c for _, c in out)]


def render_limits(readings: list[dict[str, Any]], now: float) -> str:
    """A line per account under the table: "limits  claude/claude  5h 42% (resets 22:32)  ..."
    (nothing when no agent reported its limits)."""
    from purplemux.core.limits import line

    if not readings:
        return ""
    return "\n" + "".join(f"limits  {clean(line(r, now))}\n" for r in readings)


def render_prompt(prompt: dict[str, Any]) -> str:
    """A prompt as the terminal shows it: title, question, options with the marker."""
    from purplemux.io.tmux import plain

    lines = [f"[{clean(prompt['kind'])}] {plain(prompt['title'])}"]
    question = prompt.get("question")
    if question and question != prompt["title"]:
        lines.append(f"  {plain(question)}")
    for option in prompt["options"]:
        mark = "\u276f" if option.get("selected") else " "
        extra = "  (free text: --text)" if option.get("free_text") else ""
        lines.append(f"  {mark} {plain(option['label'])}{extra}")
    lines.append(f"  prompt id {clean(prompt['id'])}")
    if prompt.get("ambiguous"):
        lines.append(f"  not answerable here: {plain(prompt['ambiguous'])}; answer in the terminal")
    return "\n".join(lines) + "\n"
