# Two entry points (see README): `make demo` and `make test`. Everything else is a helper target.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
QUESTION ?= List the name of every person.
# The bundled 135M model needs a low temperature to write executable Cypher; the seed makes the demo reproducible.
DEMO_OPTIONS ?= --temperature 0.2 --seed 0

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## demo: set up, load the POLE crime graph into the embedded engine, ask a question with RAS@5
demo: $(STAMP)
	$(BIN)/cypherturn ask "$(QUESTION)" --graph pole --strategy ras -n 5 $(DEMO_OPTIONS)

## test: set up and run the test suite (real embedded FalkorDB, real bundled GGUF model)
test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
