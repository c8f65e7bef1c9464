"""Run one test N times in a row in one pytest process, stopping at the first failure.

Each repetition is a separate test item (its fixtures set up and torn down again: for the live
tests, two fresh daemons, a fresh tmux server); only pytest's own start-up is shared, which on a
busy machine is most of the cost of a run. scripts/repeat-test.sh is the entry point.

    .venv/bin/python -m scripts.repeat_test TEST_ID [RUNS]
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


class Repeat:
    def __init__(self, runs: int) -> None:
        self.runs = runs

    @pytest.fixture
    def _repeat_run(self, request: pytest.FixtureRequest) -> int:
        return int(request.param)

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        metafunc.fixturenames.append("_repeat_run")
        metafunc.parametrize("_repeat_run", range(1, self.runs + 1), indirect=True)


def main(argv: list[str]) -> int:
    test_id, runs = argv[0], int(argv[1]) if len(argv) > 1 else 100
    code = pytest.main(
        [test_id, "-x", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", f"--rootdir={REPO}"],
        plugins=[Repeat(runs)],
    )
    return int(code)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
