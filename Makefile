# `make demo` and `make test` work on a fresh machine: they create the virtual
# environment, install eqsat (torch pinned to the local 2.13.0 CPU wheel) and run.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test test-slow test-all lint fuzz setup clean gpu-check browser bytecode

setup: bytecode

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev,onnx,cuda,zoo,tune]'  # cuda: NVRTC for the PTX tests (no GPU needed); zoo: transformers; tune: lightgbm, ray
	touch $(STAMP)

# the package's bytecode, written ahead as an install would (an editable install has none, and where
# PYTHONDONTWRITEBYTECODE is set no import writes it): each fresh process otherwise compiled rewrite/, lower/,
# costs/ and bench/ from source again (a third of a second of the first optimize; each test worker's collection);
# only what changed since is compiled, and a stale file is never read (its source is newer)
bytecode: $(STAMP)
	$(PY) -m compileall -q rewrite lower costs bench > /dev/null

# pytest keeps each test module's assertion-rewritten bytecode beside it (__pycache__, ignored by git) unless
# PYTHONDONTWRITEBYTECODE is set: with it set, every run's two workers rewrote and compiled all the test modules again
# (collection 11.3 s against 6.1 s with the kept files, per worker); the test targets run with it unset
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest

demo: bytecode
	$(VENV)/bin/eqsat optimize bert

test: bytecode
	$(PYTEST) -q -m "not slow" -n 2 --dist worksteal  # two workers: the 2-core CI box; ~3 min (worksteal: no long tail left on one worker)

test-slow: bytecode
	$(PYTEST) -q -m slow -n 2 --dist worksteal  # the slow tier (whole models, every kernel's PTX): ~10 min on 2 cores

test-all: bytecode
	$(PYTEST) -q

# on a machine with a CUDA GPU (and a CUDA build of torch): the gpu-marked tests, every op's lowering tests run on
# the GPU (exact FP32; tests of CPU kernel forms skip themselves), then bench e2e --target cuda
# (eager and inductor peers) and bench kernels --target cuda, written to one bench/results/cuda-<gpu>.json.
# Where torch+CUDA is installed without this venv (a lent GPU box): make gpu-check PY=python3 (no setup step).
# GPU_MODELS: the smallest e-graphs to measure by default (see bench/cuda.py); all: every built-in model.
# GPU_BENCH adds flags (--cost analytical, --imported, --repeats N, --out FILE).
GPU_MODELS ?= bert,nasrnn,vgg19
GPU_OP_TESTS ?= tests/lower/test_lower_ops.py tests/lower/test_lower_float_ops.py tests/lower/test_lower_fusion.py
GPU_BENCH ?=
gpu-check: $(if $(filter $(VENV)/bin/python,$(PY)),$(STAMP))
	$(PY) -m pytest -q -m gpu -p no:cacheprovider
	EQSAT_TEST_TARGET=cuda EQSAT_CUDA_EXACT_FP32=1 $(PY) -m pytest -q -p no:cacheprovider -n 4 $(GPU_OP_TESTS)
	$(PY) -m bench.cuda --models $(GPU_MODELS) --peers eager,inductor $(GPU_BENCH)

# the differential fuzzer: N random graphs in parallel workers; failures are shrunk into tests/fuzz/regressions/
N ?= 200
fuzz: bytecode
	$(PY) -m tests.fuzz.run --n $(N) --workers 2 --timeout 120

# headless Chromium for the report's browser test (Debian's package; apt-get needs root)
browser:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# the gates CI runs before the tests: format, lint, types, layers
lint: $(STAMP)
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

clean:
	rm -rf $(VENV) *.egg-info
