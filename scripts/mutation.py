"""Mutation check of the state machine's rules: break each table cell and each guard in turn.

The table is data, so a short script does what mutmut would do for code: for every (event kind,
state) cell of `machine.TABLE` it swaps the rule for every other outcome (stays, or each other
state), and for every guard it drops it (always true), makes it always false and negates it — per
cell and for the guard function itself. After each change it runs the core's fast tests
(tests/test_expected_transitions.py, tests/test_machine.py, tests/test_engine.py) in this process
(collected once; a mutant stops at its first failing test) and counts it killed when any fails.

Prints the survivors and the kill ratio; exits 1 below the bar (95 %) or when the unmutated
tests fail. A survivor must be explained in tests/expected_transitions.md.

    .venv/bin/python -m scripts.mutation [--min 95] [--tests FILE ...]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pytest
from _pytest.runner import runtestprotocol

from purplemux import machine
from purplemux.events import Event, Kind
from purplemux.machine import Rule
from purplemux.model import Session, State

REPO = Path(__file__).resolve().parent.parent

CORE_TESTS = [
    "tests/test_expected_transitions.py",
    "tests/test_machine.py",
    "tests/test_engine.py",
]
Guard = Callable[[Session, Event], bool]
TABLE = cast(dict[Kind, dict[State, Rule]], machine.TABLE)
GUARDS = cast(dict[str, Guard], machine.GUARDS)


@dataclass(frozen=True)
class Mutant:
    name: str
    hint: str  # a test-id fragment likely to kill it: those tests run first (speed only)
    apply: Callable[[], Callable[[], None]]  # makes the change, returns the undo


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

    def __init__(self, min_ratio: float) -> None:
        self.min_ratio = min_ratio
        self.exit = 0
        self.report: list[str] = []

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        items = list(session.items)
        started = time.monotonic()
        broken = [i.nodeid for i in items if _fails(i)]
        if broken:
            print(f"\nmutation: the unmutated tests fail: {broken[:5]}", flush=True)
            self.exit = 1
            return True
        all_mutants = mutants()
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
        self.report = [f"mutation: {len(items)} tests, {total} mutants of the table and its guards"]
        self.report += [f"  survived: {name}" for name in survivors]
        self.report += [
            f"mutation: {killed_n}/{total} killed ({ratio:.1f} %), bar {self.min_ratio:.0f} %, "
            f"{took:.0f} s"
        ]
        if ratio < self.min_ratio:
            self.exit = 1
        return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min", type=float, default=95.0, help="least kill ratio, percent")
    parser.add_argument("--tests", nargs="+", default=CORE_TESTS, help="test files to run")
    args = parser.parse_args(argv)
    sweep = Sweep(args.min)
    code = pytest.main(
        [
            *(str(REPO / t) for t in args.tests),
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
