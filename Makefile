# The two commands of the README: `make dev` runs the service, `make test` runs the tests.
# `make bench` prints the benchmark figures (BENCH_ARGS=--quick for a short check); `make soak` runs
# every fault test 20 times over; `make test-loaded` runs the tests beside CPU burners.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: dev test test-loaded browser bench soak install clean bubblewrap

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "isolator needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)

# `make dev` installs what the service needs (with AGENT=claude, Claude Code too); `make test` adds the
# test extra (pytest, Playwright, schemathesis, hypothesis, Claude Code: about 0.6 GB more) and .tools (1.1 GB).
# setuptools warns at every editable install that a folder named as a package could shadow it: ours
# are the packages.
QUIET_BUILD := PYTHONWARNINGS=ignore::Warning
SERVICE_EXTRAS := $(if $(filter claude,$(AGENT)),[claude],)
SERVICE_INSTALLED := $(VENV)/.installed-service$(if $(SERVICE_EXTRAS),-claude,)

$(SERVICE_INSTALLED): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(QUIET_BUILD) $(BIN)/python -m pip install --quiet -e '.$(SERVICE_EXTRAS)'
	touch $@

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(QUIET_BUILD) $(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

# The real Codex CLI for the agent tests (Claude Code comes in the claude-agent-sdk wheel of the test
# extra); kept in the project, out of git. Needs Node.js and npm.
CODEX_VERSION ?= 0.169.0
CODEX := .tools/node_modules/.bin/codex

$(CODEX):
	@command -v npm >/dev/null || { echo "make test needs npm (Node.js) for the Codex CLI: apt-get install nodejs npm"; exit 1; }
	npm install --prefix .tools --no-audit --no-fund --loglevel=error @openai/codex@$(CODEX_VERSION)

# The real Aider for the agent tests, in a venv of its own: its many pins clash with ours.
AIDER_VERSION ?= 0.86.2
AIDER := .tools/aider/bin/aider

$(AIDER):
	$(PYTHON) -m venv .tools/aider
	.tools/aider/bin/pip install --quiet aider-chat==$(AIDER_VERSION)

# The sandbox every user program runs in is bubblewrap (Debian's `bubblewrap`): installed when missing
# and apt-get is at hand as root; otherwise the line says what to install.
BWRAP := $(shell command -v bwrap 2>/dev/null)
bubblewrap:
ifeq ($(BWRAP),)
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get install -y --no-install-recommends bubblewrap || \
		{ apt-get update && apt-get install -y --no-install-recommends bubblewrap; }; \
	else \
		echo "bubblewrap is missing: install it (Debian/Ubuntu: sudo apt-get install bubblewrap), or run with SANDBOX=off" >&2; \
		exit 1; \
	fi
endif

install: $(VENV)/.installed bubblewrap

# `isolator dev` with ARGS as its flags: `make dev ARGS="--api-port 18000"`. Unless AGENT or AGENT_COMMAND is
# set (AGENT_COMMAND empty: isolation only), the example agent answers, driven as Claude Code is.
ARGS ?=
dev: $(SERVICE_INSTALLED) bubblewrap
	$(BIN)/isolator dev $(ARGS)

# The tests run in TEST_WORKERS processes (pytest-xdist), each with its own PostgreSQL and Temporal:
# much of a test's time is spent waiting on real processes, so on 2 cores a third worker fills those
# waits (the whole suite: 592 s with 3, 732 s with 2, once the fault tests forked their worker).
# worksteal: a worker that runs out takes tests from the other, so no long test ends the run alone.
TEST_WORKERS ?= 3
test: install $(CODEX) $(AIDER) browser
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal

# The dashboard's browser tests drive Debian's chromium (never a browser Playwright downloads).
browser:
	@command -v chromium >/dev/null 2>&1 || { echo "chromium is missing: apt-get install chromium"; \
		{ apt-get update -q && apt-get install -y -q chromium; } || \
		echo "chromium could not be installed: run 'apt-get install chromium' as root, or tests/dashboard fail"; }

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
		tests/activities/git/test_stale_git_locks.py

bench: install $(CODEX) $(AIDER)
	$(BIN)/python -m bench.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) *.egg-info .tools
