"""Rule → egglog text (consumer 1 of the parsed Rule).

The left-hand patterns flatten into query atoms, one per op, with a fresh
variable per unnamed attribute; guards become filters over the ``shape``
function and the ``WeightOnly`` relation; each right-hand side is unioned with
its left-hand root.

    >>> from rewrite.rulelang.syntax import parse_rules
    >>> r = parse_rules("relu-idem: (relu (relu ?x)) => (relu ?x)")[0]
    >>> print(rule_to_egglog(r))
    (rule ((= r0 (Relu t1)) (= t1 (Relu v_x))) ((union r0 (Relu v_x))) :ruleset rewrites :name "relu-idem")
"""

from __future__ import annotations

from itertools import count

from rewrite.egraph.prelude import SORT, egg_name, literal
from rewrite.ir.dtypes import FLOAT32, INT64
from rewrite.ir.errors import RuleError
from rewrite.ir.ops import OPS, AttrKind
from rewrite.rulelang.syntax import Call, Expr, ListExpr, Lit, Pattern, Rule, Var, expr_vars, pattern_vars

_CMP = {"=": "=", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _tensor_var(e: Call) -> str:
    """The tensor a tensor function (``dim``, ``rank``, ``shape``, ``wfirst``, ``wlast``, ``weight``) reads;
    the parser only lets a ?variable stand there."""
    x = e.args[0]
    if not isinstance(x, Var):
        raise RuleError(e.loc, f"({e.fn} ...) takes a ?variable first")
    return x.name


class _Emitter:
    def __init__(self) -> None:
        self.fresh = count(1)
        self.query: list[str] = []
        self.shape_vars: set[str] = set()
        self.attr_kinds: dict[str, AttrKind] = {}

    def lhs(self, p: Pattern, out: str | None) -> str:
        """Flatten a left-hand pattern; returns the egglog variable naming it."""
        if isinstance(p, Var):
            if out is not None:
                self.query.append(f"(= {out} v_{p.name})")
            return f"v_{p.name}"
        name = out or f"t{next(self.fresh)}"
        opdef = OPS[p.op]
        args = []
        for spec in opdef.attrs:
            e = p.attr(spec.name)
            if e is None:
                args.append(f"_w{next(self.fresh)}")
            elif isinstance(e, Var):
                self.attr_kinds[e.name] = spec.kind
                args.append(f"p_{e.name}")
            else:
                args.append(self.expr(e, spec.kind))
        atom_at = len(self.query)
        self.query.append("")  # placeholder keeps parent-before-child order
        ins = [self.lhs(q, None) for q in p.inputs]
        self.query[atom_at] = f"(= {name} ({' '.join([egg_name(p.op), *args, *ins])}))"
        return name

    def expr(self, e: Expr, kind: AttrKind | None = None) -> str:
        if isinstance(e, Lit):
            if kind is AttrKind.FLOAT or isinstance(e.value, float):
                return literal(AttrKind.FLOAT, e.value)
            return literal(AttrKind.STR, e.value) if isinstance(e.value, str) else str(e.value)
        if isinstance(e, Var):
            return f"p_{e.name}"
        if isinstance(e, ListExpr):
            return f"(vec-of {' '.join(self.expr(x) for x in e.items)})" if e.items else "(vec-empty)"
        fn, args = e.fn, e.args
        if fn in ("dim", "rank", "shape"):
            v = _tensor_var(e)
            self.shape_vars.add(v)
            s = f"s_{v}"
            if fn == "shape":
                return s
            if fn == "rank":
                return f"(vec-length {s})"
            i = args[1]
            if isinstance(i, Lit) and isinstance(i.value, int) and i.value < 0:
                return f"(vec-get {s} (+ (vec-length {s}) {i.value}))"
            return f"(vec-get {s} {self.expr(i)})"
        if fn == "at":
            return f"(vec-get {self.expr(args[0])} {self.expr(args[1])})"
        if fn in ("wfirst", "wlast"):
            return f"({fn} v_{_tensor_var(e)})"
        if fn == "weight":
            return f"(WeightOnly v_{_tensor_var(e)})"
        a, b = (self.expr(x) for x in args)
        return f"({_CMP.get(fn, fn)} {a} {b})"

    def rhs(self, p: Pattern) -> str:
        if isinstance(p, Var):
            return f"v_{p.name}"
        opdef = OPS[p.op]
        args = []
        for spec in opdef.attrs:
            e = p.attr(spec.name)
            args.append(literal(spec.kind, spec.default) if e is None else self.expr(e, spec.kind))
        return f"({' '.join([egg_name(p.op), *args, *(self.rhs(q) for q in p.inputs)])})"


def _float_only(op: str) -> bool:
    """An op that takes no int64 input (its dtype rule asks for float32, or a T that cannot be int64)."""
    rule = OPS[op].dtype_rule
    return FLOAT32 in rule.ins or ("T" in rule.ins and INT64 not in rule.t_choices)


def _float_fed(p: Pattern, out: set[str]) -> None:
    """The ?variables the right-hand side feeds to float-only ops, into ``out``."""
    if isinstance(p, Var):
        return
    for q in p.inputs:
        if isinstance(q, Var) and _float_only(p.op):
            out.add(q.name)
        _float_fed(q, out)


def rule_to_egglog(rule: Rule, ruleset: str = "rewrites") -> str:
    """One egglog ``rule`` for one direction of a parsed rule.

    add, sub and mul also take int64, and the rules were written for float32: a right-hand side that
    feeds a ?variable to a float-only op (``(mul ?x ?x) => (pow ?x)``, a scale) applies only where that
    variable is float32, so an int64 value never meets a float op (the dtype analysis would stop)."""
    em = _Emitter()
    for i, p in enumerate(rule.lhs):
        em.lhs(p, f"r{i}")
    guards = [em.expr(g) for g in rule.guards]
    fed: set[str] = set()
    known: set[str] = set()  # already read by a float-only op on the left: float32 by construction
    for p in rule.rhs:
        _float_fed(p, fed)
    for p in rule.lhs:
        _float_fed(p, known)
    guards += [f'(= (dtype v_{v}) "{FLOAT32}")' for v in sorted(fed - known)]
    least = em.expr(rule.least.args[0]) if rule.least is not None else ""  # before the shapes: it may read one
    actions = [f"(union r{i} {em.rhs(p)})" for i, p in enumerate(rule.rhs)]
    shapes = [f"(= s_{v} (shape v_{v}))" for v in sorted(em.shape_vars)]
    query = " ".join(em.query + shapes + guards)
    if rule.least is None:
        return f'(rule ({query}) ({" ".join(actions)}) :ruleset {ruleset} :name "{rule.name}")'
    return _least_rules(rule, em, query, least, actions, ruleset)


def _least_rules(rule: Rule, em: _Emitter, query: str, least: str, actions: list[str], ruleset: str) -> str:
    """A rule with ``(least EXPR)``: a function keyed by the variables EXPR does not read holds the least EXPR
    over the matches, kept up to date by an ``analysis`` rule (run to a fixed point after every rewrite step,
    so it is current when the rewrite matches), and the rewrite fires only where its EXPR is that least."""
    assert rule.least is not None
    reads = expr_vars(rule.least.args[0])
    keys = [v for v in dict.fromkeys(v for p in rule.lhs for vs in pattern_vars(p) for v in vs) if v not in reads]
    sorts = " ".join(SORT[em.attr_kinds[v]] if v in em.attr_kinds else "T" for v in keys)
    call = " ".join([f"least-{rule.name}", *(f"p_{v}" if v in em.attr_kinds else f"v_{v}" for v in keys)])
    return (
        f"(function least-{rule.name} ({sorts}) i64 :merge (min old new))\n"
        f'(rule ({query} (= least_v {least})) ((set ({call}) least_v)) :ruleset analysis :name "{rule.name}:least")\n'
        f"(rule ({query} (= least_v {least}) (= least_v ({call}))) ({' '.join(actions)}) :ruleset {ruleset}"
        f' :name "{rule.name}")'
    )


def rules_to_egglog(rules: list[Rule], ruleset: str = "rewrites") -> str:
    return "\n".join(rule_to_egglog(d, ruleset) for r in rules for d in r.directions()) + "\n"
