"""Mutation check of the state machine's rules: break each table cell, guard and field rule.

The table is data, so a short script does what mutmut would do for code: for every (event kind,
state) cell of `machine.TABLE` it swaps the rule for every other outcome (stays, or each other
state), and for every guard it drops it (always true), makes it always false and negates it — per
cell and for the guard function itself; and it drops each field rule (`machine.FIELD_RULES`, one
per event kind, and the rules every event passes, `EVERY_EVENT` and `AFTER_EVENT`), one at a time,
and each field one rule sets, one at a time. After each change it runs the core's fast tests
(tests/test_expected_transitions.py, tests/test_machine.py, tests/test_engine.py,
tests/test_machine_fields.py) in this process
(collected once; a mutant stops at its first failing test) and counts it killed when any fails.

Prints the survivors and the kill ratios; exits 1 below a bar (95 %) or when the unmutated
tests fail. A survivor must be explained in tests/expected_transitions.md.

    .venv/bin/python -m scripts.mutation [--min 95] [--tests FILE ...]
"""

from __future__ import annotations

import argparse
import inspect
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pytest
from _pytest.runner import runtestprotocol

from purplemux.core import machine
from purplemux.core.events import Event, Kind
from purplemux.core.machine import Rule
from purplemux.core.model import Session, State

REPO = Path(__file__).resolve().parent.parent

CORE_TESTS = [
    "tests/test_expected_transitions.py",
    "tests/test_machine.py",
    "tests/test_engine.py",
    "tests/test_machine_fields.py",
]
FIELD_TESTS: list[str] = []
"""More test files to judge the field rules with (e.g. tests/test_session_facts.py, which folds
real samples: slower, and it kills nothing tests/test_machine_fields.py does not)."""
FIELDS_BAR = 95.0
"""The field rules' least kill ratio, percent (as the table's)."""
Guard = Callable[[Session, Event], bool]
TABLE = cast(dict[Kind, dict[State, Rule]], machine.TABLE)
GUARDS = cast(dict[str, Guard], machine.GUARDS)
FIELD_RULES = cast(dict[Kind, machine.FieldRule], machine.FIELD_RULES)
SHARED_RULES = ("EVERY_EVENT", "AFTER_EVENT")
"""The names of machine's tuples of field rules that every event passes."""


@dataclass(frozen=True)
class Mutant:
    name: str
    hint: str  # a test-id fragment likely to kill it: those tests run first (speed only)
    apply: Callable[[], Callable[[], None]]  # makes the change, returns the undo
    group: str = "table"  # "table" (cells and guards) or "fields" (the field rules)


def _set_cell(kind: Kind, state: State, rule: Rule) -> Callable[[], None]:
    old = TABLE[kind][state]
    TABLE[kind][state] = rule

    def undo() -> None:
        TABLE[kind][state] = old

    return undo


def _set_guard(name: str, fn: Guard) -> Callable[[], None]:
    old = GUARDS[name]
    GUARDS[name] = fn

    def undo() -> None:
        GUARDS[name] = old

    return undo


def _set_field_rule(kind: Kind, rule: machine.FieldRule) -> Callable[[], None]:
    old = FIELD_RULES[kind]
    FIELD_RULES[kind] = rule

    def undo() -> None:
        FIELD_RULES[kind] = old

    return undo


def _set_shared_rule(group: str, at: int, rule: machine.FieldRule) -> Callable[[], None]:
    old: tuple[machine.FieldRule, ...] = getattr(machine, group)
    setattr(machine, group, (*old[:at], rule, *old[at + 1 :]))

    def undo() -> None:
        setattr(machine, group, old)

    return undo


def _no_rule(s: Session, e: Event, changes: dict[str, object]) -> None:
    """A field rule that sets nothing."""


def _without(rule: machine.FieldRule, name: str) -> machine.FieldRule:
    """`rule`, except that it never sets the field `name`."""

    def mutant(s: Session, e: Event, changes: dict[str, object]) -> None:
        had = name in changes
        before = changes.get(name)
        rule(s, e, changes)
        if had:
            changes[name] = before
        else:
            changes.pop(name, None)

    return mutant


