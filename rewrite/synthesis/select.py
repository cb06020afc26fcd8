"""From groups of equal graphs to checked, guarded, non-redundant rules.

Each member of a group other than its representative gives a *candidate*: member => representative
(and the reverse, as one ``<=>`` rule, where both sides have the same variables and no side needs a
computed attribute bound on the left).  Rendering names the variables ``?a ?b ...`` in order of first
appearance, writes every attribute of a left side (a left-out attribute matches any value) and turns
computed sizes (a split point) into ``(dim ?v i)`` expressions, bound on a left side through a
guard.  The world's shape relations among the rule's variables become guards (*template guards*);
:func:`minimize` drops each one the checker shows the rule does not need.

Whether a candidate follows from rules already kept is asked of the e-graph: the candidates of a
tier (their total size) are loaded together, at the world's first instance, saturated with the kept
rules, and every pair whose two sides meet is dropped (:func:`derivable`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rewrite.egraph.limits import Limits
from rewrite.egraph.saturate import saturate
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.dtypes import DTYPES, DTypeError
from rewrite.ir.errors import EqsatError
from rewrite.ir.graph import Value
from rewrite.ir.ops import OPS
from rewrite.rulelang.concrete import Undefined, instantiate
from rewrite.rulelang.syntax import Rule, parse_rules
from rewrite.synthesis.space import AttrValue, DimExpr, Param, Term, World, literal, symbolic
from rewrite.verification.prove import same_class
from rewrite.verification.rulecheck.check import check_rule
from rewrite.verification.rulecheck.draw import CannotInstantiate, draw_envs

FAMILY = "synthesized"
# the checker's budget per synthesized rule: more draws than a hand-written rule gets (a dropped guard
# must be shown unneeded on many shapes)
CHECK = {"draws": 4, "extra_draws": 20, "extra_seconds": 3.0}
PROVE_LIMITS = Limits(iterations=6, nodes=40_000, seconds=8.0)
CHUNK = 150  # candidate pairs per e-graph when asking what the kept rules derive


@dataclass
class Candidate:
    """member == representative in one world; ``body`` is the rule without its name and guards."""

    world: World
    instance: dict[str, int]
    params: dict[str, float]
    lhs: Term  # the member
    rhs: Term  # the representative
    group: list[Term]
    names: dict[str, str]  # world variable -> rule variable
    body: str  # "LHS => RHS" or "LHS <=> RHS"
    lhs_guards: list[str]  # binding a computed left-side attribute: always kept
    template: list[str]  # the world's shape relations among the variables: dropped where not needed
    key: str  # body, left-side bindings and template guards: equal for a renaming of another candidate
    guards: list[str] = field(default_factory=list)  # after minimize
    name: str = ""
    found_in: list[str] = field(default_factory=list)  # worlds that found the same rule
    _parsed: tuple[str, Rule] | None = field(default=None, repr=False, compare=False)

    @property
    def size(self) -> int:
        return self.lhs.size + self.rhs.size

    def text(self, guards: Sequence[str] | None = None) -> str:
        g = list(self.lhs_guards) + list(self.guards if guards is None else guards)
        return f"{self.name or 'candidate'}: {self.body}" + (f"  if {' '.join(g)}" if g else "")

    def rule(self, guards: Sequence[str] | None = None) -> Rule:
        text = self.text(guards)
        if self._parsed is None or self._parsed[0] != text:  # the final pass asks for each kept rule per rule
            self._parsed = (text, parse_rules(text, "<synthesized>", FAMILY)[0])
        return self._parsed[1]


# ------------------------------------------------------------------ rendering


class _Render:
    """Rule text of terms under one variable naming; collects left-side attribute bindings."""

    def __init__(self, world: World, names: Mapping[str, str], lhs_vars: Sequence[str]) -> None:
        self.world = world
        self.names = names
        self.syms: dict[str, tuple[str, int]] = {}  # symbol -> (rule variable, axis) of its first left-side use
        for v in lhs_vars:
            for i, d in enumerate(world.template(v)):
                if isinstance(d, str):
                    self.syms.setdefault(d, (names[v], i))
        self.binds: list[str] = []

    def dim(self, e: DimExpr) -> str | None:
        parts: list[str] = []
        for s, c in e.coeffs:
            if s not in self.syms:
                return None
            v, i = self.syms[s]
            parts.extend([f"(dim ?{v} {i})"] * c)
        if not parts:
            return str(e.const)
        out = parts[0]
        for p in parts[1:]:
            out = f"(+ {out} {p})"
        if e.const:
            out = f"(+ {out} {e.const})" if e.const > 0 else f"(- {out} {-e.const})"
        return out

    def value(self, v: AttrValue, lhs: bool) -> str | None:
        if isinstance(v, Param):
            return f"?{v.name}"
        if isinstance(v, DimExpr):
            expr = self.dim(v)
            if expr is None or not lhs:
                return expr
            var = f"?k{len(self.binds)}"
            self.binds.append(f"(= {var} {expr})")
            return var
        if isinstance(v, tuple) and symbolic(v):
            return None  # a list with a computed entry: not produced by the menus
        return literal(v)

    def term(self, t: Term, lhs: bool) -> str | None:
        if not t.op:
            return f"?{self.names[t.var]}"
        parts = [t.op]
        for a in t.args:
            s = self.term(a, lhs)
            if s is None:
                return None
            parts.append(s)
        given = dict(t.attrs)
        for spec in OPS[t.op].attrs:
            if spec.name in given:
                v = given[spec.name]
            elif lhs:
                v = spec.default  # a left side names every attribute: a left-out one would match any value
            else:
                continue
            if not lhs and not symbolic(v) and v == spec.default:
                continue
            s = self.value(v, lhs)
            if s is None:
                return None
            parts.append(f":{spec.name} {s}")
        return "(" + " ".join(parts) + ")"


def template_guards(world: World, names: Mapping[str, str], vars_: Sequence[str]) -> list[str]:
    """The world's relations among ``vars_``: ranks, shared symbols, literal sizes, whole equal shapes."""
    out: list[str] = []
    first: dict[str, tuple[str, int]] = {}
    seen: list[str] = []
    for v in vars_:
        tmpl = world.template(v)
        n = names[v]
        twin = next((u for u in seen if world.template(u) == tmpl), None)
        seen.append(v)
        if twin is not None:
            out.append(f"(= (shape ?{n}) (shape ?{names[twin]}))")
            continue
        out.append(f"(= (rank ?{n}) {len(tmpl)})")
        for i, d in enumerate(tmpl):
            if isinstance(d, int):
                out.append(f"(= (dim ?{n} {i}) {d})")
            elif d in first:
                u, j = first[d]
                out.append(f"(= (dim ?{n} {i}) (dim ?{u} {j}))")
            else:
                first[d] = (n, i)
    return out


