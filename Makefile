# delegator: `make demo` runs the main job, `make test` runs the whole suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
QUESTION ?= Which natural disasters and severe weather events struck in 2022 and 2023, and what damage did each cause?

export LANGGRAPH_CLI_NO_ANALYTICS := 1
export LANGGRAPH_NO_VERSION_CHECK := true
export LANGSMITH_TRACING := false
export LANGGRAPH_STRICT_MSGPACK := true

.PHONY: install kb demo test lint format clean system

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	PYTHONWARNINGS=ignore $(BIN)/pip install --quiet -e . --group dev
	touch $@

install: $(BIN)/.installed

data/kb.sqlite: $(BIN)/.installed runtime/corpus.py $(wildcard data/freshwiki/*)
	$(BIN)/delegator ingest

kb: data/kb.sqlite

demo: kb
	$(BIN)/delegator research "$(QUESTION)" --lead-model extractive \
		--subagent-model extractive --out out/report.md --json out/result.json \
		--html out/report.html

# The Debian packages the tests use (PostgreSQL, Chromium), installed when missing.
system:
	bash tools/system-packages.sh

test: lint system
	$(BIN)/pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy .

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) data/kb.sqlite data/runs.sqlite* data/.runs.sqlite.*.lock data/server.sqlite* out .pytest_cache .mypy_cache .ruff_cache

# A real small model on the breadth sets (by hand, about an hour on two cores): the
# figures of benchmarks/RESULTS.md's model section. SMALL_MODEL is a GGUF file.
SMALL_MODEL ?= $(shell bash tools/small-instruct-model.sh 2>/dev/null)
.PHONY: eval-local
eval-local: kb
	@test -n "$(SMALL_MODEL)" || { echo "set SMALL_MODEL=path/to/model.gguf"; exit 2; }
	mkdir -p out
	for set in breadth heldout; do \
		$(BIN)/delegator eval --dataset $$set --lead-model local:$(SMALL_MODEL) \
			--subagent-model local:$(SMALL_MODEL) --json out/eval-local-$$set.json \
			|| exit $$?; \
	done

# Benchmarks, never part of `make test`: one table, also written to benchmarks/RESULTS.md.
.PHONY: bench
bench: install
	$(BIN)/pip install --quiet -r benchmarks/requirements.txt
	$(BIN)/python -m benchmarks.run --question "$(QUESTION)"
