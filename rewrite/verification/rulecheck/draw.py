"""Random instances of a rule direction's left side, for the rule checker.

``draw_envs`` finds random shapes for a direction's tensor variables and values
for its attribute variables (and for the attributes its left side leaves out)
such that the left side is well-formed and every guard holds;
:mod:`rewrite.verification.rulecheck.check` compares the two sides on them.  The union-finds
and guard classification it unifies with are in :mod:`rewrite.verification.rulecheck.unify`.

How draws are found (``_Attempt``):

The per-op constraints of phases 1 and 2 (and the attributes drawn in phase
3) come from each op's shape rule in the registry (``OpDef.shape_rule``, the
``draw_*`` methods of :mod:`rewrite.ir.shapes`); nothing here is written per op.

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

import random
import zlib
from collections import Counter
from collections.abc import Callable, Hashable
from functools import partial
from typing import Any, NoReturn

from rewrite.ir.builder import GraphBuilder
from rewrite.ir.graph import GraphError, Value
from rewrite.ir.ops import OPS, AttrKind, AttrSpec, ShapeError
from rewrite.rulelang.concrete import Env, Undefined, coerce, eval_expr, eval_guard, leaf, op_attrs
from rewrite.rulelang.syntax import Expr, ListExpr, Lit, Op, Pattern, Rule, Var
from rewrite.verification.rulecheck.unify import _UF, _const, _dim_uses, _Dims, _Info, _Reject, _side

__all__ = ["RANK_MAX", "CannotInstantiate", "draw_envs", "expr_text", "pattern_text"]

RANK_MAX = 4


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


class _OpCtx:
    """One pattern op of one attempt, as its shape rule sees it (``rewrite.ir.shapes.DrawCtx``)."""

    def __init__(self, attempt: _Attempt, p: Op) -> None:
        self.a, self.p = attempt, p
        self.rng = attempt.rng
        self.ranks = attempt.ranks
        self.dims = attempt.dims

    def attr(self, name: str, draw: Callable[[], Any]) -> Any:
        return self.a.attr(self.p, name, draw)

    def const_attr(self, name: str) -> Any:
        e = self.p.attr(name)
        return None if e is None else _const(e)

    def known_attr(self, name: str) -> Any:
        e = self.p.attr(name)
        if isinstance(e, Var):
            return self.a.env.attrs.get(e.name)
        return None if e is None else _const(e)

    def rank_of_list_attr(self, name: str, key: Hashable) -> None:
        e = self.p.attr(name)
        if isinstance(e, ListExpr):
            self.ranks.fix(key, len(e.items))
        elif isinstance(e, Var):
            self.ranks.union(key, ("a", e.name))

    def bcast(self, x: int, y: int) -> int:
        return self.a._bcast(x, y)

    def axis(self, v: Any, rank: int) -> int:
        return self.a._axis(v, rank)

    def out_rank(self) -> int:
        return self.a.rank(("o", id(self.p)))

    def memo(self) -> dict[str, Any]:
        return self.a.late_memo.setdefault(id(self.p), {})

    def reject(self, msg: str) -> NoReturn:
        raise _Reject(msg)


class _Attempt:
    def __init__(self, info: _Info, rng: random.Random, bcast: float) -> None:
        self.info, self.rng, self.bcast = info, rng, bcast
        self.env = Env(weights=set(info.weights))
        self.ranks = _UF("ranks")
        self.dims = _Dims(rng)
        self.vdims: dict[str, list[int]] = {}
        self.odims: dict[int, list[int]] = {}
        self.late_memo: dict[int, dict[str, Any]] = {}

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
        if spec.choices is not None:  # e.g. the fused contractions' act: one of the registry's activations
            return rng.choice(sorted(spec.choices))
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
            OPS[p.op].shape_rule.draw_ranks(_OpCtx(self, p), ("o", id(p)), [self._key(q) for q in p.inputs])
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
        opdef = OPS[p.op]
        out = opdef.shape_rule.draw_dims(_OpCtx(self, p), ins)
        late = opdef.shape_rule.late_attrs
        for spec in opdef.attrs:  # everything else that is not drawn against concrete operands
            if spec.name not in late:
                self.attr(p, spec.name, partial(self._generic, p.op, spec, ins))
        return out

    # ---------------------------------------------------------- phase 3: build
    def _late(self, p: Op, name: str, shapes: list[tuple[int, ...]]) -> Any:
        target = [self.dims.peek(c) for c in self.odims[id(p)]]
        return OPS[p.op].shape_rule.draw_late(_OpCtx(self, p), name, shapes, target)

    def _build(self, b: GraphBuilder, p: Pattern) -> Value:
        env = self.env
        if isinstance(p, Var):
            if p.name not in env.values:
                env.shapes[p.name] = tuple(self.dims.value(c) for c in self.vdims[p.name])
                leaf(b, env, p.name)
            return env.values[p.name]
        ins = [self._build(b, q) for q in p.inputs]
        shapes = [b.shape(v) for v in ins]
        late = OPS[p.op].shape_rule.late_attrs
        for spec in OPS[p.op].attrs:
            if spec.name in late:
                self.attr(p, spec.name, partial(self._late, p, spec.name, shapes))
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