def _naming(*terms: Term) -> dict[str, str]:
    order: list[str] = []
    for t in terms:
        for v in t.vars():
            if v not in order:
                order.append(v)
    letters = "abcdefghijklmnopqrtuvwxyz"  # no ?s: the scalar parameter's name
    return {v: letters[i] for i, v in enumerate(order)}


_Typing = tuple[tuple[str, ...], dict[tuple[str, ...], str]]


def _typings(t: Term, inst: Mapping[str, int], params: Mapping[str, float]) -> _Typing:
    """The term's variables and, per assignment of dtypes to them under which every op takes its inputs'
    dtypes, the term's dtype (assignments an op refuses are absent).

    Built bottom-up by joining the arguments' typings on their shared variables, so a term costs what its
    well-typed assignments cost: an elementwise op over k variables has ``len(DTYPES)`` of them, not
    ``len(DTYPES) ** k``.  Kept per term and instance (``_typings_at``): an enumeration's candidates share
    their sides and subterms.  The answer is shared: read it, never change it."""
    return _typings_at(t, tuple(sorted(inst.items())), tuple(sorted(params.items())))


@functools.lru_cache(maxsize=1 << 15)
def _typings_at(t: Term, inst: tuple[tuple[str, int], ...], params: tuple[tuple[str, float], ...]) -> _Typing:
    if not t.op:
        return (t.var,), {(d,): d for d in DTYPES}
    names: tuple[str, ...] = ()
    rows: dict[tuple[str, ...], list[str]] = {(): []}
    for a in t.args:
        a_names, a_rows = _typings_at(a, inst, params)
        shared = [(names.index(v), k) for k, v in enumerate(a_names) if v in names]
        fresh = [k for k, v in enumerate(a_names) if v not in names]
        joined: dict[tuple[str, ...], list[str]] = {}
        for assign, ins in rows.items():
            for a_assign, d in a_rows.items():
                if all(assign[i] == a_assign[k] for i, k in shared):
                    joined[assign + tuple(a_assign[k] for k in fresh)] = [*ins, d]
        names, rows = names + tuple(a_names[k] for k in fresh), joined
    op = OPS[t.op]
    out: dict[tuple[str, ...], str] = {}
    try:
        attrs = op.normalize_attrs(t.attrs_at(dict(inst), dict(params)))
    except (DTypeError, TypeError, ValueError):
        return names, out
    for assign, ins in rows.items():
        try:
            out[assign] = op.infer_dtype(ins, attrs)
        except (DTypeError, TypeError, ValueError):
            pass
    return names, out


