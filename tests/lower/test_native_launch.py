"""Native launches (lower/llvm/driver.py): one driver call per model run, parallel kernels on the native pool.

The native replay must give the same bits as running kernel by kernel (the per-kernel path is what
``profile`` uses, and what runs without the native pool), cover every iteration of a parallel root
loop exactly once at any thread count, and stay correct when called from several Python threads.
"""

from __future__ import annotations

import ctypes
import dataclasses
import threading

import pytest
import torch

from lower import compile_graph
from lower.llvm import driver, jit
from lower.parallel import parallel_for
from rewrite.ir.builder import GraphBuilder
from rewrite.verification.numeric import normwise_rel_err

G = torch.Generator().manual_seed(11)

# out[i] += i over [lo, hi): a range run twice or skipped shows in the sums
ADD_INDEX = """
define void @__KERNEL__(ptr %args, i64 %lo, i64 %hi) nounwind {
entry:
  %out = load ptr, ptr %args
  %any = icmp slt i64 %lo, %hi
  br i1 %any, label %loop, label %done
loop:
  %i = phi i64 [ %lo, %entry ], [ %n, %loop ]
  %p = getelementptr float, ptr %out, i64 %i
  %f = sitofp i64 %i to float
  %old = load float, ptr %p
  %v = fadd float %old, %f
  store float %v, ptr %p
  %n = add i64 %i, 1
  %more = icmp slt i64 %n, %hi
  br i1 %more, label %loop, label %done
done:
  ret void
}
"""


def _wide():
    """A conv (implicit GEMM), a pool, a softmax and a big elementwise kernel: all parallel at 2+ threads."""
    b = GraphBuilder("wide")
    x = b.input("x", (1, 16, 66, 66))
    y = b.relu(b.conv2d(x, b.weight("w", torch.randn(32, 16, 3, 3, generator=G) * 0.1), padding=(1, 1)))
    y = b.maxpool2d(y, kernel=(3, 3), stride=(2, 2), padding=(1, 1))
    s = b.softmax(b.reshape(y, shape=(1056, 33)), axis=-1)
    z = b.sigmoid(b.add(x, b.smul(x, scalar=0.5)))
    return b.build([s, z])


def _mlp():
    b = GraphBuilder("mlp")
    x = b.input("x", (256, 300))
    h = b.relu(b.linear(x, b.weight("w1", torch.randn(400, 300, generator=G) * 0.05), b.weight("b1", torch.randn(400))))
    y = b.softmax(
        b.linear(h, b.weight("w2", torch.randn(70, 400, generator=G) * 0.05), b.weight("b2", torch.randn(70))), axis=-1
    )
    return b.build([y])


GRAPHS = {"wide": _wide, "mlp": _mlp}


def _per_kernel(cg, inputs):
    times: list[list[float]] = [[] for _ in cg._launches]
    return cg(inputs, _times=times), times


def _add_index(n: int):
    """The ADD_INDEX kernel, an output of ``n`` zeros and its argument array: ``(fn, out, args)``."""
    _, addr = jit.load_function(ADD_INDEX, driver._host(), "t")
    out = torch.zeros(n)
    args = (ctypes.c_void_p * 1)(out.data_ptr())
    return jit.cfunc(addr), out, ctypes.cast(args, ctypes.c_void_p)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_driver_runs_every_iteration_exactly_once(threads):
    fn, out, argp = _add_index(1000)
    table = driver.LaunchTable([(fn, argp, 1000), (fn, argp, None), (fn, argp, 7), (fn, argp, 1)], threads)
    assert table.parallel == (2 if threads > 1 else 0)  # extents 1000 and 7 are split; None and 1 are one call
    for _ in range(25):
        table()
    want = torch.arange(1000.0)
    want[:7] *= 2
    assert torch.equal(out, 25 * want)


