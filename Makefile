# fleetpulse developer commands. `make demo` and `make test` are all a fresh clone needs
# (Python 3.11+, Java 17+ and Maven on PATH); both create .venv on first use.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test check lint types layers lock unit faults bench clean

UV_VERSION := 0.13.9

# The environment is exactly uv.lock (plus uv itself, hence --inexact); `make lock` after editing
# pyproject.toml's dependencies.
$(STAMP): pyproject.toml uv.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet "uv==$(UV_VERSION)"
	$(BIN)/uv sync --quiet --frozen --inexact --extra dev --python $(BIN)/python
	touch $(STAMP)

## lock: re-resolve uv.lock after a dependency change in pyproject.toml
lock: $(STAMP)
	$(BIN)/uv lock

## demo: the whole pipeline end to end on a local Kafka broker (started for you)
demo: $(STAMP)
	$(BIN)/fleetpulse demo

# Test workers: most tests wait on a broker or a child process, so more workers than cores pay
# (docs/BENCHMARKS.md, "Test suite"). Tests marked serial (the fault scenarios, which time their faults
# against a running producer) run afterwards, alone on a quiet machine, as they did before.
TEST_WORKERS ?= 3
XDIST := -n $(TEST_WORKERS) --dist loadgroup
# Where the serial tests are: the serial phase collects only these, not the whole suite again
# (tests/test_parallel.py fails on a test marked serial anywhere else).
SERIAL_TESTS := tests/fleetpulse/faults/test_scenarios.py

## test: lint, types and the full test suite against a real Kafka broker (what CI runs)
test: $(STAMP) lint types layers
	$(BIN)/pytest -q $(XDIST) -m "not serial"
	$(BIN)/pytest -q -m serial $(SERIAL_TESTS)

check: test

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

types: $(STAMP)
	$(BIN)/mypy schemas ground producers streams analytics webhooks fleetpulse

## layers: the import-linter contracts in pyproject.toml (schemas → ground → parts → shell)
layers: $(STAMP)
	$(BIN)/lint-imports

unit: $(STAMP)
	$(BIN)/pytest -q -m "not integration and not faults and not slow"

faults: $(STAMP)
	$(BIN)/pytest -q -m faults

## bench: every benchmark; each script writes its run to docs/benchmarks/<part>-run.md. The analysis in
## docs/benchmarks/<part>.md and docs/BENCHMARKS.md is written by hand and is not overwritten.
bench: $(STAMP)
	$(BIN)/uv sync --quiet --frozen --inexact --extra dev --extra bench --python $(BIN)/python
	$(BIN)/python bench/bench_simulator.py --md docs/benchmarks/simulator-run.md
	$(BIN)/python bench/bench_detect.py --md docs/benchmarks/detect-run.md
	$(BIN)/python bench/bench_analytics.py --rows 100000000 --reps 3 --md docs/benchmarks/analytics-run.md

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
