"""The GEMM micro-tiles against torch on shapes that are not multiples of MR, NR or KC: the host's tile
(12 x 32 with AVX-512), the 8-row tile the recipe falls back to for short M, and the AVX2 tile (6 x 16 on
8-lane vectors, run here as a target record); constant and input B, batched, bias and activation
epilogues, and convolutions (implicit im2col GEMMs)."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
from lower_testutil import check_graph

from lower import parse_target
from lower.ir import Intrinsic, walk_stmt
from lower.schedule import Reorder, Tensorize
from lower.schedule.recipes import IN_PLACE_A_MAX_MR, SHORT_TILE, _even_block, _split_time, gemm_blocking, gemm_rows
from rewrite.ir.builder import GraphBuilder


def _tiles(cg) -> list[tuple[int, int]]:
    return [(s.mr, s.nr) for bk in cg.built if bk.schedule for s in bk.schedule.steps if isinstance(s, Tensorize)]


def _kinds(cg) -> set[str]:
    """The micro-kernels the kernels call: ``gemm`` (row-major A read in place) or ``gemmt`` (packed A), with
    an ``r`` when B is read in place (row-major, not packed: few rows, ``recipes._b_in_place``)."""
    return {x.name.split("_")[0] for bk in cg.built for x in walk_stmt(bk.kernel.body) if isinstance(x, Intrinsic)}


def _targets():
    host = parse_target("llvm", threads=1)
    yield "host", host
    yield "avx2", dataclasses.replace(host, vector_width=8, mr=6, nr=16)
    yield "12x32", dataclasses.replace(host, vector_width=16, mr=12, nr=32, threads=2)


TARGETS = dict(_targets())


def _matmul(m: int, k: int, n: int, const_b: bool, batch: tuple[int, ...] = (), act: str | None = None):
    g = torch.Generator().manual_seed(m * 7 + k * 3 + n)
    b = GraphBuilder("mm")
    x = b.input("x", (*batch, m, k))
    w = b.weight("w", torch.randn(k, n, generator=g)) if const_b else b.input("w", (*batch, k, n))
    y = b.matmul(x, w)
    if act is not None:
        y = b.add(y, b.weight("bias", torch.randn(n, generator=g)))
        y = getattr(b, act)(y)
    return b.build([y])


@pytest.mark.parametrize("tname", sorted(TARGETS))
@pytest.mark.parametrize(
    "m,k,n,const_b",
    [(37, 300, 75, True), (64, 261, 97, False), (13, 517, 33, True), (25, 70, 130, False), (1, 300, 250, True)],
)
def test_odd_shapes_match_torch(tname, m, k, n, const_b):
    target = TARGETS[tname]
    cg = check_graph(_matmul(m, k, n, const_b, act="relu"), target=target)
    assert _tiles(cg) == [(gemm_rows(m, target), target.nr)]
    # a row-major A read in place by the row-major micro-kernel; the bias init folded into the ReLU epilogue,
    # the first k block stored (z)
    assert _kinds(cg) == {"gemm" + ("" if const_b else "r") + "z"}


@pytest.mark.parametrize("tname", sorted(TARGETS))
@pytest.mark.parametrize("m,k,n,const_b", [(37, 1024, 75, True), (64, 2048, 97, False)])
def test_a_row_major_a_is_packed_where_its_rows_share_an_l1_set(monkeypatch, tname, m, k, n, const_b):
    """Rows a multiple of 4 KiB apart map to one L1 set: such an A is packed into k-major panels (the ``t``
    kernels), and with EQSAT_PACK_A=0 read in place all the same."""
    cg = check_graph(_matmul(m, k, n, const_b, act="relu"), target=TARGETS[tname])
    assert _kinds(cg) == {"gemmt" + ("" if const_b else "r") + "z"}
    monkeypatch.setenv("EQSAT_PACK_A", "0")
    cg = check_graph(_matmul(m, k, n, const_b, act="relu"), target=TARGETS[tname])
    assert _kinds(cg) == {"gemm" + ("" if const_b else "r") + "z"}


@pytest.mark.parametrize("tname", sorted(TARGETS))
@pytest.mark.parametrize("m", [100, 64])
def test_an_activation_times_an_activation_packs_a_beside_the_b_panel(tname, m):
    """B an input whose rows are 512 bytes apart is copied into panels at run time (not read in place), and
    then A is packed too where the micro-tile has more than ``IN_PLACE_A_MAX_MR`` rows (12 x 32: 100 rows);
    with 8-row tiles (64 rows) or the AVX2 target's 6 it is read in place, as beside a constant B."""
    target = TARGETS[tname]
    cg = check_graph(_matmul(m, 200, 128, False), target=target)
    packed = gemm_rows(m, target) > IN_PLACE_A_MAX_MR
    assert _kinds(cg) == {"gemmtz" if packed else "gemmz"}
    if tname != "host":  # the host's tile is the machine's: 12 rows with AVX-512, 6 with AVX2
        assert packed == (m == 100 and tname == "12x32")


