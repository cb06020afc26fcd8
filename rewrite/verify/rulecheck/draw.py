"""Random instances of a rule direction's left side, for the rule checker.

``draw_envs`` finds random shapes for a direction's tensor variables and values
for its attribute variables (and for the attributes its left side leaves out)
such that the left side is well-formed and every guard holds;
:mod:`rewrite.verify.rulecheck.check` compares the two sides on them.  The union-finds
and guard classification it unifies with are in :mod:`rewrite.verify.rulecheck.unify`.

How draws are found (``_Attempt``):

1. ranks: a union-find over the ranks of tensor variables, op outputs and
   list attributes, from the ops (elementwise and matmul operands have equal
   ranks, conv/pool are rank 4, a literal ``:perm`` fixes the rank, ...) and
   from ``(= (rank ?x) N)`` / ``(= (shape ?a) (shape ?b))`` guards; the rest
   is drawn from 1..4;
2. dimensions: a union-find over symbolic dims, unified top-down from the
   pattern structure (matmul inner dims, elementwise operands — or one of
   them set to 1 to exercise broadcasting —, concat off-axis dims, conv and
   norm channels, ``dim``/``shape`` equality guards); derived dims (concat
   sums, conv/pool outputs) are computed from their operands; free dims are
   drawn from 1..7.  Attributes that fix structure (perm, axis, conv/pool
   parameters, scalars) are drawn here: a perm is a permutation of the
   operand's rank, an axis is a valid (normalized, as graphs store it) axis;
3. building: the left side is built bottom-up with ``GraphBuilder``, which
   checks every shape; ``reshape :shape`` and ``slice :start/:end`` are
   drawn against the concrete operand (a factorisation of its size; a valid
   range), respecting output dims already fixed elsewhere.  An attribute
   variable with an equality guard ``(= ?v EXPR)`` takes EXPR's value most of
   the time.  Then the guards are evaluated; any failure rejects the attempt.

Weights: tensor variables used in ``(weight ?t)``, ``wfirst`` or ``wlast`` are
graph weights, the others inputs.  For ``wfirst``/``wlast`` every tensor
variable is treated as a distinct original weight numbered in order of first
appearance in the left side; when a guard needs otherwise, some attempts
number them in a random order and let some stand for concats of weights
(``wfirst < wlast``).
"""

from __future__ import annotations

import math
import random
import zlib
from collections import Counter
from collections.abc import Callable, Hashable
from typing import Any

from rewrite.ir.builder import GraphBuilder
from rewrite.ir.graph import GraphError, Value
from rewrite.ir.ops import ACTS, OPS, AttrKind, AttrSpec, Group, ShapeError, conv_out, numel
from rewrite.rulelang.concrete import Env, Undefined, coerce, eval_expr, eval_guard, leaf, op_attrs
from rewrite.rulelang.syntax import Expr, ListExpr, Lit, Op, Pattern, Rule, Var
from rewrite.verify.rulecheck.unify import _UF, _const, _dim_uses, _Dims, _Info, _Reject, _side

__all__ = ["RANK_MAX", "CannotInstantiate", "draw_envs", "expr_text", "pattern_text"]

RANK_MAX = 4
# attributes drawn against the concrete operand, when the left side is built
_LATE = {("reshape", "shape"), ("slice", "start"), ("slice", "end")}


class CannotInstantiate(ValueError):
    """No random instance of a rule's left side satisfies its guards."""


# ------------------------------------------------------------------ printing


def expr_text(e: Expr) -> str:
    if isinstance(e, Var):
        return f"?{e.name}"
    if isinstance(e, Lit):
        return f'"{e.value}"' if isinstance(e.value, str) else repr(e.value)
    if isinstance(e, ListExpr):
        return "[" + " ".join(expr_text(x) for x in e.items) + "]"
    return "(" + " ".join([e.fn, *(expr_text(a) for a in e.args)]) + ")"


def pattern_text(p: Pattern) -> str:
    if isinstance(p, Var):
        return f"?{p.name}"
    parts = [p.op, *(pattern_text(q) for q in p.inputs)]
    parts += [f":{k} {expr_text(v)}" for k, v in p.attrs]
    return "(" + " ".join(parts) + ")"


