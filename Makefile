# webapp — `make help` lists the targets.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
BUNDLES := static/dist/.built

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
	$(PY) -m pip install -q -e '.[test,bench,otel,docs]'
	touch $(STAMP) $@

chromium: ## Install Debian's chromium for the browser tests (when missing and run as root)
	@if ! command -v chromium >/dev/null; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium; \
		else echo "chromium is missing: run 'sudo apt-get install chromium'" >&2; exit 1; fi; \
	fi

node: ## Install Debian's nodejs and npm when the machine has no node 20 or newer (when run as root)
	@if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' 2>/dev/null; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq nodejs npm; \
		else echo "node 20 or newer is missing: run 'sudo apt-get install nodejs npm'" >&2; exit 1; fi; \
	fi

services: ## Install what the tests start or run: Debian's redis-server, haproxy, postgresql, prometheus (promtool) and kubernetes-client (kubectl), none started as a system service
	@bash scripts/install-services.sh

run: $(STAMP) $(BUNDLES) ## Start the server with its embedded default (SQLite, demo data) on http://127.0.0.1:8080
	$(VENV)/bin/webapp serve $(ARGS)

lint: $(TEST_STAMP) ## ruff (lint + format check), pyright strict and the import contracts (pyproject.toml)
	$(VENV)/bin/ruff check --no-cache .
	$(VENV)/bin/ruff format --no-cache --check .
	$(VENV)/bin/pyright
	$(VENV)/bin/lint-imports --no-cache

test: $(TEST_STAMP) node_modules/.installed $(BUNDLES) chromium services lint docs-check ## Everything CI checks: ruff, pyright, the docs site (strict) and the whole test suite
	node --test $$(find tests/static -name '*.test.mjs' | sort)
	$(VENV)/bin/pytest -q

bench: $(TEST_STAMP) $(BUNDLES) chromium ## Print the performance figures (bench/*.py)
	@missed=""; for script in bench/*.py; do name=$$(basename $$script .py); echo "== bench/$$name"; \
		$(PY) -m bench.$$name || missed="$$missed $$name"; done; \
	if [ -n "$$missed" ]; then echo "a target was missed or a run failed in:$$missed" >&2; exit 1; fi

node_modules/.installed: package-lock.json | node
	npm ci --no-audit --no-fund
	touch $@

# What the bundles need: the full install of `make test` when it is there (brought up to date, never cut down to the
# `dependencies`, which would remove the test peers of a checkout that has them), else only the `dependencies`.
node_modules/.installed-runtime: package-lock.json | node
	@if [ -e node_modules/.installed ]; then $(MAKE) --no-print-directory node_modules/.installed && touch $@; \
	else npm ci --omit=dev --no-audit --no-fund && touch $@; fi

# static/dist/pages.css holds the Tailwind classes that webapp/ and views/ use, so their files count too.
$(BUNDLES): $(shell find static webapp views -type f -not -path 'static/dist/*' -not -name '*.pyc') package-lock.json \
		| node_modules/.installed-runtime
	node static/build.mjs
	touch $@

bundles: $(BUNDLES) ## Build the browser bundles (static/dist) when missing or stale

.PHONY: help chromium node services run lint test bench bundles

# The docs site (mkdocs.yml): the reference's generated parts go to build/docs (ignored), which the pages include.
DOCS_GENERATED := build/docs
MKDOCS := NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs

reference: $(TEST_STAMP) ## Generate the reference's tables (options, error codes, wire examples) into build/docs
	$(PY) scripts/reference.py $(DOCS_GENERATED)

docs: reference ## Build the docs site into site/ (strict: a broken link or include fails it)
	$(MKDOCS) build --strict --site-dir site

docs-serve: reference ## Serve the docs site on http://127.0.0.1:8000 and rebuild it as pages change
	$(MKDOCS) serve --dev-addr 127.0.0.1:8000 --watch webapp

docs-check: reference ## Build the docs site strictly into a temporary folder, as `make test` does
	@site=$$(mktemp -d); trap 'rm -rf "$$site"' EXIT; $(MKDOCS) build --strict --site-dir "$$site"

screenshots: $(TEST_STAMP) $(BUNDLES) chromium ## Take the docs' screenshots (docs/images/*.png) with Debian's Chromium
	$(PY) -m scripts.screenshots docs/images

.PHONY: reference docs docs-serve docs-check screenshots

demo: $(STAMP) $(BUNDLES) ## A scripted agent drives the inventory view (URL=http://127.0.0.1:8080 uses a running server; ARGS=--open-browser)
	$(PY) scripts/demo.py $(if $(URL),--url $(URL)) $(ARGS)

.PHONY: demo

cluster: $(STAMP) $(BUNDLES) services ## Redis, two workers and HAProxy on loopback (ARGS="--port 8080 --db inventory.db"); Ctrl-C stops all
	$(PY) scripts/cluster.py $(ARGS)

.PHONY: cluster

faults: $(TEST_STAMP) $(BUNDLES) chromium services ## The faults run of `make bench`, longer: each fault 8 times (ARGS="--rounds 8 --calm 5")
	$(PY) -m bench.faults $(or $(ARGS),--rounds 8 --calm 5)

.PHONY: faults
