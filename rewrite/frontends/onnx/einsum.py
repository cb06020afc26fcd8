"""``Einsum`` of one or two run-time operands as transposes, reshapes, reductions and one batched matmul.

Letters only in one operand and not in the output are summed first; the two operands are then
laid out as [batch, free, contracted] and [batch, contracted, free], reshaped to 3-d, multiplied,
and the product is reshaped and transposed to the output's order.  Repeated letters within an
operand (diagonals) and broadcasting of batch letters are refused.  Constants fold before this
(``importer._fold_by_reference``).
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import onnx

from rewrite.frontends.onnx.context import Ctx, Refuse, Tensor, handles, only_attrs
from rewrite.ir.dtypes import FLOAT32
from rewrite.ir.graph import Value


def _parse(eq: str, ranks: list[int]) -> tuple[list[str], str]:
    """The operands' letters (ellipses spelled out as upper-case letters) and the output's."""
    eq = eq.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise Refuse(f"equation '{eq}' has {len(terms)} operands, the node {len(ranks)}")
    ell = max((r - len(t.replace("...", "")) for t, r in zip(terms, ranks) if "..." in t), default=0)
    fill = "".join(chr(ord("A") + i) for i in range(ell))
    spelled = []
    for t, r in zip(terms, ranks):
        n = r - len(t.replace("...", ""))
        s = t.replace("...", fill[ell - n :] if n else "")
        if not re.fullmatch(r"[a-zA-Z]*", s) or len(s) != r:
            raise Refuse(f"operand '{t}' of equation '{eq}' does not match its rank {r}")
        if len(set(s)) != len(s):
            raise Refuse(f"operand '{t}' repeats a letter (a diagonal), which is not supported")
        spelled.append(s)
    if not arrow:  # implicit output: the letters seen once, in order, after the ellipsis
        counts = "".join(spelled)
        out = fill + "".join(sorted(ch for ch in set(counts) if counts.count(ch) == 1 and ch.islower()))
    else:
        out = out.replace("...", fill)
    return spelled, out


def _sum_out(c: Ctx, v: Value, letters: str, keep: set[str]) -> tuple[Value, str]:
    """``v`` summed over its letters not in ``keep``."""
    axes = tuple(i for i, ch in enumerate(letters) if ch not in keep)
    if not axes:
        return v, letters
    return c.add("reduce_sum", [v], axes=axes, keepdim=0), "".join(ch for ch in letters if ch in keep)


def _permute(c: Ctx, v: Value, letters: str, order: str) -> Value:
    perm = tuple(letters.index(ch) for ch in order)
    return v if perm == tuple(range(len(perm))) else c.add("transpose", [v], perm=perm)


@handles("Einsum")
def _einsum(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"equation"})
    given = [c.env[i] for i in n.input]
    arrays = [t for t in given if isinstance(t, np.ndarray)]
    if len(arrays) == len(given):  # parameters only (rotary tables): folds
        return [np.asarray(np.einsum(str(a["equation"]), *arrays))]
    ts = [c.value(t) for t in given]
    if not 1 <= len(ts) <= 2:
        raise Refuse(f"{len(ts)} operands: eqsat's Einsum takes one or two")
    if any(c.dtype(t) != FLOAT32 for t in ts):
        raise Refuse("operands must be float32")
    shapes = [c.shape(t) for t in ts]
    terms, out = _parse(str(a["equation"]), [len(s) for s in shapes])
    size: dict[str, int] = {}
    for letters, s in zip(terms, shapes):
        for ch, d in zip(letters, s):
            if size.setdefault(ch, d) != d:
                raise Refuse(f"letter '{ch}' has sizes {size[ch]} and {d} (broadcasting is not supported)")
    if set(out) - set(size) or len(set(out)) != len(out):
        raise Refuse(f"output '{out}' names a letter twice or one no operand has")
    if not out:
        raise Refuse("a 0-d (scalar) output is not supported")
    if len(ts) == 1:
        v, letters = _sum_out(c, ts[0], terms[0], set(out))
        return [_permute(c, v, letters, out)]
    (x, lx), (y, ly) = (_sum_out(c, t, s, set(out) | set(o)) for t, s, o in zip(ts, terms, terms[::-1]))
    batch = [ch for ch in out if ch in lx and ch in ly]
    contract = [ch for ch in lx if ch in ly and ch not in out]
    free_x = [ch for ch in lx if ch not in ly]
    free_y = [ch for ch in ly if ch not in lx]
    nb, m, k, nn = (math.prod(size[ch] for ch in g) for g in (batch, free_x, contract, free_y))
    xm = c.reshape(_permute(c, x, lx, "".join(batch + free_x + contract)), (nb, m, k))
    ym = c.reshape(_permute(c, y, ly, "".join(batch + contract + free_y)), (nb, k, nn))
    prod = c.add("matmul", [c.value(xm), c.value(ym)])
    full = "".join(batch + free_x + free_y)
    shaped = c.value(c.reshape(prod, [size[ch] for ch in full]))
    return [_permute(c, shaped, full, out)]


__all__: list[str] = []
