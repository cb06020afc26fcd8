"""Compile worker processes (lower/llvm/objpool.py): the object code a worker returns is the one this process
would compile, a model's kernels compile on them and run correctly, a dead worker costs only speed, and a
module LLVM rejects raises LLVM's own error as without workers."""

from __future__ import annotations

import warnings

import pytest
import torch

from lower import compile_graph, parse_target
from lower.llvm import jit, objcompile, objpool
from rewrite.ir.builder import GraphBuilder

TEXT = """define void @f(ptr %p, i64 %n) {
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %body, label %done
body:
  %i = phi i64 [ 0, %entry ], [ %j, %body ]
  %q = getelementptr float, ptr %p, i64 %i
  %x = load float, ptr %q
  %y = fmul float %x, 2.0
  store float %y, ptr %q
  %j = add i64 %i, 1
  %more = icmp slt i64 %j, %n
  br i1 %more, label %body, label %done
done:
  ret void
}
"""


@pytest.fixture
def two_jobs(monkeypatch):
    monkeypatch.setenv("EQSAT_COMPILE_JOBS", "2")
    monkeypatch.setattr(objpool, "_broken", False)
    objpool.shutdown()
    yield
    objpool.shutdown()


def test_a_worker_returns_the_object_this_process_compiles(two_jobs):
    target = parse_target("llvm")
    obj = objpool.compile_object(TEXT, target)
    assert obj is not None and obj[:4] == b"\x7fELF"
    assert obj == objcompile.emit(TEXT, target.triple, target.cpu, ",".join(target.features))
    assert len(objpool._workers) == 1 and objpool._workers[0].proc.poll() is None


def test_light_passes_reach_the_worker_and_rotate_the_loop(two_jobs):
    """A library's request says ``passes=False``: the worker answers the light pipeline's object, not O3's,
    and the light pipeline still rotates the loop (the body's block ends in its own back edge)."""
    target = parse_target("llvm")
    features = ",".join(target.features)
    light = objcompile.emit(TEXT, target.triple, target.cpu, features, passes=False)
    assert objpool.compile_object(TEXT, target, passes=False) == light
    tm = objcompile.target_machine(target.triple, target.cpu, features)
    text = str(objcompile.optimize(TEXT, tm, target.triple, passes=False))
    assert "llvm.loop" in text or text.count("br i1") >= 2  # rotated: a guard and a latch


def _mlp():
    b = GraphBuilder("mlp")
    x = b.input("x", (8, 64))
    gen = torch.Generator().manual_seed(0)
    w1, w2 = torch.randn(64, 96, generator=gen) * 0.1, torch.randn(96, 32, generator=gen) * 0.1
    h = b.gelu(b.matmul(x, b.weight("w1", w1)))
    return b.build([b.softmax(b.matmul(h, b.weight("w2", w2)), axis=-1)]), w1, w2


def test_a_model_compiles_on_the_workers_and_runs(two_jobs, monkeypatch, tmp_path):
    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path))  # nothing cached: every kernel is compiled
    served = []
    real = objcompile.receive
    monkeypatch.setattr(objcompile, "receive", lambda fd: served.append(fd) or real(fd))
    g, w1, w2 = _mlp()
    cg = compile_graph(g, parse_target("llvm", threads=1))
    x = torch.randn(8, 64, generator=torch.Generator().manual_seed(1))
    want = torch.softmax(torch.nn.functional.gelu(x @ w1) @ w2, -1)
    torch.testing.assert_close(cg({"x": x})[0], want, rtol=1e-4, atol=1e-4)
    assert served, "no kernel was compiled by a worker"


def test_a_dead_worker_costs_only_speed(two_jobs, monkeypatch, tmp_path):
    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path))
    target = parse_target("llvm")
    assert objpool.compile_object(TEXT, target) is not None
    objpool._workers[0].proc.kill()
    objpool._workers[0].proc.wait()
    with pytest.warns(objpool.CompileWorkerWarning, match="stopped"):
        assert objpool.compile_object(TEXT.replace("2.0", "3.0"), target) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one warning, then quietly in-process
        assert objpool.compile_object(TEXT, target) is None
        g, w1, w2 = _mlp()
        x = torch.randn(8, 64, generator=torch.Generator().manual_seed(1))
        got = compile_graph(g, parse_target("llvm", threads=1))({"x": x})[0]
    torch.testing.assert_close(got, torch.softmax(torch.nn.functional.gelu(x @ w1) @ w2, -1), rtol=1e-4, atol=1e-4)


def test_rejected_ir_raises_llvms_error_with_or_without_workers(two_jobs, monkeypatch):
    monkeypatch.setenv("EQSAT_NO_CACHE", "1")
    bad = "define void @__KERNEL__() {\n  ret i32 0\n}\n"
    errors = []
    for jobs in ("2", "1"):
        monkeypatch.setenv("EQSAT_COMPILE_JOBS", jobs)
        with pytest.raises(RuntimeError) as e:
            jit.load_function(bad, parse_target("llvm"))
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "ret" in errors[0]
