"""The measured cost model: operator run times timed on this machine, cached on disk.

``MeasuredCost`` has the cost-model signature ``(op, attrs, in_shapes, dtype="float32") -> seconds``.
A configuration (op, attributes, input shapes, dtype) is looked up in the ``CostCache``; on a miss
it answers with the fallback model (analytical by default) unless ``measure_missing=True``, in which
case it runs the op on its target — random inputs, ``warmup`` untimed runs, then the median of
``repeats`` timed runs — and stores the result.  ``profile_graph`` measures a whole graph up front.

What ran the op is a ``Target`` (``rewrite.ir.target``, the record ``lower`` compiles for), and
cache rows are keyed by a ``CostKey`` (``costs.key``): the target's ``cache_key``
(``torch-cpu|threads=2|torch=2.13.0``) and what else the measurement depends on, so another thread
count or library version is another set of rows.  Who measures is the target kind's fact: its
``TargetKind.runner`` (``run(key, op, attrs, in_shapes, dtype, warmup, repeats) -> Measurement``), named
``"module:function"`` where it lives above ``costs`` (LLVM-compiled kernels, in ``lower``) and imported
when first used; extraction only ever sees the cost-model callable.

The "torch" kind times the registry's reference semantics (``OPS[op].ref``), i.e. exactly what
``Graph.run`` executes: views such as ``reshape`` or ``transpose`` cost a view, not a copy.
Without an explicit target the model follows torch's current thread count (``torch_target()``).

    >>> model = MeasuredCost(measure_missing=True)                         # doctest: +SKIP
    >>> model("matmul", {}, [(256, 256), (256, 256)]) > model("matmul", {}, [(16, 16), (16, 16)])  # doctest: +SKIP
    True
    >>> model.target.cache_key                                             # doctest: +SKIP
    'torch-cpu|threads=2|torch=2.13.0'
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from costs.analytical import AnalyticalCost
from costs.cache import CostCache, op_key
from costs.key import CostKey
from costs.timing import Timing, interleaved
from rewrite.ir.errors import EqsatError, UsageError
from rewrite.ir.ops import OPS, Group, Shape
from rewrite.ir.target import KINDS, Target

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64}

Config = tuple[str, dict[str, Any], tuple[Shape, ...], str]  # op, attrs, input shapes, dtype


@dataclass(frozen=True)
class Measurement:
    seconds: float  # median of the timed runs
    reps: int
    iqr: float  # interquartile range of the timed runs


# ------------------------------------------------------------------ targets


def make_inputs(
    op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape], dtype: str = "float32", seed: int = 0
) -> list[torch.Tensor]:
    """Random inputs for one op, uniform in [0.5, 1.5): finite for every op (a variance, ``rsqrt``, ``div``),
    and free of the denormals and NaNs that would time a slow path."""
    gen = torch.Generator().manual_seed(seed)
    return [(torch.rand(tuple(s), generator=gen) + 0.5).to(DTYPES[dtype]) for s in in_shapes]


def _summarise(t: Timing) -> Measurement:
    return Measurement(t.median, len(t.samples), t.iqr)


def run_torch_op(
    key: CostKey,
    op: str,
    attrs: Mapping[str, Any],
    in_shapes: Sequence[Shape],
    dtype: str = "float32",
    warmup: int = 5,
    repeats: int = 20,
) -> Measurement:
    """Time ``OPS[op].ref`` with torch on the CPU, on the target's thread count."""
    opdef = OPS[op]
    norm = opdef.normalize_attrs(attrs)
    opdef.infer(list(in_shapes), norm)  # a bad configuration fails here, with the op's message
    xs = make_inputs(op, norm, in_shapes, dtype)
    with torch.no_grad():
        run = interleaved([lambda: opdef.ref(xs, norm)], repeats, warmup, threads=key.target.threads)
    return _summarise(run.timings[0])


def torch_target(threads: int | None = None) -> Target:
    """PyTorch eager on this CPU, on ``threads`` threads (default: torch's current thread count).

    >>> torch_target(2).cache_key                  # doctest: +SKIP
    'torch-cpu|threads=2|torch=2.13.0'
    """
    return _torch_target(threads or torch.get_num_threads(), torch.__version__)


@functools.cache
def _torch_target(threads: int, version: str) -> Target:
    # one record per thread count: the cost model asks on every call, and a Target caches its key
    return Target("torch", name="torch-cpu", threads=threads, versions=(("torch", version),))


@functools.cache
def _torch_key(threads: int, version: str) -> CostKey:
    return CostKey(_torch_target(threads, version))


Runner = Callable[..., Measurement]  # run(key, op, attrs, in_shapes, dtype, warmup, repeats)
# run_many(key, configs, warmup, repeats, on_done) -> one Measurement, or the EqsatError that kept it from
# being measured, per configuration, in order; on_done(config) as each one is measured
BatchRunner = Callable[..., list[Measurement | EqsatError]]


