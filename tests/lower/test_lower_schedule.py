"""Schedule steps: the loop nest before and after each step, equal results, and refusals."""

from __future__ import annotations

import textwrap

import pytest
import torch
from lower_testutil import run_kernel

from lower.ir import (
    Allocate,
    Bin,
    Buffer,
    FloatImm,
    For,
    IntImm,
    Intrinsic,
    Kernel,
    Stage,
    Store,
    Var,
    emax,
    flat_offset,
    format_expr,
    format_kernel,
    loops,
    seq,
    simplify,
)
from lower.schedule import (
    STREAMS,
    ComputeAt,
    FoldInit,
    FoldInitRows,
    FoldPostRows,
    Fuse,
    Inline,
    Parallel,
    Reorder,
    Schedule,
    ScheduleError,
    Split,
    Tensorize,
    Unroll,
    Vectorize,
    micro_kernel_name,
    micro_kernel_parts,
)

i, j, k = Var("i"), Var("j"), Var("k")
i2, j2 = Var("i2"), Var("j2")


def text(s: str) -> str:
    return textwrap.dedent(s).strip("\n")


def same_results(before: Kernel, after: Kernel, inputs: dict, outputs: list[str], tol=1e-5) -> None:
    a, b = run_kernel(before, inputs), run_kernel(after, inputs)
    for name in outputs:
        assert torch.allclose(a[name], b[name], rtol=tol, atol=tol), name


def scale_kernel(n=10):
    X, Out = Buffer("x", (n,)), Buffer("out", (n,))
    return Kernel("scale", [X, Out], Stage("s", For(i, IntImm(n), Store(Out, (i,), X[i] * 2.0))))


def matmul_kernel(m=4, kk=6, n=5):
    A, B, C = Buffer("A", (m, kk)), Buffer("B", (kk, n)), Buffer("C", (m, n))
    body = Stage("mm", loops([(i, m), (j, n), (k, kk)], Store(C, (i, j), C[i, j] + A[i, k] * B[k, j])))
    return Kernel("mm", [A, B, C], body)


def ew_kernel(m=4, n=8):
    Y, Z = Buffer("y", (m, n)), Buffer("z", (m, n))
    return Kernel("ew", [Y, Z], Stage("e", loops([(i, m), (j, n)], Store(Z, (i, j), Y[i, j] + 1.0))))


def two_stage_kernel(shift=0):
    """t = y * 2 (stage scale), z = t[i, j + shift] + 1 (stage add)."""
    Y, Z, T = Buffer("y", (4, 8)), Buffer("z", (4, 8 - shift)), Buffer("t", (4, 8))
    s1 = Stage("scale", loops([(i2, 4), (j2, 8)], Store(T, (i2, j2), Y[i2, j2] * 2.0)))
    s2 = Stage("add", loops([(i, 4), (j, 8 - shift)], Store(Z, (i, j), T[i, j + shift if shift else j] + 1.0)))
    return Kernel("two", [Y, Z], Allocate(T, seq(s1, s2)))


def mm_inputs(m=4, kk=6, n=5):
    g = torch.Generator().manual_seed(0)
    return {"A": torch.randn(m, kk, generator=g), "B": torch.randn(kk, n, generator=g)}


# ------------------------------------------------------------------ split
def test_split_with_tail():
    before = scale_kernel()
    after = Split("i", 4).apply(before)
    assert format_kernel(after) == text("""
        kernel scale(x: f32[10], out: f32[10]) {
          // stage s
          for i.o in 0..3 {
            for i.i in 0..min(4, 10 - i.o * 4) {
              out[i.i + i.o * 4] = x[i.i + i.o * 4] * 2.0
            }
          }
        }""")
    same_results(before, after, {"x": torch.randn(10)}, ["out"])


def test_split_exact_and_refusals():
    after = Split("i", 5).apply(scale_kernel())
    assert "for i.o in 0..2 {" in str(after) and "for i.i in 0..5 {" in str(after)
    with pytest.raises(ScheduleError, match="no loop named 'q'"):
        Split("q", 2).apply(scale_kernel())
    with pytest.raises(ScheduleError, match="positive integer"):
        Split("i", 0).apply(scale_kernel())


# ------------------------------------------------------------------ reorder
def test_reorder_reduction_loops():
    before = matmul_kernel()
    after = Reorder(("i", "k", "j")).apply(before)
    assert format_kernel(after) == text("""
        kernel mm(A: f32[4, 6], B: f32[6, 5], C: f32[4, 5]) {
          // stage mm
          for i in 0..4 {
            for k in 0..6 {
              for j in 0..5 {
                C[i, j] = C[i, j] + A[i, k] * B[k, j]
              }
            }
          }
        }""")
    same_results(before, after, mm_inputs(), ["C"])


