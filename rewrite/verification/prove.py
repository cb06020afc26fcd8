"""Prove two expressions equal with the rules: saturate both, stop when their e-classes meet.

    >>> r = prove_equal("(matmul ?a (matmul ?b ?c))", "(matmul (matmul ?a ?b) ?c)",
    ...                 {"a": (2, 3), "b": (3, 4), "c": (4, 5)})
    >>> r.equal, r.stop_reason
    (True, 'equal')

Expressions use the rule syntax (``(op input... :attr value)``, ``?name`` for
tensors whose shapes are given); attribute values must be literals or
expressions of the given shapes (``(dim ?a 1)``).  Both sides become outputs of
one graph, which is loaded into egglog like any graph; after loading and after
every rewrite iteration, ``(check (= $lhs $rhs))`` asks whether the two output
e-classes are one.  "Not proven" means not within the limits and rules: it is
not a proof that the expressions differ.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from rewrite.egraph.bindings import EggSmolError, EGraph
from rewrite.egraph.saturate import Limits, StopReason, saturate
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.errors import ProveError
from rewrite.ir.graph import Graph, GraphError
from rewrite.ir.ops import ShapeError
from rewrite.rulelang.concrete import Env, Undefined, instantiate
from rewrite.rulelang.loader import load_rules
from rewrite.rulelang.syntax import (
    Call,
    Expr,
    ListExpr,
    Loc,
    Op,
    Pattern,
    Rule,
    RuleError,
    Var,
    _Checker,
    parse_pattern,
)

EQUAL = "equal"  # the stop reason when the two sides meet


@dataclass
class ProveResult:
    equal: bool
    iterations: int  # rewrite iterations run
    stop_reason: str  # "equal", or why saturation stopped: saturated / iteration_limit / node_limit / time_limit
    seconds: float
    enodes: int = 0
    eclasses: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ------------------------------------------------------------------ parsing


def parse_expr(text: str, path: str = "<expr>") -> Pattern:
    """One pattern in the rule syntax; errors are ``RuleError`` at ``path:line:col``."""
    return parse_pattern(text, path)


def _vars(p: Pattern, tensors: dict[str, Loc], attrs: dict[str, Loc]) -> None:
    def expr(e: Expr) -> None:
        if isinstance(e, Var):
            attrs.setdefault(e.name, e.loc)
        elif isinstance(e, ListExpr):
            for x in e.items:
                expr(x)
        elif isinstance(e, Call):
            for x in e.args[1:] if e.fn in ("dim", "rank", "shape") else e.args:
                expr(x)

    if isinstance(p, Var):
        tensors.setdefault(p.name, p.loc)
        return
    for _, e in p.attrs:
        expr(e)
    for q in p.inputs:
        _vars(q, tensors, attrs)


def _check_expr(p: Pattern, shapes: Mapping[str, Any]) -> None:
    tensors: dict[str, Loc] = {}
    attrs: dict[str, Loc] = {}
    _vars(p, tensors, attrs)
    for name, loc in attrs.items():
        raise RuleError(loc, f"?{name} stands for an attribute: a proof needs literal attribute values")
    for name, loc in tensors.items():
        if name not in shapes:
            raise RuleError(loc, f"?{name} has no shape (give one with --shape {name}=DIMS)")
    checker = _Checker(Loc("", 0, 0))
    checker.tensor_vars = set(shapes)
    if isinstance(p, Op):
        checker.rhs(p)  # ops, arity, attribute names and kinds, required attributes


# ------------------------------------------------------------------ proving


def same_class(eg: EGraph, a: str, b: str) -> bool:
    """Whether e-graph names ``a`` and ``b`` are one e-class (after loading or saturation)."""
    if a == b:
        return True
    try:
        eg.run_program(*eg.parse_program(f"(check (= {a} {b}))"))
        return True
    except EggSmolError:
        return False


def _graph(lhs: Pattern, rhs: Pattern, shapes: Mapping[str, tuple[int, ...]], weights: set[str]) -> Graph:
    b = GraphBuilder("prove")
    env = Env(shapes={k: tuple(v) for k, v in shapes.items()}, weights=set(weights))
    roots = []
    for side, p in (("left", lhs), ("right", rhs)):
        try:
            roots.append(instantiate(p, env, b, locate=True))
        except (ShapeError, GraphError) as e:
            raise ProveError(f"the {side} side is ill-formed: {e}") from None
        except Undefined as e:
            raise ProveError(f"the {side} side has an attribute without a value: {e}") from None
    sl, sr = b.shape(roots[0]), b.shape(roots[1])
    if sl != sr:
        raise ProveError(f"the two sides do not have the same shape: {sl} vs {sr}")
    return b.build(roots)


def _rules(rules: Sequence[Rule] | Sequence[str] | None) -> list[Rule]:
    """Parsed rules as given, else loaded from family names or files (None: every shipped family)."""
    if rules is None:
        return load_rules(None)
    parsed = [r for r in rules if isinstance(r, Rule)]
    specs = [r for r in rules if not isinstance(r, Rule)]
    if parsed and specs:
        raise ProveError("pass either parsed rules or rule families/files, not both")
    return parsed if parsed else load_rules(specs)


def prove_equal(
    lhs: str,
    rhs: str,
    shapes: Mapping[str, Sequence[int]],
    rules: Sequence[Rule] | Sequence[str] | None = None,
    limits: Limits = Limits(),
    weights: Sequence[str] | set[str] = (),
) -> ProveResult:
    """Saturate ``lhs`` and ``rhs`` together until their e-classes meet or a limit stops it.

    ``shapes`` maps variable names (with or without ``?``) to shapes; names in
    ``weights`` become graph weights (so ``(weight ?w)`` guards hold), the
    others inputs.  ``rules``: Rule objects, family names or files (default:
    every shipped rule).  Raises ``RuleError`` (``<lhs>``/``<rhs>:line:col``)
    for a malformed expression and ``ProveError`` for unknown names or sides
    of different shapes.
    """
    t0 = time.perf_counter()
    limits.check()
    shp = {k.lstrip("?"): tuple(int(d) for d in v) for k, v in shapes.items()}
    wts = {w.lstrip("?") for w in weights}
    unknown = sorted(wts - set(shp))
    if unknown:
        raise ProveError(f"weight(s) {', '.join('?' + w for w in unknown)} have no shape")
    pl, pr = parse_expr(lhs, "<lhs>"), parse_expr(rhs, "<rhs>")
    _check_expr(pl, shp)
    _check_expr(pr, shp)
    graph = _graph(pl, pr, shp, wts)
    rule_list = _rules(rules)

    sat = saturate(graph, rule_list, limits, until=lambda eg, enc: same_class(eg, *enc.roots))
    equal = sat.stop_reason is StopReason.GOAL
    return ProveResult(
        equal,
        len(sat.iterations),
        EQUAL if equal else sat.stop_reason.value,
        time.perf_counter() - t0,
        sat.enodes,
        sat.eclasses,
    )