def test_a_worker_late_from_the_last_job_never_claims_under_the_next_jobs_fields():
    """Small and larger parallel jobs back to back: a worker that read the last job's word must not claim a
    chunk under the next job's fields before the next gen is out.  Before the launch closed the old gen
    first (with a next-iteration counter for a word), about one call in 40 here ran a range twice."""
    fn, out, argp = _add_index(200)
    table = driver.LaunchTable([(fn, argp, 200), (fn, argp, 3)] * 8, 3)
    assert table.parallel == 16
    want = torch.arange(200.0) * 8 * 4
    want[:3] *= 2
    for _ in range(2000):
        out.zero_()
        for _ in range(4):
            table()
        assert torch.equal(out, want)


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_native_replay_matches_the_per_kernel_path_bitwise(name, threads):
    g = GRAPHS[name]()
    inputs = g.random_inputs(1)
    cg = compile_graph(g, threads=threads)
    assert isinstance(cg._replay, driver.LaunchTable) and cg._replay.parallel >= 1
    native = [t.clone() for t in cg(inputs)]
    again = [t.clone() for t in cg(inputs)]
    per_kernel, times = _per_kernel(cg, inputs)
    assert all(len(ts) == 1 for ts in times)  # the per-kernel path ran, one time per kernel
    for a, b, c, ref in zip(native, again, per_kernel, g.run(inputs), strict=True):
        assert torch.equal(a, b) and torch.equal(a, c)
        assert normwise_rel_err(a, ref) <= 1e-4


def test_without_the_native_pool_parallel_kernels_use_the_python_pool(monkeypatch):
    g = _wide()
    inputs = g.random_inputs(2)
    native = [t.clone() for t in compile_graph(g, threads=2)(inputs)]
    monkeypatch.setattr(driver, "pool_supported", lambda: False)
    cg = compile_graph(g, threads=2)
    assert cg._replay is None  # launched one by one
    par = [ln for ln in cg._launches if ln.par_extent is not None]
    assert par and all(getattr(ln.run, "func", None) is parallel_for for ln in par)
    for a, b in zip(native, cg(inputs), strict=True):
        assert torch.equal(a, b)
    cg1 = compile_graph(g, threads=1)  # one thread needs no pool: still one native call
    assert isinstance(cg1._replay, driver.LaunchTable) and cg1._replay.parallel == 0
    for a, b in zip(native, cg1(inputs), strict=True):
        assert normwise_rel_err(a, b) <= 1e-5


def test_profile_times_every_kernel_and_a_recompile_hits_the_kernel_cache():
    g = _mlp()
    inputs = g.random_inputs(3)
    cg = compile_graph(g, threads=2)
    prof = cg.profile(inputs, repeats=2)
    assert len(prof) == cg.kernels and all(p["seconds"] > 0 for p in prof)
    assert any(p["parallel"] for p in prof)
    hits = jit.STATS.memory_hits
    cg2 = compile_graph(g, threads=2)
    assert jit.STATS.memory_hits >= hits + cg2.kernels  # every kernel (and the driver) already loaded
    for a, b in zip(cg(inputs), cg2(inputs), strict=True):
        assert torch.equal(a, b)


def test_calls_from_several_python_threads_stay_correct():
    """One graph from two threads (its lock serialises them) and two graphs at once (one holds the pool,
    the other runs its kernels alone)."""
    g1, g2 = _wide(), _mlp()
    cg1, cg1b, cg2 = compile_graph(g1, threads=2), compile_graph(g1, threads=2), compile_graph(g2, threads=2)
    in1, in2 = g1.random_inputs(4), g2.random_inputs(5)
    want1, want2 = [t.clone() for t in cg1(in1)], [t.clone() for t in cg2(in2)]
    bad: list[str] = []

    def hammer(cg, inputs, want, tag):
        for _ in range(15):
            for a, b in zip(cg(inputs), want, strict=True):
                if not torch.equal(a, b):
                    bad.append(tag)

    ths = [
        threading.Thread(target=hammer, args=(cg1, in1, want1, "same graph a")),
        threading.Thread(target=hammer, args=(cg1, in1, want1, "same graph b")),
        threading.Thread(target=hammer, args=(cg1b, in1, want1, "copy")),
        threading.Thread(target=hammer, args=(cg2, in2, want2, "other graph")),
    ]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    assert not bad, bad