def test_reorder_refusals():
    with pytest.raises(ScheduleError, match="depends on"):  # tail extent must stay inside its outer loop
        s = Schedule(scale_kernel()).split("i", 4)
        s.reorder("i.i", "i.o")
    X, Out = Buffer("x", (9,)), Buffer("out", (9,))
    prefix = Kernel(
        "p", [X, Out], For(i, IntImm(3), For(j, IntImm(3), Store(Out, (i * 3 + j,), Out[i * 3 + j - 1] + X[i * 3 + j])))
    )
    with pytest.raises(ScheduleError, match="iterations depend on each other"):
        Reorder(("j", "i")).apply(prefix)
    last = Kernel("l", [X, Out], For(i, IntImm(3), For(j, IntImm(3), Store(Out, (j,), X[i * 3 + j]))))
    with pytest.raises(ScheduleError, match="overwrites the same element"):
        Reorder(("j", "i")).apply(last)
    Y, Z = Buffer("y", (4,)), Buffer("z", (4, 4))
    imperfect = Kernel(
        "imp", [Y, Z], For(i, IntImm(4), seq(Store(Y, (i,), Y[i] * 1.0), For(j, IntImm(4), Store(Z, (i, j), Y[i]))))
    )
    with pytest.raises(ScheduleError, match="not perfectly nested"):
        Reorder(("j", "i")).apply(imperfect)


# ------------------------------------------------------------------ fuse
def test_fuse():
    before = ew_kernel()
    after = Fuse("i", "j").apply(before)
    assert format_kernel(after) == text("""
        kernel ew(y: f32[4, 8], z: f32[4, 8]) {
          // stage e
          for i.j in 0..32 {
            z[i.j // 8, i.j % 8] = y[i.j // 8, i.j % 8] + 1.0
          }
        }""")
    same_results(before, after, {"y": torch.randn(4, 8)}, ["z"])


def twin_nests_kernel():
    """Two nests whose loops share their names but not their bodies (like a packing copy's full and tail
    versions): z = y + 1 and w = y * 3."""
    Y, Z, W = Buffer("y", (4, 8)), Buffer("z", (4, 8)), Buffer("w", (4, 8))
    body = seq(
        loops([(i, 4), (j, 8)], Store(Z, (i, j), Y[i, j] + 1.0)),
        loops([(i, 4), (j, 8)], Store(W, (i, j), Y[i, j] * 3.0)),
    )
    return Kernel("twins", [Y, Z, W], Stage("e", body))


def test_reorder_and_fuse_rewrite_each_loop_of_a_name_from_its_own_body():
    # both steps once rebuilt the first nest and put that copy in place of every loop of the name: the
    # second nest then wrote z again and w never
    before = twin_nests_kernel()
    for step in (Reorder(("j", "i")), Fuse("i", "j")):
        after = step.apply(before)
        assert "w[" in format_kernel(after) and format_kernel(after).count("z[") == 1
        same_results(before, after, {"y": torch.randn(4, 8)}, ["z", "w"])
    assert format_kernel(Reorder(("j", "i")).apply(before)) == text("""
        kernel twins(y: f32[4, 8], z: f32[4, 8], w: f32[4, 8]) {
          // stage e
          for j in 0..8 {
            for i in 0..4 {
              z[i, j] = y[i, j] + 1.0
            }
          }
          for j in 0..8 {
            for i in 0..4 {
              w[i, j] = y[i, j] * 3.0
            }
          }
        }""")


def test_reorder_refuses_a_twin_loop_that_does_not_hold_the_others():
    Y, Z, W = Buffer("y", (4, 8)), Buffer("z", (4, 8)), Buffer("w", (4,))
    body = seq(loops([(i, 4), (j, 8)], Store(Z, (i, j), Y[i, j])), For(i, IntImm(4), Store(W, (i,), Y[i, 0])))
    with pytest.raises(ScheduleError, match="another loop named i"):
        Reorder(("j", "i")).apply(Kernel("t", [Y, Z, W], Stage("e", body)))


def test_tensorize_refuses_a_twin_loop_with_another_body():
    A, B, C, D = Buffer("A", (8, 5)), Buffer("B", (5, 32)), Buffer("C", (8, 32)), Buffer("D", (8, 32))
    body = seq(
        loops([(i, 8), (j, 32), (k, 5)], Store(C, (i, j), C[i, j] + A[i, k] * B[k, j])),
        loops([(i, 8), (j, 32), (k, 5)], Store(D, (i, j), D[i, j] + A[i, k] * B[k, j])),
    )
    with pytest.raises(ScheduleError, match="another, different loop named i"):
        Tensorize("i", 8, 32).apply(Kernel("tw", [A, B, C, D], Stage("mm", body)))


def test_fuse_refusals():
    Y, Z = Buffer("y", (4,)), Buffer("z", (4, 4))
    imperfect = Kernel(
        "imp", [Y, Z], For(i, IntImm(4), seq(Store(Y, (i,), Y[i] * 1.0), For(j, IntImm(4), Store(Z, (i, j), Y[i]))))
    )
    with pytest.raises(ScheduleError, match="only statement"):
        Fuse("i", "j").apply(imperfect)
    s = Schedule(scale_kernel()).split("i", 4)
    with pytest.raises(ScheduleError, match=r"depends on i\.o"):
        s.fuse("i.o", "i.i")


# ------------------------------------------------------------------ vectorize / parallel / unroll
def test_vectorize_and_parallel():
    before = ew_kernel(64, 40)
    after = Schedule(before).vectorize("j").parallel("i").kernel
    assert format_kernel(after) == text("""
        kernel ew(y: f32[64, 40], z: f32[64, 40]) {
          // stage e
          parallel for i in 0..64 {
            vectorized for j in 0..40 {
              z[i, j] = y[i, j] + 1.0
            }
          }
        }""")
    same_results(before, after, {"y": torch.randn(64, 40)}, ["z"])


