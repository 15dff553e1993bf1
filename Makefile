# The two commands of the README: `make dev` runs the service, `make test` runs the tests.
# `make bench` prints the benchmark figures (BENCH_ARGS=--quick for a short check); `make soak` runs
# every fault test 20 times over.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: dev test browser bench soak install clean

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

test: install browser
	$(BIN)/python -m pytest -q

# The dashboard's browser tests drive Debian's chromium (never a browser Playwright downloads).
browser:
	@command -v chromium >/dev/null 2>&1 || { echo "chromium is missing: apt-get install chromium"; \
		{ apt-get update -q && apt-get install -y -q chromium; } || \
		echo "chromium could not be installed: run 'apt-get install chromium' as root, or tests/dashboard fail"; }

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
