"""LLVM code generation: snapshots of generated IR, vector code, the on-disk kernel cache.

Snapshots live in tests/lower/snapshots/*.ll (LLVM IR from the walker) and
*.loops (the scheduled loop IR), one set per vector width: NAME.ll for 16 lanes (AVX-512), NAME.w8.ll for 8
(AVX2); schedules and the micro-tile follow the width.  Both are checked on any host (a 16-lane vector is
legal LLVM IR on an AVX2 host too: it compiles to pairs of 8-lane instructions).  Regenerate them after an
intended change with

    EQSAT_UPDATE_SNAPSHOTS=1 python -m pytest tests/lower/test_lower_codegen.py

The other tests read the host's width ``W`` and check the same properties on either.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from lower_testutil import check_graph, run_kernel

from lower import compile_graph
from lower.ir import Buffer, For, IntImm, Intrinsic, Kernel, Load, LoopKind, Select, Stage, Store, Var, lt, walk_stmt
from lower.llvm import codegen, jit, tables
from lower.llvm.codegen import kernel_module, kernel_to_llvm
from lower.llvm.intrinsics import (
    PREFETCH_B_STEPS,
    body_module,
    gemm_routine,
    reached_parts,
    routine_parts,
)
from lower.schedule import micro_kernel_parts
from lower.target import GEMM_TILE, parse_target
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.target import Target

SNAP = Path(__file__).parent / "snapshots"
W = parse_target("llvm").vector_width  # this host's f32 lanes: 16 with AVX-512, else 8
UPDATE = os.environ.get("EQSAT_UPDATE_SNAPSHOTS") == "1"


def _graphs():
    b = GraphBuilder("ew")
    a, c, d = (b.input(n, (4096,)) for n in "acd")
    yield "fused_elementwise", b.build([b.relu(b.add(b.mul(a, c), d))])
    b = GraphBuilder("softmax")
    yield "softmax", b.build([b.softmax(b.input("x", (64, 1000)), axis=-1)])
    b = GraphBuilder("layernorm")
    yield (
        "layernorm",
        b.build(
            [b.layernorm(b.input("x", (64, 768)), b.weight("w", torch.ones(768)), b.weight("b", torch.zeros(768)))]
        ),
    )
    b = GraphBuilder("gemm")
    yield (
        "gemm_bias_relu",
        b.build(
            [
                b.relu(
                    b.add(
                        b.matmul(b.input("x", (64, 96)), b.weight("w", torch.ones(96, 80))),
                        b.weight("bias", torch.zeros(80)),
                    )
                )
            ]
        ),
    )
    b = GraphBuilder("pool")
    yield (
        "maxpool",
        b.build([b.maxpool2d(b.input("x", (1, 8, 15, 15)), kernel=(3, 3), stride=(2, 2), padding=(1, 1), ceil_mode=1)]),
    )


CASES = dict(_graphs())


def lanes(width: int) -> Target:
    """This host's target with ``width``-lane vectors and that width's micro-tile."""
    mr, nr = GEMM_TILE[width]
    return dataclasses.replace(parse_target("llvm", threads=2), vector_width=width, mr=mr, nr=nr)


@pytest.mark.parametrize("width", [16, 8])
@pytest.mark.parametrize("name", sorted(CASES))
def test_snapshot(name, width):
    cg = compile_graph(CASES[name], target=lanes(width))
    kernel = cg.built[-1].kernel
    texts = {".ll": kernel_to_llvm(kernel, cg.target, name), ".loops": str(kernel) + "\n"}
    wrote = []
    for ext, got in texts.items():
        path = SNAP / f"{name}{'' if width == 16 else f'.w{width}'}{ext}"
        if UPDATE or not path.exists():
            SNAP.mkdir(exist_ok=True)
            path.write_text(got)
            wrote.append(path.name)
            continue
        assert got == path.read_text(), f"{path.name} changed; if intended, regenerate with EQSAT_UPDATE_SNAPSHOTS=1"
    if wrote and not UPDATE:
        pytest.skip(f"wrote new snapshots {wrote}")


def test_elementwise_and_exp_are_vectorized():
    b = GraphBuilder("v")
    x = b.input("x", (4096,))
    g = b.build([b.gelu(b.sigmoid(x))])
    cg = compile_graph(g, threads=1)
    opt = jit.optimized_ir(kernel_to_llvm(cg.built[0].kernel, cg.target, "v"), cg.target)
    assert f"<{W} x float>" in opt
    assert "@expf" not in opt and "@llvm.exp." not in opt  # the polynomial exp, vectorized, not libm


@pytest.mark.parametrize(
    ("op", "shape", "chains"),
    [
        ("gelu_erf", (197, 1536), True),  # exp88 and a division: latency bound
        ("silu", (96, 56, 56), True),
        ("tanh", (64, 257), True),  # 16448 elements: interleaved though a remainder is left
        ("relu", (197, 1536), False),  # no chain: LLVM's own choice
        ("exp", (3, 7), False),  # 21 floats: fewer than 4 vectors, interleaved they would all run scalar
    ],
)
def test_long_dependent_chains_are_interleaved_and_compute_the_same(op, shape, chains, monkeypatch):
    """A vectorized loop of exp, tanh, sigmoid or GELU (``codegen._latency_bound``) interleaves
    ``CHAIN_INTERLEAVE`` vectors an iteration; the values are those of one vector at a time, bit for bit."""
    b = GraphBuilder("c")
    g = b.build([b.op(op, b.input("x", shape))])
    feed = {"x": torch.randn(*shape) * 3}
    cg = compile_graph(g, threads=1)
    tag = f'!{{!"llvm.loop.interleave.count", i32 {tables.CHAIN_INTERLEAVE}}}'
    assert (tag in kernel_to_llvm(cg.built[0].kernel, cg.target, "c")) is chains
    if chains:
        monkeypatch.setattr(codegen, "_latency_bound", lambda *a: False)
        monkeypatch.setenv("EQSAT_NO_CACHE", "1")  # the kept text is the unpatched generator's (textcache)
        one = compile_graph(g, threads=1)
        assert tag not in kernel_to_llvm(one.built[0].kernel, one.target, "c")
        addr = [ctypes.cast(c._launches[0].fn, ctypes.c_void_p).value for c in (cg, one)]
        assert addr[0] != addr[1]  # another text: another compiled function
        assert torch.equal(cg(feed)[0], one(feed)[0])


def test_softmax_reductions_are_vectorized():
    cg = compile_graph(CASES["softmax"])
    opt = jit.optimized_ir(kernel_to_llvm(cg.built[0].kernel, cg.target, "s"), cg.target)
    assert f"llvm.vector.reduce.fmaximum.v{W}f32" in opt or "reduce.fmax" in opt
    assert f"llvm.vector.reduce.fadd.v{W}f32" in opt


def test_padded_stride1_conv_reads_its_taps_with_masked_vector_loads():
    # a 3x3 same-padded stride-1 convolution in the flat form (more than 64 outputs; fewer take the block form):
    # each im2col row of a B panel is a contiguous run of the input with the padding masked off (no gather, no
    # per-lane clamp), and taps in the padding read nothing
    b = GraphBuilder("c")
    x = b.input("x", (1, 16, 20, 20))
    wt = torch.randn(96, 16, 3, 3, generator=torch.Generator().manual_seed(0))
    w = b.weight("w", wt)
    g = b.build([b.op("conv2d", x, w, stride=(1, 1), padding=(1, 1), dilation=(1, 1), groups=1)])
    cg = compile_graph(g, threads=1)
    opt = jit.optimized_ir(kernel_to_llvm(cg.built[0].kernel, cg.target, "c"), cg.target)
    assert f"@llvm.masked.load.v{W}f32" in opt
    assert "gather" not in opt
    xin = torch.randn(1, 16, 20, 20)
    ref = torch.nn.functional.conv2d(xin, wt, padding=1)
    assert torch.allclose(cg({"x": xin})[0], ref, rtol=1e-4, atol=1e-4)


def test_fused_prologue_packs_b_panels_with_contiguous_vector_loads():
    # relu(x + y) inlined into a 1x1 convolution's B panels: the panel's 32 columns are the vector loop; LLVM
    # must not unroll them and vectorize the loop over the reduction instead (gathers 196 floats apart)
    b = GraphBuilder("p")
    x, y = b.input("x", (1, 64, 14, 14)), b.input("y", (1, 64, 14, 14))
    wt = torch.randn(256, 64, 1, 1, generator=torch.Generator().manual_seed(0)) * 0.1
    attrs = {"stride": (1, 1), "padding": (0, 0), "dilation": (1, 1), "groups": 1}
    g = b.build([b.op("conv2d", b.relu(b.add(x, y)), b.weight("w", wt), **attrs)])
    cg = compile_graph(g, threads=1)
    assert len(cg.built) == 1  # the prologue is fused
    opt = jit.optimized_ir(kernel_to_llvm(cg.built[0].kernel, cg.target, "p"), cg.target)
    assert "gather" not in opt
    xin, yin = torch.randn(1, 64, 14, 14), torch.randn(1, 64, 14, 14)
    ref = torch.nn.functional.conv2d(torch.relu(xin + yin), wt)
    assert torch.allclose(cg({"x": xin, "y": yin})[0], ref, rtol=1e-4, atol=1e-4)


def test_only_loops_around_contiguous_vector_loops_keep_llvm_from_vectorizing_them():
    # a copy into k-major panels from a row-major A is strided along the schedule's vector loop (the MR rows):
    # there the loop around it is left to LLVM, which vectorizes along k (consecutive loads) instead
    src, dst = Buffer("a", (8, 512)), Buffer("p", (512, 8))
    k, i = Var("k"), Var("i")

    def nest(value):
        inner = For(i, IntImm(8), Store(dst, (k, i), value), LoopKind.VECTORIZED)
        return Kernel("t", [src, dst], For(k, IntImm(512), inner))

    transposing = kernel_to_llvm(nest(Load(src, (i, k))), parse_target("llvm"), "t")
    assert '!"llvm.loop.vectorize.enable", i1 false' not in transposing
    contiguous = kernel_to_llvm(nest(Load(src, (k // 64, (k % 64) * 8 + i))), parse_target("llvm"), "c")
    assert '!"llvm.loop.vectorize.enable", i1 false' in contiguous


def test_select_reads_each_side_only_where_it_is_taken():
    # out[i] = x[i] if i < 40 else y[i - 40]: each load leaves its buffer on the other side, so both sides
    # are computed behind branches (vectorized into masked loads) and the result matches
    i = Var("i")
    X, Y, Out = Buffer("x", (40,)), Buffer("y", (60,)), Buffer("out", (100,))
    body = For(i, IntImm(100), Store(Out, (i,), Select(lt(i, 40), X[i], Y[i - 40])), LoopKind.VECTORIZED)
    k = Kernel("cat", [X, Y, Out], Stage("s", body))
    text = kernel_to_llvm(k, parse_target("llvm"), "cat")
    assert text.count("label %sa") == 1 and text.count("label %sb") == 1
    x, y = torch.randn(40), torch.randn(60)
    assert torch.equal(run_kernel(k, {"x": x, "y": y})["out"], torch.cat([x, y]))


def test_index_arithmetic_is_folded_and_emitted_once_per_block():
    """An unrolled body's indices are constants folded in place (no ``add i64 %row, 0``), and an offset every access
    of the block needs (the row ``i * 4``) is computed once there; the kernel computes the same."""
    import re

    i, c = Var("i"), Var("c")
    X, Out = Buffer("x", (8, 4)), Buffer("out", (8, 4))
    body = For(c, IntImm(4), Store(Out, (i, c), Load(X, (i, c)) * 2.0 + Load(X, (i, 3 - c))), LoopKind.UNROLLED)
    k = Kernel("unrolled", [X, Out], Stage("s", For(i, IntImm(8), body)))
    text = kernel_to_llvm(k, parse_target("llvm"), "unrolled")
    assert not re.search(r"= (add|sub|mul) i64 -?\d+, -?\d+\n|= (add|sub) i64 [^,]+, 0\n|= mul i64 [^,]+, [01]\n", text)
    assert len(re.findall(r"= mul i64 %i\.\d+, 4", text)) == 1
    x = torch.randn(8, 4)
    assert torch.equal(run_kernel(k, {"x": x})["out"], x * 2.0 + x.flip(1))


def test_a_kernel_run_once_compiles_light_unless_it_moves_much(monkeypatch):
    """``compile_once`` (a weight packed when a graph compiles) takes the light pipeline: its own object and
    symbol, the same results; past ``ONCE_LIGHT_MAX_ELEMS`` floats it is the O3 kernel ``compile_kernel`` gives."""
    import ctypes

    import lower.llvm as L

    i = Var("i")
    X, Out = Buffer("x", (64,)), Buffer("out", (64,))
    k = Kernel("copy2", [X, Out], Stage("s", For(i, IntImm(64), Store(Out, (i,), Load(X, (63 - i,)) * 2.0))))
    target = parse_target("llvm")
    x = torch.randn(64)

    def run(fn) -> torch.Tensor:
        out = torch.zeros(64)
        fn(ctypes.cast((ctypes.c_void_p * 2)(x.data_ptr(), out.data_ptr()), ctypes.c_void_p), 0, 0)
        return out

    light, full = L.compile_once(k, target), L.compile_kernel(k, target, "p")
    assert ctypes.cast(light, ctypes.c_void_p).value != ctypes.cast(full, ctypes.c_void_p).value
    assert torch.equal(run(light), x.flip(0) * 2.0) and torch.equal(run(full), x.flip(0) * 2.0)
    monkeypatch.setattr(L, "ONCE_LIGHT_MAX_ELEMS", 32)
    big = L.compile_once(k, target)
    assert ctypes.cast(big, ctypes.c_void_p).value == ctypes.cast(full, ctypes.c_void_p).value


def test_gemm_micro_kernel_is_explicit_vector_fma():
    text = body_module(8, 32, W, "gemm", "", 0, f"m8_q{32 // W}")
    assert text.count(f"@llvm.fma.v{W}f32(") >= 8 * 32 // W
    asm = jit.assembly(text, parse_target("llvm"))
    assert "vfmadd" in asm and ("zmm" if W == 16 else "ymm") in asm


def test_gemm_micro_kernel_tail_panels_skip_the_empty_column_vectors():
    # one body per (rows, column vectors): a panel whose n columns fit in one vector issues one FMA per row
    narrow = body_module(12, 32, 16, "gemmt", "", 0, "m12_q1").split("define void @eqsat_gemmt_12x32_m12_q1(")[1]
    full = body_module(12, 32, 16, "gemmt", "", 0, "m12_q2").split("define void @eqsat_gemmt_12x32_m12_q2(")[1]
    assert narrow.count("@llvm.fma.v16f32(") == 12 and full.count("@llvm.fma.v16f32(") == 24


def test_gemm_micro_kernel_prefetches_only_the_streamed_operands():
    # in the k loop: one prefetch of A's step k + PREFETCH_A_STEPS, one per B vector; the C tile's prefetches
    # are at entry, before the loop
    def loop_prefetches(stream: str) -> int:
        body = body_module(12, 32, 16, "gemmt", stream, 0, "m12_q2").split("_m12_q2(")[1]
        return body.split("loop:")[1].split("done:")[0].count("@llvm.prefetch.p0(")

    assert [loop_prefetches(s) for s in ("", "a", "b", "ab")] == [0, 1, 2, 3]
    assert "@eqsat_gemmt_12x32_pab_m12_q2(" in body_module(12, 32, 16, "gemmt", "ab", 0, "m12_q2")
    # a packed B panel: PREFETCH_B_STEPS k steps ahead; B read in place (rows ldb apart): the next panel's
    # columns of the same row
    packed = body_module(12, 32, 16, "gemmt", "b", 0, "m12_q2")
    in_place = body_module(12, 32, 16, "gemmtr", "b", 0, "m12_q2")
    assert f"%bf0 = getelementptr float, ptr %bp0, i64 {PREFETCH_B_STEPS * 32}" in packed
    assert "%bf1 = getelementptr float, ptr %bp1, i64 32" in in_place


def test_cache_key_depends_on_cpu_and_text():
    target = parse_target("llvm")
    k1 = jit.cache_key("define void @f() {\n  ret void\n}\n", target)
    k2 = jit.cache_key("define void @g() {\n  ret void\n}\n", target)
    assert k1 != k2
    other = dataclasses.replace(target, features=(*target.features, "-avx512f"))
    assert jit.cache_key("define void @f() {\n  ret void\n}\n", other) != k1


def test_identical_layers_compile_once_whatever_the_graph_named_them(tmp_path, monkeypatch):
    """Two layers alike but for their value and weight names (BERT's encoder layers), the first reading a
    graph input and the second a kernel's output, lower to one kernel text: one schedule, one object."""
    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path))
    b = GraphBuilder("twice")
    h = b.input("x", (24, 40))
    for i in range(2):
        h = b.relu(b.add(b.matmul(h, b.weight(f"w{i}", torch.randn(40, 40))), b.weight(f"b{i}", torch.randn(40))))
    g = b.build([h])
    before = dataclasses.replace(jit.STATS)
    cg = compile_graph(g)
    kernels = [bk.kernel for bk in cg.built]
    assert len(kernels) == 2 and kernels[0].name != kernels[1].name
    assert str(dataclasses.replace(kernels[0], name="_")) == str(dataclasses.replace(kernels[1], name="_"))
    assert jit.STATS.memory_hits > before.memory_hits  # the second layer found the first one's code loaded
    x = torch.randn(24, 40)
    assert torch.allclose(cg({"x": x})[0], g.run({"x": x})[0], rtol=1e-5, atol=1e-5)