def test_vectorize_refusals():
    with pytest.raises(ScheduleError, match="not innermost"):
        Vectorize("i").apply(ew_kernel())
    X, Out = Buffer("x", (9,)), Buffer("out", (9,))
    scan = Kernel("scan", [X, Out], For(i, IntImm(8), Store(Out, (i + 1,), Out[i] + X[i + 1])))
    with pytest.raises(ScheduleError, match="not independent"):
        Vectorize("i").apply(scan)


def test_vectorized_reduction_is_allowed():
    X, S = Buffer("x", (1000,)), Buffer("s", (1,))
    z = IntImm(0)
    before = Kernel("sum", [X, S], For(i, IntImm(1000), Store(S, (z,), S[z] + X[i])))
    after = Vectorize("i").apply(before)
    same_results(before, after, {"x": torch.randn(1000)}, ["s"], tol=1e-4)


def test_parallel_refusals():
    with pytest.raises(ScheduleError, match="outermost loop"):
        Parallel("j").apply(ew_kernel())
    X, S = Buffer("x", (8, 4)), Buffer("s", (4,))
    red = Kernel("colsum", [X, S], For(i, IntImm(8), For(j, IntImm(4), Store(S, (j,), S[j] + X[i, j]))))
    with pytest.raises(ScheduleError, match="both touch the same elements of s"):
        Parallel("i").apply(red)
    ok = Kernel("colsum", [X, S], For(j, IntImm(4), For(i, IntImm(8), Store(S, (j,), S[j] + X[i, j]))))
    Parallel("j").apply(ok)  # columns are independent


def test_unroll():
    before = ew_kernel(3, 4)
    after = Unroll("j").apply(before)
    assert "unrolled for j in 0..4 {" in format_kernel(after)
    same_results(before, after, {"y": torch.randn(3, 4)}, ["z"])
    with pytest.raises(ScheduleError, match="> 2"):
        Unroll("j", max_extent=2).apply(before)
    s = Schedule(scale_kernel()).split("i", 4)
    with pytest.raises(ScheduleError, match="not constant"):
        s.unroll("i.i")


# ------------------------------------------------------------------ compute_at / inline
def test_compute_at_producer():
    before = two_stage_kernel()
    after = ComputeAt("scale", "i").apply(before)
    assert format_kernel(after) == text("""
        kernel two(y: f32[4, 8], z: f32[4, 8]) {
          local t: f32[4, 8]
          // stage add
          for i in 0..4 {
            // stage scale
            for j2 in 0..8 {
              t[i, j2] = y[i, j2] * 2.0
            }
            for j in 0..8 {
              z[i, j] = t[i, j] + 1.0
            }
          }
        }""")
    same_results(before, after, {"y": torch.randn(4, 8)}, ["z"])


def test_compute_at_consumer():
    Y, Z, T = Buffer("y", (4, 8)), Buffer("z", (4, 8)), Buffer("t", (4, 8))
    s1 = Stage("scale", loops([(i2, 4), (j2, 8)], Store(T, (i2, j2), Y[i2, j2] * 2.0)))
    s2 = Stage("add", loops([(i, 4), (j, 8)], Store(Z, (i, j), T[i, j] + 1.0)))
    before = Kernel("two", [Y, Z], Allocate(T, seq(s1, s2)))
    after = ComputeAt("add", "i2").apply(before)
    assert "// stage add" in str(after) and str(after).index("t[i2, j2] =") < str(after).index("z[i2, j]")
    same_results(before, after, {"y": torch.randn(4, 8)}, ["z"])


def test_compute_at_refuses_cross_iteration_reads():
    Y, Z, T = Buffer("y", (4, 8)), Buffer("z", (3, 8)), Buffer("t", (4, 8))
    s1 = Stage("scale", loops([(i2, 4), (j2, 8)], Store(T, (i2, j2), Y[i2, j2] * 2.0)))
    s2 = Stage("add", loops([(i, 3), (j, 8)], Store(Z, (i, j), T[i + 1, j] + 1.0)))  # reads the next row
    bad = Kernel("two", [Y, Z], Allocate(T, seq(s1, s2)))
    with pytest.raises(ScheduleError, match="does not match"):  # extents differ: 4 vs 3
        ComputeAt("scale", "i").apply(bad)
    s2b = Stage("add", loops([(i, 4), (j, 8)], Store(Z, (i, j), T[emax(i - 1, 0), j] + 1.0)))
    ok_shape = Kernel("two", [Y, Buffer("z", (4, 8))], Allocate(T, seq(s1, s2b)))
    ComputeAt("scale", "i").apply(ok_shape)  # reads the previous row: already computed, legal
    s2c = Stage("add", loops([(i, 4), (j, 8)], Store(Z, (i, j), T[3 - i, j] + 1.0)))  # reads a later row
    with pytest.raises(ScheduleError, match="would change the result"):
        ComputeAt("scale", "i").apply(Kernel("two", [Y, Buffer("z", (4, 8))], Allocate(T, seq(s1, s2c))))


