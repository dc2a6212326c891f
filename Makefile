# Two entry points for a fresh machine (see README):
#   make demo  - core install (no torch) in .venv-demo, then the main job on a sample
#   make test  - Debian packages (Chromium, espeak-ng, flite, festival + voices), then the
#                train/serve/ray/audio/dev extras in .venv, then the test suite
PYTHON ?= python3
DEMO_VENV ?= .venv-demo
TEST_VENV ?= .venv
TORCH_VERSION ?= 2.13.0

.PHONY: demo test install-test lint clean

$(DEMO_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/pip install --quiet --upgrade pip
	$(DEMO_VENV)/bin/pip install --quiet .
	touch $@

demo: $(DEMO_VENV)/.installed
	$(DEMO_VENV)/bin/punctum restore -i examples/asr_sample.txt

$(TEST_VENV)/.installed: pyproject.toml scripts/system-deps.sh
	./scripts/system-deps.sh
	$(PYTHON) -m venv $(TEST_VENV)
	$(TEST_VENV)/bin/pip install --quiet --upgrade pip
	# torch first, pinned to the local CPU wheel: the range in pyproject is then satisfied
	$(TEST_VENV)/bin/pip install --quiet torch==$(TORCH_VERSION)
	$(TEST_VENV)/bin/pip install --quiet -e ".[dev,train,plot,serve,ray,audio,asr]"
	touch $@

install-test: $(TEST_VENV)/.installed

test: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/python -m pytest -q

lint: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/ruff check punctum tests benchmarks scripts examples

clean:
	rm -rf $(DEMO_VENV) $(TEST_VENV) build *.egg-info
