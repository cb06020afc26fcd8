"""The egglog prelude, generated from the op registry.

One constructor per op (attributes first, in registry order, then tensor
inputs), a ``shape`` function every tensor e-class gets, and a ``WeightOnly``
relation for sub-terms that depend only on weights (rule guards read both).
The ``shape`` rules are each op's shape rule
(:mod:`rewrite.ir.shapes`, ``ShapeRule.egg_cases``); nothing here is written
per op, so an op added with ``register_op`` is in the next ``prelude()``.

Two ops are encoded differently from the graph IR because egglog terms have a
fixed arity and a single output: ``concat`` is binary (n-ary concats nest to
the left) and ``split`` is not a constructor (each output is a ``slice``; its
shape rule says ``encoded = False``).

    >>> egg_name("global_avgpool")
    'GlobalAvgpool'
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from rewrite.ir.ops import OPS, VARIADIC, AttrKind, OpDef
from rewrite.ir.shapes import MAX_RANK

__all__ = ["EGG_TO_OP", "MAX_RANK", "SORT", "egg_arity", "egg_name", "literal", "prelude", "shape_cases"]

SORT = {AttrKind.INT: "i64", AttrKind.INTS: "IVec", AttrKind.FLOAT: "f64", AttrKind.STR: "String"}


def egg_name(op: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in op.split("_"))


class _EggToOp(Mapping[str, str]):
    """Constructor name -> op name, following the registry as ops are registered and removed."""

    def __init__(self) -> None:
        self._ops: tuple[str, ...] = ()
        self._names: dict[str, str] = {}

    def _current(self) -> dict[str, str]:
        if self._ops != tuple(OPS):
            self._ops = tuple(OPS)
            self._names = {egg_name(n): n for n in self._ops}
        return self._names

    def __getitem__(self, key: str) -> str:
        return self._current()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._current())

    def __len__(self) -> int:
        return len(self._current())


EGG_TO_OP: Mapping[str, str] = _EggToOp()


def egg_arity(op: OpDef) -> int:
    return 2 if op.arity == VARIADIC else op.arity


def literal(kind: AttrKind, value: Any) -> str:
    """An attribute value as egglog text."""
    if kind is AttrKind.INT:
        return str(int(value))
    if kind is AttrKind.INTS:
        vals = list(value)
        return f"(vec-of {' '.join(str(int(v)) for v in vals)})" if vals else "(vec-empty)"
    if kind is AttrKind.FLOAT:
        f = float(value)
        if np.isinf(f):  # egglog reads inf and -inf as f64 literals (a -inf mask fill)
            return "inf" if f > 0 else "-inf"
        if not np.isfinite(f):
            raise ValueError(f"non-finite float attribute {f!r} cannot be encoded")
        text = np.format_float_positional(f, unique=True, trim="0")
        return text if "." in text else text + ".0"
    s = str(value)
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def shape_cases(op: str) -> list[tuple[str, str]]:
    """(extra query conditions, output shape expression) for each rule of ``op``: its shape rule's."""
    return OPS[op].shape_rule.egg_cases()


def constructor_pattern(op: OpDef, out: str = "e") -> str:
    attrs = " ".join(f"a_{a.name}" for a in op.attrs)
    ins = " ".join(f"x{i}" for i in range(egg_arity(op)))
    return f"(= {out} ({egg_name(op.name)} {attrs} {ins}))".replace("  ", " ").replace(" )", ")")


def _dtype_rule(op: OpDef) -> str:
    """The egglog rule giving ``(dtype e)`` from the op's dtype rule (rewrite/ir/dtypes.py)."""
    rule = op.dtype_rule
    if rule.out == "attr":
        cond, val = "", "a_dtype"
    elif rule.out == "T":
        k = next(i for i, d in enumerate(rule.ins) if d == "T")
        cond, val = f" (= d (dtype x{k}))", "d"
    else:
        cond, val = "", f'"{rule.out}"'
    return f'(rule ({constructor_pattern(op)}{cond}) ((set (dtype e) {val})) :ruleset analysis :name "dtype-{op.name}")'


def prelude(ops: Iterable[str] | None = None) -> str:
    """Sorts, constructors, analysis functions and their rules, as egglog text.

    ``ops``: the ops to declare (those a graph can reach, ``rewrite.egraph.reach``); None: every registered op.
    """
    declared = [op for op in OPS.values() if op.shape_rule.encoded and (ops is None or op.name in ops)]
    return _prelude(tuple((op.name, id(op)) for op in declared))  # an op registered anew is a new key


@functools.lru_cache(maxsize=64)
def _prelude(key: tuple[tuple[str, int], ...]) -> str:
    names = {name for name, _ in key}
    declared = [OPS[name] for name, _ in key]
    lines = ["(sort IVec (Vec i64))", "(datatype T"]
    for op in declared:
        sig = [SORT[a.kind] for a in op.attrs] + ["T"] * egg_arity(op)
        lines.append(f"  ({egg_name(op.name)} {' '.join(sig)})")
    lines.append(")")
    # No merge: two shapes for one e-class means an unsound rule, and egglog stops loudly.
    lines += [
        "(function shape (T) IVec :no-merge)",
        # one dtype per e-class: a rule that equates an int or bool value with a float one stops loudly
        "(function dtype (T) String :no-merge)",
        "(relation WeightOnly (T))",
        # weight order: the first/last original weight inside a concat of weights
        "(function wfirst (T) i64 :merge (min old new))",
        "(function wlast (T) i64 :merge (max old new))",
        "(ruleset analysis)",
        "(ruleset rewrites)",
    ]
    if "concat" in names:
        lines.append(
            "(rule ((= e (Concat ax a b)) (= f (wfirst a)) (= l (wlast b))) ((set (wfirst e) f) (set (wlast e) l))"
            ' :ruleset analysis :name "weight-order-concat")'
        )
    if "pad2d" in names:
        # a zero-padded weight (an enlarged conv kernel) keeps its weight's order, so merges
        # of enlarged kernels stay canonical
        lines.append(
            "(rule ((= e (Pad2d p a)) (= f (wfirst a)) (= l (wlast a))) ((set (wfirst e) f) (set (wlast e) l))"
            ' :ruleset analysis :name "weight-order-pad2d")'
        )
    for op in declared:
        n = egg_arity(op)
        head = constructor_pattern(op) + "".join(f" (= s{i} (shape x{i}))" for i in range(n))
        for k, (cond, result) in enumerate(shape_cases(op.name)):
            lines.append(
                f'(rule ({head} {cond}) ((set (shape e) {result})) :ruleset analysis :name "shape-{op.name}-{k}")'
            )
        lines.append(_dtype_rule(op))
        if op.name == "weight" or op.constant:  # a constant is computed once, like a weight
            lines.append(
                f'(rule ({constructor_pattern(op)}) ((WeightOnly e)) :ruleset analysis :name "const-{op.name}")'
            )
        elif n and op.name != "input":
            deps = " ".join(f"(WeightOnly x{i})" for i in range(n))
            lines.append(
                f'(rule ({constructor_pattern(op)} {deps}) ((WeightOnly e)) :ruleset analysis :name "const-{op.name}")'
            )
    return "\n".join(lines) + "\n"
