# The two commands of the README: `make dev` runs the service, `make test` runs the tests.
# `make bench` prints the benchmark figures (BENCH_ARGS=--quick for a short check).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: dev test bench install clean

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

bench: install
	$(BIN)/python -m bench.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) *.egg-info