def _grouped_init_kernel() -> Kernel:
    """z[g*5 + i, j] = 0.5 (stage init, loops g, j, i), then z[g*5 + i, j] += 2 x[g*5 + i, j] (stage acc): two
    groups of 5 rows, as a grouped convolution's output channels."""
    X, Z = Buffer("x", (10, 4)), Buffer("z", (10, 4))
    g, g2, i3 = Var("g"), Var("g2"), Var("i3")
    init = Stage("init", loops([(g2, 2), (j2, 4), (i3, 5)], Store(Z, (g2 * 5 + i3, j2), FloatImm(0.5))))
    upd = Store(Z, (g * 5 + i, j), Z[g * 5 + i, j] + X[g * 5 + i, j] * 2.0)
    return Kernel("groups", [X, Z], seq(init, Stage("acc", loops([(g, 2), (j, 4), (i, 5)], upd))))


def test_compute_at_into_a_split_with_a_tail_sees_each_group_apart():
    """Rows split in tiles of 3 with a tail (5 = 3 + 2): the last tile's extent min(3, 5 - 3 i.o) keeps its rows
    inside the group (interval arithmetic alone bounds i.o * 3 + i.i by 5, the next group's first row, and
    refused the init computed per group: the grouped row-form convolutions fell back to a slow loop nest)."""
    before = _grouped_init_kernel()
    s = Schedule(before).split("i", 3).compute_at("init", "j")
    src = format_kernel(s.kernel)
    assert "for i.i in 0..min(3, 5 - i.o * 3)" in src and src.index("// stage init") > src.index("for j in 0..4")
    same_results(before, s.kernel, {"x": torch.randn(10, 4)}, ["z"])


def test_parallel_over_fused_groups_with_a_tail_split():
    """The groups and the columns fused into one parallel loop: each group's rows are then ``v // 4 * 5`` plus a
    tail-split tile, a term that is not affine beside the tile's; the tile is still bounded inside its group
    (refused as a cross-iteration conflict before: grouped convolutions ran serially on 2 threads)."""
    before = _grouped_init_kernel()
    s = Schedule(before).compute_at("init", "j").split("i", 3).fuse("g", "j").parallel("g.j")
    assert "parallel for g.j in 0..8" in format_kernel(s.kernel)
    same_results(before, s.kernel, {"x": torch.randn(10, 4)}, ["z"])


def test_access_boxes_use_a_tail_split_only_where_its_terms_appear_whole():
    from lower.schedule.checks import accesses

    a, v = Var("a"), Var("v")
    Z = Buffer("z", (64,))
    last = Bin("min", IntImm(3), IntImm(5) - a * 3)  # rows split in 3s, 5 in all
    tail = lambda idx: For(a, IntImm(2), For(v, last, Store(Z, (idx,), FloatImm(1.0))))
    assert accesses(tail(a * 3 + v), {})[1]["z"] == [((0, 4, 64),)]  # 3 a + v <= 4
    assert accesses(tail(a * 3 + v + 10), {})[1]["z"] == [((10, 14, 64),)]
    assert accesses(tail(a * 3 + v * 2), {})[1]["z"] == [((0, 7, 64),)]  # 3 a + 2 v: interval arithmetic
    assert accesses(tail(a * 4 + v), {})[1]["z"] == [((0, 6, 64),)]


def _row_kernel(row_writes_z: bool = False) -> Kernel:
    """z = 0 (stage init), then per row i: a local slice r = x[i, :] * 2 (stage row) beside z[i, :] += w @ r
    (stage acc): the loop i holds a producer besides the nest (a convolution row's slice)."""
    X, W, Z, R = Buffer("x", (4, 8)), Buffer("w", (8, 8)), Buffer("z", (4, 8)), Buffer("r", (8,), scope="local")
    j3, kk = Var("j3"), Var("kk")
    init = Stage("init", loops([(i2, 4), (j2, 8)], Store(Z, (i2, j2), FloatImm(0.5))))
    fill = [Store(R, (j3,), X[i, j3] * 2.0)] + ([Store(Z, (i, j3), FloatImm(0.0))] if row_writes_z else [])
    row = Stage("row", For(j3, IntImm(8), seq(*fill)))
    acc = Stage("acc", loops([(j, 8), (kk, 8)], Store(Z, (i, j), Z[i, j] + W[j, kk] * R[kk])))
    return Kernel("rows", [X, W, Z], seq(init, Stage("rows", For(i, IntImm(4), Allocate(R, seq(row, acc))))))


def test_compute_at_past_a_producer_beside_the_nest():
    """The loops down to the target may hold other statements (a local slice filled per row) when those do
    not touch what the moved stage does; the stage then runs after them in each iteration."""
    before = _row_kernel()
    inputs = {"x": torch.randn(4, 8), "w": torch.randn(8, 8)}
    after = ComputeAt("init", "j").apply(before)
    src = format_kernel(after)
    assert src.index("r[j3] =") < src.index("// stage init") < src.index("z[i, j] = z[i, j] +")
    same_results(before, after, inputs, ["z"])
    with pytest.raises(ScheduleError, match="hold other statements that also use z"):
        ComputeAt("init", "j").apply(_row_kernel(row_writes_z=True))
    # a local the moved stage writes and a statement beside the nest reads: refused as well
    X, Z, T, R = (
        Buffer("x", (4, 8)),
        Buffer("z", (4, 8)),
        Buffer("t", (4,), scope="local"),
        Buffer("r", (8,), scope="local"),
    )
    j3 = Var("j3")
    made = Stage("made", loops([(i2, 4), (j2, 8)], Store(T, (i2,), X[i2, j2])))
    row = Stage("row", For(j3, IntImm(8), Store(R, (j3,), X[i, j3] * T[i])))
    use = Stage("use", For(j, IntImm(8), Store(Z, (i, j), R[j])))
    k2 = Kernel("rows", [X, Z], Allocate(T, seq(made, Stage("rows", For(i, IntImm(4), Allocate(R, seq(row, use)))))))
    with pytest.raises(ScheduleError, match="also use t"):  # made would run after row, which reads it
        ComputeAt("made", "j").apply(k2)


