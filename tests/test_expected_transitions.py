"""The machine against tests/expected_transitions.md: every cell, every guard both ways.

The expected file is written from DESIGN.md and the captured scenarios, not from the code, so a
changed cell in `machine.TABLE` (or a broken guard) turns a test here red. The last test checks that
`purplemux states` prints the same table, so the doc the CLI gives and the pinned rules agree.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from purplemux import cli
from purplemux.core import events as ev
from purplemux.core.events import Kind, Source
from purplemux.core.machine import IDLE_GRACE, TITLE_LAG, Notify, step
from purplemux.core.model import PendingTool, Session, State

EXPECTED_FILE = Path(__file__).with_name("expected_transitions.md")
SID = "s1"
AT = 10.0


@dataclass(frozen=True)
class Cell:
    kind: Kind
    state: State
    to: State | None  # None = stays
    guard: str | None
    why: str


def _parse_cells(text: str) -> dict[tuple[Kind, State], Cell]:
    section = text.split("## Every cell", 1)[1].split("\n## ", 1)[0]
    cells: dict[tuple[Kind, State], Cell] = {}
    for line in section.splitlines():
        parts = [p.strip() for p in line.strip().strip("|").split("|")]
        if len(parts) != 5 or parts[0] in ("event", "") or set(parts[0]) <= {"-"}:
            continue
        kind, state = Kind(parts[0]), State(parts[1])
        to = None if parts[2] == "stays" else State(parts[2])
        assert (kind, state) not in cells, f"{kind}@{state} listed twice"
        cells[kind, state] = Cell(kind, state, to, parts[3] or None, parts[4])
    return cells


CELLS = _parse_cells(EXPECTED_FILE.read_text())


# --- the situations each cell is stepped in -------------------------------------------------


@dataclass(frozen=True)
class Case:
    """A session and an event of one kind; `holds` says whether the row's guard holds."""

    label: str
    session: dict[str, Any] = field(default_factory=dict)
    event: dict[str, Any] = field(default_factory=dict)
    holds: bool = True
    at: float = AT


STATE_SINCE = 1.0
"""When the session entered the state a case starts from."""
ASKED = PendingTool("Bash", "d-bash", "A")
ASKED_NO_ID = PendingTool("Bash", "d-bash", None)
SAME_CALL_NO_ID = "same tool and input, the asked-for call's id unknown"


def _tool_cases(
    rows: list[tuple[str, PendingTool | None, str, str | None, str, bool]],
) -> list[Case]:
    """Rows of (label, the pending call, the event's tool name, tool_use_id and digest, holds)."""
    return [
        Case(
            label,
            {"pending_tool": pending},
            {"tool_name": tool, "tool_use_id": use_id, "digest": digest},
            holds,
        )
        for label, pending, tool, use_id, digest, holds in rows
    ]


_ANSWERS_PENDING_END = _tool_cases(
    [
        ("no call is pending", None, "Bash", "A", "", True),
        ("the PostToolUse of the asked-for call", ASKED, "Bash", "A", "d-bash", True),
        (SAME_CALL_NO_ID, ASKED_NO_ID, "Bash", "A", "d-bash", True),
        ("a PostToolUse of another, parallel call", ASKED, "Read", "B", "d-read", False),
        ("same tool, other input, no ids", ASKED_NO_ID, "Bash", None, "d-other", False),
        ("another tool, no ids", ASKED_NO_ID, "Read", None, "d-bash", False),
    ]
)
_ANSWERS_PENDING_START = [
    *_tool_cases(
        [
            ("no call is pending", None, "Bash", "A", "", True),
            (SAME_CALL_NO_ID, ASKED_NO_ID, "Bash", "C", "d-bash", True),
            (
                "a PreToolUse of another call (it has its own id)",
                ASKED,
                "Bash",
                "B",
                "d-bash",
                False,
            ),
            ("another tool, no ids", ASKED_NO_ID, "Read", None, "d-read", False),
        ]
    ),
    Case(
        "a late PreToolUse that started before the wait began",
        {"pending_tool": None},
        {"tool_name": "Bash", "tool_use_id": "A", "digest": ""},
        holds=False,
        at=STATE_SINCE - 0.25,
    ),
    Case(
        "a PreToolUse that started as the wait began",
        {"pending_tool": None},
        {"tool_name": "Bash", "tool_use_id": "A", "digest": ""},
        at=STATE_SINCE,
    ),
]


_NOT_ENDED_BY_THIS_PROCESS = [
    Case("a live session", {"ended": False, "pid": 42}, {"pid": 42}),
    Case("ended; a resume (another process)", {"ended": True, "pid": 42}, {"pid": 43}),
    Case("ended; the process that ended it", {"ended": True, "pid": 42}, {"pid": 42}, holds=False),
    Case("ended; the status names no process", {"ended": True, "pid": 42}, {"pid": None}, False),
]

_IDLE_GRACE_ELAPSED = [
    Case("armed, timer at the grace", {"idle_armed_at": AT}, at=AT + IDLE_GRACE),
    Case("armed, timer later", {"idle_armed_at": AT}, at=AT + 1.0),
    Case("never armed", {"idle_armed_at": None}, at=AT + 1.0, holds=False),
    Case("armed, timer early", {"idle_armed_at": AT}, at=AT + IDLE_GRACE / 2, holds=False),
]

