"""The rule checker (consumer 3 of the parsed Rule): random instances, compared numerically.

For each direction of a rule, ``draw_envs`` finds random shapes for its tensor
variables and values for its attribute variables (and for the attributes its
left side leaves out, which egglog matches with any value) such that the left
side is well-formed and every guard holds.  ``check_rule`` then builds one
small graph per draw — the left roots and the right roots as outputs — runs it
on random float64 tensors and compares each left root with its right root.

A draw is accepted on the left side and the guards alone: if the right side is
then ill-formed, has another shape or computes other values, the rule is
reported unsound (egglog would add an ill-shaped term, or stop on an illegal
shape merge).  A rule for which no draw is found within the try budget is a
failure too ("could not instantiate"), never a silent pass.
Drawing the instances is in :mod:`rewrite.verification.rulecheck.draw` (with
:mod:`rewrite.verification.rulecheck.unify`); its public names are re-exported here.

    >>> from rewrite.rulelang.syntax import parse_rules
    >>> check_rule(parse_rules("r: (relu (relu ?x)) => (relu ?x)")[0]).ok
    True
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from costs.timing import torch_threads
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.graph import GraphError, Value
from rewrite.ir.ops import ShapeError
from rewrite.rulelang.concrete import Env, Undefined, instantiate
from rewrite.rulelang.syntax import Rule
from rewrite.verification.numeric import compare

# re-exported: the checker's public API has always been importable from here
from rewrite.verification.rulecheck.draw import RANK_MAX, CannotInstantiate, draw_envs, expr_text, pattern_text  # noqa: F401
from rewrite.verification.rulecheck.unify import DIM_MAX, _Info  # noqa: F401  (DIM_MAX re-exported)

# ------------------------------------------------------------------ checking


@dataclass
class CheckResult:
    rule: str
    where: str  # file:line
    ok: bool
    message: str = ""
    direction: str = ""  # the failing direction (NAME or NAME:reverse)
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)  # of the failing draw
    attrs: dict[str, Any] = field(default_factory=dict)
    max_error: float = 0.0  # worst relative error seen (inf for a shape or well-formedness failure)
    draws: int = 0  # distinct draws checked, over all directions
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "where": self.where,
            "ok": self.ok,
            "message": self.message,
            "direction": self.direction,
            "shapes": {k: list(v) for k, v in self.shapes.items()},
            "attrs": {k: list(v) if isinstance(v, tuple) else v for k, v in self.attrs.items()},
            "max_error": self.max_error if math.isfinite(self.max_error) else str(self.max_error),
            "draws": self.draws,
            "seconds": round(self.seconds, 4),
        }

    def __str__(self) -> str:
        if self.ok:
            return f"ok    {self.rule}  {self.where}  ({self.draws} draws, max error {self.max_error:.1e})"
        lines = [f"FAIL  {self.rule}  {self.where}: {self.message}"]
        if self.shapes or self.attrs:
            shapes = " ".join(f"?{k}={tuple(v)}" for k, v in self.shapes.items())
            attrs = " ".join(f"{k}={v}" for k, v in self.attrs.items())
            lines.append(f"      draw: {shapes}" + (f"  {attrs}" if attrs else ""))
        return "\n".join(lines)


def _random_tensor(shape: tuple[int, ...], gen: torch.Generator, positive: bool) -> torch.Tensor:
    t = torch.randn(shape, generator=gen, dtype=torch.float64)
    return t.abs() + 0.1 if positive else t


def _check_draw(
    rule: Rule, info: _Info, env: Env, seeds: Sequence[int], rtol: float, index: int
) -> tuple[str | None, float]:
    """(failure message or None, worst relative error) for one draw of one direction."""
    env = env.copy()
    env.values = {}
    b = GraphBuilder(rule.name)
    b.origin = str(rule.loc)
    try:
        lhs = [instantiate(p, env, b) for p in rule.lhs]
    except (ShapeError, GraphError, Undefined) as e:  # the sampler built it: a bug here, not in the rule
        return f"internal error: the left side could not be rebuilt: {e}", math.inf
    rhs: list[Value] = []
    for i, p in enumerate(rule.rhs):
        try:
            rhs.append(instantiate(p, env, b))
        except Undefined as e:
            return f"right side {i + 1} cannot be evaluated: {e}", math.inf
        except (ShapeError, GraphError) as e:
            return f"right side {i + 1} is ill-formed: {str(e).split(' (from ')[0]}", math.inf
    for i, (l_, r_) in enumerate(zip(lhs, rhs)):
        if b.shape(l_) != b.shape(r_):
            return (f"root {i + 1}: left and right have different shapes: {b.shape(l_)} vs {b.shape(r_)}", math.inf)
    g = b.build(lhs + rhs)
    worst = 0.0
    for seed in seeds:
        gen = torch.Generator().manual_seed(1_000_003 * seed + index)
        inputs = {}
        for var in info.tensor_vars:
            t = _random_tensor(env.shapes[var], gen, var in info.positive)
            if var in env.weights:
                g.weights[var] = t
            else:
                inputs[var] = t
        outs = g.run(inputs)
        k = len(lhs)
        for i, (a, c) in enumerate(zip(outs[:k], outs[k:])):
            cmp = compare(a, c, rtol)
            close, err = cmp.close, cmp.rel_err
            worst = max(worst, err)
            if not close:
                return f"root {i + 1}: values differ (seed {seed}): {cmp.why}", worst
    return None, worst


def _display_path(path: str) -> str:
    """A rule file's path relative to the working directory when it is below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def check_rule(
    rule: Rule,
    draws: int = 3,
    seeds: Sequence[int] = (0, 1),
    extra_draws: int = 12,
    max_tries: int = 400,
    rtol: float = 1e-6,
    extra_seconds: float = 2.0,
) -> CheckResult:
    """Check every direction of ``rule`` on random instances.

    Each direction gets ``draws`` distinct draws compared on every seed, and up
    to ``extra_draws`` more (more shapes, broadcasting and attribute values)
    compared on the first seed only, while the rule has used less than
    ``extra_seconds`` (convolutions on CPU can be slow).
    """
    if draws < 1 or not seeds:
        raise ValueError(f"need at least one draw and one seed, got draws={draws}, seeds={tuple(seeds)}")
    with torch_threads(1):  # tiny tensors: a busy machine makes thread hand-offs cost milliseconds
        return _check_rule(rule, draws, seeds, extra_draws, max_tries, rtol, extra_seconds)