def dtype_safe(lhs: Term, rhs: Term, inst: Mapping[str, int], params: Mapping[str, float]) -> bool:
    """Whether rewriting ``lhs`` to ``rhs`` keeps the dtype wherever ``lhs`` is well-typed.

    The checker compares values in float64 only; a graph's integer and boolean tensors reach the rules too,
    and an e-class whose members disagree on their dtype stops saturation (``(relu (mul ?a ?a)) <=> (mul ?a
    ?a)`` holds for floats, but its reverse would put a float relu into an int64 product's class).
    Every assignment of dtypes to ``lhs``'s variables under which it is well-typed must type ``rhs`` (whose
    variables are among them) the same.
    """
    l_names, l_rows = _typings(lhs, inst, params)
    r_names, r_rows = _typings(rhs, inst, params)
    pick = [l_names.index(v) for v in r_names]
    return all(r_rows.get(tuple(assign[i] for i in pick)) == d for assign, d in l_rows.items())


def candidate(
    world: World, instance: dict[str, int], params: dict[str, float], member: Term, rep: Term, group: list[Term]
) -> Candidate | None:
    """The rule member => rep (or <=>), or None where it cannot be written (a side's variables or
    sizes missing from the other, a bare variable on the left)."""
    if not member.op:
        return None
    mv, rv = member.vars(), rep.vars()
    if not set(rv) <= set(mv) or not rep.params() <= member.params():
        return None
    if not dtype_safe(member, rep, instance, params):
        return None
    names = _naming(member, rep)
    fwd = _Render(world, names, mv)
    left = fwd.term(member, True)
    right = fwd.term(rep, False)
    if left is None or right is None:
        return None
    body = f"{left} => {right}"
    both = (
        set(mv) == set(rv)
        and rep.op
        and not fwd.binds
        and member.params() == rep.params()
        and dtype_safe(rep, member, instance, params)
    )
    if both:
        # both sides are left sides then: every attribute written (a left-out one would match any value)
        back = _Render(world, names, rv)
        right_full = back.term(rep, True)
        if right_full is not None and not back.binds:
            rnames = _naming(rep, member)
            rev = _Render(world, rnames, rv)
            rtext = f"{rev.term(rep, True)} => {rev.term(member, False)}"
            if rtext != f"{left} => {right}":  # the reverse is not this rule renamed
                body = f"{left} <=> {right_full}"
    guards = template_guards(world, names, mv)
    return Candidate(
        world,
        instance,
        params,
        member,
        rep,
        group,
        names,
        body,
        list(fwd.binds),
        guards,
        # a renaming of an earlier candidate is merged into it; one with other shape relations is not (the
        # same body from a world with fewer of them is the more general rule, and the final pass drops
        # whichever the other derives)
        " ".join([body, *fwd.binds, *guards]),
    )


# ------------------------------------------------------------------ checking