def _fields_set(rule: machine.FieldRule) -> list[str]:
    """The session fields a rule's source names as set (`changes["x"]`, `changes.update(x=...)`)."""
    source = inspect.getsource(rule)
    names = set(re.findall(r'changes\["(\w+)"\]\s*=', source))
    for args in re.findall(r"changes\.update\(([^)]*)\)", source, re.S):
        names.update(re.findall(r"(\w+)=", args))
        if "_TURN_STARTS" in args:
            names.update(cast(dict[str, object], machine._TURN_STARTS))
    if "name in (" in source:  # a loop over several names (the transcript's facts)
        names.update(re.findall(r'"(\w+)"', source.split("name in (")[1].split(")")[0]))
    return sorted(names)


def _several(names: list[str]) -> list[str]:
    """The fields to leave out one at a time: none when the rule sets one (that is "dropped")."""
    return names if len(names) > 1 else []


def _field_mutants() -> list[Mutant]:
    """Each field rule dropped, and each field it sets left out."""
    out: list[Mutant] = []
    for kind, rule in FIELD_RULES.items():
        hint = f"{kind.value}@"
        out.append(
            Mutant(
                f"fields of {kind.value} dropped", hint, lambda k=kind: _set_field_rule(k, _no_rule)
            )
        )
        for name in _several(_fields_set(rule)):
            out.append(
                Mutant(
                    f"fields of {kind.value}: {name} left out",
                    hint,
                    lambda k=kind, r=rule, n=name: _set_field_rule(k, _without(r, n)),
                )
            )
    for group in SHARED_RULES:
        for at, rule in enumerate(getattr(machine, group)):
            label = f"{group} {rule.__name__.lstrip('_')}"
            out.append(
                Mutant(
                    f"{label} dropped", "", lambda g=group, i=at: _set_shared_rule(g, i, _no_rule)
                )
            )
            for name in _several(_fields_set(rule)):
                out.append(
                    Mutant(
                        f"{label}: {name} left out",
                        "",
                        lambda g=group, i=at, r=rule, n=name: _set_shared_rule(
                            g, i, _without(r, n)
                        ),
                    )
                )
    return out


def _negated(name: str) -> Guard:
    original = GUARDS[name]
    return lambda s, e: not original(s, e)


def _outcome(state: State, rule: Rule) -> State | None:
    """What a rule does to the state when its guard holds: None = stays."""
    return None if rule.to is None or rule.to is state else rule.to


def mutants() -> list[Mutant]:
    out: list[Mutant] = []
    for kind, row in TABLE.items():
        for state, rule in row.items():
            cell = f"{kind.value}@{state.value}"
            current = _outcome(state, rule)
            # Every other outcome. "Go to the state you are in" is the same as "stays": not made.
            for target in [None, *(s for s in State if s is not state)]:
                if target is current:
                    continue
                new = Rule(None, None, "mutant") if target is None else Rule(target, rule.guard)
                label = "stays" if target is None else target.value
                out.append(
                    Mutant(
                        f"{cell} -> {label}",
                        cell,
                        lambda k=kind, s=state, r=new: _set_cell(k, s, r),
                    )
                )
            # The cell's guard: dropped (always true) and negated. Always false = "stays", above.
            if rule.guard and current is not None:
                guard = rule.guard
                out.append(
                    Mutant(
                        f"{cell}: guard {guard} dropped",
                        cell,
                        lambda k=kind, s=state, t=current: _set_cell(k, s, Rule(t)),
                    )
                )

                def negate(k: Kind = kind, s: State = state, g: str = guard) -> Callable[[], None]:
                    GUARDS[f"not {g}"] = _negated(g)
                    undo_cell = _set_cell(k, s, Rule(TABLE[k][s].to, f"not {g}"))

                    def undo() -> None:
                        undo_cell()
                        del GUARDS[f"not {g}"]

                    return undo

                out.append(Mutant(f"{cell}: guard {guard} negated", cell, negate))
    # The guard functions themselves, wherever they are used.
    for name in list(GUARDS):
        kinds = sorted(
            {k.value for k, row in TABLE.items() for r in row.values() if r.guard == name}
        )
        hint = kinds[0] + "@" if kinds else ""
        for label, make in (
            ("always true", lambda n=name: cast(Guard, lambda s, e: True)),
            ("always false", lambda n=name: cast(Guard, lambda s, e: False)),
            ("negated", lambda n=name: _negated(n)),
        ):
            out.append(
                Mutant(
                    f"guard {name} {label}",
                    hint,
                    lambda n=name, mk=make: _set_guard(n, mk(n)),
                )
            )
    return out


