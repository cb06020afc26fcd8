"""Losses: ``NegativeLogLikelihoodLoss`` and ``SoftmaxCrossEntropyLoss`` (log-softmax, then the former),
as the ONNX reference computes them.

The class picked by each target is found by comparing the targets with an iota over the class axis (a
select, then a sum over that axis), not by a gather: a target equal to ``ignore_index`` may lie outside
the classes, and then it matches none.  Weights follow the targets the same way.  ``mean`` divides by the
summed weights of the targets not ignored (their count without ``weight``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx

from rewrite.frontends.onnx.context import Ctx, Refuse, Tensor, handles, only_attrs, opt_input
from rewrite.ir.dtypes import FLOAT32, INT64
from rewrite.ir.graph import Value

_REDUCTIONS = ("none", "sum", "mean")


def _log_softmax(c: Ctx, x: Value) -> Value:
    """log(softmax(x)) over axis 1, max-shifted: (x - m) - log(sum(exp(x - m)))."""
    z = c.add("sub", [x, c.add("reduce_max", [x], axes=(1,), keepdim=1)])
    return c.add("sub", [z, c.add("log", [c.add("reduce_sum", [c.add("exp", [z])], axes=(1,), keepdim=1)])])


def _nll(c: Ctx, logp: Value, target: Tensor, weight: Tensor | None, a: dict[str, Any]) -> Value:
    """-logp[n, target[n, ...], ...] times the target's weight, reduced as ``reduction`` says."""
    red = a.get("reduction", "mean")
    red = red.decode() if isinstance(red, bytes) else str(red)
    if red not in _REDUCTIONS:
        raise Refuse(f"reduction '{red}' (none, sum or mean)")
    xs, ts = c.shape(logp), c.shape(target)
    if len(xs) < 2 or ts != xs[:1] + xs[2:]:
        raise Refuse(f"input of shape {xs} and target of shape {ts}: the target must be the input without dim 1")
    if c.dtype(logp) != FLOAT32 or c.dtype(target) != INT64:
        raise Refuse(f"input {c.dtype(logp)} and target {c.dtype(target)} (float32 and int64)")
    classes, r = xs[1], len(xs)
    ones = (1,) * r
    tv = c.value(c.reshape(target, ts[:1] + (1,) + ts[1:]))
    iota = np.arange(classes, dtype=np.int64).reshape([classes if i == 1 else 1 for i in range(r)])
    hit = c.add("eq", [tv, c.value(iota)])
    zero = c.value(np.zeros(ones, np.float32))
    picked = c.add("reduce_sum", [c.add("where", [hit, logp, zero])], axes=(1,), keepdim=0)
    loss = c.add("smul", [picked], scalar=-1.0)
    w: Value | None = None
    if weight is not None:
        if c.shape(weight) != (classes,):
            raise Refuse(f"weight of shape {c.shape(weight)} must be [{classes}]")
        wrow = c.value(c.reshape(weight, [classes if i == 1 else 1 for i in range(r)]))
        w = c.add("reduce_sum", [c.add("where", [hit, c.add("expand", [wrow], shape=xs), zero])], axes=(1,))
    if "ignore_index" in a:
        kept = c.add("ne", [c.value(target), c.value(np.full((1,) * len(ts), int(a["ignore_index"]), np.int64))])
        w = c.add(
            "where",
            [
                kept,
                w if w is not None else c.value(np.ones((1,) * len(ts), np.float32)),
                c.value(np.zeros((1,) * len(ts), np.float32)),
            ],
        )
    if w is not None:
        if c.shape(w) != ts:
            w = c.add("expand", [w], shape=ts)
        loss = c.add("mul", [loss, w])
    if red == "none":
        return loss
    every = tuple(range(len(ts)))
    total = c.add("reduce_sum", [loss], axes=every, keepdim=0)
    if red == "sum":
        return total
    if w is None:
        return c.add("smul", [total], scalar=1.0 / math.prod(ts))
    return c.add("div", [total, c.add("reduce_sum", [w], axes=every, keepdim=0)])


@handles("NegativeLogLikelihoodLoss")
def _nll_loss(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"ignore_index", "reduction"})
    weight = c.env[n.input[2]] if opt_input(n, 2) else None
    return [_nll(c, c.value(c.env[n.input[0]]), c.env[n.input[1]], weight, a)]


@handles("SoftmaxCrossEntropyLoss")
def _softmax_cross_entropy(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """The loss, and the log-probabilities as the second output."""
    only_attrs(a, {"ignore_index", "reduction"})
    scores = c.value(c.env[n.input[0]])
    if c.dtype(scores) != FLOAT32 or len(c.shape(scores)) < 2:
        raise Refuse(f"scores {c.dtype(scores)} of shape {c.shape(scores)} (float32, at least 2-d)")
    logp = _log_softmax(c, scores)
    weight = c.env[n.input[2]] if opt_input(n, 2) else None
    return [_nll(c, logp, c.env[n.input[1]], weight, a), logp]


__all__: list[str] = []
