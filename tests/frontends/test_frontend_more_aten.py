"""ATen ops common in models outside the benchmark set, imported through torch.export as compositions of
registry ops: log_softmax, any/all, full_like, flip, strided slices, adaptive_avg_pool1d and transposed
convolutions.  Each is checked against torch, through the reference interpreter and the compiled kernels."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from rewrite.frontends import from_torch
from rewrite.pipeline import compile


def _check(m: nn.Module, *xs: torch.Tensor, compiled: bool = True) -> set[str]:
    """Import ``m``, compare the interpreter's (and the compiled graph's) result with torch's; the ops."""
    m = m.eval()
    with torch.no_grad():
        ref = m(*xs)
    g = from_torch(m, xs)
    outs = [g.run(list(xs))[0]] + ([compile(g)(list(xs))[0]] if compiled else [])
    for out in outs:
        assert out.shape == ref.shape and out.dtype == ref.dtype
        assert torch.allclose(out, ref, rtol=1e-5, atol=1e-5), (out - ref).abs().max()
    return set(g.summary())


class _LogSoftmax(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.log_softmax(x, dim=1)


def test_log_softmax_is_stable_where_log_of_softmax_is_not():
    x = torch.tensor([[0.0, -200.0, 3.0], [1.0, 2.0, -150.0]])
    assert torch.isinf(torch.log(torch.softmax(x, 1))).any()  # the naive form underflows
    ops = _check(_LogSoftmax(), x)
    assert {"reduce_max", "reduce_sum", "log", "exp"} <= ops
    _check(_LogSoftmax(), torch.randn(3, 7, 5))


class _AnyAll(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = torch.any(x > 0.5, dim=-1, keepdim=True)
        b = torch.all(x > -1.0, dim=1)
        full = torch.full_like(x, 2.0)
        return torch.where(a, x, full) + b[:, None, :].float() + torch.any(x > 3.0).float()


def test_any_all_and_full_like():
    _check(_AnyAll(), torch.randn(2, 3, 4))


def test_multihead_attention_imports():
    """torch's attention decomposition guards fully masked rows with any() and full_like()."""
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, batch_first=True)

    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.mha = mha

        def forward(self, q: torch.Tensor) -> torch.Tensor:
            return self.mha(q, q, q, need_weights=False)[0]

    _check(M(), torch.randn(2, 5, 16))


class _Flip(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flip(x, dims=(0, -1)) + x.flip(1)


def test_flip_and_a_bidirectional_gru():
    ops = _check(_Flip(), torch.randn(2, 3, 4), compiled=False)
    assert "index_select" in ops
    torch.manual_seed(0)

    class Bi(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gru = nn.GRU(4, 6, batch_first=True, bidirectional=True)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.gru(x)[0]

    _check(Bi(), torch.randn(2, 3, 4))


class _Strided(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, ::2, 1::3] * 2.0 + x[:, 1::2, :7:3]


def test_strided_slices():
    _check(_Strided(), torch.randn(2, 6, 8))


def test_adaptive_avg_pool1d():
    _check(nn.AdaptiveAvgPool1d(1), torch.randn(2, 3, 10))
    _check(nn.AdaptiveAvgPool1d(5), torch.randn(2, 3, 10))


@pytest.mark.parametrize(
    "cin, cout, k, s, p, op, d, g",
    [
        (8, 4, 2, 2, 0, 0, 1, 1),  # U-Net's up-convolution: 1x1 conv + depth-to-space
        (8, 4, 3, 2, 1, 1, 1, 1),
        (6, 4, 4, 2, 1, 0, 1, 2),
        (3, 5, 3, 1, 0, 0, 1, 1),
        (4, 3, 3, 2, 0, 0, 2, 1),
        (4, 4, (3, 2), (2, 1), (1, 0), (1, 0), 1, 4),
        (4, 4, 3, 2, 3, 0, 1, 1),  # padding past dilation * (k - 1): the input is cropped
    ],
)
def test_transposed_convolution(cin, cout, k, s, p, op, d, g):
    torch.manual_seed(0)
    m = nn.ConvTranspose2d(cin, cout, k, stride=s, padding=p, output_padding=op, dilation=d, groups=g)
    ops = _check(m, torch.randn(2, cin, 5, 6))
    if k == s == 2 and p == 0:
        assert "pad" not in ops and "transpose" in ops


@pytest.mark.parametrize(
    "m, shape",
    [
        (lambda: nn.Conv1d(4, 8, 5, stride=2, padding=2, groups=2), (2, 4, 13)),
        (lambda: nn.Conv1d(3, 3, 3, padding=2, dilation=2, groups=3, bias=False), (1, 3, 9)),
        (lambda: nn.Conv1d(4, 6, 3, padding=1), (4, 10)),  # unbatched
        (lambda: nn.ConvTranspose1d(4, 2, 3, stride=3, padding=1, output_padding=2), (1, 4, 5)),
        (lambda: nn.ConvTranspose1d(4, 6, 2, stride=2), (1, 4, 5)),
        # a weight computed from parameters (wav2vec2's positional convolution): reshaped in the graph
        (lambda: nn.utils.parametrizations.weight_norm(nn.Conv1d(4, 4, 5, padding=2, groups=2), dim=2), (1, 4, 12)),
    ],
)
def test_one_dimensional_convolutions(m, shape):
    torch.manual_seed(0)
    assert "conv2d" in _check(m(), torch.randn(*shape))


class _ScaledBySize(nn.Module):
    def forward(self, q: torch.Tensor) -> torch.Tensor:
        scale = torch.sqrt(torch.tensor(q.size(-1), dtype=torch.float) * 2)  # DeBERTa's scaled_size_sqrt
        return q / scale


def test_a_constant_scalar_tensor_times_a_number():
    _check(_ScaledBySize(), torch.randn(2, 8), compiled=False)


class _MinMax(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lo, hi = x.mean(-1, keepdim=True), x.amax(0) * 0.5
        return torch.maximum(x, x.flip(0)) - torch.minimum(x, 0.3 * x) + x.clamp(lo, hi)


class _Norms(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n1 = torch.linalg.vector_norm(x, ord=1, dim=(0, 2))
        ninf = torch.linalg.vector_norm(x, ord=float("inf"), dim=-1, keepdim=True)
        return F.normalize(x, dim=-1) * ninf + n1[None, :, None] + torch.linalg.vector_norm(x)


class _OneBound(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clamp(min=0.1) + x.clamp(max=-0.2)


class _Steps(nn.Module):
    """erf (the exact GELU spelled out, as exported models do), and the step functions."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gelu = 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
        return gelu + torch.floor(x * 3) + torch.ceil(x) * torch.round(x * 2.5) + torch.sign(x)


@pytest.mark.parametrize(
    "m, shape",
    [
        (_Steps, (2, 3, 4)),
        (lambda: nn.LeakyReLU(0.2), (2, 3, 4)),
        (lambda: nn.ELU(0.7), (2, 3, 4)),
        (lambda: nn.SELU(), (2, 3, 4)),
        (lambda: nn.InstanceNorm2d(3, affine=True), (2, 3, 4, 5)),
        (lambda: nn.InstanceNorm1d(3), (2, 3, 7)),
        (lambda: nn.LayerNorm([4, 5]), (2, 3, 4, 5)),  # over the last two dimensions
        (_OneBound, (2, 3, 4)),
        (_MinMax, (2, 3, 4)),
        (_Norms, (2, 3, 4)),
    ],
)
def test_activations_and_normalizations_composed(m, shape):
    torch.manual_seed(0)
    _check(m(), torch.randn(*shape))


class _Indexed(nn.Module):
    def forward(self, x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        cols = x[:, :, torch.tensor([3, -1, 0])]  # negative positions count from the end
        apart = x[torch.tensor([1, 0]), :, torch.tensor([[2], [4]])]  # not adjacent: broadcast dims first
        return cols.sum() + apart.sum(-1).sum(-1) + x[ids].sum()


@pytest.mark.parametrize(
    "m, xs",
    [
        (lambda: nn.ReflectionPad2d((1, 2, 2, 1)), lambda: (torch.randn(1, 2, 4, 5),)),
        (lambda: nn.ReplicationPad2d(1), lambda: (torch.randn(1, 2, 4, 5),)),
        (lambda: nn.Unfold(2, stride=2), lambda: (torch.randn(1, 2, 4, 6),)),
        (_Indexed, lambda: (torch.randn(2, 3, 5), torch.tensor([1, 1, 0]))),
    ],
)
def test_indexing_by_integer_tensors(m, xs):
    torch.manual_seed(0)
    _check(m(), *xs())


class _ArgExtremes(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        v, i = x.max(dim=1)
        w, j = torch.min(x, -1, keepdim=True)
        return x.argmax(-1), x.argmin(dim=0, keepdim=True), torch.argmax(x), v, i, w, j


def test_argmax_argmin_and_max_min_over_a_dim_take_the_first_extreme():
    """Ties give the first position and a NaN is the extreme, as torch; indices are int64."""
    x = torch.randn(3, 5, 4)
    x[0, 2, 1] = float("nan")
    x[1, 1, :] = 0.5
    x[2, :, 3] = 7.0
    m = _ArgExtremes()
    ref = m(x)
    g = from_torch(m, (x,))
    for outs in (g.run([x]), compile(g)([x])):
        for got, want in zip(outs, ref):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert torch.allclose(got, want, equal_nan=True) if got.is_floating_point() else torch.equal(got, want)


class _Cumsum(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.cumsum(1) + torch.cumsum(x.flip(-1), -1).flip(-1)


def test_cumsum_forwards_and_reversed():
    _check(_Cumsum(), torch.randn(2, 13, 7))


class _Products(nn.Module):
    """torch.prod over a dim and over everything, cumprod, and int64 maximum / prod / cumprod."""

    def forward(self, x: torch.Tensor, i: torch.Tensor) -> tuple[torch.Tensor, ...]:
        ints = torch.maximum(i, i.flip(0)).prod(0) + torch.cumprod(i, 0).sum(0)
        return x.prod(1, keepdim=True) * torch.prod(x[:, :3]), torch.cumprod(x, -1), ints


def test_products_and_integer_maximum_match_torch():
    x, i = torch.rand(3, 6) + 0.5, torch.randint(-3, 4, (5, 4))
    m = _Products()
    g = from_torch(m, (x, i))
    assert {"reduce_prod", "maximum"} <= {n.op for n in g}
    for got, want in zip(compile(g)([x, i]), m(x, i)):
        assert got.dtype == want.dtype
        assert torch.allclose(got, want, rtol=1e-5) if got.is_floating_point() else torch.equal(got, want)


class _StaticCache(nn.Module):
    """A static KV cache written at run-time positions (transformers' StaticCache: index_copy_ along the
    sequence), and the same by index assignment."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("k", torch.zeros(1, 2, 8, 4))

    def forward(self, new: torch.Tensor, pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        by_copy = self.k.index_copy(2, pos, new)
        by_put = self.k.clone()
        by_put[:, :, pos] = new
        return by_copy * 2, by_put + 1


class _Scatters(nn.Module):
    def forward(self, x: torch.Tensor, idx: torch.Tensor, src: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (
            x.scatter(1, idx, src),  # duplicate positions: the last write wins, as torch's loop
            x.scatter_add(1, idx, src),
            x.scatter(0, idx[:2] % 3, 2.5),  # an index shorter than x in dim 1
            x.scatter_reduce(1, idx, src, "amax"),
            x.scatter_reduce(1, idx, src, "prod"),
        )


def test_scatters_at_run_time_positions_match_torch():
    for m, args in (
        (_StaticCache(), (torch.randn(1, 2, 3, 4), torch.tensor([5, 1, 2]))),
        (_Scatters(), (torch.randn(3, 5), torch.randint(0, 5, (3, 4)), torch.randn(3, 6))),
    ):
        g = from_torch(m, args)
        for got, want in zip(compile(g)(list(args)), m(*args)):
            assert torch.allclose(got, want, rtol=1e-6, atol=0)


class _FloatDivisions(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (
            torch.div(a, b, rounding_mode="floor"),
            torch.div(a, b, rounding_mode="trunc"),
            a // b,
            torch.floor_divide(a, 2.5),
            torch.div(a, -0.75, rounding_mode="floor"),
        )


def test_float_floor_and_trunc_division_match_torch_bit_for_bit():
    """torch's div_floor_floating, signed zeros, zero divisors, infinities and NaN included."""
    a, b = torch.randn(6, 50) * 5, torch.randn(6, 50) * 2
    b[0, :5] = 0
    a[1, :5], a[1, 5:10] = 0.0, -0.0
    b[2, :10], b[3, :10] = a[2, :10], -a[3, :10] / 3  # whole quotients, exact and inexact
    a[4, :3], a[4, 3], b[5, :3] = float("inf"), float("nan"), float("inf")
    m = _FloatDivisions()
    g = from_torch(m, (a, b))
    for got, want in zip(compile(g)([a, b]), m(a, b)):
        assert torch.equal(got.isnan(), want.isnan())
        ok = ~want.isnan()
        assert torch.equal(got[ok], want[ok]) and torch.equal(torch.signbit(got[ok]), torch.signbit(want[ok]))


class _Resizes(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (
            F.interpolate(x, size=(4, 5), mode="bilinear", antialias=True),
            F.interpolate(x, size=(3, 13), mode="bicubic", antialias=True, align_corners=True),
            F.interpolate(x, scale_factor=1.7, mode="bicubic"),
        )


def test_antialiased_and_bicubic_resizes_match_torch():
    x = torch.randn(1, 2, 9, 11)
    m = _Resizes()
    g = from_torch(m, (x,))
    for got, want in zip(compile(g)([x]), m(x)):
        assert torch.allclose(got, want, rtol=1e-5, atol=1e-5)


class _Powers(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return torch.pow(x.abs(), y), 2.0**y, x**k, x**y  # k int64: promoted; x < 0, y fractional: NaN


def test_tensor_exponents_are_the_power_op_as_torch_computes_them():
    x, y, k = torch.randn(3, 5), torch.randn(3, 5), torch.randint(-3, 4, (5,))
    m = _Powers()
    g = from_torch(m, (x, y, k))
    assert "power" in {n.op for n in g}
    for got, want in zip(compile(g)([x, y, k]), m(x, y, k)):
        assert torch.allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)


class _Scaled(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / 8.0 + x / 3.0 + x / 2.0**-3


def test_division_by_a_power_of_two_is_a_scale_and_by_others_a_division():
    """x / 2^k == x * 2^-k for every float32 x, so it imports as smul (which the rules move into a
    matmul's weight); x / 3 does not round as x * (1/3) and stays a division."""
    ops = _check(_Scaled(), torch.randn(4, 5))
    assert "smul" in ops and "div" in ops
    g = from_torch(_Scaled(), (torch.randn(4, 5),))
    assert sorted(n.attrs["scalar"] for n in g if n.op == "smul") == [0.125, 8.0]


class _MaskAdded(nn.Module):
    """BEiT adds its bool attention mask to a float bias: torch promotes the mask to 0/1 floats."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + (x > 0) + x * torch.arange(4).reshape(1, 4)


def test_a_bool_or_int_operand_of_float_arithmetic_is_promoted_as_torch_does():
    _check(_MaskAdded(), torch.randn(3, 4))


class _PositionIds(nn.Module):
    """RoBERTa's position ids from input ids (int32 mask, int cumsum, int arithmetic), then embeddings."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(40, 8)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        mask = ids.ne(1).int()
        pos = (torch.cumsum(mask, dim=1).type_as(mask) + 0) * mask
        return self.emb(pos.long() + 1) * 2.0


def test_integer_position_arithmetic_is_computed_in_int64():
    import warnings

    from rewrite.pipeline import optimize

    ids = torch.tensor([[5, 7, 1, 1, 9, 3], [1, 2, 3, 4, 5, 6]])
    m = _PositionIds().eval()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = from_torch(m, (ids,))
    assert any("int32 values as int64" in str(w.message) for w in caught)
    assert {"add", "mul"} <= set(g.summary()) and g.dtype_of(next(iter(g.outputs))) == "float32"
    with torch.no_grad():
        ref = m(ids)
    for graph in (g, optimize(g, check=True).graph):  # the rules meet int64 adds and muls
        assert torch.equal(compile(graph)([ids])[0], ref)


class _IntTimesFloat(nn.Module):
    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return ids * 0.5 + (ids + 2) * 3 - ids * 2


def test_an_int_tensor_times_a_float_is_promoted_and_int_arithmetic_stays_int():
    ids = torch.tensor([[3, -4, 7], [0, 1, 9]])
    g = from_torch(_IntTimesFloat(), (ids,))
    assert torch.equal(compile(g)([ids])[0], _IntTimesFloat()(ids))


class _Repeat(nn.Module):
    def __init__(self, reps: tuple[int, ...]) -> None:
        super().__init__()
        self.reps = reps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.repeat(*self.reps) * 2.0


@pytest.mark.parametrize(
    "shape,reps",
    [
        ((2, 3), (1, 2)),
        ((2, 3), (3, 1)),
        ((2, 3), (2, 2)),
        ((3,), (2, 1, 2)),  # a leading count adds an axis
        ((1, 2, 3), (1, 4, 1)),
        ((2, 1, 3), (2, 1, 1)),
    ],
)
def test_repeat_tiles_copies_one_after_another(shape, reps):
    """TimeSformer repeats its class token once per frame; a leading count adds an axis."""
    ops = _check(_Repeat(reps), torch.randn(*shape))
    assert "expand" in ops


class _EmptyPieces(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rot, rest = x[..., :4], x[..., 4:]  # every channel rotated: ``rest`` is empty (Phi-3's rotary split)
        a, b, _ = torch.split(x, [4, 0, 0], dim=-1)
        return torch.cat([torch.sin(rot), rest], dim=-1) + torch.cat([a, b], dim=-1)


def test_empty_slices_and_split_pieces_vanish_in_cat():
    assert "concat" not in _check(_EmptyPieces(), torch.randn(2, 3, 4))


class _EmptyFolds(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + x[:, 2:].sum(1, keepdim=True)  # a sum over nothing: zeros, computed at import


class _ReturnsEmpty(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x * 2.0, x[:, 2:]


def test_an_empty_result_folds_or_is_refused_by_name():
    from rewrite.ir.errors import FrontendError

    _check(_EmptyFolds(), torch.randn(3, 2))
    with pytest.raises(FrontendError, match=r"empty tensor of shape \(3, 0\)"):
        from_torch(_ReturnsEmpty(), (torch.randn(3, 2),))


@pytest.mark.parametrize(
    "conv,shape",
    [
        (nn.Conv3d(3, 8, (2, 4, 4), (2, 4, 4)), (1, 3, 5, 16, 16)),  # tubelets: one 2-d convolution
        (nn.Conv3d(4, 6, 3, 1, 1), (2, 4, 5, 7, 6)),
        (nn.Conv3d(4, 8, 3, 2, (1, 0, 2), groups=2), (1, 4, 7, 9, 8)),
        (nn.Conv3d(4, 4, (3, 1, 1), 1, (1, 0, 0), (2, 1, 1), groups=4, bias=False), (1, 4, 8, 5, 5)),
    ],
)
def test_three_dimensional_convolutions_are_two_dimensional_ones_over_frames(conv, shape):
    torch.manual_seed(0)
    ops = _check(conv, torch.randn(shape))
    assert "conv2d" in ops


class _HashBuckets(nn.Module):
    """CANINE's hash embedding: (ids + 1) * prime % buckets, and other integer division of run-time ids."""

    def forward(self, ids: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        h = ((ids + 1) * 31337) % 16
        q = torch.div(ids - 5, 3, rounding_mode="floor") + torch.div(ids - 5, 3, rounding_mode="trunc")
        q = q + torch.fmod(ids - 4, -3) + torch.remainder(ids - 9, ids + 1)
        return (h + q).float() + torch.remainder(x, 0.75) + torch.fmod(x, -0.5)


def test_integer_division_and_remainders_of_run_time_values():
    ids = torch.arange(0, 24).reshape(2, 12)
    ops = _check(_HashBuckets(), ids, torch.randn(2, 12) * 4)
    assert {"mod", "idiv"} <= ops


class _Fold(nn.Module):
    """F.fold (col2im): overlapping patches summed back into an image (index_put with accumulate)."""

    def __init__(self, k: int, s: int) -> None:
        super().__init__()
        self.k, self.s = k, s

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cols = F.unfold(torch.sigmoid(x), self.k, stride=self.s)
        return F.fold(cols * 2.0, x.shape[-2:], self.k, stride=self.s)


class _Scatter(nn.Module):
    """Static updates: y[:, idx] = v (each position once), y[:, idx2] += v (positions repeated)."""

    def forward(self, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        y = x * 1.0
        y[:, torch.tensor([4, 0, -1])] = v
        z = torch.zeros_like(x)
        z.index_put_((torch.tensor([0, 1, 1]), torch.tensor([2, 2, 3])), v[0], accumulate=True)
        return y + z.index_put((torch.tensor([1, 1]),), x[:1] * 3.0, accumulate=True)


@pytest.mark.parametrize("k,s", [(2, 2), (3, 1), (3, 2)])
def test_fold_sums_overlapping_patches(k, s):
    assert "index_select" in _check(_Fold(k, s), torch.randn(1, 3, 7, 7))


def test_index_put_of_constant_positions():
    _check(_Scatter(), torch.randn(2, 6), torch.randn(2, 3))


class _ScatterTwice(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.index_put((torch.tensor([1, 1]),), torch.ones(2, 4) * 2.0)


def test_index_put_writing_a_position_twice_is_refused():
    from rewrite.ir.errors import FrontendError

    with pytest.raises(FrontendError, match="writing one position twice"):
        from_torch(_ScatterTwice(), (torch.randn(3, 4),))


class _TopK(nn.Module):
    def __init__(self, k: int, dim: int, largest: bool) -> None:
        super().__init__()
        self.k, self.dim, self.largest = k, dim, largest

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        v, i = torch.topk(torch.softmax(x, dim=-1) if self.k == 2 else x, self.k, dim=self.dim, largest=self.largest)
        return v * 2.0, i


@pytest.mark.parametrize("k,dim,largest", [(3, -1, True), (6, 1, True), (4, 1, False), (6, 1, False), (2, 0, True)])
def test_topk_ranks_nan_highest_and_ties_by_position(k, dim, largest):
    """A mixture-of-experts router's top-2, and rows with NaN, inf and ties: the values as torch's; each index
    points at its value, none twice (torch leaves the order of equal values unspecified; eqsat's is by
    position)."""
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([[3.0, nan, 1.0, 3.0, -inf, 2.0], [inf, -1.0, nan, nan, inf, 0.5], [1.0] * 6])
    m = _TopK(k, dim, largest)
    rv, _ = m(x)
    g = from_torch(m, (x,))
    for v, i in (g.run([x]), compile(g)([x])):
        assert torch.equal(v.isnan(), rv.isnan()) and torch.equal(v.nan_to_num(7.0), rv.nan_to_num(7.0))
        src = torch.softmax(x, dim=-1) if k == 2 else x
        picked = src.gather(dim, i) * 2.0
        assert torch.equal(picked.nan_to_num(7.0), v.nan_to_num(7.0))
        assert all(len(set(row.tolist())) == k for row in i.movedim(dim, -1).reshape(-1, k))


class _LastTokenHead(nn.Module):
    """transformers' *ForSequenceClassification on a decoder: the last non-pad token, found by an int64
    argmax, picked per row by indexing with a constant arange and that run-time position."""

    def forward(self, ids: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
        non_pad = (ids != 0).long()
        token = torch.arange(ids.shape[-1]) * non_pad
        last = token.argmax(-1)
        counts = non_pad.sum(-1) + non_pad.amax(-1) - non_pad.amin(-1) + logits[:, -1].argmin(-1)
        return logits[torch.arange(ids.shape[0]), last] * 2.0 + counts[:, None]


def test_int64_reductions_argmax_and_run_time_row_indexing():
    ids = torch.tensor([[5, 3, 9, 0, 0], [1, 0, 7, 8, 2], [0, 0, 0, 0, 0]])
    ops = _check(_LastTokenHead(), ids, torch.randn(3, 5, 4))
    assert {"reduce_sum", "reduce_max", "index_select"} <= ops


class _NegativeRunTimeIndex(nn.Module):
    def forward(self, x: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
        return x[torch.tensor([[0], [1]]), :, i] + x[:, 1, i][:, :, None]  # non-adjacent: broadcast dims first


def test_run_time_indices_count_negative_positions_from_the_end():
    _check(_NegativeRunTimeIndex(), torch.randn(2, 3, 5), torch.tensor([-1, 0, 3, -5]))


class _SliceScatter(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = torch.slice_scatter(x, torch.sigmoid(x[:, :1]), dim=1, start=0, end=1)  # Funnel's first token
        b = torch.slice_scatter(x, x[:, 1:5] * 2.0, dim=1, start=2, end=6)
        c = torch.slice_scatter(x, -x[..., ::2], dim=-1, start=0, step=2)
        return a + b + c


def test_slice_scatter_writes_a_slice_back():
    _check(_SliceScatter(), torch.randn(2, 7, 6))


class _Trig(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, ...]:
        u = torch.tanh(x)  # |u| < 1
        inverse = torch.asin(u) + torch.acos(u) * torch.atanh(u) + torch.acosh(torch.cosh(x) + 1.0)
        direct = torch.tan(x) + torch.atan(x) - torch.sinh(x) * torch.cosh(x) + x.asinh()
        outside = torch.asin(x * 2.0) + torch.acosh(x)  # NaN outside the domains, as torch
        return inverse, direct, outside, torch.atan2(x, y), torch.atan2(k, y)  # y and k broadcast; k is int64


def test_trig_and_hyperbolic_functions_and_atan2():
    """aten.tan / asin / ... / atanh are the registry ops of their names, aten.atan2 a broadcasting atan2 (an int64
    operand cast first, as torch promotes it); NaN outside the domain where torch has it."""
    g = torch.Generator().manual_seed(0)
    xs = (torch.randn(2, 3, 4, generator=g), torch.randn(4, generator=g), torch.randint(-3, 4, (3, 1)))
    m = _Trig().eval()
    with torch.no_grad():
        refs = m(*xs)
    graph = from_torch(m, xs)
    assert {"tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "atan2"} <= set(graph.summary())
    assert torch.isnan(refs[2]).any()
    for outs in (graph.run(list(xs)), compile(graph)(list(xs))):
        for out, ref in zip(outs, refs, strict=True):
            assert out.shape == ref.shape and out.dtype == ref.dtype
            assert torch.allclose(out, ref, rtol=1e-5, atol=1e-5, equal_nan=True), (out - ref).abs().nan_to_num().max()
