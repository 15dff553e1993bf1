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

dev: install
	$(BIN)/isolator dev

test: install
	$(BIN)/python -m pytest -q

bench: install
	$(BIN)/python -m bench.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) *.egg-info
