# webapp — `make help` lists the targets.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.DEFAULT_GOAL := help

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(PY):
	python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

$(TEST_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,bench]'
	touch $(STAMP) $@

chromium: ## Install Debian's chromium for the browser tests (when missing and run as root)
	@if ! command -v chromium >/dev/null; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium; \
		else echo "chromium is missing: run 'sudo apt-get install chromium'" >&2; exit 1; fi; \
	fi

services: ## Install Debian's redis-server and haproxy for the tests (not started as system services)
	@bash scripts/install-services.sh

run: $(STAMP) ## Start the server with its embedded default (SQLite, demo data) on http://127.0.0.1:8080
	$(VENV)/bin/webapp serve $(ARGS)

lint: $(TEST_STAMP) ## ruff (lint + format check), pyright strict and the import contracts (pyproject.toml)
	$(VENV)/bin/ruff check --no-cache .
	$(VENV)/bin/ruff format --no-cache --check .
	$(VENV)/bin/pyright
	$(VENV)/bin/lint-imports --no-cache

test: $(TEST_STAMP) node_modules/.installed chromium services lint ## Everything CI checks: ruff, pyright and the whole test suite
	node --test $$(find tests/static -name '*.test.mjs' | sort)
	$(VENV)/bin/pytest -q

bench: $(TEST_STAMP) chromium ## Print the performance figures (bench/*.py)
	@missed=""; for script in bench/*.py; do name=$$(basename $$script .py); echo "== bench/$$name"; \
		$(PY) -m bench.$$name || missed="$$missed $$name"; done; \
	if [ -n "$$missed" ]; then echo "a target was missed or a run failed in:$$missed" >&2; exit 1; fi

node_modules/.installed: package-lock.json
	npm ci --no-audit --no-fund
	touch $@

.PHONY: help chromium services run lint test bench

demo: $(STAMP) ## A scripted agent drives the inventory view (URL=http://127.0.0.1:8080 uses a running server; ARGS=--open-browser)
	$(PY) scripts/demo.py $(if $(URL),--url $(URL)) $(ARGS)

.PHONY: demo

cluster: $(STAMP) services ## Redis, two workers and HAProxy on loopback (ARGS="--port 8080 --db inventory.db"); Ctrl-C stops all
	$(PY) scripts/cluster.py $(ARGS)

.PHONY: cluster