@pytest.mark.slow  # ~6 s of subprocesses; test_cache.py shares one cache across processes fast
def test_disk_cache_is_reused_across_processes(tmp_path):
    """A second process compiling the same graph loads every kernel from the cache instead of LLVM."""
    script = (
        "import torch\n"
        "from rewrite.ir.builder import GraphBuilder\n"
        "from lower import compile_graph\n"
        "from lower.llvm import jit\n"
        "b = GraphBuilder('c')\n"
        "x = b.input('x', (33, 70))\n"
        "g = b.build([b.softmax(b.relu(b.matmul(x, b.weight('w', torch.ones(70, 50)))), axis=-1)])\n"
        "cg = compile_graph(g)\n"
        "print(jit.STATS.compiled, jit.STATS.cache_hits)\n"
    )
    env = dict(os.environ, EQSAT_CACHE_DIR=str(tmp_path))
    root = Path(__file__).resolve().parents[2]
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True, cwd=root
        ).stdout.split()
        for _ in range(2)
    ]
    compiled1, hits1 = map(int, runs[0])
    compiled2, hits2 = map(int, runs[1])
    assert compiled1 >= 2 and hits1 == 0
    assert compiled2 == 0 and hits2 == compiled1
    assert len(list(tmp_path.rglob("*.o"))) == compiled1