@pytest.mark.parametrize("tname", sorted(TARGETS))
def test_batched_input_b_with_epilogue(tname):
    check_graph(_matmul(27, 129, 50, False, batch=(3,), act="sigmoid"), target=TARGETS[tname])


@pytest.mark.parametrize("tname", sorted(TARGETS))
def test_conv_as_gemm_with_stride_padding_and_groups(tname):
    check_graph(_conv((2, 12, 19, 17), (28, 6, 3, 3), (2, 1), (1, 2), 2, seed=3), target=TARGETS[tname])


def _conv(x_shape, w_shape, stride, padding, groups, seed):
    """A conv2d + bias + relu over an input ``x_shape`` with random weights ``w_shape``."""
    g = torch.Generator().manual_seed(seed)
    b = GraphBuilder("conv")
    x = b.input("x", x_shape)
    w = b.weight("w", torch.randn(*w_shape, generator=g))
    bias = b.weight("bias", torch.randn(w_shape[0], generator=g))
    y = b.op("conv2d_bias_act", x, w, bias, stride=stride, padding=padding, dilation=(1, 1), groups=groups, act="relu")
    return b.build([y])


def test_short_m_falls_back_to_the_8_row_tile():
    t = dataclasses.replace(parse_target("llvm", threads=1), mr=12, nr=32)
    assert [gemm_rows(m, t) for m in (1024, 1000, 256, 64, 16, 8, 1)] == [12, 12, 12, SHORT_TILE, 8, 8, 8]
    assert gemm_rows(64, dataclasses.replace(t, mr=6, nr=16)) == 6  # a tile no taller than the fallback stays
    blk = gemm_blocking(64, 3025, 576, 1, t, gemm_rows(64, t))
    assert blk["MC"] % 8 == 0 and blk["KC"] <= 256 and blk["NC"] % 32 == 0


