#!/bin/sh
# Run one test RUNS times in a row (default 100), stop at the first failure, and say how many
# passed: the proof that a fixed flaky test stays fixed. Not for CI (slow by design).
#
#   sh scripts/repeat-test.sh TEST_ID [RUNS]             # one pytest, RUNS repetitions (fast)
#   sh scripts/repeat-test.sh --separate TEST_ID [RUNS]  # RUNS separate pytest processes
#
# e.g. sh scripts/repeat-test.sh tests/test_live_sources.py::test_restart_resolves_unknown_from_the_sources
set -u
cd "$(dirname "$0")/.." || exit 2
py=${PYTHON:-.venv/bin/python}
if [ "${1-}" = --separate ]; then
	shift
	test_id=${1:?usage: repeat-test.sh [--separate] TEST_ID [RUNS]}
	runs=${2:-100}
	log=$(mktemp "${TMPDIR:-/tmp}/repeat-test.XXXXXX")
	i=0
	while [ "$i" -lt "$runs" ]; do
		i=$((i + 1))
		if ! "$py" -m pytest -q -x -p no:randomly -p no:cacheprovider "$test_id" >"$log" 2>&1; then
			cat "$log"
			rm -f "$log"
			echo "run $i of $runs FAILED: $test_id"
			exit 1
		fi
		printf '.'
	done
	rm -f "$log"
	echo
	echo "$runs of $runs separate runs passed: $test_id"
	exit 0
fi
test_id=${1:?usage: repeat-test.sh [--separate] TEST_ID [RUNS]}
runs=${2:-100}
if "$py" -m scripts.repeat_test "$test_id" "$runs"; then
	echo "$runs of $runs runs passed in a row: $test_id"
else
	echo "FAILED before $runs runs in a row: $test_id"
	exit 1
fi
