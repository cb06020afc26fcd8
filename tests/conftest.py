"""Fixtures shared by the test files, the test session's cache directory, and the model tiers.

Every test session gets its own empty ``EQSAT_CACHE_DIR`` (cost cache, machine
profile, compiled kernels), so no test reads what an earlier run or the user's
own ``~/.cache/eqsat`` left behind, and no test writes there.  A caller that
sets ``EQSAT_CACHE_DIR`` itself keeps its own.
"""

import os
import tempfile

import pytest
import torch

if "EQSAT_CACHE_DIR" not in os.environ:
    os.environ["EQSAT_CACHE_DIR"] = tempfile.mkdtemp(prefix="eqsat-test-cache-")
# make test runs two workers on two cores: egglog's own worker threads (rayon) would only contend with the other
# worker (a blocked-layout optimize: 4.6 s with one thread against 6.7 s with its default, even alone)
# and for the same reason no LLVM compile workers beside each test worker (the fast tier 155 s with
# EQSAT_COMPILE_JOBS=1 against 173 s with the default, A/B on a fresh clone)
# Compiled kernels run on one thread by default for the same reason: a parallel kernel's second thread waits for a
# core the other worker holds (the fast tier 176-178 s with kernels on 2 threads, 160 s on one, after the parallel
# thresholds went 4x lower).  Tests of parallel kernels ask for their threads (threads=2), and the fuzzer's oracle
# runs every optimized graph on two.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    os.environ.setdefault("EQSAT_COMPILE_JOBS", "1")
    os.environ.setdefault("EQSAT_THREADS", "1")
# optimize's run check (a compiled target's chosen graph compiled and timed against the input) is tested where
# it is the subject (tests/pipeline/test_run_check.py turns it on); elsewhere it would only add a second compile
# and a second of timing to every compiled-target optimize, and its answer (on a busy test box) to what a test
# asserts
os.environ.setdefault("EQSAT_RUN_CHECK", "0")
# optimize's kept answers (rewrite.result_cache) are tested where they are the subject
# (tests/pipeline/test_result_cache.py); elsewhere a test that changes what saturation or extraction does by other
# means than their arguments (a monkeypatched rule engine, limits inside a module) would read the answer of an
# earlier test of the same graph from the session's cache folder
os.environ.setdefault("EQSAT_OPTIMIZE_CACHE", "0")


@pytest.fixture
def one_thread():
    """Time with one torch thread: on a shared, oversubscribed machine a second intra-op thread
    waits for a time slice (~20 ms per op), which swamps what these tests look at."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