def test_pack_of_a_slice_filled_beside_the_stage():
    """An operand read from a local the kernel fills outside the stage is packed at a loop of the stage (the
    copy runs after the fill); packed once before everything it would read the slice unfilled: refused."""
    before = _row_kernel()
    s = Schedule(before).pack("acc", "r", "j", ("kk",), "rp")
    assert "rp[kk.p] = r[kk.p]" in format_kernel(s.kernel)
    same_results(before, s.kernel, {"x": torch.randn(4, 8), "w": torch.randn(8, 8)}, ["z"])
    with pytest.raises(ScheduleError, match="which this kernel writes"):
        Schedule(before).pack("acc", "r", None, ("kk",), "rp")


def test_inline():
    before = two_stage_kernel()
    after = Inline("scale").apply(before)
    assert format_kernel(after) == text("""
        kernel two(y: f32[4, 8], z: f32[4, 8]) {
          local t: f32[4, 8]
          // stage add
          for i in 0..4 {
            for j in 0..8 {
              z[i, j] = y[i, j] * 2.0 + 1.0
            }
          }
        }""")
    same_results(before, after, {"y": torch.randn(4, 8)}, ["z"])


def test_inline_refusals():
    with pytest.raises(ScheduleError, match="reads its own output"):
        Inline("mm").apply(matmul_kernel())
    X, Out = Buffer("x", (4,)), Buffer("o", (4,))
    T = Buffer("t", (8,))
    strided = Kernel(
        "st",
        [X, Out],
        seq(
            Stage("p", For(i, IntImm(4), Store(T, (i * 2,), X[i]))),
            Stage("c", For(j, IntImm(4), Store(Out, (j,), T[j * 2]))),
        ),
    )
    with pytest.raises(ScheduleError, match="exactly the loop variables"):
        Inline("p").apply(strided)


# ------------------------------------------------------------------ pack / tensorize
def gemm_kernel(m=13, kk=37, n=45):
    A, B, C = Buffer("A", (m, kk)), Buffer("B", (kk, n)), Buffer("C", (m, n))
    body = Stage("mm", loops([(i, m), (j, n), (k, kk)], Store(C, (i, j), C[i, j] + A[i, k] * B[k, j])))
    return Kernel("gemm", [A, B, C], body)


def test_pack_then_tensorize():
    before = gemm_kernel()
    s = Schedule(before).split("j", 32).split("i", 8).reorder("j.o", "i.o", "i.i", "j.i", "k")
    s.pack("mm", "B", "j.o", ("k", "j.i"), "Bp", (1, 32))
    packed = s.kernel
    assert format_kernel(packed) == text("""
        kernel gemm(A: f32[13, 37], B: f32[37, 45], C: f32[13, 45]) {
          local Bp: f32[37, 32]
          // stage mm
          for j.o in 0..2 {
            // stage mm.pack_Bp
            if min(32, 45 - j.o * 32) >= 32 {
              for k.p in 0..37 {
                for j.i.p in 0..32 {
                  Bp[k.p, j.i.p] = B[k.p, j.i.p + j.o * 32]
                }
              }
            } else {
              for k.p in 0..37 {
                for j.i.p in 0..32 {
                  Bp[k.p, j.i.p] = select(j.i.p < min(32, 45 - j.o * 32), B[k.p, j.i.p + j.o * 32], 0.0)
                }
              }
            }
            for i.o in 0..2 {
              for i.i in 0..min(8, 13 - i.o * 8) {
                for j.i in 0..min(32, 45 - j.o * 32) {
                  for k in 0..37 {
                    C[i.i + i.o * 8, j.i + j.o * 32] = C[i.i + i.o * 8, j.i + j.o * 32] + A[i.i + i.o * 8, k] * Bp[k, j.i]
                  }
                }
              }
            }
          }
        }""")  # noqa: E501 - the expected loop nest, verbatim
    s.tensorize("i.i", 8, 32)
    assert next(ln.strip() for ln in format_kernel(s.kernel).splitlines() if "gemm_8x32(" in ln) == (
        "gemm_8x32(A, i.o * 296, 37, Bp, 0, 32, C, i.o * 360 + j.o * 32, 45, 37, min(8, 13 - i.o * 8), "
        "min(32, 45 - j.o * 32))"
    )
    g = torch.Generator().manual_seed(1)
    inputs = {"A": torch.randn(13, 37, generator=g), "B": torch.randn(37, 45, generator=g)}
    same_results(before, packed, inputs, ["C"], tol=1e-4)
    same_results(before, s.kernel, inputs, ["C"], tol=1e-4)
    # the record replays onto a fresh kernel and prints one step per line
    assert format_kernel(s.replay(gemm_kernel())) == format_kernel(s.kernel)
    assert str(s).splitlines()[0] == "split('j', 32)" and str(s).splitlines()[-1] == "tensorize('i.i', 8, 32)"