def _check_rule(
    rule: Rule, draws: int, seeds: Sequence[int], extra_draws: int, max_tries: int, rtol: float, extra_seconds: float
) -> CheckResult:
    t0 = time.perf_counter()
    where = f"{_display_path(rule.loc.path)}:{rule.loc.line}"
    total, worst = 0, 0.0
    for d in rule.directions():
        info = _Info.of(d)
        try:
            envs = draw_envs(d, draws + extra_draws, max_tries=max_tries)
        except CannotInstantiate as e:
            return CheckResult(
                rule.name,
                where,
                False,
                str(e),
                d.name,
                max_error=math.inf,
                draws=total,
                seconds=time.perf_counter() - t0,
            )
        for i, env in enumerate(envs):
            if i >= draws and time.perf_counter() - t0 > extra_seconds:
                break
            msg, err = _check_draw(d, info, env, seeds if i < draws else tuple(seeds)[:1], rtol, i)
            total += 1
            worst = max(worst, err)
            if msg is not None:
                where_dir = f"{d.name}: " if d.name != rule.name else ""
                return CheckResult(
                    rule.name,
                    where,
                    False,
                    where_dir + msg,
                    d.name,
                    dict(env.shapes),
                    env.describe_attrs(),
                    err,
                    total,
                    time.perf_counter() - t0,
                )
    return CheckResult(rule.name, where, True, "", "", max_error=worst, draws=total, seconds=time.perf_counter() - t0)


def check_rules(
    rules: Sequence[Rule], on_result: Callable[[CheckResult], None] | None = None, **kwargs: Any
) -> list[CheckResult]:
    """``check_rule`` for each rule, in order; ``on_result`` sees each result as it is ready."""
    out = []
    for r in rules:
        res = check_rule(r, **kwargs)
        out.append(res)
        if on_result:
            on_result(res)
    return out