_NOT_A_LAGGING_TITLE = [
    *_NOT_ENDED_BY_THIS_PROCESS,
    Case(
        "a title's busy within the lag of the turn's end",
        event={"source": Source.PANE_TITLE},
        at=STATE_SINCE + TITLE_LAG / 2,
        holds=False,
    ),
    Case(
        "a title's busy at the lag's end",
        event={"source": Source.PANE_TITLE},
        at=STATE_SINCE + TITLE_LAG,
    ),
    Case(
        "a session file's busy just after the turn's end",
        event={"source": Source.SESSION_FILE},
        at=STATE_SINCE + TITLE_LAG / 2,
    ),
]

GUARD_CASES: dict[Kind, tuple[tuple[str, list[Case]], ...]] = {
    Kind.TOOL_START: (("answers_pending", _ANSWERS_PENDING_START),),
    Kind.TOOL_END: (("answers_pending", _ANSWERS_PENDING_END),),
    Kind.STATUS_BUSY: (
        ("not_ended_by_this_process", _NOT_ENDED_BY_THIS_PROCESS),
        ("not_a_lagging_title", _NOT_A_LAGGING_TITLE),
    ),
    Kind.STATUS_WAITING: (("not_ended_by_this_process", _NOT_ENDED_BY_THIS_PROCESS),),
    Kind.TICK: (("idle_grace_elapsed", _IDLE_GRACE_ELAPSED),),
}
"""Each kind's guards, each with the cases that hold it and break it (a cell with no guard of a
kind that has some is checked against all of them: it must stay whatever they say)."""
PLAIN = [Case("a plain event", {"pid": 42, "idle_armed_at": 5.0})]


def cases_for(cell: Cell) -> list[Case]:
    guards = GUARD_CASES.get(cell.kind, ())
    if cell.guard is not None:
        return next(cases for name, cases in guards if name == cell.guard)
    return [case for _, cases in guards for case in cases] or PLAIN


def _params() -> list[Any]:
    out = []
    for (kind, state), cell in CELLS.items():
        for case in cases_for(cell):
            out.append(pytest.param(cell, case, id=f"{kind.value}@{state.value}:{case.label}"))
    return out


# --- the tests --------------------------------------------------------------------------------


def test_the_file_lists_every_cell_once_with_a_reason() -> None:
    assert set(CELLS) == {(k, s) for k in Kind for s in State}
    for cell in CELLS.values():
        assert cell.why, cell
        if cell.guard:
            assert cell.to is not None, f"{cell}: a guard on a cell that stays"
            guards = [name for name, _ in GUARD_CASES.get(cell.kind, ())]
            assert cell.guard in guards, cell


@pytest.mark.parametrize(("cell", "case"), _params())
def test_step_matches_the_expected_cell(cell: Cell, case: Case) -> None:
    session = Session(id=SID, state=cell.state, state_since=STATE_SINCE, **case.session)
    event = ev.EVENT_TYPES[cell.kind](session_id=SID, at=case.at, id="e1", **case.event)

    new, effects = step(session, event)

    expected = cell.to if cell.to is not None and (cell.guard is None or case.holds) else None
    if expected is None or expected is cell.state:
        assert new.state is cell.state, f"{cell.kind}@{cell.state} ({case.label}): {cell.why}"
        assert new.state_since == STATE_SINCE
        assert not [e for e in effects if isinstance(e, Notify)]
    else:
        assert new.state is expected, f"{cell.kind}@{cell.state} ({case.label}): {cell.why}"
        assert new.state_since == case.at
        notified = [e for e in effects if isinstance(e, Notify)]
        if expected in (State.NEEDS_INPUT, State.REVIEW):
            assert notified == [Notify(expected, case.at)]
        else:
            assert notified == []


def _printed_cells(text: str) -> dict[tuple[Kind, State], tuple[State | None, str | None]]:
    """`purplemux states`' Markdown table as {(kind, from): (to or None, guard)}."""
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("| event \\ from |"))
    states = [State(s.strip()) for s in lines[head].strip().strip("|").split("|")[1:]]
    out: dict[tuple[Kind, State], tuple[State | None, str | None]] = {}
    for line in lines[head + 2 :]:
        if not line.startswith("|"):
            break
        kind_text, *cells = (c.strip() for c in line.strip().strip("|").split("|"))
        for state, cell in zip(states, cells, strict=True):
            m = re.fullmatch(r"(\S+)(?: if (\w+))?", cell)
            assert m, cell
            to = None if m.group(1) == "·" else State(m.group(1))
            # "· if guard" (a guarded move to the state it is in) is a stay.
            out[Kind(kind_text), state] = (to, m.group(2) if to is not None else None)
    return out


def test_purplemux_states_prints_the_same_rules() -> None:
    out = io.StringIO()
    assert cli.main(["states"], out=out) == 0
    printed = _printed_cells(out.getvalue())
    expected = {
        key: (
            None if cell.to in (None, cell.state) else cell.to,
            cell.guard if cell.to not in (None, cell.state) else None,
        )
        for key, cell in CELLS.items()
    }
    assert printed == expected