def test_a_pool_stops_its_workers():
    pool = driver.Pool(3)
    assert all(t.is_alive() for t in pool._threads)
    pool.close()
    assert not any(t.is_alive() for t in pool._threads)


def test_chunks_cover_the_extent():
    assert driver.chunk_of(None, 4) == 0 and driver.chunk_of(100, 1) == 0 and driver.chunk_of(1, 2) == 0
    assert driver.chunk_of(7, 2) == 1 and driver.chunk_of(1000, 2) == 62
    # the claim word holds chunk bounds in 16 bits: never more chunks than that, whatever the extent
    for extent, threads in [(1 << 40, 2), (10**9, 10_000), (65_536, 4096), (3 << 31, 3)]:
        chunk = driver.chunk_of(extent, threads)
        assert 0 < -(-extent // chunk) <= driver.MAX_CHUNKS


@pytest.mark.parametrize("threads", [2, 3])
def test_a_large_extent_runs_every_iteration_once(threads):
    """An extent past 16 bits (the claim word counts chunks, not iterations) runs every iteration once."""
    n = driver.MAX_CHUNKS * 3 + 5
    fn, out, argp = _add_index(n)
    driver.LaunchTable([(fn, argp, n)], threads)()
    assert torch.equal(out, torch.arange(float(n)))


@pytest.fixture
def pool2() -> driver.Pool:
    """The native pool for 2 threads (x86-64 Linux only: ``driver.pool_supported``)."""
    pool = driver.native_pool(2)
    if pool is None:
        pytest.skip("no native pool on this host")
    return pool


def test_awake_keeps_the_workers_up(pool2):
    """Inside ``driver.awake`` the workers are up and keep spinning between launches, as a model's kernels find
    them after the kernel before: a measurement timed there does not pay their wake-up; outside they sleep
    again."""
    sleepers = ctypes.c_int32.from_address(pool2.addr + driver._SLEEPERS)

    def settles_at(n: int) -> bool:
        for _ in range(400):
            if sleepers.value == n:
                return True
            threading.Event().wait(0.001)
        return False

    assert settles_at(1)  # idle for a while: the worker went to sleep
    with driver.awake(2):
        threading.Event().wait(0.0002)  # longer than a worker spins outside (SPIN_PAUSES)
        assert sleepers.value == 0
    assert settles_at(1)


def test_awake_nests_and_the_outermost_exit_restores_the_spin(pool2):
    """A measurement keeps the pool awake over its rounds and ``CompiledGraph.profile`` inside each: the inner exit
    must not let the workers sleep while the outer one still runs."""
    spins = ctypes.c_int64.from_address(pool2.addr + driver._SPINS)
    with driver.awake(2):
        with driver.awake(2):
            assert spins.value == driver.AWAKE_PAUSES
        assert spins.value == driver.AWAKE_PAUSES and pool2.awake_depth == 1
    assert spins.value == driver.SPIN_PAUSES and pool2.awake_depth == 0


def test_profile_runs_its_kernels_with_the_pool_awake():
    """``CompiledGraph.profile`` times each kernel inside the backend's ``steady`` context (the pool awake)."""
    entered = []

    def spy(threads):
        entered.append(threads)
        return driver.awake(threads)

    cg = compile_graph(_wide(), threads=2)
    assert cg.backend.steady is driver.awake
    cg.backend = dataclasses.replace(cg.backend, steady=spy)
    prof = cg.profile(cg.graph.random_inputs(0), repeats=2)
    assert entered == [2] and len(prof) == len(cg.built) and all(p["seconds"] > 0 for p in prof)