def test_column_blocks_on_one_thread_are_near_equal():
    """Packed B's size caps a column block; the blocks under that cap are near-equal, not full ones and a short
    last one (``_even_block``)."""
    assert [_even_block(t, c) for t, c in ((96, 85), (72, 85), (196, 64), (5, 1), (7, 100))] == [48, 72, 49, 1, 7]
    t = dataclasses.replace(parse_target("llvm", threads=1), mr=6, nr=16)
    for m, n, k in ((197, 1536, 384), (3136, 64, 576), (128, 3072, 768)):
        panels, per = -(-n // 16), gemm_blocking(m, n, k, 1, t, 6, b_const=True)["NC"] // 16
        blocks = -(-panels // per)
        assert per - (panels - (blocks - 1) * per) < blocks  # the last block short by fewer panels than blocks


@pytest.mark.parametrize("threads", [1, 2])
def test_few_rows_times_a_constant_b_reduce_in_one_k_block(threads):
    """x @ W with few rows streams W once: the whole reduction in one k block (``ONE_K_BLOCK_MAX_K``); many
    rows, a computed B, or a packed A block too big for the stack keep k blocks of at most 256."""
    t = dataclasses.replace(parse_target("llvm"), mr=12, nr=32, threads=threads)
    assert gemm_blocking(1, 1024, 512, 1, t, 8, b_const=True)["KC"] == 512
    assert gemm_blocking(64, 768, 2048, 1, t, 8, b_const=True)["KC"] == 2048
    assert gemm_blocking(1, 1024, 512, 1, t, 8)["KC"] == 256
    assert gemm_blocking(512, 1024, 512, 1, t, 12, b_const=True)["KC"] == 256
    assert gemm_blocking(128, 768, 3072, 1, t, 8, b_const=True)["KC"] <= 256  # 1.5 MiB of packed A
    b = GraphBuilder("rnn")
    x = b.input("x", (3, 700))
    y = b.relu(b.matmul(x, b.weight("w", torch.randn(700, 100) * 0.05)))
    check_graph(b.build([y]), threads=threads)


def test_two_threads_split_the_output_where_operands_are_read_least():
    """Every column block re-reads A, every row block re-packs B: tall outputs over few columns (a late
    convolution: 1000 channels over 13 x 13 pixels, A its constant weights) split rows, wide ones columns."""
    t = dataclasses.replace(parse_target("llvm"), mr=12, nr=32, threads=2)
    assert gemm_blocking(1000, 169, 512, 1, t, 12, a_const=True)["ROWS"] == 1
    assert gemm_blocking(64, 3025, 576, 1, t, 8, a_const=True)["ROWS"] == 0
    assert gemm_blocking(64, 3025, 576, 1, t, 8)["ROWS"] == 0
    assert gemm_blocking(1000, 169, 512, 24, t, 12, a_const=True)["ROWS"] == 0  # batches to share out
    one = dataclasses.replace(t, threads=1)
    assert gemm_blocking(1000, 169, 512, 1, one, 12, a_const=True)["ROWS"] == 0


def test_micro_kernel_with_sixteen_column_vectors_dispatches_each_count():
    """A 64-column tile on 4-lane vectors has 16 column-vector counts: the switch over (rows, vectors)
    reaches each one's body (a fixed 4-bit field for the count sent 16 vectors of odd row counts nowhere)."""
    t = dataclasses.replace(parse_target("llvm", threads=1), vector_width=4, mr=3, nr=64)
    cg = check_graph(_matmul(37, 300, 75, True, act="relu"), target=t)
    assert _tiles(cg) == [(3, 64)]


def test_two_threads_are_not_left_one_idle_at_the_end():
    """Threads take blocks one by one: three equal blocks on two threads leave one idle for a block, so the
    split prefers two or four (an Inception-v3 17 x 17 convolution: 192 channels, 289 pixels, 1344-long
    reduction; five 64-column blocks ran 13% slower than two row halves)."""
    assert _split_time([96], [96, 96], (12, 32), 256, 1, 2, (True, False)) < _split_time(
        [96], [64, 64, 64], (12, 32), 256, 1, 2, (True, False)
    )
    t = dataclasses.replace(parse_target("llvm"), mr=12, nr=32, threads=2)
    blk = gemm_blocking(192, 289, 1344, 1, t, 12, a_const=True)
    blocks = (math.ceil(192 / blk["MC"]) if blk["ROWS"] else 1) * math.ceil(289 / blk["NC"])
    assert blocks % 2 == 0, blk


def _tall(m: int, k: int, n: int, const_a: bool):
    g = torch.Generator().manual_seed(m + k + n)
    b = GraphBuilder("tall")
    a = b.weight("a", torch.randn(m, k, generator=g)) if const_a else b.input("a", (m, k))
    y = b.add(b.matmul(a, b.input("x", (k, n))), b.weight("bias", torch.randn(m, n, generator=g)))
    return b.build([b.relu(y)])


@pytest.mark.parametrize("m,k,n,const_a", [(301, 200, 45, True), (290, 130, 37, False), (1000, 300, 20, True)])
def test_row_blocks_on_two_threads_match_torch(m, k, n, const_a):
    """Row x column blocks in parallel, A packed at compile time when constant, epilogue per block."""
    cg = check_graph(_tall(m, k, n, const_a), target=TARGETS["12x32"])
    steps = [str(s) for bk in cg.built if bk.schedule for s in bk.schedule.steps]
    assert any(s.startswith("parallel(") and ".o." in s for s in steps), steps  # a fused (row, column) root
    assert any("_apacked" in s for s in steps) == const_a


def test_conv_with_many_channels_over_few_pixels_on_two_threads():
    check_graph(_conv((1, 64, 11, 11), (400, 64, 3, 3), (1, 1), (1, 1), 1, seed=5), target=TARGETS["12x32"])


def test_matvec_streaming_a_large_weight_runs_on_both_threads():
    """An RNN step (1 x 512 @ 512 x 512 weights): few flops, but a 1 MiB weight to stream, which one core's
    bandwidth bounds; the column blocks run in parallel."""
    cg = check_graph(_matmul(1, 512, 512, True, act="tanh"), target=TARGETS["12x32"])
    steps = [str(s) for bk in cg.built if bk.schedule for s in bk.schedule.steps]
    assert any(s.startswith("parallel(") for s in steps), steps


@pytest.mark.parametrize("m,panel_outer", [(64, True), (512, False)])
def test_few_rows_iterate_row_tiles_inside_each_column_panel(m, panel_outer):
    """With few rows a B panel stays in L1 across every row tile (PANEL_OUTER_MAX_M); with many, A's."""
    t = dataclasses.replace(TARGETS["12x32"], threads=1)
    cg = check_graph(_matmul(m, 300, 200, True), target=t)
    order = next(s.loops for bk in cg.built if bk.schedule for s in bk.schedule.steps if isinstance(s, Reorder))
    jr = next(i for i, v in enumerate(order) if v.startswith("j") and v.endswith(".i.o"))
    ir = next(i for i, v in enumerate(order) if v.startswith("i") and v.endswith(".i.o"))
    assert (jr < ir) == panel_outer, order


def _streams(cg) -> set[str]:
    return {s.stream for bk in cg.built if bk.schedule for s in bk.schedule.steps if isinstance(s, Tensorize)}


def _conv3x3(c: int, hw: int, oc: int):
    b = GraphBuilder("conv")
    x = b.input("x", (1, c, hw, hw))
    w = b.weight("w", torch.randn(oc, c, 3, 3, generator=torch.Generator().manual_seed(hw)))
    return b.build([b.conv2d(x, w, stride=(1, 1), padding=(1, 1))])


@pytest.mark.parametrize(
    "graph,stream,call",
    [
        (_conv3x3(64, 7, 96), "a", "gemmtz_12x32_pa"),  # constant weights, 49 columns: each A tile meets 2 panels
        (_conv3x3(16, 40, 96), "", "gemmtz_12x32"),  # 1600 columns: each A tile stays in L1 across many panels
        (_matmul(48, 300, 100, True), "b", "gemmz_12x32_pb"),  # constant B (a linear's weight), A read in place
        # B read in place (an activation a layer left in memory): the next panel's columns of each row ahead
        (_matmul(48, 300, 100, False), "b", "gemmrz_12x32_pb"),
    ],
)
def test_weights_read_once_per_run_are_prefetched_by_the_micro_kernel(graph, stream, call):
    """Operands streaming from memory are prefetched: weights packed at compile time (read once per run, cold),
    and a B read in place, whose rows are far apart (1x1 convolution over 56^2 with its input in DRAM: 1707 ->
    1226 us, 1 thread; with it in L3 1.03-1.08x too).  Their zero init is folded into the first k block (``z``)."""
    cg = check_graph(graph, target=dataclasses.replace(TARGETS["12x32"], threads=1))
    assert _streams(cg) == {stream}
    calls = {x.name for bk in cg.built for x in walk_stmt(bk.kernel.body) if isinstance(x, Intrinsic)}
    assert calls == {call}