def _fails(item: pytest.Item) -> bool:
    reports = runtestprotocol(item, nextitem=None, log=False)
    return any(r.failed for r in reports)


class Sweep:
    """A pytest plugin: after collection, run the mutants instead of the normal test loop."""

    def __init__(self, bars: dict[str, float], table_tests: list[str]) -> None:
        self.bars = bars  # the least kill ratio of each group of mutants, percent
        self.table_tests = table_tests  # the files that judge the table (the others: fields)
        self.exit = 0
        self.report: list[str] = []

    def _sweep(self, group: str, all_mutants: list[Mutant], items: list[pytest.Item]) -> None:
        started = time.monotonic()
        survivors: list[str] = []
        for m in all_mutants:
            ordered = sorted(items, key=lambda i, h=m.hint: h not in i.nodeid)
            undo = m.apply()
            try:
                killed = any(_fails(i) for i in ordered)
            finally:
                undo()
            if not killed:
                survivors.append(m.name)
        took = time.monotonic() - started
        total = len(all_mutants)
        killed_n = total - len(survivors)
        ratio = 100.0 * killed_n / total if total else 0.0
        what = "the table and its guards" if group == "table" else "the field rules"
        self.report += [f"mutation: {len(items)} tests, {total} mutants of {what}"]
        self.report += [f"  survived: {name}" for name in survivors]
        self.report += [
            f"mutation: {killed_n}/{total} killed ({ratio:.1f} %), bar {self.bars[group]:.0f} %, "
            f"{took:.0f} s"
        ]
        if ratio < self.bars[group]:
            self.exit = 1

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        items = list(session.items)
        broken = [i.nodeid for i in items if _fails(i)]
        if broken:
            print(f"\nmutation: the unmutated tests fail: {broken[:5]}", flush=True)
            self.exit = 1
            return True
        table = [i for i in items if i.nodeid.split("::")[0] in self.table_tests]
        self._sweep("table", mutants(), table)
        if "fields" in self.bars:
            self._sweep("fields", _field_mutants(), items)
        return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min", type=float, default=95.0, help="least kill ratio, percent")
    parser.add_argument(
        "--min-fields",
        type=float,
        default=FIELDS_BAR,
        help="least kill ratio of the field rules' mutants, percent",
    )
    parser.add_argument("--no-fields", action="store_true", help="mutate the table only")
    parser.add_argument("--tests", nargs="+", default=CORE_TESTS, help="test files to run")
    parser.add_argument(
        "--field-tests", nargs="+", default=FIELD_TESTS, help="more test files for the fields"
    )
    args = parser.parse_args(argv)
    bars = {"table": args.min} | ({} if args.no_fields else {"fields": args.min_fields})
    files = [*args.tests, *([] if args.no_fields else args.field_tests)]
    sweep = Sweep(bars, list(args.tests))
    code = pytest.main(
        [
            *(str(REPO / t) for t in dict.fromkeys(files)),
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            f"--rootdir={REPO}",
        ],
        plugins=[sweep],
    )
    print("\n".join(sweep.report))
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        print(f"mutation: pytest exited {code}")
        return 1
    if not sweep.report and not sweep.exit:
        print("mutation: no mutants were run")
        return 1
    return sweep.exit


if __name__ == "__main__":
    raise SystemExit(main())
