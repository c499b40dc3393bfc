# hrimport: `make help` lists the targets. Everything installs itself: a fresh machine needs only
# python3 (>= 3.11) and make; `make test` also installs Debian's chromium for the report's browser test.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
HRIMPORT := $(VENV)/bin/hrimport
STAMP := $(VENV)/.installed
PORT ?= 8765
DEMO_DIR ?= demo-output

.DEFAULT_GOAL := help
.PHONY: help install chromium test demo sandbox bench lint docs cldr lock clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

# An editable install leaves hrimport's own modules without bytecode, and where PYTHONDONTWRITEBYTECODE is set
# (many container images set it) every command compiled them again (~0.1 s); compileall writes it as pip does
# for installed packages (`make bench` does it again, so the code it times has its bytecode as a user's would).
# requirements.lock pins every package (and what they need) to the versions the tests last passed with,
# so that a new release of a dependency never changes a monthly run unnoticed; `make lock` updates it.
$(STAMP): pyproject.toml requirements.lock
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -qq --upgrade pip
	$(PY) -m pip install -qq -r requirements.lock
	$(PY) -m pip install -qq --no-deps -e .
	@$(PY) -m compileall -q pipeline
	@touch $(STAMP)

install: $(STAMP) ## create .venv and install hrimport with its test tools

chromium: ## install Debian's chromium for the report's browser test (when missing)
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
		echo "installing Debian's chromium for the report's browser test"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

test: install chromium lint ## lint, then run the whole test suite
	$(PY) -m pytest

demo: install ## start the embedded sandbox, import the samples, write the reports and say where
	$(HRIMPORT) demo --output $(DEMO_DIR)

sandbox: install ## run the sandbox in the foreground (port 8765; PORT=... to change)
	$(HRIMPORT) sandbox serve --port $(PORT) --db sandbox.db

# BENCH_ARGS=--quick: small files, one run each, prints only; --stages: the stages inside one process
BENCH_ARGS ?=
bench: install ## time whole commands against their baselines; writes the README's Benchmarks table
	$(PY) -m pip install -qq -e '.[test,bench]'
	@$(PY) -m compileall -q pipeline
	$(PY) tests/bench/run_bench.py $(BENCH_ARGS)

lint: install ## ruff and mypy
	$(VENV)/bin/ruff check pipeline tests
	$(VENV)/bin/mypy pipeline/hrimport

docs: install chromium ## regenerate the README's field tables (schemas/) and report screenshots (docs/, from the demo)
	$(PY) -m hrimport.docs README.md

lock: install ## pin the newest versions pyproject.toml allows into requirements.lock (then run make test)
	$(PY) -m pip install -qq pip-tools
	$(VENV)/bin/pip-compile --quiet --upgrade --extra test --strip-extras --no-header --no-emit-index-url \
		--no-emit-find-links --annotation-style line -o requirements.lock pyproject.toml

cldr: install ## rewrite schemas/cldr_country_names.json from the installed Babel's CLDR data
	$(PY) -c 'from hrimport.normalize.countries import write_cldr_file; write_cldr_file()'

clean: ## remove the venv, caches and demo output
	rm -rf $(VENV) .pytest_cache $(DEMO_DIR) build dist *.egg-info
