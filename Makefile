# The two commands of the quick start: `make demo` and `make test`; then `make lab` for the notebooks.
# Each sets up .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo lab test lint typecheck bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,dask,notebook]"
	touch $(STAMP)

demo: setup
	$(BIN)/python -m journaltools.demo

# JupyterLab on working copies of notebooks/ in out/notebooks: saving a notebook there never touches the
# tracked files. A copy is refreshed only when the tracked notebook is newer (delete out/notebooks to reset).
lab: setup
	$(BIN)/python scripts/generate-notebooks.py --working-copies out/notebooks
	$(BIN)/jupyter lab --ServerApp.root_dir=out/notebooks $(if $(filter 0,$(shell id -u)),--allow-root,)

test: setup lint typecheck
	sh scripts/setup-browser-tests.sh
	$(BIN)/python -m pytest -q

lint: setup
	$(BIN)/ruff check journaltools tests benchmarks scripts
	$(BIN)/ruff format --check journaltools tests benchmarks scripts

typecheck: setup
	$(BIN)/mypy

bench: setup
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
