# `make demo` and `make test` work on a fresh machine: they create the virtual
# environment, install eqsat (torch pinned to the local 2.13.0 CPU wheel) and run.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test test-all lint fuzz setup clean gpu-check

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev,onnx,cuda,zoo]'  # cuda: NVRTC for the PTX tests (no GPU needed); zoo: transformers
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/eqsat optimize bert

test: $(STAMP)
	$(PY) -m pytest -q -m "not slow" -n 2  # two workers: the 2-core CI box; ~170 s

test-all: $(STAMP)
	$(PY) -m pytest -q

# on a machine with a CUDA GPU (and a CUDA build of torch): the gpu-marked tests, then GPU benchmarks
# written to bench/results/cuda-<gpu>.json
gpu-check: $(STAMP)
	$(PY) -m pytest -q -m gpu
	$(PY) -m bench.cuda

# the differential fuzzer: N random graphs in parallel workers; failures are shrunk into tests/fuzz/regressions/
N ?= 200
fuzz: $(STAMP)
	$(PY) -m tests.fuzz.run --n $(N) --workers 2 --timeout 120

# the gates CI runs before the tests: format, lint, types, layers
lint: $(STAMP)
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

clean:
	rm -rf $(VENV) *.egg-info
