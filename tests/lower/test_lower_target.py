"""The Target record, parsing "llvm" for this host, and the backend seam the runtime calls through."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from lower_testutil import check_graph

from lower import LoweringError, Target, compile_graph, parse_target
from lower.backend import Backend
from lower.llvm import BACKEND, jit
from lower.llvm.codegen import kernel_to_llvm
from lower.schedule import Tensorize
from lower.target import backend_of
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.errors import UsageError
from rewrite.ir.target import KINDS


def _gemm_graph():
    torch.manual_seed(0)
    b = GraphBuilder("gemm")
    x = b.input("x", (70, 96))
    return b.build([b.relu(b.matmul(x, b.weight("w", torch.randn(96, 80))))])


def test_llvm_target_describes_this_host():
    t = parse_target("llvm", threads=3)
    assert (t.kind, t.name, t.threads) == ("llvm", "llvm", 3)
    assert t.triple and t.cpu and t.features
    avx512 = t.has_feature("avx512f")
    assert t.vector_width == (16 if avx512 else 8)
    assert (t.mr, t.nr) == ((12, 32) if avx512 else (6, 16))  # 24 of 32 zmm / 12 of 16 ymm accumulate
    assert ("-prefer-256-bit" in t.features) == avx512
    assert dict(t.versions)["llvmlite"] == jit.LLVMLITE_VERSION
    assert parse_target("llvm", threads=3) == t  # host facts are detected once, the record is a value


def test_threads_come_from_the_argument_then_the_setting(monkeypatch):
    monkeypatch.setenv("EQSAT_THREADS", "5")
    assert parse_target("llvm").threads == 5
    assert parse_target("llvm", threads=2).threads == 2
    t = parse_target("llvm", threads=2)
    assert parse_target(t) is t and parse_target(t, threads=4).threads == 4


def test_unknown_kinds_and_bad_records_are_refused():
    with pytest.raises(LoweringError, match="unknown target 'tpu'"):
        parse_target("tpu")
    with pytest.raises(LoweringError, match="target 'torch' compiles no kernels"):
        compile_graph(_gemm_graph(), target=Target("torch", threads=1))
    with pytest.raises(UsageError, match="threads"):
        Target("llvm", threads=0)


def test_cache_key_has_threads_code_key_does_not():
    one, two = parse_target("llvm", threads=1), parse_target("llvm", threads=2)
    assert one.cache_key != two.cache_key and "threads=1" in one.cache_key
    assert one.code_key == two.code_key and "threads" not in one.code_key
    text = "define void @f() {\n  ret void\n}\n"
    assert jit.cache_key(text, one) == jit.cache_key(text, two)  # one object file serves every thread count
    assert jit.cache_key(text, one) != jit.cache_key(text, dataclasses.replace(one, mr=4))


def _tiles(cg) -> list[tuple[int, int]]:
    return [(s.mr, s.nr) for bk in cg.built if bk.schedule for s in bk.schedule.steps if isinstance(s, Tensorize)]


def test_target_flows_into_schedules_and_code():
    host = parse_target("llvm", threads=1)
    cg = compile_graph(_gemm_graph(), target=host)
    name = f"gemmz_{host.mr}x{host.nr}_pb"  # A read in place, the constant B prefetched, zero init folded
    assert _tiles(cg) == [(host.mr, host.nr)] and f"{name}(" in cg.kernel_source(0)
    ir = kernel_to_llvm(cg.built[0].kernel, host)
    assert f"@eqsat_{name}." in ir  # the kernel's dispatcher over the micro-kernel's bodies it reaches
    assert f'"llvm.loop.vectorize.width", i32 {host.vector_width}' in ir
    small = dataclasses.replace(host, mr=4, nr=16)  # another micro-tile: blocking, packing and tensorize follow it
    cg = check_graph(_gemm_graph(), target=small)
    assert _tiles(cg) == [(4, 16)] and "gemmz_4x16_pb(" in cg.kernel_source(0)


def _without_avx512(t: Target) -> Target:
    """The same CPU with AVX-512 switched off: 8-lane vectors, code any AVX2 machine runs."""
    feats = tuple(
        "-" + f[1:] if f.startswith("+") and ("avx512" in f or "avx10" in f) else f
        for f in t.features
        if f != "-prefer-256-bit"
    )
    return dataclasses.replace(t, name="llvm-avx2", features=feats, vector_width=8)


def test_an_eight_lane_target_compiles_and_computes_the_same():
    host = parse_target("llvm", threads=2)
    if not host.has_feature("avx2"):
        pytest.skip("needs an x86 host with AVX2")
    t = _without_avx512(host)
    cg = check_graph(_gemm_graph(), target=t, tol=1e-4)
    assert cg.target is t and cg.target.code_key != host.code_key
    ir = kernel_to_llvm(cg.built[0].kernel, t)
    assert '"llvm.loop.vectorize.width", i32 8' in ir
    opt = jit.assembly(ir, t)
    assert "zmm" not in opt  # no 512-bit registers: the target's features reached the machine code


def test_runtime_reaches_the_code_generator_only_through_the_backend(monkeypatch):
    calls = {"compile": 0, "launch": 0}

    def compile_(kernel, target, hint):
        calls["compile"] += 1
        return BACKEND.compile(kernel, target, hint)

    def launcher(fn, args, extent, threads):
        run = BACKEND.launcher(fn, args, extent, threads)

        def counted() -> None:
            calls["launch"] += 1
            run()

        return counted

    counting = Backend("counting", compile_, launcher, BACKEND.source, device="cpu")
    host = KINDS["llvm"].detect
    monkeypatch.setitem(
        KINDS,
        "counting",
        dataclasses.replace(
            KINDS["llvm"],
            name="counting",
            host=lambda n: dataclasses.replace(host(n), kind="counting", name="counting"),
            backend=counting,
        ),
    )
    g = _gemm_graph()
    cg = check_graph(g, target="counting", threads=1)
    assert cg.target.kind == "counting" and backend_of(cg.target) is counting
    assert calls["compile"] >= cg.kernels and calls["launch"] >= cg.kernels
    assert cg.llvm_ir(0) == kernel_to_llvm(cg.built[0].kernel, cg.target)