# ------------------------------------------------------------------ the cost model


class MeasuredCost:
    """Cached measured costs; for what is not measured: measure it now (``measure_missing``), refuse it with a
    one-line ``UsageError`` (``strict``: no estimate mixed into measurements), or ask ``fallback`` (analytical
    by default)."""

    def __init__(
        self,
        target: Target | CostKey | None = None,
        cache: CostCache | str | Path | None = None,
        fallback: Callable[..., float] | None = None,
        measure_missing: bool = False,
        warmup: int = 5,
        repeats: int = 20,
        strict: bool = False,
        hint: str = "",
    ) -> None:
        key = CostKey(target) if isinstance(target, Target) else target
        if key is not None and (key.target.kind not in KINDS or not KINDS[key.target.kind].measures(key.fused)):
            known = ", ".join(sorted(k for k, v in KINDS.items() if v.measures()))
            raise UsageError(f"cannot measure on target kind '{key.target.kind}'; known: {known}")
        if warmup < 0 or repeats < 1:
            raise UsageError(f"need warmup >= 0 and repeats >= 1, got {warmup} and {repeats}")
        self._key = key  # None: torch on the CPU, following torch's thread count
        self.cache = cache if isinstance(cache, CostCache) else CostCache(cache)
        self._fallback = fallback
        self.measure_missing = measure_missing
        self.strict = strict  # a miss (not measured, measure_missing off) is an error, never an estimate
        self.hint = hint  # how to measure what is missing, for that error
        self.warmup, self.repeats = warmup, repeats
        self.stats = {"hits": 0, "fallbacks": 0, "measured": 0}
        self.missing: set[str] = set()  # keys answered by the fallback
        self._mem: dict[str, dict[str, float]] = {}  # target cache key -> op key -> seconds

    @property
    def fallback(self) -> Callable[..., float]:
        if self._fallback is None:  # built lazily: the analytical model measures the machine on first use
            self._fallback = AnalyticalCost()
        return self._fallback

    @property
    def cost_key(self) -> CostKey:
        """What the rows are keyed by, now (without an explicit target, torch's thread count may change)."""
        return self._key if self._key is not None else _torch_key(torch.get_num_threads(), torch.__version__)

    @property
    def target(self) -> Target:
        """What measurements are taken on, now."""
        return self.cost_key.target

    @property
    def fingerprint(self) -> str:
        """The cost key now: the ``target`` column of the rows this model reads and writes."""
        return self.cost_key.cache_key

    def _table(self, key: CostKey | None = None) -> tuple[str, dict[str, float]]:
        fp = (key or self.cost_key).cache_key
        if fp not in self._mem:
            self._mem[fp] = self.cache.load(fp)
        return fp, self._mem[fp]

    @staticmethod
    def key(op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape], dtype: str = "float32") -> str:
        """The row's key: ``op_key`` of the normalized attributes; a commutative op's two operand shapes in
        sorted order (``a + b`` and ``b + a`` run one kernel, so the e-graph's commuted twins are one row)."""
        d = OPS[op]
        if d.commutative and len(in_shapes) == 2:
            in_shapes = sorted(in_shapes, key=lambda s: tuple(int(x) for x in s))
        return op_key(op, d.normalize_attrs(attrs), in_shapes, dtype)

    def refresh(self) -> None:
        """Read the cache file's rows into memory (what other processes measured since this one last read), so
        that a batch of lookups asks the file once (``is_cached``, ``lookup(..., ask_file=False)``), not per miss."""
        fp, table = self._table()
        table.update(self.cache.load(fp))

    def lookup(
        self,
        op: str,
        attrs: Mapping[str, Any],
        in_shapes: Sequence[Shape],
        dtype: str = "float32",
        ask_file: bool = True,
    ) -> float | None:
        """The cached time of a configuration, or None (also asks the file, unless ``ask_file`` is False: another
        process may have measured it)."""
        fp, table = self._table()
        key = self.key(op, attrs, in_shapes, dtype)
        if key not in table and ask_file:
            got = self.cache.get(fp, key)
            if got is None:
                return None
            table[key] = got
        return table.get(key)

    def is_cached(self, op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape], dtype: str = "float32") -> bool:
        _, table = self._table()
        return self.key(op, attrs, in_shapes, dtype) in table

    def remember(
        self, op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape], dtype: str = "float32", *, seconds: float
    ) -> None:
        """Price a configuration for this process without measuring it (an interpolated increment): never
        written to the cache, which holds measurements only."""
        _, table = self._table()
        table[self.key(op, attrs, in_shapes, dtype)] = seconds

    def measure(self, op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape], dtype: str = "float32") -> float:
        """Measure one configuration now (even if cached) and store it."""
        ck = self.cost_key
        fp, table = self._table(ck)
        key = self.key(op, attrs, in_shapes, dtype)
        m = ck.kind.load_runner(ck.fused)(ck, op, attrs, in_shapes, dtype, self.warmup, self.repeats)
        self.cache.put(fp, key, op, m.seconds, m.reps, m.iqr)
        table[key] = m.seconds
        self.missing.discard(key)
        self.stats["measured"] += 1
        return m.seconds

    def measure_many(
        self, configs: Sequence[Config], on_done: Callable[[Config], None] | None = None
    ) -> dict[str, EqsatError]:
        """Measure ``configs`` now (even if cached) and store them, through the target kind's batch runner where
        it has one; returns, by key, the error of each configuration that could not be measured."""
        ck = self.cost_key
        many = ck.kind.load_batch_runner()
        errors: dict[str, EqsatError] = {}
        if many is None:
            for c in configs:
                try:
                    self.measure(*c)
                except EqsatError as e:
                    errors[self.key(*c)] = e
                if on_done is not None:
                    on_done(c)
            return errors
        fp, table = self._table(ck)
        results = many(ck, list(configs), self.warmup, self.repeats, on_done)
        for c, m in zip(configs, results, strict=True):
            key = self.key(*c)
            if isinstance(m, EqsatError):
                errors[key] = m
                continue
            self.cache.put(fp, key, c[0], m.seconds, m.reps, m.iqr)
            table[key] = m.seconds
            self.missing.discard(key)
            self.stats["measured"] += 1
        return errors

    def __call__(self, op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape], dtype: str = "float32") -> float:
        if OPS[op].group is Group.SOURCE:
            return 0.0
        _, table = self._table()
        key = self.key(op, attrs, in_shapes, dtype)
        hit = table.get(key)
        if hit is not None:
            self.stats["hits"] += 1
            return hit
        if self.measure_missing:
            got = self.lookup(op, attrs, in_shapes, dtype)
            if got is not None:
                self.stats["hits"] += 1
                return got
            return self.measure(op, attrs, in_shapes, dtype)
        if self.strict:
            what = " ".join([op, str([tuple(s) for s in in_shapes]), *([str(dict(attrs))] if attrs else []), dtype])
            raise UsageError(
                f"no measured cost for {what} on {self.fingerprint} in {self.cache.path}",
                hint=self.hint or "measure it first (`eqsat costs profile MODEL --egraph`) or measure missing ops now",
            )
        self.stats["fallbacks"] += 1
        self.missing.add(key)
        return float(self.fallback(op, attrs, in_shapes, dtype))

    def __repr__(self) -> str:
        return f"MeasuredCost({self.fingerprint!r}, cache={self.cache!r}, measure_missing={self.measure_missing})"


