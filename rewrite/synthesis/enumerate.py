"""Enumerate the graphs of one world bottom-up, evaluate them, group them by fingerprint.

TASO's generator, on trees: every term of up to ``max_ops`` ops over the world's variables is
built from smaller terms, evaluated on each instance of the world (random float64 inputs), and
fingerprinted by its outputs (shape and a random projection of the values, per instance).
Terms with one fingerprint compute one function on every instance: a group, from which
candidate rules come.  Only a group's first term (its *representative*) is used as an argument
of larger terms: a larger term over another member follows from the representative's by
congruence, so it could only give a rule derivable from a smaller one (TASO's pruning of
substitutions that are a smaller one in context), and the enumeration stays small.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Any

import torch

from rewrite.ir.errors import EqsatError, ShapeError
from rewrite.ir.ops import OPS, Shape
from rewrite.synthesis.space import (
    DATA,
    KERNEL,
    PARAM_VALUES,
    SPLIT,
    AttrValue,
    DimExpr,
    Term,
    World,
    arity,
    attr_sets,
    pairs,
    result_kind,
)

INSTANCES = 4  # instances of each world every term is evaluated on
MAX_UNITS = 3  # dimension expressions: at most this many symbols (with repetition) ...
MAX_CONST = 2  # ... plus a constant in [-MAX_CONST, MAX_CONST]


@dataclass
class _Value:
    shapes: list[Shape]  # per instance
    tensors: list[torch.Tensor] | None  # per instance; None for terms too large to be an argument
    kind: str = DATA  # DATA or KERNEL (space.result_kind)


@dataclass
class WorldResult:
    """What one world's enumeration found: groups of terms with one fingerprint (representative first)."""

    world: World
    instances: list[dict[str, int]]
    params: list[dict[str, float]]
    groups: list[list[Term]] = field(default_factory=list)  # only groups of two or more
    terms: int = 0  # terms built and evaluated (well-formed on every instance)
    representatives: int = 0
    seconds: float = 0.0
    complete: bool = True  # False: the deadline stopped it


def _seed(*parts: Any) -> int:
    """A seed from values (not ``hash``: strings hash differently in every process)."""
    return zlib.crc32(repr(parts).encode())


def params_for(n: int) -> list[dict[str, float]]:
    return [{"s": PARAM_VALUES[i % len(PARAM_VALUES)]} for i in range(n)]


def dim_table(world: World, instances: Sequence[Mapping[str, int]]) -> dict[tuple[int, ...], DimExpr]:
    """Each dimension's values across the instances -> the simplest sum of symbols with those values.

    A value vector two equally simple sums share is left out (ambiguous), so a dimension is named only
    when the instances tell which sum it is.
    """
    syms = world.symbols()
    best: dict[tuple[int, ...], tuple[int, DimExpr]] = {}
    ambiguous: set[tuple[int, ...]] = set()
    for coeffs in product(range(MAX_UNITS + 1), repeat=len(syms)):
        if sum(coeffs) > MAX_UNITS:
            continue
        for const in range(-MAX_CONST, MAX_CONST + 1):
            e = DimExpr.of(dict(zip(syms, coeffs)), const)
            key = tuple(e.value(i) for i in instances)
            cost = e.units() + abs(const)
            old = best.get(key)
            if old is None or cost < old[0]:
                best[key] = (cost, e)
                ambiguous.discard(key)
            elif cost == old[0] and e != old[1]:
                ambiguous.add(key)
    return {k: e for k, (_, e) in best.items() if k not in ambiguous}


ZEROS = 0.125  # the share of each input's entries set to exactly 0


def _leaf(shape: Shape, gen: torch.Generator) -> torch.Tensor:
    """Random normal values with some exact zeros: ``b / b`` is 1 on random floats but NaN where ``b`` is 0,
    and ``(mul ?a (div ?b ?b)) => ?a`` must not come out of the enumeration (the checker's random inputs would
    not catch it either)."""
    t = torch.randn(shape, generator=gen, dtype=torch.float64)
    zero = torch.rand(shape, generator=gen, dtype=torch.float64) < ZEROS
    return t.masked_fill(zero, 0.0)


# Non-finite values are fingerprinted as themselves: two graphs agree only where they are NaN or infinite
# at the same entries (``(mul ?a (reciprocal ?b))`` and ``(div ?a ?b)`` do).
_NAN, _POSINF, _NEGINF = 7.25e6, 3.125e7, -5.5e7


class _Fingerprints:
    """A term's fingerprint: per instance its shape and a fixed random projection of its values."""

    def __init__(self) -> None:
        self._proj: dict[Shape, torch.Tensor] = {}

    def of(self, tensors: Sequence[torch.Tensor]) -> tuple[Any, ...] | None:
        out: list[Any] = []
        for t in tensors:
            shape = tuple(t.shape)
            p = self._proj.get(shape)
            if p is None:
                gen = torch.Generator().manual_seed(_seed(shape))
                p = self._proj[shape] = torch.rand(shape, generator=gen, dtype=torch.float64) + 0.5
            t = torch.nan_to_num(t, nan=_NAN, posinf=_POSINF, neginf=_NEGINF)
            dot = float((t * p).sum())
            scale = float(t.abs().sum())
            if not (math.isfinite(dot) and math.isfinite(scale)):
                return None
            out.append((shape, "0" if abs(dot) <= 1e-9 * scale else f"{dot:.7e}"))
        return tuple(out)