def test_a_plain_micro_kernel_call_runs_its_z_twin_with_beta_one():
    """A 3x3 convolution's block form (``conv2d_im2col``) adds its micro-kernel's tiles into C (``gemmt``): the
    call runs ``gemmtz``'s routine with beta 1, so the kernels calling either kind load the same bodies, and the
    results are torch's."""
    b = GraphBuilder("conv3x3")
    x = b.input("x", (1, 32, 14, 14))
    y = b.op("conv2d_im2col", x, b.weight("w", torch.randn(64, 32, 3, 3)), stride=(1, 1), padding=(1, 1))
    target = dataclasses.replace(parse_target("llvm", threads=1), vector_width=8, mr=6, nr=16)
    cg = check_graph(b.build([y]), target=target)
    kinds = {x.name.split("_")[0] for bk in cg.built for x in walk_stmt(bk.kernel.body) if isinstance(x, Intrinsic)}
    assert kinds == {"gemmt"}
    texts = [kernel_module(bk.kernel, target) for bk in cg.built]
    libs = {name for _, libs in texts for name in libs}
    assert libs and all(name.startswith("eqsat_gemmtz_6x16_") for name in libs)
    assert any("call void @eqsat_gemmtz_6x16." in text and ", i64 1)" in text for text, _ in texts)


