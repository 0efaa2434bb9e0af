# Two entry points (see README): `make demo` and `make test`. Everything else is a helper target.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# The demo's model pack (docs/design/models.md); `make test` does not need it and stays lighter.
MODELS_STAMP := $(VENV)/.models-stamp
DEMO_MODEL ?= qwen2.5-coder-1.5b
QUESTION ?= How many crimes are there of each type?
# The seed makes the demo reproducible.
DEMO_OPTIONS ?= --seed 0

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(MODELS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[qwen-1.5b]'
	touch $(MODELS_STAMP)

## demo: set up with Qwen2.5-Coder-1.5B, load the POLE crime graph into the embedded engine, ask with grounded RAS+@5
demo: $(MODELS_STAMP)
	$(BIN)/cypherturn models prepare $(DEMO_MODEL)
	$(BIN)/cypherturn ask "$(QUESTION)" --graph pole --strategy ras+ -n 5 --model $(DEMO_MODEL) $(DEMO_OPTIONS)

## test: set up and run the test suite (real embedded FalkorDB, real bundled GGUF model)
## on one worker per core (pytest-xdist; each worker's models get their share of the cores);
## the 25 slowest tests are listed at the end, so every run says where the suite's time goes
test: $(STAMP)
	$(BIN)/python -m pytest -n auto --durations=25

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