def check(c: Candidate, guards: Sequence[str] | None = None) -> tuple[bool, str]:
    """The checker's verdict on ``c`` with ``guards`` (default: all template guards)."""
    try:
        rule = c.rule(c.template if guards is None else guards)
    except EqsatError as e:
        return False, f"not a valid rule: {e}"
    r = check_rule(rule, **CHECK)  # type: ignore[arg-type]
    return r.ok, r.message


def minimize(c: Candidate) -> list[str]:
    """The fewest template guards the checker needs (none, else each dropped in turn where it may be)."""
    if not c.template or check(c, [])[0]:
        return []
    kept = list(c.template)
    for g in reversed(c.template):
        trial = [x for x in kept if x != g]
        if check(c, trial)[0]:
            kept = trial
    return kept


# ------------------------------------------------------------------ derivability


def _build(
    b: GraphBuilder, t: Term, leaves: dict[str, Value], inst: Mapping[str, int], params: Mapping[str, float]
) -> Value:
    if not t.op:
        return leaves[t.var]
    ins = [_build(b, a, leaves, inst, params) for a in t.args]
    return b.op(t.op, *ins, **t.attrs_at(inst, params))


def derivable(cands: Sequence[Candidate], rules: Sequence[Rule], limits: Limits = PROVE_LIMITS) -> list[bool]:
    """For each candidate: do ``rules`` join its two sides (at its world's first instance)?

    Candidates of one world are loaded into one e-graph (``CHUNK`` at a time) and saturated together.
    """
    out = [False] * len(cands)
    if not rules or not cands:
        return out
    by_world: dict[str, list[int]] = {}
    for i, c in enumerate(cands):
        by_world.setdefault(c.world.name, []).append(i)
    for idx in by_world.values():
        for start in range(0, len(idx), CHUNK):
            chunk = idx[start : start + CHUNK]
            c0 = cands[chunk[0]]
            b = GraphBuilder("synthesis")
            leaves = {v: b.input(v, c0.world.shape(v, c0.instance)) for v in c0.world.names}
            roots: list[Value] = []
            for i in chunk:
                c = cands[i]
                roots += [
                    _build(b, c.lhs, leaves, c.instance, c.params),
                    _build(b, c.rhs, leaves, c.instance, c.params),
                ]
            met = _meet(b, roots, [(2 * k, 2 * k + 1) for k in range(len(chunk))], rules, limits)
            for i, m in zip(chunk, met):
                out[i] = m
    return out


def rule_derivable(rule: Rule, others: Sequence[Rule], draws: int = 3, limits: Limits = PROVE_LIMITS) -> bool:
    """Do ``others`` join the two sides of ``rule`` (each root with its own) at every one of ``draws`` random
    instances of its left side (the checker's draws: shapes and attribute values that satisfy its guards)?

    Every draw, not any: a draw can make two sizes equal, and a rule can follow from the others at such a
    coincidence only (a slice ending at ``(dim ?b 0)`` takes all of ``?a`` when the two heights agree).
    What a rule file is checked with: a candidate's world instance is gone once the rule is written.
    """
    try:
        envs = draw_envs(rule, draws)
    except CannotInstantiate:
        return False
    derived = 0
    for env in envs:
        env = env.copy()
        env.values = {}
        b = GraphBuilder("derive")
        try:
            roots = [instantiate(p, env, b) for p in rule.lhs] + [instantiate(p, env, b) for p in rule.rhs]
        except (EqsatError, Undefined):
            continue
        k = len(rule.lhs)
        if not all(_meet(b, roots, [(i, k + i) for i in range(k)], others, limits)):
            return False
        derived += 1
    return derived > 0


def _meet(
    b: GraphBuilder, roots: list[Value], pairs: Sequence[tuple[int, int]], rules: Sequence[Rule], limits: Limits
) -> list[bool]:
    """Saturate the graph of ``roots`` with ``rules``; for each ``(i, j)``: are roots i and j one e-class?"""
    sat = saturate(b.build(roots), list(rules), limits)
    names = sat.encoding.roots
    return [same_class(sat.egraph, names[i], names[j]) for i, j in pairs]