def test_micro_kernel_peels_a_short_last_panel_off_to_column_bodies():
    """A tile whose last columns fill at most TAIL_COLS lanes of a vector (a 7x7 map's 49 pixels: 48 and 1)
    runs them column by column: a vector over the tile's rows per k step; kinds with k segments or column runs
    keep the row bodies."""
    from lower.llvm.intrinsics import TAIL_COLS

    def switch(kind: str) -> str:  # a kernel's switch over every body of the routine
        return gemm_routine(12, 32, 16, kind, "", 0, frozenset(routine_parts(12, 32, 16, kind)), "d")

    text = switch("gemmtz")
    assert "%peel = and i1" in text
    assert all(f"@eqsat_gemmtz_12x32_c{c}(" in text for c in range(1, TAIL_COLS + 1))
    assert "_c1(" not in switch("gemmsq") and "_c1(" not in switch("gemm")
    assert "c1" not in routine_parts(12, 32, 16, "gemmsq") + routine_parts(12, 32, 16, "gemm")


def test_the_bodies_a_call_reaches_are_its_row_and_column_counts():
    """(m, n) values -> bodies: rows x column vectors, a last panel of 1..TAIL_COLS columns as a column body (its
    whole vectors as a row body), no value known -> every body of those rows (and every column body)."""
    assert reached_parts(12, 32, 16, "gemmtz", {12, 8}, {32}) == {"m12_q2", "m8_q2"}
    assert reached_parts(12, 32, 16, "gemmtz", {12}, {19, 4}) == {"m12_q1", "c3", "c4"}
    assert reached_parts(12, 32, 16, "gemmz", {12}, {19}) == {"m12_q2"}  # row-major A: no column bodies
    assert reached_parts(12, 32, 16, "gemmtz", {0, 12}, {0, 32}) == {"m12_q2"}  # empty tiles run nothing
    every = set(routine_parts(12, 32, 16, "gemmtz"))
    assert reached_parts(12, 32, 16, "gemmtz", None, None) == every
    assert reached_parts(12, 32, 16, "gemmtz", {5}, None) == {p for p in every if p.startswith(("m5_", "c"))}


