# quadrants: the two set-up commands are `make run` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test bench lint venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,dev]'
	touch $(STAMP)

## Run the example end to end: compile and run a simulation, report start-up and run times.
run: $(STAMP)
	$(PY) examples/run_demo.py

## Run the test suite (2 workers).
test: $(STAMP)
	$(PY) -m pytest -n 2 tests

## Benchmarks side by side with numpy, Numba and real Quadrants (each peer in its own venv).
bench: $(STAMP)
	$(PY) -m pip install --quiet matplotlib
	$(PY) benchmarks/run.py

lint: $(STAMP)
	$(VENV)/bin/ruff check quadrants cli tests benchmarks examples
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) .venv-* build dist *.egg-info .pytest_cache qd_dump