def test_pack_refusals():
    s = Schedule(gemm_kernel()).split("j", 32)
    with pytest.raises(ScheduleError, match="neither in the layout nor outside"):
        s.pack("mm", "B", "j.o", ("j.i",), "Bp")  # k missing from the layout
    with pytest.raises(ScheduleError, match="does not enclose"):
        s.pack("mm", "B", "nope", ("k", "j.i"), "Bp")


def init_gemm_kernel(m=13, kk=37, n=45, value=0.0, idx=None):
    """C = 0 (stage mm.init), then C += A @ B (stage mm): a contraction as lowered."""
    A, B, C = Buffer("A", (m, kk)), Buffer("B", (kk, n)), Buffer("C", (m, n))
    init = Stage("mm.init", loops([(i2, m), (j2, n)], Store(C, idx or (i2, j2), FloatImm(value))))
    body = Stage("mm", loops([(i, m), (j, n), (k, kk)], Store(C, (i, j), C[i, j] + A[i, k] * B[k, j])))
    return Kernel("gemm", [A, B, C], seq(init, body))


def test_fold_init_then_tensorize_overwrites_the_first_k_block():
    """The zero init goes into the update's first k step, and the micro-kernel of each k block gets beta:
    0 (store) for the first block, 1 (add) after: no pass of zeros over C first."""
    before = init_gemm_kernel()
    s = Schedule(before).fold_init("mm.init", "mm", "k")
    assert "// stage mm.init" not in format_kernel(s.kernel)
    assert "C[i, j] = select(k == 0, 0.0, C[i, j]) + A[i, k] * B[k, j]" in format_kernel(s.kernel)
    g = torch.Generator().manual_seed(2)
    inputs = {"A": torch.randn(13, 37, generator=g), "B": torch.randn(37, 45, generator=g)}
    inputs["C"] = torch.full((13, 45), 7.0)  # whatever C held before: the init overwrote it
    same_results(before, s.kernel, inputs, ["C"])
    s.split("k", 16).split("j", 32).split("i", 8).reorder("j.o", "k.o", "i.o", "i.i", "j.i", "k.i")
    s.pack("mm", "B", "k.o", ("k.i", "j.i"), "Bp", (1, 32)).tensorize("i.i", 8, 32)
    call = next(ln.strip() for ln in format_kernel(s.kernel).splitlines() if "gemmz_8x32(" in ln)
    assert call.endswith(", min(k.o * 16, 1))")  # beta: 0 in the first k block
    same_results(before, s.kernel, inputs, ["C"], tol=1e-4)