def enumerate_world(world: World, ops: Sequence[str], max_ops: int, deadline: float | None = None) -> WorldResult:
    """Every term of up to ``max_ops`` ops of ``ops`` over ``world``'s variables, grouped by fingerprint."""
    t0 = time.perf_counter()
    instances = world.instances(INSTANCES)
    params = params_for(len(instances))
    res = WorldResult(world, instances, params)
    table = dim_table(world, instances)
    fps = _Fingerprints()
    values: dict[Term, _Value] = {}
    groups: dict[tuple[Any, ...], list[Term]] = {}
    by_size: dict[int, list[Term]] = {0: []}
    with torch.no_grad():
        for name in world.names:
            term = Term.leaf(name)
            gens = [torch.Generator().manual_seed(_seed(world.name, name, i)) for i in range(len(instances))]
            tensors = [_leaf(world.shape(name, inst), g) for inst, g in zip(instances, gens)]
            fp = fps.of(tensors)
            assert fp is not None
            kind = KERNEL if name in world.kernels else DATA
            values[term] = _Value([tuple(t.shape) for t in tensors], tensors, kind)
            if fp in groups:
                groups[fp].append(term)  # two variables alike in the world: never on random data
            else:
                groups[fp] = [term]
                by_size[0].append(term)
        for k in range(1, max_ops + 1):
            by_size[k] = []
            keep = k < max_ops
            for op in ops:
                n = arity(op)
                for sizes in _sizes(k - 1, n):
                    for args in product(*(by_size[s] for s in sizes)):
                        if deadline is not None and time.perf_counter() > deadline:
                            res.complete = False
                            return _finish(res, groups, values, by_size, t0)
                        rkind = result_kind("slice" if op == SPLIT else op, [values[a].kind for a in args])
                        if rkind is None:
                            continue
                        for attrs in _attrs(op, args, values, table):
                            term = Term.apply("slice" if op == SPLIT else op, args, attrs)
                            if term in values:
                                continue
                            v = _evaluate(term, args, values, instances, params)
                            if v is None:
                                continue
                            v.kind = rkind
                            fp = fps.of(v.tensors or [])
                            if fp is None:
                                continue
                            res.terms += 1
                            members = groups.setdefault(fp, [])
                            members.append(term)
                            if len(members) == 1:
                                by_size[k].append(term)
                                values[term] = v if keep else _Value(v.shapes, None, rkind)
                            else:
                                values[term] = _Value(v.shapes, None, rkind)
    return _finish(res, groups, values, by_size, t0)


def _finish(
    res: WorldResult,
    groups: Mapping[tuple[Any, ...], list[Term]],
    values: Mapping[Term, _Value],
    by_size: Mapping[int, list[Term]],
    t0: float,
) -> WorldResult:
    res.groups = [g for g in groups.values() if len(g) > 1]
    res.representatives = sum(len(v) for v in by_size.values())
    res.seconds = time.perf_counter() - t0
    return res


def _sizes(total: int, n: int) -> list[tuple[int, ...]]:
    """Argument sizes (each >= 0) summing to ``total``, for ``n`` arguments."""
    if n == 1:
        return [(total,)]
    if n == 2:
        return list(pairs(total))
    return [(i,) + rest for i in range(total + 1) for rest in _sizes(total - i, n - 1)]


def _attrs(
    op: str, args: Sequence[Term], values: Mapping[Term, _Value], table: Mapping[tuple[int, ...], DimExpr]
) -> list[dict[str, AttrValue]]:
    shapes0 = [values[a].shapes[0] for a in args]
    if op != SPLIT:
        return attr_sets(op, [values[a].shapes for a in args])
    # a split of a tensor whose size along an axis is a sum, at each of the sum's symbols
    out: list[dict[str, AttrValue]] = []
    v = values[args[0]]
    for axis in range(len(shapes0[0])):
        whole = table.get(tuple(s[axis] for s in v.shapes))
        if whole is None or whole.const or whole.units() < 2:
            continue
        for sym, _ in whole.coeffs:
            cut = DimExpr.of({sym: 1})
            out.append({"axis": axis, "start": 0, "end": cut})
            out.append({"axis": axis, "start": cut, "end": whole})
    return out


def _evaluate(
    term: Term,
    args: Sequence[Term],
    values: Mapping[Term, _Value],
    instances: Sequence[Mapping[str, int]],
    params: Sequence[Mapping[str, float]],
) -> _Value | None:
    """The term on every instance, or None where it is ill-formed on any (or not a float tensor)."""
    d = OPS[term.op]
    shapes: list[Shape] = []
    tensors: list[torch.Tensor] = []
    for i, inst in enumerate(instances):
        try:
            attrs = d.normalize_attrs(term.attrs_at(inst, params[i]))
            ins = [values[a].shapes[i] for a in args]
            shape = d.infer(ins, attrs)[0]
            arg_tensors = [values[a].tensors[i] for a in args]  # type: ignore[index]
            out = d.ref(arg_tensors, attrs)[0]
        except (ShapeError, EqsatError, TypeError, ValueError, RuntimeError, IndexError):
            return None
        if out.dtype != torch.float64 or tuple(out.shape) != shape:
            return None
        shapes.append(shape)
        tensors.append(out)
    return _Value(shapes, tensors)
