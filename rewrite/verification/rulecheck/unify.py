"""Unification support for the rule checker's draws (see :mod:`rewrite.verification.rulecheck.draw`).

Union-finds over ranks and symbolic dimensions (``_UF``, ``_Dims``), the facts
about one rule direction that a draw reads (``_Info``) and the classification of
equality guards that the unification heuristics use (``_side``, ``_dim_uses``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from rewrite.rulelang.concrete import (
    Env,
    Undefined,
    eval_expr,
    expr_tensor_uses,
    pattern_exprs,
    tensor_vars,
    weight_vars,
)
from rewrite.rulelang.syntax import Call, Expr, ListExpr, Op, Pattern, Rule, Var

DIM_MAX = 7
# one free dim in this many is drawn from DIM_MAX + 1 .. BIG_DIM_MAX instead, so that a guard on a size (a
# Winograd form kept for outputs 29+ wide) can hold in some draws
BIG_DIM_EVERY = 20
BIG_DIM_MAX = 40


class _Reject(Exception):
    """One attempt failed; the message says why (collected for 'could not instantiate')."""


# ------------------------------------------------------------------ union-finds


class _UF:
    """Union-find over hashable keys; a class may carry a fixed value and a lower bound."""

    def __init__(self, what: str = "sizes") -> None:
        self.what = what
        self.parent: dict[Hashable, Hashable] = {}
        self.val: dict[Hashable, int] = {}
        self.lo: dict[Hashable, int] = {}

    def find(self, k: Hashable) -> Hashable:
        self.parent.setdefault(k, k)
        root = k
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[k] != root:
            self.parent[k], k = root, self.parent[k]
        return root

    def union(self, a: Hashable, b: Hashable) -> Hashable:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return ra
        va, vb = self.val.get(ra), self.val.get(rb)
        if va is not None and vb is not None and va != vb:
            raise _Reject(f"conflicting {self.what} {va} and {vb}")
        self.parent[rb] = ra
        if va is None and vb is not None:
            self.val[ra] = vb
        self.lo[ra] = max(self.lo.get(ra, 0), self.lo.get(rb, 0))
        self._merged(ra, rb)
        return ra

    def _merged(self, ra: Hashable, rb: Hashable) -> None:
        pass

    def fix(self, k: Hashable, v: int) -> None:
        r = self.find(k)
        cur = self.val.get(r)
        if cur is not None and cur != v:
            raise _Reject(f"conflicting {self.what} {cur} and {v}")
        self.val[r] = v

    def atleast(self, k: Hashable, v: int) -> None:
        r = self.find(k)
        self.lo[r] = max(self.lo.get(r, 0), v)

    def get(self, k: Hashable) -> int | None:
        return self.val.get(self.find(k))


class _Dims(_UF):
    """Symbolic dimensions: free (drawn when first needed), fixed, or derived from others."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__("sizes")
        self.rng = rng
        self.expr: dict[Hashable, tuple[Callable[..., int], tuple[int, ...]]] = {}
        self._busy: set[Hashable] = set()

    def new(self, value: int | None = None) -> int:
        k = len(self.parent)
        self.parent[k] = k
        if value is not None:
            self.val[k] = value
        return k

    def derived(self, fn: Callable[..., int], *args: int) -> int:
        k = self.new()
        self.expr[k] = (fn, args)
        return k

    def _merged(self, ra: Hashable, rb: Hashable) -> None:
        if ra not in self.expr and rb in self.expr:
            self.expr[ra] = self.expr[rb]

    def peek(self, c: int) -> int | None:
        """The value if already known or computable from known values; never draws."""
        r = self.find(c)
        if r in self.val:
            return self.val[r]
        if r in self.expr and r not in self._busy:
            fn, args = self.expr[r]
            self._busy.add(r)
            try:
                vals = [self.peek(a) for a in args]
            finally:
                self._busy.discard(r)
            if all(v is not None for v in vals):
                self.val[r] = fn(*vals)
                return self.val[r]
        return None

    def value(self, c: int) -> int:
        """The value, drawing free dims (and the operands of derived ones) as needed."""
        r = self.find(c)
        if r in self.val:
            return self.val[r]
        if r in self.expr:
            if r in self._busy:
                raise _Reject("cyclic dimension constraints")
            fn, args = self.expr[r]
            self._busy.add(r)
            try:
                v = fn(*(self.value(a) for a in args))
            finally:
                self._busy.discard(r)
        else:
            u = self.rng.random()
            if u < 0.1:
                v = 1
            elif u > 1 - 1 / BIG_DIM_EVERY:
                v = self.rng.randint(DIM_MAX + 1, BIG_DIM_MAX)
            else:
                v = self.rng.randint(2, DIM_MAX)
        self.val[r] = v
        return v


# ------------------------------------------------------------------ one direction's facts


@dataclass
class _Info:
    rule: Rule
    tensor_vars: list[str]
    ops: list[Op]  # left-hand op patterns, post-order
    weights: set[str]
    eq_guards: dict[str, list[Expr]]  # attr var -> expressions a guard says it equals
    uses_order: bool  # guards or right side read wfirst/wlast
    positive: set[str]  # tensor vars drawn positive: a batchnorm's running_var, an rsqrt's operand

    @classmethod
    def of(cls, rule: Rule) -> _Info:
        ops: list[Op] = []
        positive: set[str] = set()

        def walk(p: Pattern, lhs: bool) -> None:
            if isinstance(p, Op):
                for q in p.inputs:
                    walk(q, lhs)
                if lhs:
                    ops.append(p)
                if p.op == "batchnorm" and isinstance(p.inputs[4], Var):
                    positive.add(p.inputs[4].name)
                if p.op == "rsqrt" and isinstance(p.inputs[0], Var):
                    positive.add(p.inputs[0].name)

        for p in rule.lhs:
            walk(p, True)
        for p in rule.rhs:
            walk(p, False)
        eq: dict[str, list[Expr]] = {}
        for g in rule.guards:
            if g.fn == "=":
                a, b = g.args
                for x, y in ((a, b), (b, a)):
                    if isinstance(x, Var):
                        eq.setdefault(x.name, []).append(y)
        order = expr_tensor_uses([*rule.guards, *pattern_exprs(rule.rhs)], ("wfirst", "wlast"))
        return cls(rule, tensor_vars(rule.lhs), ops, weight_vars(rule), eq, bool(order), positive)


def _const(e: Expr) -> Any:
    """Value of an expression that needs no bindings, or None."""
    try:
        return eval_expr(e, Env())
    except (Undefined, KeyError):
        return None


def _side(e: Expr) -> tuple:
    """Classify one side of an equality guard for the unification heuristics."""
    if isinstance(e, Call) and e.fn in ("rank", "shape") and isinstance(e.args[0], Var):
        return (e.fn, e.args[0].name)
    if isinstance(e, Call) and e.fn == "dim" and isinstance(e.args[0], Var):
        return ("dim", e.args[0].name, _const(e.args[1]))
    if isinstance(e, Var):
        return ("attr", e.name)
    v = _const(e)
    if v is not None:
        return ("const", v)
    if isinstance(e, ListExpr):  # a list of sizes: each item classified on its own
        return ("list", tuple(_side(x) for x in e.items))
    return ("other",)


def _dim_uses(e: Expr) -> list[tuple[str, Expr]]:
    out: list[tuple[str, Expr]] = []
    if isinstance(e, Call):
        if e.fn == "dim" and isinstance(e.args[0], Var):
            out.append((e.args[0].name, e.args[1]))
        for a in e.args:
            out += _dim_uses(a)
    return out
