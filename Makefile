# One target per gate; CI (.ci/run) and humans call the same ones.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

# Worker processes of the test suite (pytest-xdist). Most of a real-CLI test is waiting on the
# CLI, tmux or the daemon, so more workers than cores pay; each test still runs one CLI at a time.
# --dist loadgroup: a test marked xdist_group runs with the rest of its group on one worker.
# One process by default until four workers run green every time (issue 45: each parallel run
# so far showed a race, each a test's, found and fixed one by one); JOBS=4 runs them side by side.
JOBS ?= 0
PYTEST_PAR := -n $(JOBS) --dist loadgroup

.PHONY: setup test-deps test test-fast test-e2e test-browser lint typecheck mutation bench screenshot clean flakes

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# setuptools' notice on every editable install (the checkout's purplemux/ folder is the package,
# as meant) is not for a person to act on: silenced by its text, nothing else.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	PYTHONWARNINGS='ignore:Editable installation' $(BIN)/pip install -q -e '.[test]'
	touch $@

setup: $(VENV)/.installed

# System parts the tests drive for real: tmux, Chromium, dash, curl, the Claude Code and Codex CLIs.
test-deps: setup
	sh scripts/install-test-deps.sh

# Everything (the README's test command; .ci/run calls it). PYTEST_ARGS adds options, e.g.
# PYTEST_ARGS="--durations=25"; JOBS=0 runs it in this one process.
test: test-deps
	$(BIN)/python -m pytest $(PYTEST_PAR) $(PYTEST_ARGS)

test-fast: setup
	$(BIN)/python -m pytest $(PYTEST_PAR) -m "not e2e and not browser" $(PYTEST_ARGS)

# One tier while developing: the real CLIs in tmux, or Chromium.
test-e2e: test-deps
	$(BIN)/python -m pytest $(PYTEST_PAR) -m e2e $(PYTEST_ARGS)

test-browser: test-deps
	$(BIN)/python -m pytest $(PYTEST_PAR) -m browser $(PYTEST_ARGS)

# lint-imports: the layer, independence and no-cycle contracts in pyproject.toml.
lint: setup
	$(BIN)/ruff check purplemux tests benchmarks scripts
	$(BIN)/ruff format --check purplemux
	$(BIN)/lint-imports --no-cache

typecheck: setup
	$(BIN)/mypy

# Break each cell and guard of the state machine's table in turn; the core tests must notice
# (>= 95 % killed). Survivors are explained in tests/expected_transitions.md.
mutation: setup
	$(BIN)/python -m scripts.mutation --min 95

# Tests run again and again beside CPU burners, each failed run reported (default: the test files
# changed in the last 15 commits), e.g. make flakes FLAKES_ARGS="--runs 10 --burners 3 TEST_ID".
flakes: setup
	$(BIN)/python -m scripts.flakes $(FLAKES_ARGS)

# The real-CLI latencies (section 6) come from the e2e tier, which records them as it runs.
bench: test-deps
	rm -f benchmarks/results/e2e-latencies.json
	$(BIN)/python -m pytest -q -m e2e tests/e2e/test_daemon_e2e.py tests/e2e/test_codex_daemon_e2e.py
	# Bytecode, as a pip-installed daemon has it (each benchmark start would compile otherwise).
	$(BIN)/python -m compileall -q purplemux
	$(BIN)/python -m benchmarks.run

screenshot: test-deps
	$(BIN)/python -m scripts.screenshot
	$(BIN)/python -m scripts.screenshot_history
	$(BIN)/python -m scripts.screenshot_phone

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