# ------------------------------------------------------------------ profiling


def graph_configs(graph: Any, dtype: str = "float32") -> list[Config]:
    """Distinct run-time op configurations of a graph (weight-only nodes are precomputed: skipped)."""
    const = graph.weight_only()
    seen: dict[str, Config] = {}
    for n in graph.compute_nodes():
        if n.id in const:
            continue
        shapes = tuple(graph.shape_of(v) for v in n.inputs)
        seen.setdefault(op_key(n.op, n.attrs, shapes, dtype), (n.op, dict(n.attrs), shapes, dtype))
    return list(seen.values())


def egraph_configs(data: Any, dtype: str = "float32") -> list[Config]:
    """Distinct op configurations of every e-node extraction could pick (``EGraphData``), weight-only skipped."""
    seen: dict[str, Config] = {}
    for cid, nodes in data.classes.items():
        if cid in data.weight_only:
            continue
        for n in nodes:
            if OPS[n.op].group is Group.SOURCE:
                continue
            shapes = tuple(data.shapes[c] for c in n.children)
            seen.setdefault(op_key(n.op, n.attrs, shapes, dtype), (n.op, dict(n.attrs), shapes, dtype))
    return list(seen.values())


def profile_configs(
    configs: Iterable[Config], model: MeasuredCost, on_progress: Callable[[int, int, str], None] | None = None
) -> int:
    """Measure every configuration not cached yet; returns how many were measured."""
    todo = [c for c in configs if model.lookup(*c) is None]
    for i, (op, attrs, shapes, dtype) in enumerate(todo):
        model.measure(op, attrs, shapes, dtype)
        if on_progress is not None:
            on_progress(i + 1, len(todo), model.key(op, attrs, shapes, dtype))
    return len(todo)


def profile_graph(graph: Any, model: MeasuredCost, on_progress: Callable[[int, int, str], None] | None = None) -> int:
    """Measure every distinct non-weight-only op configuration of ``graph`` not cached yet."""
    return profile_configs(graph_configs(graph), model, on_progress)


def cached_entries(cache: CostCache | str | Path | None = None, target: str | None = None) -> list[dict[str, Any]]:
    """Every cached measurement (for ``eqsat costs show``): target, op, attrs, in_shapes, dtype, seconds, ..."""
    c = cache if isinstance(cache, CostCache) else CostCache(cache)
    return c.entries(target)