def test_a_kernel_compiles_only_the_micro_kernel_bodies_its_tiles_reach():
    """128 rows in tiles of MR (on AVX-512's 12 x 32 tile ten whole and a last of 8) by whole panels of NR
    columns reach one body per row count: the kernel's libraries are those, its own switch lists them and traps
    on any other count, and the product is torch's."""
    host = parse_target("llvm", threads=1)
    b = GraphBuilder("mm")
    y = b.matmul(b.input("x", (128, 256)), b.weight("w", torch.randn(256, 512)))
    cg = check_graph(b.build([y]), target=host)
    calls = [x for bk in cg.built for x in walk_stmt(bk.kernel.body) if isinstance(x, Intrinsic)]
    assert len({x.name for x in calls}) == 1, calls
    _, mr, nr, _, _ = micro_kernel_parts(calls[0].name)
    assert 512 % nr == 0  # whole panels: one column-vector count
    want = {(f"m{r}", f"q{nr // host.vector_width}") for r in {mr, 128 % mr} if r}
    texts = [kernel_module(bk.kernel, host) for bk in cg.built]
    libs = {name for _, ls in texts for name in ls}
    assert {tuple(name.rsplit("_", 2)[-2:]) for name in libs} == want and len(libs) == len(want), libs
    if (host.mr, host.nr) == (12, 32):
        assert want == {("m12", "q2"), ("m8", "q2")}
    text = next(t for t, ls in texts if ls)
    assert "call void @llvm.trap()" in text and text.count("switch i64 %key") == 1


