# Two commands take a fresh clone to a result: `make run` and `make test`.
# Each creates .venv if needed and installs torch==2.13.0 (CPU build) before the package.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CONFIG ?= configs/adult.yaml

.PHONY: run test test-slow lint clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev,attacks]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/synthpriv run $(CONFIG) --force

test: $(STAMP)
	$(BIN)/pytest -q

test-slow: $(STAMP)
	$(BIN)/pytest -q -m slow

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf out .pytest_cache
