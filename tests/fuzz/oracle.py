"""The differential oracle: one graph through the whole pipeline, every result held against float64.

For a graph and fresh inputs (some with inf / NaN):

* the reference is the original graph run in float64 (weights and inputs cast up);
* the candidates are the optimized graph run by ``Graph.run`` (float32), and the original and the
  optimized graph compiled to LLVM kernels;
* a candidate is **wrong** when it does not match the reference (``verify.numeric.compare``: same
  non-finite pattern, finite values within ``RTOL``) although the original float32 graph does; where
  float32 itself cannot match float64 (an overflow, a cancellation), the candidate is held against
  the original float32 graph instead, and only a mismatch there is wrong (``imprecise`` otherwise);
* a candidate whose only difference is NaN where the reference has ±inf (or back) is ``imprecise``
  too: which infinities meet in a sum depends on its order; where the inputs hold an infinity, NaN
  against any value is, since a later op (``maximum``, ``where``) carries the order on (see
  ``_inf_order_only``).

Any exception is a **crash** (with its traceback), including a ``VerificationError`` from
``optimize`` itself (its own check never fires on a correct result).

    >>> from tests.fuzz.gen import random_graph
    >>> check(random_graph(0), seed=0).kind
    'ok'
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from functools import cache

import torch

from rewrite.egraph.limits import Limits
from rewrite.ir.graph import Graph
from rewrite.pipeline import compile, optimize
from rewrite.rulelang.loader import load_rules
from rewrite.rulelang.syntax import Rule
from rewrite.verification.numeric import Comparison, compare_all
from tests.fuzz.gen import random_inputs

RTOL = 1e-3  # float32 against float64 on small random graphs; a wrong rewrite is off by O(1)
FALLBACK_RTOL = 1e-2  # against the original float32 graph, where float32 cannot match float64
LIMITS = Limits(iterations=5, nodes=4000, seconds=5)
ILP_SECONDS = 3.0


@dataclass
class Outcome:
    kind: str  # ok | wrong | crash | imprecise
    detail: str = ""
    ops_before: int = 0
    ops_after: int = 0
    rules_fired: dict[str, int] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.kind in ("wrong", "crash")


@cache
def all_rules() -> tuple[Rule, ...]:
    return tuple(load_rules())


def as_float64(graph: Graph) -> Graph:
    """The same graph with float64 weights (``Graph.run`` computes in its operands' dtype)."""
    return Graph(
        dict(graph.nodes),
        {k: w.double() if w.is_floating_point() else w for k, w in graph.weights.items()},
        list(graph.outputs),
        graph.name,
    )


def _inf_order_only(refs: list[torch.Tensor], outs: list[torch.Tensor], infinite_inputs: bool) -> int:
    """Positions where one side is NaN and the other is not, if that is the only difference (else 0).

    A sum holding both +inf and -inf is NaN, but which infinities meet depends on the order of the
    additions: reassociating a matmul chain or ``(x+x+x)-(x+x)`` turns an inf into a NaN or back,
    as a differently blocked BLAS does.  Like rounding, that is float order, not a wrong rewrite.  A
    later op carries it on: ``maximum(NaN, x)`` is NaN but ``maximum(-inf, x)`` is ``x``, so with an
    infinity among the inputs (``infinite_inputs``) NaN against any value is order; without one, only
    NaN against ±inf is.  Finite against ±inf, +inf against -inf, or finite values that differ still
    are wrong, and inputs without infinities check every NaN.
    """
    n = 0
    for a, b in zip(refs, outs):
        if a.shape != b.shape:
            return 0
        a64, b64 = a.double(), b.double()
        one_nan = a64.isnan() != b64.isnan()
        if not infinite_inputs:
            one_nan &= a64.isinf() | b64.isinf()
        if not one_nan.any():
            continue
        rest = ~one_nan
        fa, fb = torch.isfinite(a64[rest]), torch.isfinite(b64[rest])
        if not torch.equal(fa, fb):
            return 0
        signed = (a64[rest].isinf() & b64[rest].isinf() & (a64[rest] != b64[rest])).any()
        if bool(signed) or not compare_all([a64[rest][fa]], [b64[rest][fb]], RTOL).close:
            return 0
        n += int(one_nan.sum())
    return n


def _judge(
    name: str,
    ref: list[torch.Tensor],
    base: Comparison,
    f32: list[torch.Tensor],
    out: list[torch.Tensor],
    infinite_inputs: bool,
) -> tuple[str, str] | None:
    """None when ``out`` matches; else ("wrong" | "imprecise", why)."""
    c = compare_all(ref, out, RTOL)
    if c.close:
        return None
    if n := _inf_order_only(ref, out, infinite_inputs):
        return "imprecise", f"{name}: NaN against another value at {n} position(s) (order of infinite sums)"
    if base.close:
        return "wrong", f"{name}: {c.why}"
    c32 = compare_all(f32, out, FALLBACK_RTOL)  # float32 cannot match float64 here: match the original's float32
    return None if c32.close else ("wrong", f"{name}: differs from the original's float32 result too: {c32.why}")


def check(graph: Graph, seed: int, rules: tuple[Rule, ...] | None = None, compiled: bool = True) -> Outcome:
    """Optimize ``graph`` with the full rule set, compile both, compare everything on fresh inputs."""
    try:
        inputs = random_inputs(graph, seed)
        with torch.no_grad():
            ref = as_float64(graph).run(inputs)
            x32 = {k: v.float() if v.is_floating_point() else v for k, v in inputs.items()}
            f32 = graph.run(x32)
        base = compare_all(ref, f32, RTOL)
        res = optimize(graph, rules=list(rules or all_rules()), limits=LIMITS, ilp_seconds=ILP_SECONDS)
        outcome = Outcome("ok", "", graph.op_count(), res.graph.op_count(), dict(res.stats.saturation.rules_fired))
        with torch.no_grad():
            candidates = [("optimized graph", res.graph.run(x32))]
            if compiled:
                # the original on one thread, the optimized graph on two: serial and parallel kernels both
                # checked whatever EQSAT_THREADS says (the test workers set 1: tests/conftest.py)
                candidates.append(("compiled original", compile(graph, threads=1)(x32)))
                candidates.append(("compiled optimized", compile(res.graph, threads=2)(x32)))
        infinite = any(v.is_floating_point() and bool(v.isinf().any()) for v in inputs.values())
        verdicts = [v for name, out in candidates if (v := _judge(name, ref, base, f32, out, infinite))]
        wrong = [why for kind, why in verdicts if kind == "wrong"]
        if wrong:
            outcome.kind, outcome.detail = "wrong", "; ".join(wrong)
        elif verdicts:
            outcome.kind, outcome.detail = "imprecise", "; ".join(why for _, why in verdicts)
        elif not base.close:
            outcome.kind, outcome.detail = "imprecise", f"float32 original vs float64: {base.why}"
        return outcome
    except Exception as e:  # a crash of any kind is what the fuzzer reports
        tb = traceback.format_exc(limit=8)
        return Outcome("crash", f"{type(e).__name__}: {e}\n{tb}")