_UNREACHED = """
import ctypes, sys
import numpy as np
from lower.llvm import jit
from lower.llvm.intrinsics import body_declarations, body_module, gemm_routine, routine_name
from lower.target import llvm_host
t = llvm_host(1)
W, sym, parts = t.vector_width, routine_name("gemmtz", 4, 2 * t.vector_width), frozenset({"m4_q2"})
jit.load_library(sym + "_m4_q2", body_module(4, 2 * W, W, "gemmtz", "", 0, "m4_q2"), t)
text = "\\n\\n".join([*body_declarations("gemmtz", sym, parts), gemm_routine(4, 2 * W, W, "gemmtz", "", 0, parts, "d"),
    "define void @__KERNEL__(ptr %A, ptr %B, ptr %C, i64 %m) {\\n  call void @d(ptr %A, i64 4, ptr %B, ptr %C, "
    f"i64 {2 * W}, i64 8, i64 %m, i64 {2 * W}, i64 0)\\n  ret void\\n}}"])
_, addr = jit.load_function(text, t, "unreached")
f = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(addr)
A, B, C = np.ones(32, np.float32), np.ones(16 * W, np.float32), np.zeros(8 * W, np.float32)
for m in (0, 4, 3):
    f(A.ctypes.data, B.ctypes.data, C.ctypes.data, m)
    print(m, C[0], C[3 * 2 * W], flush=True)
"""


def test_a_dispatcher_traps_on_a_count_it_was_not_built_for(tmp_path):
    """A kernel's switch built for 4-row tiles: no rows do nothing, 4 rows compute (k = 8 sums of ones), 3 rows
    (a count the kernel's analysis would have listed) stop the process instead of leaving C unwritten."""
    env = dict(os.environ, EQSAT_CACHE_DIR=str(tmp_path), PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    r = subprocess.run([sys.executable, "-c", _UNREACHED], env=env, capture_output=True, text=True, timeout=120)
    assert r.stdout.splitlines() == ["0 0.0 0.0", "4 8.0 8.0"], r.stderr
    assert r.returncode < 0, r.returncode  # SIGILL from llvm.trap
