"""Control flow with static shapes: ``If``, ``Loop`` and ``Scan``, their bodies imported in place.

eqsat's graphs have no control flow, so the importer runs it while it imports:

* ``If`` on a condition known at import time (shape arithmetic, the usual case in exported models) imports
  the branch taken; on a run-time condition it imports both branches (they must agree on each output's
  shape and dtype) and picks between their results with ``where``;
* ``Loop`` is unrolled when its trip count and condition are known at import time, one body per
  iteration (the body's condition output has to fold too); a condition computed from run-time values is
  refused, naming the iteration;
* ``Scan`` (opset 9 on) is unrolled along its scan axis, either direction.

A body reads the enclosing graph's names; its own names stay inside it (``Ctx.subgraph``).  A node in a
body that eqsat cannot import is reported with the enclosing node, the branch or iteration, and its own
name and op type.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx

from rewrite.frontends.onnx.context import Ctx, Refuse, Tensor, handles, norm_axes, only_attrs, opt_input
from rewrite.ir.dtypes import BOOL

MAX_ITERATIONS = 4096  # a Loop or Scan unrolled into more bodies than this is refused (the graph would explode)


def _flag(c: Ctx, t: Tensor, what: str) -> bool | None:
    """The value of a one-element condition known at import time, or None when it is computed at run time."""
    if c.shape(t) and math.prod(c.shape(t)) != 1:
        raise Refuse(f"{what} has shape {c.shape(t)}; it must hold one value")
    if isinstance(t, np.ndarray):
        return bool(t.reshape(-1)[0])
    if c.dtype(t) != BOOL:
        raise Refuse(f"{what} is {c.dtype(t)}; it must be bool")
    return None


@handles("If")
def _if(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"then_branch", "else_branch"})
    cond = c.env[n.input[0]]
    origin = c.origin
    known = _flag(c, cond, "the condition")
    if known is not None:
        taken = "then" if known else "else"
        return c.subgraph(a[f"{taken}_branch"], [], f"{origin}, {taken} branch: ")
    then = c.subgraph(a["then_branch"], [], f"{origin}, then branch: ")
    other = c.subgraph(a["else_branch"], [], f"{origin}, else branch: ")
    if len(then) != len(other):
        raise Refuse(f"the then branch gives {len(then)} outputs, the else branch {len(other)}")
    outs: list[Tensor] = []
    for k, (x, y) in enumerate(zip(then, other)):
        if c.shape(x) != c.shape(y) or c.dtype(x) != c.dtype(y):
            raise Refuse(
                f"the condition is computed at run time, so both branches are imported and their outputs must "
                f"agree; output {k} is {c.dtype(x)}{list(c.shape(x))} in one and {c.dtype(y)}{list(c.shape(y))} "
                "in the other"
            )
        if isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and np.array_equal(x, y):
            outs.append(x)
            continue
        pick = c.reshape(cond, (1,) * len(c.shape(x)))
        outs.append(c.add("where", [c.value(pick), c.value(x), c.value(y)]))
    return outs


def _stack(c: Ctx, parts: list[Tensor], axis: int) -> Tensor:
    """``parts`` (one shape) stacked along a new ``axis``: each with a size-1 axis there, concatenated."""
    shape = c.shape(parts[0])
    if any(c.shape(p) != shape for p in parts):
        raise Refuse(f"the iterations' scan outputs differ in shape: {sorted({c.shape(p) for p in parts})}")
    one = shape[:axis] + (1,) + shape[axis:]
    return c.concat([c.reshape(p, one) for p in parts], axis)


def _take(c: Ctx, x: Tensor, axis: int, i: int) -> Tensor:
    """Position ``i`` of ``x`` along ``axis``, that axis dropped."""
    shape = c.shape(x)
    if isinstance(x, np.ndarray):
        return np.ascontiguousarray(np.take(x, i, axis=axis))
    if shape[axis] != 1:
        x = c.add("slice", [x], axis=axis, start=i, end=i + 1)
    return c.reshape(x, shape[:axis] + shape[axis + 1 :])


@handles("Loop")
def _loop(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"body"})
    body: onnx.GraphProto = a["body"]
    m_name, cond_name = opt_input(n, 0), opt_input(n, 1)
    trip = int(c.const(m_name, "the trip count M").reshape(-1)[0]) if m_name else None
    cond = True
    if cond_name:
        known = _flag(c, c.env[cond_name], "the loop condition")
        if known is None:
            raise Refuse(
                "the loop condition is computed at run time; eqsat unrolls a Loop whose trip count and condition "
                "are known at import time",
                needs=cond_name,
            )
        cond = known
    if trip is None and not cond_name:
        raise Refuse("the Loop has neither a trip count nor a condition: it never ends")
    carried = [c.env[i] for i in n.input[2:]]
    nscan = len(body.output) - 1 - len(carried)
    if nscan < 0 or len(body.input) != 2 + len(carried):
        raise Refuse(
            f"the body takes {len(body.input)} inputs and gives {len(body.output)} outputs for {len(carried)} "
            "loop-carried values"
        )
    origin = c.origin
    scans: list[list[Tensor]] = [[] for _ in range(nscan)]
    i = 0
    while (trip is None or i < trip) and cond:
        if i == MAX_ITERATIONS:
            raise Refuse(f"the Loop runs more than {MAX_ITERATIONS} iterations; eqsat unrolls at most that many")
        outs = c.subgraph(body, [np.array(i, np.int64), np.array(cond), *carried], f"{origin}, iteration {i}: ")
        known = _flag(c, outs[0], f"the body's condition output (iteration {i})")
        if known is None:
            raise Refuse(
                f"the body's condition output is computed from run-time values (iteration {i}); eqsat unrolls a "
                "Loop whose condition is known at import time"
            )
        cond, carried = known, list(outs[1 : 1 + len(carried)])
        for k, t in enumerate(outs[1 + len(carried) :]):
            scans[k].append(t)
        i += 1
    if nscan and not i:
        raise Refuse("the Loop runs no iteration, so its scan outputs would be empty (eqsat has no empty tensors)")
    return [*carried, *(_stack(c, parts, 0) for parts in scans)]


@handles("Scan")
def _scan(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    if c.opset < 9:
        raise Refuse("Scan before opset 9 (a batch axis and sequence_lens) is not supported")
    only_attrs(
        a,
        {
            "body",
            "num_scan_inputs",
            "scan_input_axes",
            "scan_input_directions",
            "scan_output_axes",
            "scan_output_directions",
        },
    )
    body: onnx.GraphProto = a["body"]
    m = int(a["num_scan_inputs"])
    ins = [c.env[i] for i in n.input]
    nstate = len(ins) - m
    if nstate < 0 or len(body.input) != len(ins):
        raise Refuse(f"{len(ins)} inputs for {m} scan inputs and a body of {len(body.input)} inputs")
    states, xs = ins[:nstate], ins[nstate:]
    nout = len(body.output) - nstate
    in_dirs = list(a.get("scan_input_directions", [0] * m))
    out_dirs = list(a.get("scan_output_directions", [0] * nout))
    in_axes = [norm_axes([ax], len(c.shape(x)))[0] for ax, x in zip(a.get("scan_input_axes", [0] * m), xs)]
    lengths = {c.shape(x)[ax] for x, ax in zip(xs, in_axes)}
    if len(lengths) != 1:
        raise Refuse(f"the scan inputs have different lengths along their scan axes: {sorted(lengths)}")
    steps = lengths.pop()
    if not 0 < steps <= MAX_ITERATIONS:
        raise Refuse(f"a scan of {steps} steps; eqsat unrolls 1 to {MAX_ITERATIONS}")
    origin = c.origin
    parts: list[list[Tensor]] = [[] for _ in range(nout)]
    for t in range(steps):
        slices = [_take(c, x, ax, t if d == 0 else steps - 1 - t) for x, ax, d in zip(xs, in_axes, in_dirs)]
        outs = c.subgraph(body, [*states, *slices], f"{origin}, step {t}: ")
        states = outs[:nstate]
        for k, o in enumerate(outs[nstate:]):
            parts[k].append(o)
    stacked: list[Tensor] = []
    for k, ps in enumerate(parts):
        ps = ps if out_dirs[k] == 0 else ps[::-1]
        axis = norm_axes([a.get("scan_output_axes", [0] * nout)[k]], len(c.shape(ps[0])) + 1)[0]
        stacked.append(_stack(c, ps, axis))
    return [*states, *stacked]


__all__ = ["MAX_ITERATIONS"]