# ------------------------------------------------------------------ one attempt


class _Attempt:
    def __init__(self, info: _Info, rng: random.Random, bcast: float) -> None:
        self.info, self.rng, self.bcast = info, rng, bcast
        self.env = Env(weights=set(info.weights))
        self.ranks = _UF("ranks")
        self.dims = _Dims(rng)
        self.vdims: dict[str, list[int]] = {}
        self.odims: dict[int, list[int]] = {}
        self.slices: dict[int, tuple[int, int]] = {}

    # ---------------------------------------------------------- attributes
    def attr(self, p: Op, name: str, draw: Callable[[], Any]) -> Any:
        spec = next(s for s in OPS[p.op].attrs if s.name == name)
        e = p.attr(name)
        env = self.env
        if e is None:
            key = (p.loc, name)
            if key not in env.anon:
                env.anon[key] = coerce(draw(), spec.kind)
            return env.anon[key]
        if isinstance(e, Var):
            if e.name not in env.attrs:
                v = self._guided(e.name, spec)
                env.attrs[e.name] = coerce(draw(), spec.kind) if v is None else v
            return env.attrs[e.name]
        try:
            return coerce(eval_expr(e, env), spec.kind)
        except Undefined as err:
            raise _Reject(str(err)) from None

    def _guided(self, var: str, spec: AttrSpec) -> Any:
        """A value an equality guard asks for, most of the time, when it can be computed already."""
        for e in self.info.eq_guards.get(var, []):
            if self.rng.random() < 0.75:
                try:
                    return coerce(eval_expr(e, self.env), spec.kind)
                except (Undefined, KeyError):
                    pass
        return None

    def _generic(self, op: str, spec: AttrSpec, ins: list[list[int]]) -> Any:
        rng = self.rng
        if spec.name == "axis" and ins:
            return rng.randrange(len(ins[0]))
        if spec.name == "scalar":
            return rng.choice((round(rng.uniform(-3, 3), 3), 0.5, 2.0, -1.5))
        if spec.name == "eps":
            return rng.choice((1e-5, 1e-3, 0.1))
        if spec.name == "act":  # fused contractions: one of the registry's activations
            return rng.choice(sorted(ACTS))
        if spec.default is not None and rng.random() < 0.5:
            return spec.default
        if spec.kind is AttrKind.INT:
            return rng.randint(0, 1)
        if spec.kind is AttrKind.FLOAT:
            return round(rng.uniform(-2, 2), 3)
        if spec.kind is AttrKind.INTS:
            return (rng.randint(1, 2), rng.randint(1, 2))
        return "x"

    # ---------------------------------------------------------- phase 1: ranks
    def _key(self, p: Pattern) -> Hashable:
        return ("t", p.name) if isinstance(p, Var) else ("o", id(p))

    def _ranks(self) -> None:
        R = self.ranks
        for v in self.info.tensor_vars:
            R.find(("t", v))
        for p in self.info.ops:
            out, ins = ("o", id(p)), [self._key(q) for q in p.inputs]
            name, group = p.op, OPS[p.op].group

            def fixlen(attr: str, key: Hashable, p: Op = p) -> None:
                e = p.attr(attr)
                if isinstance(e, ListExpr):
                    R.fix(key, len(e.items))
                elif isinstance(e, Var):
                    R.union(key, ("a", e.name))

            if name in ("matmul", "matmul_bias_act"):
                R.union(out, ins[0])
                R.union(out, ins[1])
                R.atleast(out, 2)
                for k in ins[2:]:  # bias [N]
                    R.fix(k, 1)
            elif name == "linear":
                R.union(out, ins[0])
                R.fix(ins[1], 2)
                R.fix(ins[2], 1)
            elif name in ("conv2d", "conv2d_bias_act"):
                for k in (out, ins[0], ins[1]):
                    R.fix(k, 4)
                for k in ins[2:]:  # bias [O]
                    R.fix(k, 1)
            elif name == "pad2d":
                R.union(out, ins[0])
                R.atleast(out, 2)
            elif group is Group.POOLING:
                R.fix(out, 4)
                R.fix(ins[0], 4)
            elif name == "transpose":
                R.union(out, ins[0])
                fixlen("perm", out)
            elif name == "reshape":
                fixlen("shape", out)
            elif name == "batchnorm":
                R.union(out, ins[0])
                R.atleast(out, 2)
                for k in ins[1:]:
                    R.fix(k, 1)
            elif name == "layernorm":
                R.union(out, ins[0])
                for k in ins[1:]:
                    R.fix(k, 1)
            elif group is Group.ELEMENTWISE or name in ("concat", "slice", "softmax"):
                for k in ins:
                    R.union(out, k)
            elif ins:  # an op these heuristics do not know: output rank as the first input's
                R.union(out, ins[0])
        for g in self.info.rule.guards:
            if g.fn != "=":
                for t, i in _dim_uses(g):
                    i_val = _const(i)
                    if isinstance(i_val, int):
                        R.atleast(("t", t), i_val + 1 if i_val >= 0 else -i_val)
                continue
            a, b = (_side(x) for x in g.args)
            for x, y in ((a, b), (b, a)):
                if x[0] == "rank" and y[0] == "rank":
                    R.union(("t", x[1]), ("t", y[1]))
                elif x[0] == "rank" and y[0] == "const" and isinstance(y[1], int):
                    R.fix(("t", x[1]), y[1])
                elif x[0] == "shape" and y[0] == "shape":
                    R.union(("t", x[1]), ("t", y[1]))
                elif x[0] == "shape" and y[0] == "attr":
                    R.union(("t", x[1]), ("a", y[1]))
                elif x[0] in ("shape", "attr") and y[0] == "list":
                    R.fix(("t" if x[0] == "shape" else "a", x[1]), len(y[1]))
                elif x[0] in ("shape", "attr") and y[0] == "const" and isinstance(y[1], tuple):
                    R.fix(("t" if x[0] == "shape" else "a", x[1]), len(y[1]))
                elif x[0] == "dim" and isinstance(x[2], int):
                    R.atleast(("t", x[1]), x[2] + 1 if x[2] >= 0 else -x[2])
        for k in list(R.parent):
            r = R.find(k)
            if r not in R.val:
                lo = max(1, R.lo.get(r, 0))
                R.val[r] = self.rng.randint(lo, max(lo, RANK_MAX))
            elif R.val[r] < max(1, R.lo.get(r, 0)):
                raise _Reject(f"rank {R.val[r]} is too small")

    def rank(self, key: Hashable) -> int:
        v = self.ranks.get(key)
        assert v is not None
        return v

    # ---------------------------------------------------------- phase 2: dims
    def _bcast(self, x: int, y: int) -> int:
        D = self.dims
        if D.find(x) == D.find(y) or self.rng.random() >= self.bcast:
            D.union(x, y)
            return x
        if self.rng.random() < 0.5:
            D.fix(x, 1)
            return y
        D.fix(y, 1)
        return x

    def _axis(self, v: Any, r: int) -> int:
        if not isinstance(v, int) or not -r <= v < r:
            raise _Reject(f"axis {v!r} out of range for rank {r}")
        return v % r

    def _dims(self) -> None:
        D = self.dims
        for v in self.info.tensor_vars:
            self.vdims[v] = [D.new() for _ in range(self.rank(("t", v)))]
        self._dim_guards()
        for p in self.info.ops:
            ins = [self.vdims[q.name] if isinstance(q, Var) else self.odims[id(q)] for q in p.inputs]
            self.odims[id(p)] = self._op_dims(p, ins)

    def _dim_guards(self) -> None:
        D = self.dims
        for g in self.info.rule.guards:
            if g.fn != "=":
                continue
            a, b = (_side(x) for x in g.args)
            for x, y in ((a, b), (b, a)):
                if x[0] == "dim" and y[0] in ("dim", "const"):
                    cx = self._dim_class(x)
                    if cx is None:
                        continue
                    if y[0] == "dim":
                        cy = self._dim_class(y)
                        if cy is not None:
                            D.union(cx, cy)
                    elif isinstance(y[1], int):
                        D.fix(cx, y[1])
                elif x[0] == "shape" and y[0] == "shape":
                    dx, dy = self.vdims[x[1]], self.vdims[y[1]]
                    if len(dx) != len(dy):
                        raise _Reject("shapes of different ranks cannot be equal")
                    for i, j in zip(dx, dy):
                        D.union(i, j)
                elif x[0] == "shape" and y[0] == "const" and isinstance(y[1], tuple):
                    for c, v in zip(self.vdims[x[1]], y[1]):
                        D.fix(c, v)
                elif x[0] == "shape" and y[0] == "list":
                    for c, item in zip(self.vdims[x[1]], y[1]):
                        if item[0] == "const" and isinstance(item[1], int):
                            D.fix(c, item[1])
                        elif item[0] == "dim":
                            cy = self._dim_class(item)
                            if cy is not None:
                                D.union(c, cy)

    def _dim_class(self, side: tuple) -> int | None:
        _, t, i = side
        dims = self.vdims[t]
        if not isinstance(i, int):
            return None
        j = len(dims) + i if i < 0 else i
        return dims[j] if 0 <= j < len(dims) else None

    def _op_dims(self, p: Op, ins: list[list[int]]) -> list[int]:
        D, rng, name = self.dims, self.rng, p.op
        opdef = OPS[name]
        out: list[int]
        if name in ("matmul", "matmul_bias_act"):
            a, b = ins[:2]
            if len(a) != len(b) or len(a) < 2:
                raise _Reject("matmul operands need equal ranks >= 2")
            D.union(a[-1], b[-2])
            for bias in ins[2:]:
                D.union(bias[0], b[-1])
            out = [self._bcast(x, y) for x, y in zip(a[:-2], b[:-2])] + [a[-2], b[-1]]
        elif opdef.group is Group.ELEMENTWISE and opdef.arity == 2:
            a, b = ins
            if len(a) != len(b):
                raise _Reject("elementwise operands need equal ranks")
            out = [self._bcast(x, y) for x, y in zip(a, b)]
        elif name == "linear":
            x, w, bias = ins
            if not x or len(w) != 2 or len(bias) != 1:
                raise _Reject("linear needs x, w [out, in], b [out]")
            D.union(x[-1], w[1])
            D.union(bias[0], w[0])
            out = x[:-1] + [w[0]]
        elif name == "transpose":
            x = ins[0]
            r = len(x)
            perm = self.attr(p, "perm", lambda: tuple(rng.sample(range(r), r)))
            if sorted(perm) != list(range(r)):
                raise _Reject(f"perm {perm} is not a permutation of rank {r}")
            out = [x[i] for i in perm]
        elif name == "concat":
            a, b = ins
            if len(a) != len(b):
                raise _Reject("concat operands need equal ranks")
            ax = self._axis(self.attr(p, "axis", lambda: rng.randrange(len(a))), len(a))
            for i in range(len(a)):
                if i != ax:
                    D.union(a[i], b[i])
            out = list(a)
            out[ax] = D.derived(lambda m, n: m + n, a[ax], b[ax])
        elif name == "slice":
            x = ins[0]
            ax = self._axis(self.attr(p, "axis", lambda: rng.randrange(len(x))), len(x))
            out = list(x)
            out[ax] = D.new()
            s, e = (_const(p.attr(k)) if p.attr(k) is not None else None for k in ("start", "end"))
            if isinstance(s, int) and isinstance(e, int):
                if e <= s:
                    raise _Reject(f"empty slice [{s}:{e}]")
                D.fix(out[ax], e - s)
        elif name == "reshape":
            e = p.attr("shape")
            target = _const(e) if isinstance(e, ListExpr) else None
            if isinstance(target, tuple):
                out = [D.new(v) for v in target]
            else:
                out = [D.new() for _ in range(self.rank(("o", id(p))))]
        elif name in ("conv2d", "conv2d_bias_act"):
            x, w = ins[:2]
            for bias in ins[2:]:
                D.union(bias[0], w[0])
            stride = self.attr(p, "stride", lambda: (rng.choice((1, 1, 2)), rng.choice((1, 1, 2))))
            pad = self.attr(p, "padding", lambda: (rng.randint(0, 1), rng.randint(0, 1)))
            dil = self.attr(p, "dilation", lambda: (rng.choice((1, 1, 2)), rng.choice((1, 1, 2))))
            g = self.attr(p, "groups", lambda: rng.choice((1, 1, 1, 2, 3)))
            if len(stride) != 2 or len(pad) != 2 or len(dil) != 2 or g < 1:
                raise _Reject("bad conv2d attributes")
            if g == 1:
                D.union(x[1], w[1])
            else:
                D.union(x[1], D.derived(lambda c: c * g, w[1]))
                D.union(w[0], D.derived(lambda c: c * g, D.new()))
            out = [x[0], w[0]] + [
                D.derived(lambda h, k, i=i: conv_out(h, k, stride[i], pad[i], dil[i]), x[2 + i], w[2 + i])
                for i in range(2)
            ]
        elif name in ("maxpool2d", "avgpool2d"):
            x = ins[0]
            k = self.attr(p, "kernel", lambda: (rng.randint(1, 3), rng.randint(1, 3)))
            s = self.attr(p, "stride", lambda: (rng.randint(1, 3), rng.randint(1, 3)))
            pad = self.attr(p, "padding", lambda: tuple(rng.randint(0, kk // 2) for kk in k))
            ceil = self.attr(p, "ceil_mode", lambda: rng.randint(0, 1))
            if len(k) != 2 or len(s) != 2 or len(pad) != 2:
                raise _Reject("bad pooling attributes")
            out = [x[0], x[1]] + [
                D.derived(lambda h, i=i: conv_out(h, k[i], s[i], pad[i], 1, bool(ceil)), x[2 + i]) for i in range(2)
            ]
        elif name == "pad2d":
            x = ins[0]
            pads = self.attr(p, "pads", lambda: tuple(rng.randint(0, 2) for _ in range(4)))
            if len(pads) != 4 or len(x) < 2:
                raise _Reject("pad2d needs rank >= 2 and 4 pads")
            out = x[:-2] + [
                D.derived(lambda h: h + pads[0] + pads[1], x[-2]),
                D.derived(lambda w: w + pads[2] + pads[3], x[-1]),
            ]
        elif name == "global_avgpool":
            x = ins[0]
            out = [x[0], x[1], D.new(1), D.new(1)]
        elif name == "batchnorm":
            x = ins[0]
            for q in ins[1:]:
                D.union(q[0], x[1])
            out = list(x)
        elif name == "layernorm":
            x = ins[0]
            for q in ins[1:]:
                D.union(q[0], x[-1])
            out = list(x)
        elif opdef.arity == 1 and opdef.group in (Group.ELEMENTWISE, Group.NORMALIZATION):
            out = list(ins[0])  # unary elementwise, smul, rsqrt, softmax, ...
        else:  # an op these heuristics do not know: its output dims are whatever building it gives
            out = [D.new() for _ in range(self.rank(("o", id(p))))]
        for spec in opdef.attrs:  # everything else that is not drawn against concrete operands
            if (name, spec.name) not in _LATE:
                self.attr(p, spec.name, lambda spec=spec: self._generic(name, spec, ins))
        return out

    # ---------------------------------------------------------- phase 3: build
    def _late(self, p: Op, name: str, shapes: list[tuple[int, ...]]) -> Any:
        rng, D = self.rng, self.dims
        target = [D.peek(c) for c in self.odims[id(p)]]
        if p.op == "reshape":
            n = numel(shapes[0])
            known = math.prod(t for t in target if t is not None)
            if known == 0 or n % known:
                raise _Reject(f"cannot reshape {shapes[0]} to fit {target}")
            q, out = n // known, list(target)
            free = [i for i, t in enumerate(target) if t is None]
            if not free:
                if q != 1:
                    raise _Reject(f"cannot reshape {shapes[0]} to {target}")
                return tuple(out)
            for i in free[:-1]:
                d = rng.choice([d for d in range(1, q + 1) if q % d == 0])
                out[i], q = d, q // d
            out[free[-1]] = q
            return tuple(out)
        # slice start / end, drawn together
        if id(p) not in self.slices:
            ax = self._axis(self.attr(p, "axis", lambda: 0), len(shapes[0]))
            d, length = shapes[0][ax], target[ax]
            fixed = {}
            for k in ("start", "end"):
                e = p.attr(k)
                if isinstance(e, Var) and e.name in self.env.attrs:
                    fixed[k] = self.env.attrs[e.name]
                elif e is not None and not isinstance(e, Var):
                    fixed[k] = _const(e)
            s, e = fixed.get("start"), fixed.get("end")
            if length is not None:
                if s is None and e is None:
                    s = rng.randint(0, max(0, d - length))
                s = e - length if s is None else s
                e = s + length if e is None else e
            else:
                if s is None:
                    s = rng.randint(0, (e if isinstance(e, int) else d) - 1)
                if e is None:
                    e = rng.randint(s + 1, max(s + 1, d))
            self.slices[id(p)] = (s, e)
        return self.slices[id(p)][0 if name == "start" else 1]

    def _build(self, b: GraphBuilder, p: Pattern) -> Value:
        env = self.env
        if isinstance(p, Var):
            if p.name not in env.values:
                env.shapes[p.name] = tuple(self.dims.value(c) for c in self.vdims[p.name])
                leaf(b, env, p.name)
            return env.values[p.name]
        ins = [self._build(b, q) for q in p.inputs]
        shapes = [b.shape(v) for v in ins]
        for spec in OPS[p.op].attrs:
            if (p.op, spec.name) in _LATE:
                self.attr(p, spec.name, lambda spec=spec: self._late(p, spec.name, shapes))
        try:
            v = b.op(p.op, *ins, **op_attrs(p, env))
        except (ShapeError, GraphError, Undefined) as e:
            raise _Reject(str(e).split(" (inputs ")[0]) from None
        for c, actual in zip(self.odims[id(p)], b.shape(v)):
            if self.dims.get(c) is None:
                self.dims.fix(c, actual)
        return v

    def _number_weights(self) -> None:
        names = self.info.tensor_vars
        idx = list(range(len(names)))
        ranges = False
        if self.info.uses_order and self.rng.random() < 0.5:
            self.rng.shuffle(idx)
            ranges = self.rng.random() < 0.4
        for name, k in zip(names, idx):
            self.env.order[name] = (3 * k, 3 * k + (1 if ranges and self.rng.random() < 0.5 else 0))

    def run(self) -> Env:
        self._ranks()
        self._dims()
        b = GraphBuilder(self.info.rule.name)
        for p in self.info.rule.lhs:
            self._build(b, p)
        self._number_weights()
        for g in self.info.rule.guards:
            if not eval_guard(g, self.env):
                raise _Reject(f"guard {expr_text(g)} does not hold")
        self.env.values = {}
        return self.env


# ------------------------------------------------------------------ draws


def _signature(env: Env) -> tuple:
    return (
        tuple(sorted(env.shapes.items())),
        tuple(sorted((k, repr(v)) for k, v in env.attrs.items())),
        tuple(sorted((str(k[0]), k[1], repr(v)) for k, v in env.anon.items())),
    )


def draw_envs(rule: Rule, n: int = 3, seed: int = 0, max_tries: int = 400) -> list[Env]:
    """Up to ``n`` distinct random instances of one rule direction's left side (guards hold).

    Deterministic for a given rule name and seed.  Raises ``CannotInstantiate``
    (with the most common reasons) when none is found within ``max_tries``.
    """
    info = _Info.of(rule)
    rng = random.Random(zlib.crc32(rule.name.encode()) * 7919 + seed)
    found: dict[tuple, Env] = {}
    reasons: Counter[str] = Counter()
    for attempt in range(max_tries):
        if len(found) >= n:
            break
        # the first draw without broadcasting, later ones with it
        bcast = 0.0 if not found and attempt < max_tries // 4 else 0.5
        try:
            env = _Attempt(info, rng, bcast).run()
        except _Reject as e:
            reasons[str(e)] += 1
            continue
        except (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError) as e:
            # an attribute of an unexpected type or range in the rule: this attempt fails, the checker goes on
            reasons[f"{type(e).__name__}: {e}"] += 1
            continue
        found.setdefault(_signature(env), env)
    if not found:
        top = "; ".join(f"{r} ({c}x)" for r, c in reasons.most_common(3))
        raise CannotInstantiate(
            f"could not instantiate: no draw of {rule.name}'s left side is well-formed with "
            f"its guards holding in {max_tries} tries; most common reasons: {top}"
        )
    return list(found.values())
