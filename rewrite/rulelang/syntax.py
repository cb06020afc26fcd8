"""The rule language: one named rule per line, parsed once into ``Rule`` objects.

    # single, bidirectional, guarded, multi-pattern:
    relu-idem:     (relu (relu ?x)) => (relu ?x)
    matmul-assoc:  (matmul (matmul ?a ?b) ?c) <=> (matmul ?a (matmul ?b ?c))
    reshape-noop:  (reshape ?x :shape ?s) => ?x  if (= ?s (shape ?x))
    merge-matmul:  (matmul ?x ?w1), (matmul ?x ?w2)
                => (slice (matmul ?x (concat ?w1 ?w2 :axis 1)) :axis 1 :start 0 :end (dim ?w1 1)),
                   (slice (matmul ?x (concat ?w1 ?w2 :axis 1)) :axis 1 :start (dim ?w1 1)
                          :end (+ (dim ?w1 1) (dim ?w2 1)))
                if (weight ?w1) (weight ?w2) (= (rank ?x) 2)

A rule continues on following lines that are indented.  ``?name`` is a
variable: a tensor where an op's input stands, an attribute value where an
attribute stands.  Attribute expressions (right-hand sides and guards) may use
``(dim ?t i)`` (negative i counts from the end), ``(rank ?t)``, ``(shape ?t)``,
``(at VEC i)``, ``+ - * / max min``, and ``[a b c]`` lists.  Guards:
``= != < <= > >=`` and ``(weight ?t)`` (``?t`` depends only on weights).
``(wfirst ?t)``/``(wlast ?t)`` number the first/last original weight of a
concatenation of weights, so a merge rule can require a canonical order.
``(least EXPR)`` (one per rule, ``=>`` rules only) lets saturation fire only the
match with the least EXPR among the matches that agree on every variable EXPR
does not read: ``(least (wfirst ?w2))`` merges each merged weight with the next
weight only, so k matmuls of one input build k(k-1)/2 contiguous merges, not
2^k subsets.  It only narrows which matches fire, so a search or the checker,
which ignore it, see a superset.
Errors are ``RuleError`` with ``file:line:col: message``.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

from rewrite.ir.errors import Loc, RuleError
from rewrite.ir.ops import OPS, AttrKind, Group

# ----------------------------------------------------------------- AST


@dataclass(frozen=True)
class Var:
    """``?name``: a tensor (in input position) or an attribute value."""

    name: str
    loc: Loc


@dataclass(frozen=True)
class Lit:
    value: int | float | str
    loc: Loc


@dataclass(frozen=True)
class ListExpr:
    items: tuple[Expr, ...]
    loc: Loc


@dataclass(frozen=True)
class Call:
    """An attribute or guard function application: ``(dim ?x 1)``, ``(= a b)``."""

    fn: str
    args: tuple[Expr, ...]
    loc: Loc


Expr = Var | Lit | ListExpr | Call


@dataclass(frozen=True)
class Op:
    """An op pattern: ``(op input... :attr expr ...)``."""

    op: str
    inputs: tuple[Pattern, ...]
    attrs: tuple[tuple[str, Expr], ...]
    loc: Loc

    def attr(self, name: str) -> Expr | None:
        return dict(self.attrs).get(name)


Pattern = Var | Op

# Functions of a tensor variable: its shape, and the weight-order analysis that
# lets merge rules build each concat of weights in one canonical order only.
TENSOR_FNS = ("dim", "rank", "shape", "weight", "wfirst", "wlast")
INT_FNS = {"dim": 2, "rank": 1, "wfirst": 1, "wlast": 1, "at": 2, "+": 2, "-": 2, "*": 2, "/": 2, "max": 2, "min": 2}
GUARD_FNS = {"=": 2, "!=": 2, "<": 2, "<=": 2, ">": 2, ">=": 2, "weight": 1}


@dataclass(frozen=True)
class Rule:
    """One parsed rule: the object saturation, search and the checker all use."""

    name: str
    family: str
    lhs: tuple[Pattern, ...]
    rhs: tuple[Pattern, ...]
    guards: tuple[Call, ...]
    bidirectional: bool
    loc: Loc
    text: str = field(compare=False, default="")
    least: Call | None = None  # ``(least EXPR)``: of matches agreeing elsewhere, saturation fires the least

    @property
    def multi(self) -> bool:
        return len(self.lhs) > 1

    def directions(self) -> list[Rule]:
        """The forward rule, and the reversed one for ``<=>`` (named ``name:reverse``)."""
        out = [self]
        if self.bidirectional:
            out.append(
                Rule(self.name + ":reverse", self.family, self.rhs, self.lhs, self.guards, False, self.loc, self.text)
            )
        return out


# ----------------------------------------------------------------- tokens and s-expressions

_TOKEN = re.compile(r"\s*(?:(?P<punct>[()\[\],])|(?P<str>\"(?:[^\"\\]|\\.)*\")|(?P<atom>[^\s()\[\],\"]+))")
_INT = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][-+]?\d+)$")


@dataclass(frozen=True)
class Tok:
    text: str
    loc: Loc
    kind: str  # punct | str | atom


# What the reader returns: a token, or a bracketed list whose first item is its opening "(" or "[".
SExpr: TypeAlias = Tok | list["SExpr"]


def _loc(s: SExpr) -> Loc:
    return s.loc if isinstance(s, Tok) else _loc(s[0])


def tokenize(text: str, path: str, line0: int, offsets: list[tuple[int, int]]) -> list[Tok]:
    """Tokens of a logical rule; ``offsets`` maps character ranges back to source lines."""
    toks, pos = [], 0
    bases = [base for _, base in offsets]  # ascending: a token is on the last line starting at or before it
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            break
        kind = m.lastgroup or "atom"
        start = m.start(kind)
        line, col = line0, start + 1
        i = bisect.bisect_right(bases, start)
        if i:
            ln, base = offsets[i - 1]
            line, col = ln, start - base + 1
        toks.append(Tok(m.group(kind), Loc(path, line, col), kind))
        pos = m.end()
    return toks


class _Reader:
    def __init__(self, toks: list[Tok], end: Loc) -> None:
        self.toks, self.i, self.end = toks, 0, end

    def peek(self) -> Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def next(self) -> Tok:
        t = self.peek()
        if t is None:
            raise RuleError(self.end, "unexpected end of rule (unbalanced parentheses?)")
        self.i += 1
        return t

    def sexpr(self) -> SExpr:
        """A token, or a nested list of them opened by its bracket token."""
        t = self.next()
        if t.text in ("(", "["):
            close = ")" if t.text == "(" else "]"
            items: list[SExpr] = [t]
            while True:
                p = self.peek()
                if p is None:
                    raise RuleError(t.loc, f"'{t.text}' is never closed")
                if p.text == close:
                    self.next()
                    return items
                if p.text in (")", "]", ","):
                    raise RuleError(p.loc, f"unexpected '{p.text}'")
                items.append(self.sexpr())
        if t.text in (")", "]", ","):
            raise RuleError(t.loc, f"unexpected '{t.text}'")
        return t


# ----------------------------------------------------------------- building the AST


def _expr(s: SExpr) -> Expr:
    if isinstance(s, Tok):
        if s.kind == "str":
            return Lit(bytes(s.text[1:-1], "utf-8").decode("unicode_escape"), s.loc)
        if s.text.startswith("?") and len(s.text) > 1:
            return Var(s.text[1:], s.loc)
        if _INT.match(s.text):
            return Lit(int(s.text), s.loc)
        if _FLOAT.match(s.text):
            return Lit(float(s.text), s.loc)
        raise RuleError(s.loc, f"expected a value, variable or expression, got '{s.text}'")
    head = s[0]
    assert isinstance(head, Tok)  # the reader opens every list with its bracket
    if head.text == "[":
        return ListExpr(tuple(_expr(x) for x in s[1:]), head.loc)
    fn = s[1] if len(s) >= 2 else None
    if not isinstance(fn, Tok):
        raise RuleError(head.loc, "expected a function name after '('")
    return Call(fn.text, tuple(_expr(x) for x in s[2:]), fn.loc)


def _pattern(s: SExpr) -> Pattern:
    if isinstance(s, Tok):
        e = _expr(s)
        if not isinstance(e, Var):
            raise RuleError(s.loc, f"expected an op pattern or a ?variable, got '{s.text}'")
        return e
    head = s[0]
    assert isinstance(head, Tok)  # the reader opens every list with its bracket
    name_tok = s[1] if len(s) >= 2 else None
    if head.text != "(" or not isinstance(name_tok, Tok):
        raise RuleError(head.loc, "expected '(op ...)'")
    items = s[2:]
    inputs: list[Pattern] = []
    attrs: list[tuple[str, Expr]] = []
    i = 0
    while i < len(items):
        it = items[i]
        if isinstance(it, Tok) and it.kind == "atom" and it.text.startswith(":"):
            if i + 1 >= len(items):
                raise RuleError(it.loc, f"attribute '{it.text}' has no value")
            attrs.append((it.text[1:], _expr(items[i + 1])))
            i += 2
            continue
        if attrs:
            raise RuleError(_loc(it), "inputs must come before :attributes")
        inputs.append(_pattern(it))
        i += 1
    return Op(name_tok.text, tuple(inputs), tuple(attrs), name_tok.loc)


# ----------------------------------------------------------------- checking


class _Checker:
    """Checks one rule: ops, arity, attributes, variable binding and kinds."""

    def __init__(self, rule_loc: Loc) -> None:
        self.tensor_vars: set[str] = set()
        self.attr_vars: dict[str, AttrKind] = {}
        self.loc = rule_loc

    def lhs(self, p: Pattern, root: bool) -> None:
        if isinstance(p, Var):
            if root:
                raise RuleError(p.loc, "a left-hand side must be an op pattern, not a bare variable")
            if p.name in self.attr_vars:
                raise RuleError(p.loc, f"?{p.name} is used both as a tensor and as an attribute")
            self.tensor_vars.add(p.name)
            return
        spec = self._op(p)
        for name, e in p.attrs:
            kind = spec[name]
            if isinstance(e, Var):
                if e.name in self.tensor_vars:
                    raise RuleError(e.loc, f"?{e.name} is used both as a tensor and as an attribute")
                if self.attr_vars.setdefault(e.name, kind) is not kind:
                    raise RuleError(e.loc, f"?{e.name} is bound to attributes of different kinds")
            elif isinstance(e, (Lit, ListExpr)):
                self.expr(e, kind, bound_only=True)
            else:
                raise RuleError(e.loc, "left-hand attributes must be literals or ?variables")
        for q in p.inputs:
            self.lhs(q, False)

    def rhs(self, p: Pattern) -> None:
        if isinstance(p, Var):
            if p.name not in self.tensor_vars:
                raise RuleError(p.loc, f"right-hand variable ?{p.name} is not bound on the left")
            return
        spec = self._op(p)
        for name, e in p.attrs:
            self.expr(e, spec[name])
        missing = [a.name for a in OPS[p.op].attrs if a.default is None and p.attr(a.name) is None]
        if missing:
            raise RuleError(p.loc, f"'{p.op}' on the right needs attribute(s) {missing}")
        for q in p.inputs:
            self.rhs(q)

    def _op(self, p: Op) -> dict[str, AttrKind]:
        if p.op not in OPS:
            raise RuleError(p.loc, f"unknown op '{p.op}'; known ops: {', '.join(sorted(OPS))}")
        opdef = OPS[p.op]
        if (opdef.group is Group.SOURCE and not opdef.constant) or p.op == "split":
            hint = " (use slice)" if p.op == "split" else " (use a ?variable and the (weight ?x) guard)"
            raise RuleError(p.loc, f"'{p.op}' cannot appear in a rule{hint}")
        arity = 2 if p.op == "concat" else opdef.arity
        if len(p.inputs) != arity:
            raise RuleError(
                p.loc,
                f"'{p.op}' takes {arity} input(s), got {len(p.inputs)}"
                + (" (nest concats for more)" if p.op == "concat" else ""),
            )
        kinds = {a.name: a.kind for a in opdef.attrs}
        for name, e in p.attrs:
            if name not in kinds:
                raise RuleError(e.loc, f"'{p.op}' has no attribute '{name}'; it has {list(kinds) or 'none'}")
        return kinds

    def expr(self, e: Expr, want: AttrKind | None, bound_only: bool = False) -> AttrKind:
        """Check an attribute/guard expression and return its kind."""
        kind = self._kind(e, bound_only)
        if want is not None and kind is not want and not (want is AttrKind.FLOAT and kind is AttrKind.INT):
            raise RuleError(e.loc, f"expected a {want.value} here, got a {kind.value}")
        return kind

    def _kind(self, e: Expr, bound_only: bool) -> AttrKind:
        if isinstance(e, Lit):
            return {int: AttrKind.INT, float: AttrKind.FLOAT, str: AttrKind.STR}[type(e.value)]
        if isinstance(e, ListExpr):
            for x in e.items:
                self.expr(x, AttrKind.INT, bound_only)
            return AttrKind.INTS
        if isinstance(e, Var):
            if e.name in self.attr_vars:
                return self.attr_vars[e.name]
            where = (
                "is a tensor; use (dim ...), (rank ...) or (shape ...)"
                if e.name in self.tensor_vars
                else "is not bound on the left"
            )
            raise RuleError(e.loc, f"?{e.name} {where}")
        if bound_only:
            raise RuleError(e.loc, "left-hand attributes must be literals or ?variables")
        if e.fn in TENSOR_FNS:
            arity = 2 if e.fn == "dim" else 1
            if len(e.args) != arity or not isinstance(e.args[0], Var) or e.args[0].name not in self.tensor_vars:
                raise RuleError(
                    e.loc, f"({e.fn} ?tensor{' i' if arity == 2 else ''}) needs a tensor variable bound on the left"
                )
            if e.fn == "dim":
                self.expr(e.args[1], AttrKind.INT)
            return AttrKind.INTS if e.fn == "shape" else AttrKind.INT
        table = {**INT_FNS, **GUARD_FNS}
        if e.fn not in table:
            raise RuleError(e.loc, f"unknown function '{e.fn}'; known: {', '.join(sorted(table) + ['shape'])}")
        if len(e.args) != table[e.fn]:
            raise RuleError(e.loc, f"'{e.fn}' takes {table[e.fn]} argument(s), got {len(e.args)}")
        if e.fn == "at":
            self.expr(e.args[0], AttrKind.INTS)
            self.expr(e.args[1], AttrKind.INT)
            return AttrKind.INT
        if e.fn in GUARD_FNS:
            ka = self.expr(e.args[0], None)
            kb = self.expr(e.args[1], None)
            if ka is not kb and {ka, kb} != {AttrKind.INT, AttrKind.FLOAT}:
                raise RuleError(e.loc, f"'{e.fn}' compares a {ka.value} with a {kb.value}")
            if e.fn not in ("=", "!=") and ka is AttrKind.INTS:
                raise RuleError(e.loc, f"'{e.fn}' needs numbers, not lists")
            return AttrKind.INT
        kinds = {self.expr(a, None) for a in e.args}
        if AttrKind.INTS in kinds or AttrKind.STR in kinds:
            raise RuleError(e.loc, f"'{e.fn}' needs numbers")
        return AttrKind.FLOAT if AttrKind.FLOAT in kinds else AttrKind.INT

    def guard(self, g: Call) -> None:
        if g.fn == "least":
            if len(g.args) != 1:
                raise RuleError(g.loc, f"'least' takes 1 argument, got {len(g.args)}")
            if self.expr(g.args[0], None) is not AttrKind.INT:
                raise RuleError(g.loc, "(least EXPR) needs an integer EXPR")
            if not expr_vars(g.args[0]):
                raise RuleError(g.loc, "(least EXPR) needs an EXPR that reads a ?variable")
            return
        if g.fn not in GUARD_FNS:
            raise RuleError(g.loc, f"a guard must be one of {', '.join([*GUARD_FNS, 'least'])}, got '{g.fn}'")
        self.expr(g, None)


def _reversible(p: Pattern) -> bool:
    if isinstance(p, Var):
        return True
    return all(isinstance(e, (Var, Lit, ListExpr)) for _, e in p.attrs) and all(_reversible(q) for q in p.inputs)


def expr_vars(e: Expr) -> set[str]:
    """The ?variables an expression reads (tensor and attribute ones)."""
    if isinstance(e, Var):
        return {e.name}
    if isinstance(e, ListExpr):
        return set().union(*(expr_vars(x) for x in e.items))
    if isinstance(e, Call):
        return set().union(*(expr_vars(x) for x in e.args))
    return set()


def pattern_vars(p: Pattern) -> tuple[list[str], list[str]]:
    """The ?variables a left-hand pattern binds: (tensors, attributes), each in order of first appearance."""
    tensors: dict[str, None] = {}
    attrs: dict[str, None] = {}

    def walk(q: Pattern) -> None:
        if isinstance(q, Var):
            tensors.setdefault(q.name)
            return
        for _, e in q.attrs:
            if isinstance(e, Var):
                attrs.setdefault(e.name)
        for x in q.inputs:
            walk(x)

    walk(p)
    return list(tensors), list(attrs)


def check_rule(rule: Rule) -> None:
    if rule.least is not None and rule.bidirectional:
        raise RuleError(rule.least.loc, "(least ...) narrows one direction's matches: use it in a '=>' rule")
    for r in rule.directions():
        c = _Checker(r.loc)
        for p in r.lhs:
            c.lhs(p, True)
        for g in (*r.guards, *([r.least] if r.least is not None else [])):
            c.guard(g)
        for p in r.rhs:
            c.rhs(p)
        if len(r.lhs) != len(r.rhs):
            raise RuleError(r.loc, f"{len(r.lhs)} left-hand pattern(s) but {len(r.rhs)} right-hand one(s)")
    if rule.bidirectional:
        for p in rule.rhs:
            if not _reversible(p):
                raise RuleError(p.loc, "a <=> rule's right side may only use literal or ?variable attributes")


# ----------------------------------------------------------------- files


def _logical_lines(text: str) -> list[tuple[int, str, list[tuple[int, int]]]]:
    """Join indented continuation lines; drop comments and blank lines."""
    out: list[tuple[int, str, list[tuple[int, int]]]] = []
    for i, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if raw[:1].isspace() and out:
            ln, acc, offs = out[-1]
            offs.append((i, len(acc) + 1))  # raw column 1 of line i sits here in the joined text
            out[-1] = (ln, acc + " " + line, offs)
        else:
            out.append((i, line, [(i, 0)]))
    return out


def _split_top(toks: list[Tok], sep: str) -> list[list[Tok]]:
    parts: list[list[Tok]] = [[]]
    depth = 0
    for t in toks:
        if t.text in ("(", "["):
            depth += 1
        elif t.text in (")", "]"):
            depth -= 1
        if depth == 0 and t.text == sep:
            parts.append([])
        else:
            parts[-1].append(t)
    return parts


def _patterns(toks: list[Tok], end: Loc, what: str) -> list[Pattern]:
    out = []
    for part in _split_top(toks, ","):
        if not part:
            raise RuleError(end, f"empty {what} pattern")
        r = _Reader(part, end)
        out.append(_pattern(r.sexpr()))
        extra = r.peek()
        if extra is not None:
            raise RuleError(extra.loc, f"unexpected '{extra.text}' after the {what} pattern (missing ','?)")
    return out


def parse_rules(text: str, path: str = "<string>", family: str | None = None) -> list[Rule]:
    """Parse a rules file; raises RuleError(file:line:col) on the first problem."""
    family = family or Path(path).stem
    rules: list[Rule] = []
    seen: dict[str, Loc] = {}
    for line0, line, offsets in _logical_lines(text):
        toks = tokenize(line, path, line0, offsets)
        end = Loc(path, line0, len(line) + 1)
        head = toks[0]
        if not head.text.endswith(":") or len(head.text) < 2:
            raise RuleError(
                head.loc, "a rule starts with its name and a colon, e.g. 'relu-idem: (relu (relu ?x)) => (relu ?x)'"
            )
        name = head.text[:-1]
        if not re.match(r"^[A-Za-z][\w.\-]*$", name):
            raise RuleError(head.loc, f"bad rule name '{name}' (letters, digits, '-', '_', '.')")
        if name in seen:
            raise RuleError(head.loc, f"rule '{name}' is defined twice (first at {seen[name]})")
        arrows = [i for i, t in enumerate(toks) if t.text in ("=>", "<=>")]
        if len(arrows) != 1:
            raise RuleError(head.loc, "a rule needs exactly one '=>' or '<=>'")
        a = arrows[0]
        ifs = [i for i, t in enumerate(toks) if t.text == "if" and i > a]
        stop = ifs[0] if ifs else len(toks)
        lhs = _patterns(toks[1:a], toks[a].loc, "left-hand")
        rhs = _patterns(toks[a + 1 : stop], end, "right-hand")
        guards: list[Call] = []
        least: Call | None = None
        if ifs:
            r = _Reader(toks[stop + 1 :], end)
            if r.peek() is None:
                raise RuleError(toks[stop].loc, "'if' needs at least one guard")
            while r.peek() is not None:
                g = _expr(r.sexpr())
                if not isinstance(g, Call):
                    raise RuleError(g.loc, "a guard is a call such as (= (rank ?x) 2)")
                if g.fn == "least":
                    if least is not None:
                        raise RuleError(g.loc, f"a rule has one (least ...) guard; the first is at {least.loc}")
                    least = g
                else:
                    guards.append(g)
        rule = Rule(name, family, tuple(lhs), tuple(rhs), tuple(guards), toks[a].text == "<=>", head.loc, line, least)
        check_rule(rule)
        seen[name] = head.loc
        rules.append(rule)
    return rules


def parse_pattern(text: str, path: str = "<expr>") -> Pattern:
    """One pattern in the rule syntax; errors are ``RuleError`` at ``path:line:col``."""
    offsets, pos = [], 0
    for i, line in enumerate(text.split("\n"), start=1):
        offsets.append((i, pos))
        pos += len(line) + 1
    toks = tokenize(text, path, 1, offsets)
    last = offsets[-1]
    end = Loc(path, last[0], len(text) - last[1] + 1)
    if not toks:
        raise RuleError(Loc(path, 1, 1), "empty expression")
    reader = _Reader(toks, end)
    p = _pattern(reader.sexpr())
    extra = reader.peek()
    if extra is not None:
        raise RuleError(extra.loc, f"unexpected '{extra.text}' after the expression")
    return p


def load_rule_file(path: str | Path) -> list[Rule]:
    """The rules of one file; a text parsed before, against the same op registry, is not parsed again (every
    ``optimize`` loads the shipped families: 0.2 s a call)."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise RuleError(Loc(str(path), 0, 0), f"cannot read rule file: {e.strerror}") from None
    return list(_parsed_file(text, str(path), p.stem, tuple(map(id, OPS.values()))))


@functools.lru_cache(maxsize=64)
def _parsed_file(text: str, path: str, family: str, registry: tuple[int, ...]) -> tuple[Rule, ...]:
    """``registry``: the op definitions in force (an op registered or removed since parses the text anew)."""
    return tuple(parse_rules(text, path, family))
