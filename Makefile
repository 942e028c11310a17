# The two commands of the quick start: `make demo` and `make test`; then `make lab` for the notebooks.
# Each sets up .venv first. `make check` is the fast lane while working (lint, types, the unit tests on both
# cores: under a minute on two); `make test` is everything, and what CI runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo lab test test-phoenix check lint typecheck bench clean

# Compiled modules are cached in __pycache__ (ignored by git) even where the environment asks Python not to
# write them: each test process would otherwise compile the package and the tests again (5 s of each collection).
unexport PYTHONDONTWRITEBYTECODE

setup: $(STAMP)

# The C extensions are built by the install, so a change to either reinstalls.
$(STAMP): pyproject.toml setup.py journaltools/protocol/_canonical.c journaltools/folding/_native.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,dask,notebook]"
	touch $(STAMP)

# The demo needs the package and its own dependencies only: the test, Dask and notebook extras (JupyterLab, a
# browser driver, DuckDB, polars...) are most of a fresh clone's install, so `make demo` leaves them to `make test`
# and `make lab` (after those, the full install serves the demo as it is).
DEMO_STAMP := $(VENV)/.installed-demo

$(DEMO_STAMP): pyproject.toml setup.py journaltools/protocol/_canonical.c journaltools/folding/_native.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	test -f $(STAMP) || $(BIN)/python -m pip install --quiet --upgrade pip
	test -f $(STAMP) || $(BIN)/python -m pip install --quiet -e .
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/python -m journaltools.testing.demo

# JupyterLab on working copies of notebooks/ in out/notebooks: saving a notebook there never touches the
# tracked files. A copy is refreshed only when the tracked notebook is newer (delete out/notebooks to reset).
# LAB_ARGS goes to `jupyter lab` as it is: a port, an address, --no-browser for a headless or remote machine,
# e.g. make lab LAB_ARGS="--no-browser --ServerApp.port=8890 --ServerApp.ip=127.0.0.1".
LAB_ARGS ?=
lab: setup
	$(BIN)/python scripts/generate-notebooks.py --working-copies out/notebooks
	$(BIN)/jupyter lab --ServerApp.root_dir=out/notebooks $(if $(filter 0,$(shell id -u)),--allow-root,) $(LAB_ARGS)

# Everything: the lint and the types (checked while the browser tests' tools are fetched), then three passes. The unit
# tests on both cores (they share nothing but read-only corpora) and, at the same time, the tests that run whole
# programs (the installed wheel's, which waits mostly on pip, then the notebooks, each in a fresh kernel on its own
# scratch directory, then the README's examples, on a server of their own): 106 s for the first two where they took
# 131 s one after the other, and the README's 15 s fit in the unit tests' time; the programs' output is kept aside
# and shown after the unit tests'. Then, in two processes side by side, the tests that draw in a notebook host
# (JupyterLab, Notebook 7, marimo: waiting mostly on the browser, with timeouts of half a minute and more) and the
# others (servers, writers, a cluster, the offline report and site in a browser; timeouts of seconds: each process
# runs its tests one at a time); the second takes the unit folder's cases that need a server too (marked
# integration). The two took 150-165 s one after the other; the notebook hosts' output is shown after the others'.
PROGRAM_TESTS := tests/e2e/test_wheel.py tests/e2e/test_notebooks.py tests/e2e/test_readme.py
PROGRAM_LOG := build/program-tests.log
WEB_TESTS := tests/e2e/test_browser.py tests/e2e/test_notebook7.py tests/e2e/test_marimo.py
WEB_LOG := build/web-tests.log
test: setup
	sh scripts/setup-browser-tests.sh & browsers=$$!; \
	$(MAKE) --no-print-directory lint typecheck; checked=$$?; \
	wait $$browsers && test $$checked -eq 0
	mkdir -p build
	$(BIN)/python -m pytest -q $(PROGRAM_TESTS) > $(PROGRAM_LOG) 2>&1 & programs=$$!; \
	$(BIN)/python -m pytest -q -n 2 -m "not integration" tests/unit; unit=$$?; \
	wait $$programs; ran=$$?; cat $(PROGRAM_LOG); test $$unit -eq 0 && test $$ran -eq 0
	$(BIN)/python -m pytest -q $(WEB_TESTS) > $(WEB_LOG) 2>&1 & web=$$!; \
	$(BIN)/python -m pytest -q -m "integration or e2e" $(addprefix --ignore=,$(PROGRAM_TESTS) $(WEB_TESTS)) \
		tests/unit tests/integration tests/e2e; servers=$$?; \
	wait $$web; shown=$$?; cat $(WEB_LOG); test $$servers -eq 0 && test $$shown -eq 0

# The export's end-to-end test loads traces into a real trace viewer, Arize Phoenix with its embedded database: an
# install of about 150 packages (850 MB) that would double a clean clone's setup, so it is its own target. Without
# it, tests/e2e/test_phoenix.py says it is skipped and why; `make test-phoenix` installs it once and runs that test.
PHOENIX_STAMP := $(VENV)/.installed-phoenix

$(PHOENIX_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[phoenix]"
	touch $(PHOENIX_STAMP)

test-phoenix: setup $(PHOENIX_STAMP)
	$(BIN)/python -m pytest -q tests/e2e/test_phoenix.py

# The fast lane is the unit tests (tests/unit/, laid out as the package is) on both cores: they share nothing but
# read-only corpora. Left to `make test`: tests/integration/ (a real nats-server, worker processes), tests/e2e/
# (a browser, Jupyter, a wheel build, killed writers, a cluster) and the scaling and memory tests marked slow.
check: setup lint typecheck
	$(BIN)/python -m pytest -q -n 2 -m "not integration and not slow" tests/unit

lint: setup
	$(BIN)/ruff check journaltools tests benchmarks scripts
	$(BIN)/ruff format --check journaltools tests benchmarks scripts

typecheck: setup
	$(BIN)/mypy

bench: setup
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