@pytest.mark.parametrize(
    "kernel,why",
    [
        (init_gemm_kernel(value=1.0), "needs an epilogue stage"),  # a constant init with no epilogue to take it
        (init_gemm_kernel(idx=(i2, Var("j2") * 0)), "index the output differently"),
        (init_gemm_kernel(kk=0), "constant extent >= 1"),
    ],
)
def test_fold_init_refusals(kernel, why):
    with pytest.raises(ScheduleError, match=why):
        FoldInit("mm.init", "mm", "k").apply(kernel)
    A, C = Buffer("A", (4, 6)), Buffer("C", (2, 8))
    init = Stage("mm.init", loops([(i2, 4), (j2, 8)], Store(C, (i2 // 2, j2), FloatImm(0.0))))
    upd = Stage("mm", loops([(i, 4), (j, 8), (k, 6)], Store(C, (i // 2, j), C[i // 2, j] + A[i, k] * A[i, k])))
    with pytest.raises(ScheduleError, match="one element from two iterations"):  # rows i and i+1 share C[i // 2]
        FoldInit("mm.init", "mm", "k").apply(Kernel("halves", [A, C], seq(init, upd)))


def test_fold_init_moves_a_bias_into_the_epilogue():
    """A bias init goes into the in-place epilogue right after the update (relu(C) -> relu(C + bias)); with no
    such epilogue, or one reading other elements, it stays."""
    A, B, C, bias = Buffer("A", (5, 7)), Buffer("B", (7, 9)), Buffer("C", (5, 9)), Buffer("bias", (5,))
    i3, j3 = Var("i3"), Var("j3")
    init = Stage("mm.init", loops([(i2, 5), (j2, 9)], Store(C, (i2, j2), bias[i2])))
    upd = Stage("mm", loops([(i, 5), (j, 9), (k, 7)], Store(C, (i, j), C[i, j] + A[i, k] * B[k, j])))
    act = Stage("mm.act", loops([(i3, 5), (j3, 9)], Store(C, (i3, j3), emax(C[i3, j3], 0.0))))
    before = Kernel("gemm", [A, B, C, bias], seq(init, upd, act))
    after = FoldInit("mm.init", "mm", "k").apply(before)
    assert "C[i3, j3] = max(C[i3, j3] + bias[i3], 0.0)" in format_kernel(after)
    assert "// stage mm.init" not in format_kernel(after)
    g = torch.Generator().manual_seed(4)
    inputs = {n: torch.randn(*b.shape, generator=g) for n, b in (("A", A), ("B", B), ("bias", bias))}
    same_results(before, after, inputs, ["C"])
    with pytest.raises(ScheduleError, match="needs an epilogue stage"):
        FoldInit("mm.init", "mm", "k").apply(Kernel("gemm", [A, B, C, bias], seq(init, upd)))
    shifted = Stage("mm.act", loops([(i3, 5), (j3, 9)], Store(C, (i3, j3), C[i3, j3] + C[4 - i3, j3])))
    with pytest.raises(ScheduleError, match="reads other elements"):
        FoldInit("mm.init", "mm", "k").apply(Kernel("gemm", [A, B, C, bias], seq(init, upd, shifted)))


def rows_kernel(init_value=None, copy_scale=None, post_value=None, init_idx=None, between=False):
    """A direct convolution's shape in small: C = bias (stage cv.init, index g0*2 + a0), then per group g an
    accumulator copied from C's two rows, updated, and stored back (stage cv), then relu (stage cv.act)."""
    A, B, C, bias = Buffer("A", (4, 3)), Buffer("B", (3, 6)), Buffer("C", (4, 6)), Buffer("bias", (4,))
    acc = Buffer("acc", (2, 6), scope="local")
    g0, a0, j0, g, r, r1, r2, j1, j3 = (Var(n) for n in ("g0", "a0", "j0", "g", "r", "r1", "r2", "j1", "j3"))
    i3, a3, j4 = Var("i3"), Var("a3"), Var("j4")
    cidx = init_idx or (g0 * 2 + a0, j0)
    init_v = bias[g0 * 2 + a0] if init_value is None else init_value(C, cidx)
    init = Stage("cv.init", loops([(g0, 2), (a0, 2), (j0, 6)], Store(C, cidx, init_v)))
    copy = C[g * 2 + r, j] if copy_scale is None else C[g * 2 + r, j] * copy_scale
    upd = Stage(
        "cv",
        For(
            g,
            IntImm(2),
            Allocate(
                acc,
                seq(
                    loops([(r, 2), (j, 6)], Store(acc, (r, j), copy)),
                    loops([(r1, 2), (j1, 6), (k, 3)], Store(acc, (r1, j1), acc[r1, j1] + A[g * 2 + r1, k] * B[k, j1])),
                    loops([(r2, 2), (j3, 6)], Store(C, (g * 2 + r2, j3), acc[r2, j3])),
                ),
            ),
        ),
    )
    oidx = (i3 * 2 + a3, j4)
    post_v = emax(C[oidx], 0.0) if post_value is None else post_value(C, oidx)
    act = Stage("cv.act", loops([(i3, 2), (a3, 2), (j4, 6)], Store(C, oidx, post_v)))
    other = Stage("other", For(Var("z"), IntImm(1), Store(Buffer("T", (1,)), (Var("z"),), FloatImm(0.0))))
    stages = [init, other, upd, act] if between else [init, upd, act]
    return Kernel("cv", [A, B, C, bias, Buffer("T", (1,))], seq(*stages))


def test_fold_rows_start_from_the_init_and_store_the_epilogue():
    """FoldInitRows: the accumulator rows start from the bias (no init pass over C); FoldPostRows: relu is
    applied as the rows are stored (no pass after).  Same C either way, whatever C held before."""
    before = rows_kernel()
    s = Schedule(before).fold_init_rows("cv.init", "cv").fold_post_rows("cv", "cv.act")
    src = format_kernel(s.kernel)
    assert "// stage cv.init" not in src and "// stage cv.act" not in src, src
    assert "acc[r, j] = bias[" in src and "C[g * 2 + r2, j3] = max(acc[r2, j3], 0.0)" in src, src
    g = torch.Generator().manual_seed(5)
    inputs = {n: torch.randn(*shape, generator=g) for n, shape in (("A", (4, 3)), ("B", (3, 6)), ("bias", (4,)))}
    inputs["C"] = torch.full((4, 6), 9.0)
    same_results(before, s.kernel, inputs, ["C"])


@pytest.mark.parametrize(
    "kernel,step,why",
    [
        (rows_kernel(init_value=lambda C, ix: C[ix] + 1.0), "init", "the init reads the output"),
        (rows_kernel(copy_scale=2.0), "init", "other than in whole copies"),
        (rows_kernel(between=True), "init", "must come right after"),
        (rows_kernel(init_idx=(Var("g0") // 1 + Var("a0") * 0, Var("j0"))), "init", "cannot map"),
        (rows_kernel(), "post", "the update reads the output"),  # the rows still copied from C: init first
        (rows_kernel(post_value=lambda C, ix: C[ix] + C[0, 0]), "post", "reads other elements"),
    ],
)
def test_fold_rows_refusals(kernel, step, why):
    with pytest.raises(ScheduleError, match=why):
        if step == "init":
            FoldInitRows("cv.init", "cv").apply(kernel)
        else:
            FoldPostRows("cv", "cv.act").apply(kernel)


def test_micro_kernel_name_parts_back():
    """The backends read a tensorized call's kind, tile and streamed operands back from its one spelling."""
    for stream in STREAMS:
        assert micro_kernel_parts(micro_kernel_name("gemmt", 12, 32, stream)) == ("gemmt", 12, 32, stream, 0)
        assert micro_kernel_parts(micro_kernel_name("gemmq", 6, 16, stream, 16)) == ("gemmq", 6, 16, stream, 16)
    assert micro_kernel_name("gemm", 6, 16, "ab") == "gemm_6x16_pab"


def test_tensorize_refusals():
    def tiled() -> Schedule:
        return Schedule(gemm_kernel()).split("j", 32).split("i", 8).reorder("j.o", "i.o", "i.i", "j.i", "k")

    assert "gemmr_8x32(" in format_kernel(tiled().tensorize("i.i", 8, 32).kernel)  # B read in place: rows n apart
    # streamed, B in place prefetches each row's next panel
    assert "gemmr_8x32_pb(" in format_kernel(tiled().tensorize("i.i", 8, 32, stream="b").kernel)
    with pytest.raises(ScheduleError, match="at most"):
        Schedule(gemm_kernel()).tensorize("i", 8, 32)
    with pytest.raises(ScheduleError, match="three perfectly nested loops"):
        Tensorize("i").apply(two_stage_kernel())
    with pytest.raises(ScheduleError, match="stream must be one of"):  # the operands to prefetch: a, b, ab
        Tensorize("i", stream="c").apply(gemm_kernel())


def test_schedule_record_prints_and_replays():
    s = Schedule(ew_kernel(64, 40)).fuse("i", "j").split("i.j", 256).vectorize("i.j.i").parallel("i.j.o")
    assert str(s) == text("""
        fuse('i', 'j')
        split('i.j', 256)
        vectorize('i.j.i')
        parallel('i.j.o')""")
    assert format_kernel(s.replay(ew_kernel(64, 40))) == format_kernel(s.kernel)
    same_results(ew_kernel(64, 40), s.kernel, {"y": torch.randn(64, 40)}, ["z"])


def test_flat_offset_folds_divmod_behind_zero_padding():
    # conv lowering writes `x // 13 - 0` (padding 0); the `- 0` must not hide the `(x//c)*c + x%c` fold,
    # or a 1x1 convolution's input panel copy computes a div and a mod per lane instead of a unit stride
    x = Var("x")
    buf = Buffer("b", (4, 13, 13))
    idx = (IntImm(1), Bin("-", Bin("//", x, IntImm(13)), IntImm(0)), Bin("-", Bin("%", x, IntImm(13)), IntImm(0)))
    assert format_expr(flat_offset(buf, idx)) == "x + 169"
    assert format_expr(simplify(Bin("+", IntImm(0), Bin("//", x, IntImm(3))))) == "x // 3"


def test_flat_offset_folds_divmod_split_across_indices_among_other_terms():
    # a 3x3 convolution tap x[c, j // 13 + kh - 1, j % 13 + kw - 1] (stride 1, width 13): j plus a constant
    j, kh, kw = Var("j"), Var("kh"), Var("kw")
    buf = Buffer("x", (4, 13, 13))
    oh = Bin("-", Bin("+", Bin("//", j, IntImm(13)), kh), IntImm(1))
    ow = Bin("-", Bin("+", Bin("%", j, IntImm(13)), kw), IntImm(1))
    assert format_expr(flat_offset(buf, (IntImm(2), oh, ow))) == "j + kh * 13 + kw + 324"
    # stride 2 along w: (j // 13) * 13 + (j % 13) * 2 is not j, and must not be folded
    ow2 = Bin("*", Bin("%", j, IntImm(13)), IntImm(2))
    assert "%" in format_expr(flat_offset(buf, (IntImm(0), Bin("//", j, IntImm(13)), ow2)))


def test_flat_offset_folds_a_flat_index_unflattened_over_three_dims():
    # groupnorm's statistics read a group's channels and positions as one flat j: x[n, g * 64 + j // 3136,
    # j // 56 % 56, j % 56] is j past the group's start (unit stride), not a div and two mods per lane
    j, g = Var("j"), Var("g")
    buf = Buffer("x", (2, 128, 56, 56))
    idx = (IntImm(1), g * 64 + j // 3136, j // 56 % 56, j % 56)
    assert format_expr(flat_offset(buf, idx)) == "g * 200704 + j + 401408"
    # (j // 3136) * 56 + (j // 56) % 57 is no flat index (57 * 56 != 3136): left alone
    bad = Buffer("y", (4, 57, 56))
    assert "%" in format_expr(flat_offset(bad, (j // 3136, j // 56 % 57, j % 56)))


def test_boxes_through_different_collapsings_compare_on_common_dimensions():
    """A plane written through a fused (p // 28, p % 28) index (and (n.g // 32, n.g % 32) collapsed to one
    dimension) against the same buffer read row by row: disjoint where the channel differs, overlapping
    where it is the same."""
    from lower.schedule.checks import _overlap

    fused = ((1, 1, 64), (0, 783, 784))  # image 0, channel 1: the whole plane
    rows = ((0, 0, 2), (0, 0, 32), (0, 27, 28), (0, 27, 28))  # image 0, channel 0
    assert not _overlap(fused, rows) and not _overlap(rows, fused)
    same = ((0, 0, 2), (1, 1, 32), (5, 5, 28), (3, 3, 28))  # image 0, channel 1, one element
    assert _overlap(fused, same) and _overlap(same, fused)
    assert _overlap(((0, 3, 4),), ((0, 0, 2), (0, 1, 3)))  # sizes that never line up: assume the worst


def test_a_tensorized_call_touches_its_whole_buffers():
    from lower.schedule.checks import accesses, conflict

    c, i = Buffer("c", (4, 8)), Var("i")
    body = seq(Intrinsic("gemm_8x32", (), reads=(c,), writes=(c,)), Store(c, (i, IntImm(0)), c[i, IntImm(0)]))
    reads, writes = accesses(body, {"i": (0, 3)})
    assert writes == {"c": [((0, 3, 4), (0, 7, 8))]} and conflict(reads, writes, reads, writes) == "c"
