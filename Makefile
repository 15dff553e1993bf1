# The two commands of the README: `make dev` runs the service, `make test` runs the tests.
# `make bench` prints the benchmark figures (BENCH_ARGS=--quick for a short check); `make soak` runs
# every fault test 20 times over; `make test-loaded` runs the tests beside CPU burners.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: dev test test-loaded bench soak install clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "isolator needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

# Unless AGENT_COMMAND is set (to an agent, or empty for isolation only), the example agent answers.
dev: install
	AGENT_COMMAND="$${AGENT_COMMAND-'$(CURDIR)/examples/agent.py'}" $(BIN)/isolator dev

test: install
	$(BIN)/python -m pytest -q

# The tests on a busy machine: LOAD_BURNERS (2) processes spin on the CPU beside them, and always
# stop with them. PYTEST_ARGS picks tests, e.g. PYTEST_ARGS="tests/workers".
LOAD_BURNERS ?= 2
test-loaded: install
	$(BIN)/python -m tests.under_load $(LOAD_BURNERS) $(BIN)/python -m pytest -q $(PYTEST_ARGS)

# Every fault of tests/faults, SOAK_ROUNDS (20) rounds each, and a table of what was lost or
# duplicated (zero of each is the target); not part of `make test`, which runs one round of each.
SOAK_ROUNDS ?= 20
soak: install
	ISOLATOR_SOAK_ROUNDS=$(SOAK_ROUNDS) $(BIN)/python -m pytest -q -p tests.faults.soak_report tests/faults \
		tests/activities/test_stale_git_locks.py

bench: install
	$(BIN)/python -m bench.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) *.egg-info
