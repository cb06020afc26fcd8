"""Rules on concrete graphs (consumer 2 of the parsed Rule): evaluate, instantiate, match.

The semantics are exactly those of ``to_egglog.py``, where a rule runs inside
egglog, so that what the checker and a search see is what saturation does:

* integers are i64 and ``/`` truncates towards zero; a failing primitive (a
  division by zero, ``vec-get`` out of range) makes the expression
  *undefined*: a guard that is undefined does not hold (egglog's query fails),
  a right-hand attribute that is undefined is an error (egglog panics);
* ``(dim ?t i)`` counts from the end only for a *literal* negative ``i``; a
  computed negative index, or any index outside ``[0, rank)``, is undefined.
  ``(at VEC i)`` never counts from the end;
* ``(weight ?t)`` holds when ``?t`` depends only on weights;
  ``(wfirst ?t)``/``(wlast ?t)`` are the numbers of the first/last original
  weight of ``?t`` (a weight, a concat of weights, or a zero-padded one),
  undefined otherwise;
* attributes a left-hand pattern leaves out match any value; on a right-hand
  side they take the registry default.

An ``Env`` binds tensor variables (shape, weight-ness, weight order, and the
graph value when one exists) and attribute variables.

    >>> from rewrite.rulelang.syntax import parse_rules
    >>> r = parse_rules("t: (reshape ?x :shape ?s) => ?x  if (= ?s (shape ?x))")[0]
    >>> env = Env(shapes={"x": (2, 3)}, attrs={"s": (2, 3)})
    >>> guards_hold(r, env)
    True
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from rewrite.ir.builder import GraphBuilder
from rewrite.ir.graph import Graph, Node, Value
from rewrite.ir.ops import OPS, AttrKind, Shape
from rewrite.rulelang.syntax import Call, Expr, ListExpr, Lit, Loc, Op, Pattern, Rule, Var


class Undefined(ValueError):
    """An attribute expression has no value (egglog's primitive would fail)."""


AnonKey = tuple[Loc, str]  # (location of a left-hand op pattern, attribute it leaves out)


@dataclass
class Env:
    """Bindings of one rule match (or one random draw)."""

    shapes: dict[str, Shape] = field(default_factory=dict)  # tensor var -> shape
    weights: set[str] = field(default_factory=set)  # tensor vars that depend only on weights
    order: dict[str, tuple[int, int]] = field(default_factory=dict)  # tensor var -> (wfirst, wlast)
    attrs: dict[str, Any] = field(default_factory=dict)  # attribute var -> value
    anon: dict[AnonKey, Any] = field(default_factory=dict)  # left-out left-hand attributes
    values: dict[str, Value] = field(default_factory=dict)  # tensor var -> graph value, when built

    def copy(self) -> Env:
        return Env(
            dict(self.shapes), set(self.weights), dict(self.order), dict(self.attrs), dict(self.anon), dict(self.values)
        )

    def describe_attrs(self) -> dict[str, Any]:
        """Attribute bindings for messages: ``?p`` and ``op:attr@line:col`` for left-out ones."""
        out: dict[str, Any] = {f"?{k}": v for k, v in self.attrs.items()}
        for (loc, name), v in self.anon.items():
            out[f"{name}@{loc.line}:{loc.col}"] = v
        return out


# ------------------------------------------------------------------ evaluation


def _i64_div(a: int, b: int) -> int:
    if b == 0:
        raise Undefined("integer division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _f64_div(a: float, b: float) -> float:
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _arith(fn: str, a: Any, b: Any) -> Any:
    for x in (a, b):
        if isinstance(x, (tuple, str, bool)):
            raise Undefined(f"'{fn}' needs numbers, got {x!r}")
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if fn == "/":
            return _f64_div(a, b)
    elif fn == "/":
        return _i64_div(a, b)
    if fn == "+":
        return a + b
    if fn == "-":
        return a - b
    if fn == "*":
        return a * b
    if fn == "max":
        return max(a, b)
    if fn == "min":
        return min(a, b)
    raise Undefined(f"unknown function '{fn}'")


def _tensor(env: Env, e: Expr, fn: str) -> str:
    if not isinstance(e, Var):
        raise Undefined(f"({fn} ...) needs a tensor variable")
    if e.name not in env.shapes:
        raise Undefined(f"?{e.name} is not bound to a tensor")
    return e.name


def _index(v: Any, n: int, what: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise Undefined(f"{what} index must be an integer, got {v!r}")
    if not 0 <= v < n:
        raise Undefined(f"{what} index {v} out of range for length {n}")
    return v


def eval_expr(e: Expr, env: Env) -> Any:
    """Value of an attribute or guard expression; raises ``Undefined``."""
    if isinstance(e, Lit):
        return e.value
    if isinstance(e, Var):
        if e.name not in env.attrs:
            raise Undefined(f"attribute variable ?{e.name} is not bound")
        return env.attrs[e.name]
    if isinstance(e, ListExpr):
        items = tuple(eval_expr(x, env) for x in e.items)
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in items):
            raise Undefined(f"a list holds integers only, got {items}")
        return items
    fn, args = e.fn, e.args
    if fn in ("dim", "rank", "shape"):
        shape = env.shapes[_tensor(env, args[0], fn)]
        if fn == "shape":
            return tuple(shape)
        if fn == "rank":
            return len(shape)
        i = args[1]
        if isinstance(i, Lit) and isinstance(i.value, int) and i.value < 0:
            idx = len(shape) + i.value  # only a literal negative index counts from the end
        else:
            idx = eval_expr(i, env)
        return shape[_index(idx, len(shape), "dim")]
    if fn == "at":
        vec, i = eval_expr(args[0], env), eval_expr(args[1], env)
        if not isinstance(vec, tuple):
            raise Undefined(f"(at ...) needs a list, got {vec!r}")
        return vec[_index(i, len(vec), "at")]
    if fn in ("wfirst", "wlast"):
        t = _tensor(env, args[0], fn)
        if t not in env.order:
            raise Undefined(f"?{t} is not a weight or a concat of weights")
        return env.order[t][0 if fn == "wfirst" else 1]
    if fn == "weight":
        return _tensor(env, args[0], fn) in env.weights
    if len(args) != 2:
        raise Undefined(f"'{fn}' takes 2 arguments")
    a, b = eval_expr(args[0], env), eval_expr(args[1], env)
    if fn in ("=", "!="):
        eq = a == b and isinstance(a, tuple) == isinstance(b, tuple)
        return eq if fn == "=" else not eq
    if fn in ("<", "<=", ">", ">="):
        if isinstance(a, (tuple, str)) or isinstance(b, (tuple, str)):
            raise Undefined(f"'{fn}' needs numbers")
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[fn]
    return _arith(fn, a, b)


def eval_guard(g: Call, env: Env) -> bool:
    """A guard holds, or not; an undefined guard does not hold (egglog's query fails)."""
    try:
        return bool(eval_expr(g, env))
    except (Undefined, KeyError):
        return False


def guards_hold(rule: Rule, env: Env) -> bool:
    return all(eval_guard(g, env) for g in rule.guards)


def coerce(value: Any, kind: AttrKind, what: str = "attribute") -> Any:
    """An evaluated value as an attribute of ``kind`` (ints widen to floats, as in egglog text)."""
    if kind is AttrKind.FLOAT and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if kind is AttrKind.INT and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind is AttrKind.INTS and isinstance(value, tuple):
        return value
    if kind is AttrKind.STR and isinstance(value, str):
        return value
    raise Undefined(f"{what} must be {kind.value}, got {value!r}")


def op_attrs(p: Op, env: Env) -> dict[str, Any]:
    """Attributes of one op pattern under ``env``: expressions evaluated; left out → ``env.anon`` or default."""
    out: dict[str, Any] = {}
    for spec in OPS[p.op].attrs:
        e = p.attr(spec.name)
        if e is not None:
            out[spec.name] = coerce(eval_expr(e, env), spec.kind, f"'{p.op}' attribute '{spec.name}'")
        elif (p.loc, spec.name) in env.anon:
            out[spec.name] = env.anon[(p.loc, spec.name)]
    return out


# ------------------------------------------------------------------ instantiation


def seeded_tensor(shape: Shape, key: str, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """A deterministic random tensor (by name), for weights that only need to exist."""
    gen = torch.Generator().manual_seed(zlib.crc32(key.encode()))
    return torch.randn(tuple(shape), generator=gen, dtype=dtype)


def leaf(builder: GraphBuilder, env: Env, name: str, dtype: torch.dtype = torch.float64) -> Value:
    """The graph value of tensor variable ``name``: an input, or a weight if ``name in env.weights``."""
    if name in env.values:
        return env.values[name]
    if name not in env.shapes:
        raise Undefined(f"tensor variable ?{name} has no shape")
    shape = tuple(env.shapes[name])
    if name in env.weights:
        v = builder.op("weight", name=name, shape=shape)
        builder.graph.weights[name] = seeded_tensor(shape, name, dtype)  # not builder.weight: keep dtype
    else:
        v = builder.input(name, shape)
    env.values[name] = v
    return v


def instantiate(p: Pattern, env: Env, builder: GraphBuilder, locate: bool = False) -> Value:
    """Build ``p`` with ``builder`` under ``env``; returns the value of its root.

    Tensor variables become the values in ``env.values`` (created as inputs or
    weights on first use); ``concat`` is binary, as in rules.  Raises
    ``Undefined`` for an attribute without a value and ``ShapeError``/
    ``GraphError`` when the result is ill-formed.  With ``locate``, each node's
    origin (named in errors) is its pattern's ``file:line:col``.
    """
    if isinstance(p, Var):
        return leaf(builder, env, p.name)
    ins = [instantiate(q, env, builder, locate) for q in p.inputs]
    attrs = op_attrs(p, env)
    if locate:
        builder.origin = str(p.loc)
    return builder.op(p.op, *ins, **attrs)


# ------------------------------------------------------------------ matching


def weight_order(graph: Graph) -> dict[Value, tuple[int, int]]:
    """(wfirst, wlast) of every weight, concat of weights and zero-padded weight (as in the prelude)."""
    out: dict[Value, tuple[int, int]] = {}
    for n in graph:
        v = Value(n.id, 0)
        if n.op == "weight":
            out[v] = (n.id, n.id)
        elif n.op == "concat" and n.inputs and all(i in out for i in n.inputs):
            out[v] = (out[n.inputs[0]][0], out[n.inputs[-1]][1])
        elif n.op == "pad2d" and n.inputs[0] in out:  # an enlarged kernel keeps its weight's order
            out[v] = out[n.inputs[0]]
    return out


@dataclass
class GraphFacts:
    """What matching needs to know about a graph, computed once."""

    graph: Graph
    weight_only: set[int]
    order: dict[Value, tuple[int, int]]

    @classmethod
    def of(cls, graph: Graph) -> GraphFacts:
        return cls(graph, graph.weight_only(), weight_order(graph))


def _as_slice(split: Node, index: int) -> tuple[Value, dict[str, Any]]:
    """Output ``index`` of a split node read as the slice egglog encodes it as."""
    sizes = split.attrs["sizes"]
    start = sum(sizes[:index])
    return split.inputs[0], {"axis": split.attrs["axis"], "start": start, "end": start + sizes[index]}


def _bind_tensor(name: str, v: Value, facts: GraphFacts, env: Env) -> bool:
    if name in env.values:
        return env.values[name] == v
    env.values[name] = v
    env.shapes[name] = facts.graph.shape_of(v)
    if v.node in facts.weight_only:
        env.weights.add(name)
    if v in facts.order:
        env.order[name] = facts.order[v]
    return True


def _same_attr(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple) or isinstance(a, str) or isinstance(b, str):
        return type(a) is type(b) and a == b
    return a == b


def match(p: Pattern, v: Value, facts: GraphFacts, env: Env) -> bool:
    """Match one left-hand pattern at graph value ``v``, extending ``env`` in place.

    Returns False (leaving ``env`` partly extended: pass a copy) when it does not
    match.  ``concat`` patterns are binary and match two-input concat nodes;
    ``slice`` patterns also match split outputs.
    """
    if isinstance(p, Var):
        return _bind_tensor(p.name, v, facts, env)
    graph = facts.graph
    node = graph.nodes[v.node]
    if p.op == "slice" and node.op == "split":
        src, attrs = _as_slice(node, v.index)
        ins: tuple[Value, ...] = (src,)
    elif node.op != p.op or v.index != 0:
        return False
    else:
        ins, attrs = node.inputs, dict(node.attrs)
    if len(ins) != len(p.inputs):
        return False
    for spec in OPS[p.op].attrs:
        e, have = p.attr(spec.name), attrs[spec.name]
        if e is None:
            env.anon[(p.loc, spec.name)] = have
        elif isinstance(e, Var):
            if e.name in env.attrs:
                if not _same_attr(env.attrs[e.name], have):
                    return False
            else:
                env.attrs[e.name] = have
        else:
            try:
                want = coerce(eval_expr(e, env), spec.kind)
            except Undefined:
                return False
            if not _same_attr(want, have):
                return False
    return all(match(q, i, facts, env) for q, i in zip(p.inputs, ins))


def match_rule(rule: Rule, roots: Sequence[Value], facts: GraphFacts | Graph, env: Env | None = None) -> Env | None:
    """Match every left-hand pattern of ``rule`` at ``roots`` (in order) and check its guards."""
    if isinstance(facts, Graph):
        facts = GraphFacts.of(facts)
    if len(roots) != len(rule.lhs):
        raise ValueError(f"rule '{rule.name}' has {len(rule.lhs)} left-hand pattern(s), got {len(roots)} roots")
    env = env.copy() if env is not None else Env()
    for p, v in zip(rule.lhs, roots):
        if not match(p, v, facts, env):
            return None
    return env if guards_hold(rule, env) else None


def apply_rule(rule: Rule, env: Env, builder: GraphBuilder) -> list[Value]:
    """Build every right-hand pattern of a matched rule; ``env.values`` must be values of ``builder``'s graph."""
    return [instantiate(p, env, builder) for p in rule.rhs]


# ------------------------------------------------------------------ pattern facts


def tensor_vars(patterns: Iterable[Pattern]) -> list[str]:
    """Tensor variables in order of first appearance (depth-first, inputs left to right)."""
    out: list[str] = []

    def walk(p: Pattern) -> None:
        if isinstance(p, Var):
            if p.name not in out:
                out.append(p.name)
        else:
            for q in p.inputs:
                walk(q)

    for p in patterns:
        walk(p)
    return out


def expr_tensor_uses(exprs: Iterable[Expr], fns: Iterable[str]) -> set[str]:
    """Tensor variables passed to any of ``fns`` anywhere inside ``exprs``."""
    fns = set(fns)
    out: set[str] = set()

    def walk(e: Expr) -> None:
        if isinstance(e, Call):
            if e.fn in fns and e.args and isinstance(e.args[0], Var):
                out.add(e.args[0].name)
            for a in e.args:
                walk(a)
        elif isinstance(e, ListExpr):
            for a in e.items:
                walk(a)

    for e in exprs:
        walk(e)
    return out


def pattern_exprs(patterns: Iterable[Pattern]) -> list[Expr]:
    out: list[Expr] = []

    def walk(p: Pattern) -> None:
        if isinstance(p, Op):
            out.extend(e for _, e in p.attrs)
            for q in p.inputs:
                walk(q)

    for p in patterns:
        walk(p)
    return out


def weight_vars(rule: Rule) -> set[str]:
    """Tensor variables the rule needs to be weights: ``(weight ?t)``, ``wfirst``, ``wlast``."""
    return expr_tensor_uses([*rule.guards, *pattern_exprs(rule.rhs)], ("weight", "wfirst", "wlast"))


__all__ = [
    "Env",
    "GraphFacts",
    "Undefined",
    "apply_rule",
    "coerce",
    "eval_expr",
    "eval_guard",
    "guards_hold",
    "instantiate",
    "leaf",
    "match",
    "match_rule",
    "op_attrs",
    "tensor_vars",
    "weight_order",
    "weight_vars",
]
