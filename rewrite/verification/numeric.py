"""Numerical checks: one tolerance rule for every comparison eqsat makes.

Two tensors *match* when they have the same shape, the same non-finite pattern
(NaN where the other has NaN, +inf where +inf, -inf where -inf) and, on the
positions finite in both, ``max|a - b| <= rtol * max(1, max|a|)`` with the
maximum over ``a``'s finite values.  The same rule checks an optimized graph
against its original (``verify``), a compiled graph against PyTorch, and a
rule's two sides in the rule checker.  The one other measure, ``normwise_rel_err``
(``max|got - ref| / max|ref|``), is what benchmarks report and kernel tests bound.

    >>> import torch
    >>> x = torch.tensor([1.0, float("inf"), float("nan")])
    >>> compare(x, x.clone()).close
    True
    >>> compare(x, torch.tensor([1.0, float("-inf"), float("nan")])).close
    False
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Real

import torch

from rewrite.ir.errors import UsageError
from rewrite.ir.graph import Graph, expect_graph
from rewrite.ir.target import FP32_REL_TOL, HALF_REL_TOL

REL_TOL = FP32_REL_TOL  # float32 graphs: the tolerance of verify() (and of exact targets' compiled-vs-PyTorch checks)


@dataclass(frozen=True)
class Comparison:
    close: bool
    abs_err: float  # max |a - b| over positions finite in both (inf: shapes or non-finite patterns differ)
    rel_err: float  # abs_err / max(1, max |a| over a's finite values)
    why: str = ""  # what differs, when not close


def compare(a: torch.Tensor, b: torch.Tensor, rtol: float = REL_TOL) -> Comparison:
    """Compare ``b`` against the reference ``a`` (see the module docstring)."""
    if tuple(a.shape) != tuple(b.shape):
        return Comparison(False, math.inf, math.inf, f"shape {tuple(b.shape)} != {tuple(a.shape)}")
    if a.numel() == 0:
        return Comparison(True, 0.0, 0.0)
    if a.is_floating_point() != b.is_floating_point() or (not a.is_floating_point() and a.dtype != b.dtype):
        return Comparison(False, math.inf, math.inf, f"dtype {b.dtype} != {a.dtype}")
    if not a.is_floating_point():  # indices and masks: exact
        bad = int((a != b).sum())
        return Comparison(bad == 0, float(bad > 0), float(bad > 0), f"{bad} {a.dtype} value(s) differ" if bad else "")
    a64, b64 = a.detach().to(torch.float64), b.detach().to(torch.float64)
    fa, fb = torch.isfinite(a64), torch.isfinite(b64)
    same_pattern = bool(
        torch.equal(torch.isnan(a64), torch.isnan(b64))
        and torch.equal(a64 == math.inf, b64 == math.inf)
        and torch.equal(a64 == -math.inf, b64 == -math.inf)
    )
    scale = max(1.0, a64[fa].abs().max().item() if bool(fa.any()) else 1.0)
    both = fa & fb
    err = (a64[both] - b64[both]).abs().max().item() if bool(both.any()) else 0.0
    if not same_pattern:
        bad = int(((torch.isnan(a64) != torch.isnan(b64)) | (fa != fb) | (~fa & ~fb & (a64 != b64))).sum())
        return Comparison(False, math.inf, math.inf, f"non-finite values differ at {bad} position(s)")
    close = err <= rtol * scale
    return Comparison(close, err, err / scale, "" if close else f"max relative error {err / scale:.3g} > {rtol:g}")


def normwise_rel_err(got: torch.Tensor, ref: torch.Tensor) -> float:
    """``max|got - ref| / max|ref|``, the norm-wise relative error in the max norm (``max|got - ref|`` where
    ``ref`` is all zeros; inf where the shapes differ; NaN where either holds one), in ``ref``'s precision.

    Not ``compare``'s tolerance rule, which scales by ``max(1, max|ref|)`` so that near-zero outputs are held
    to an absolute bound: this one is relative all the way down, for benchmarks and kernel tests whose
    references are of order one or larger.

        >>> normwise_rel_err(torch.tensor([1.01, -2.0]), torch.tensor([1.0, -2.0]))  # doctest: +ELLIPSIS
        0.00499...
    """
    if tuple(got.shape) != tuple(ref.shape):
        return math.inf
    if ref.numel() == 0:
        return 0.0
    dtype = ref.dtype if ref.is_floating_point() else torch.float64  # ints and bools subtract as numbers
    r = ref.detach().to(dtype)
    diff = float((got.detach().to(ref.device, dtype) - r).abs().max())
    scale = float(r.abs().max())
    return diff / scale if scale > 0 else diff


def max_normwise_rel_err(gots: Sequence[torch.Tensor], refs: Sequence[torch.Tensor]) -> float:
    """The largest ``normwise_rel_err`` over paired outputs; a NaN wins (``max`` would keep one only when
    it came first)."""
    worst = 0.0
    for g, r in zip(gots, refs, strict=True):
        err = normwise_rel_err(g, r)
        if math.isnan(err):
            return err
        worst = max(worst, err)
    return worst


def compare_all(refs: Sequence[torch.Tensor], outs: Sequence[torch.Tensor], rtol: float = REL_TOL) -> Comparison:
    """The worst comparison over paired outputs (a count mismatch is not close)."""
    if len(refs) != len(outs):
        return Comparison(False, math.inf, math.inf, f"{len(outs)} outputs, expected {len(refs)}")
    worst = Comparison(True, 0.0, 0.0)
    for i, (a, b) in enumerate(zip(refs, outs)):
        c = compare(a, b, rtol)
        if not c.close and worst.close:
            worst = Comparison(False, c.abs_err, c.rel_err, f"output {i}: {c.why}")
        elif c.close == worst.close and c.rel_err > worst.rel_err:
            worst = Comparison(worst.close, max(worst.abs_err, c.abs_err), c.rel_err, worst.why)
    return worst


@dataclass(frozen=True)
class VerifyResult:
    ok: bool
    max_abs_err: float
    max_rel_err: float
    trials: int
    why: str = ""


def graph_tolerance(graph: Graph) -> float:
    """The relative tolerance ``graph``'s results are compared to: float32's (``REL_TOL``), or where the graph
    rounds values to a half type, the largest such type's (``HALF_REL_TOL``)."""
    return max([REL_TOL, *(HALF_REL_TOL[d] for d in graph.dtypes() if d in HALF_REL_TOL)])


def verify(original: Graph, optimized: Graph, trials: int = 2, rtol: float | None = None) -> VerifyResult:
    """Run both graphs on the same random inputs (``trials`` seeds) and compare every output, to ``rtol``
    (by default ``graph_tolerance(original)``)."""
    expect_graph(original, "verify", "original")
    expect_graph(optimized, "verify", "optimized")
    if rtol is None:
        rtol = graph_tolerance(original)
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise UsageError(f"verify: trials must be an int >= 1 (random input seeds), got {trials!r}")
    if isinstance(rtol, bool) or not isinstance(rtol, Real) or not rtol > 0:
        raise UsageError(f"verify: rtol must be a number > 0, got {rtol!r}; the default is {REL_TOL:g}")
    worst = Comparison(True, 0.0, 0.0)
    for seed in range(trials):
        inputs = original.random_inputs(seed)
        c = compare_all(original.run(inputs), optimized.run(inputs), rtol)
        if not c.close:
            return VerifyResult(False, c.abs_err, c.rel_err, seed + 1, c.why)
        if c.rel_err >= worst.rel_err:
            worst = c
    return VerifyResult(True, worst.abs_err, worst.rel_err, trials)
