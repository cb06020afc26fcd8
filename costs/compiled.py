"""The compiled cost model: an e-node priced as it runs after lowering, measured through compiled kernels.

``CompiledCost(target)`` has the cost-model signature ``(op, attrs, in_shapes, dtype) -> seconds`` for a
target whose kernels are compiled (kind ``"llvm"``: this CPU; ``"cuda"``: a GPU).  The lowering fuses
(``lower/fusion.py``), so one number per op alone would over-price the ops that fuse away; each op is
priced by its fusion role:

* a view (``reshape``: the runtime makes no kernel), a source, and a concat or split of contiguous
  stretches (``is_placed``: the kernels around it write and read its pieces in place) cost nothing;
* an **injective** op (elementwise, batchnorm, transpose/slice/expand, pad) costs what it *adds when fused*:
  the kernel time of ``relu(op(x...))`` — one kernel, ``op`` inlined into ``relu``'s loads — minus that
  of ``relu`` alone on ``op``'s output shape, timed interleaved.  That is what it costs as a prologue, in an
  elementwise chain, and (roughly: its extra inputs, its arithmetic) as a contraction's epilogue; a
  graph's many sizes of one increment are measured at a few and interpolated between them (``sample``);
* every other op (contractions, pools, reductions, softmax/layernorm, concat/split, gathers) is an anchor:
  it costs its own kernels' time when compiled alone, with the weight operands of contractions as
  constants (pre-packed at compile time, as in a real graph);
* a contraction with a bias epilogue (``OpDef.epilogue_of``: ``conv2d_bias_act`` is ``act(conv2d(x, w) +
  b)``) and its unbiased twin (``conv2d``) are one anchor row, ``act "none"``, an activation adding its
  fused increment (``parts``): the lowering builds the same kernel from every spelling of it.

Both kinds of rows live in the measured-cost cache (``costs.cache``) like torch's, under a ``CostKey``
(``costs.key``): anchors under the key, fused increments under ``key.as_fused()``.  The runners that
compile and time kernels need ``lower``, which ``costs`` may not import: the target's kind names them
(``TargetKind.runner`` / ``fused_runner`` / ``batch_runner``, ``"lower.llvm.measure:run_llvm_op"``;
the cuda kind's are timed with CUDA events, and a GPU target's key names the device, its compute
capability, precision, the driver and NVRTC, so each GPU has its own rows).  A configuration that
cannot be measured (an op without a lowering, an index operand the runner cannot feed) is priced by the
fallback model and counted in ``stats["unmeasurable"]``.

    >>> model = CompiledCost(kind_of("llvm").make_cost_key("llvm"), measure_missing=True)   # doctest: +SKIP
    >>> model("relu", {}, [(1, 64, 56, 56)]) < model("conv2d", {...}, [...])  # doctest: +SKIP
    True
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from costs.analytical import AnalyticalCost
from costs.cache import CostCache
from costs.key import CostKey
from costs.measured import Config, MeasuredCost
from rewrite import config
from rewrite.ir.errors import EqsatError, ShapeError
from rewrite.ir.ops import ACTS, OPS, AttrKind, CostClass, FusionRole, Group, Shape
from rewrite.ir.target import Target

# roles whose ops fuse into a neighbour's kernel (prologue, elementwise chain, epilogue)
FUSIBLE = frozenset({FusionRole.ELEMENTWISE, FusionRole.REMAP, FusionRole.INJECTIVE})


def is_fusible(op: str) -> bool:
    """Whether the lowering fuses ``op`` into a neighbour (priced by its fused increment)."""
    return OPS[op].fusion in FUSIBLE


def is_free(op: str) -> bool:
    """Sources and views: no kernel at run time."""
    d = OPS[op]
    return d.group is Group.SOURCE or d.fusion is FusionRole.ALIAS


def is_placed(op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape]) -> bool:
    """A concat or split of contiguous stretches (``OpDef.pieces``): the lowering keeps its pieces as views
    of the whole, so it runs no kernel (``lower/fusion.py``)."""
    return OPS[op].pieces(in_shapes, attrs) is not None


@functools.cache
def _biased_twins() -> dict[str, tuple[str, tuple[int, ...]]]:
    """Base op -> the op that is it with a bias epilogue and the bias's output axes (``OpDef.epilogue_of``
    read backwards)."""
    return {d.epilogue_of[0]: (name, d.epilogue_of[1]) for name, d in OPS.items() if d.epilogue_of is not None}


# Fused increments are sampled, not each measured: the configurations of one family (``family``: one op
# spelled one way, at many sizes) are measured at the smallest and largest size and wherever the sizes
# measured would lie more than SAMPLE_SPAN times apart, and the rest are interpolated in output size between
# the two measured neighbours.  An increment is a few microseconds beside its consumer's kernel (relu on the
# same shape), and full:mobilenet_v2's 73 (20 slices, 20 clamps, 18 batchnorms, 15 adds) took 4.3 of its
# 11.5 s of cold measurement; sampled, 18 are measured.
SAMPLE_SPAN = 8.0
# attributes that only say how much (a slice's bounds, an expand's or resize's sizes, the pads): configurations
# differing in them alone are one family; every other attribute (an axis, a permutation, a mode) names another
_SIZE_ATTRS = frozenset({"start", "end", "shape", "size", "pads"})


def family(op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape], dtype: str) -> tuple[Any, ...]:
    """What a fused increment's configuration is beside its size: the op, its attributes but the sizes and
    values (``_SIZE_ATTRS``; a float is a value: ``smul``'s scalar, ``clamp``'s bounds), the dtype, and per
    input its rank and which of its axes broadcast against the output (aligned from the right)."""
    d = OPS[op]
    kinds = {a.name: a.kind for a in d.attrs}
    kept = tuple(
        sorted(
            (k, str(v))
            for k, v in d.normalize_attrs(attrs).items()
            if k not in _SIZE_ATTRS and kinds.get(k) is not AttrKind.FLOAT
        )
    )
    out = _out_shape(op, attrs, in_shapes)
    bcast = tuple(
        tuple(int(s[-i]) == 1 and int(out[-i]) != 1 for i in range(1, len(s) + 1) if i <= len(out)) for s in in_shapes
    )
    return (op, kept, dtype, len(out), bcast)


def _out_shape(op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape]) -> Shape:
    d = OPS[op]
    return d.infer([tuple(int(x) for x in s) for s in in_shapes], d.normalize_attrs(attrs))[0]


def _size(c: Config) -> int:
    """A fused increment's size: its output's elements (what the consumer's loads run over)."""
    return math.prod(int(x) for x in _out_shape(c[0], c[1], c[2]))


def sample(todo: Sequence[Config], known: Sequence[Config]) -> tuple[list[Config], list[Config]]:
    """Which of a fused table's ``todo`` configurations to measure and which to interpolate, given the
    ``known`` (measured) ones: per ``family``, sizes measured at its smallest and largest, and between them
    enough that consecutive measured sizes are at most ``SAMPLE_SPAN`` apart (greedily, from the smallest: a
    size is measured when the next one lies beyond the span of the last measured), one configuration per
    size.  Decided on sizes alone, so that the same configurations with the first plan's measurements known
    plan nothing more; every interpolated configuration lies between two measured sizes of its family."""
    fams: dict[tuple[Any, ...], tuple[list[tuple[int, Config]], set[int]]] = {}
    measure: list[Config] = []
    derive: list[Config] = []
    for c in todo:
        try:
            fams.setdefault(family(*c), ([], set()))[0].append((_size(c), c))
        except EqsatError:  # shapes its op refuses: measured alone, where the runner says why
            measure.append(c)
    for c in known:
        f = family(*c)
        if f in fams:
            fams[f][1].add(_size(c))
    for members, known_sizes in fams.values():
        sizes = sorted({n for n, _ in members} | known_sizes)
        chosen = set(known_sizes) | {sizes[0], sizes[-1]}
        last = sizes[0]
        for n, nxt in itertools.pairwise(sizes):
            if n not in chosen and nxt > last * SAMPLE_SPAN:  # the next size is beyond the last measured's span
                chosen.add(n)
            if n in chosen:
                last = n
        for n, c in members:
            if n in chosen and n not in known_sizes:
                measure.append(c)
                known_sizes.add(n)  # one configuration per size
            else:
                derive.append(c)
    return measure, derive


def interpolate(c: Config, points: Sequence[tuple[int, float]]) -> float:
    """``c``'s seconds from its family's measured ``(size, seconds)``: a measured size's own (their mean where
    several share it), else linear in size between the measured neighbours (the nearest end outside them)."""
    n = _size(c)
    at: dict[int, list[float]] = {}
    for size, s in points:
        at.setdefault(size, []).append(s)
    xs = sorted(at)
    ys = [sum(at[x]) / len(at[x]) for x in xs]
    if n in at:
        return ys[xs.index(n)]
    if n <= xs[0]:
        return ys[0]
    if n >= xs[-1]:
        return ys[-1]
    hi = next(i for i, x in enumerate(xs) if x > n)
    x0, x1, y0, y1 = xs[hi - 1], xs[hi], ys[hi - 1], ys[hi]
    return y0 + (y1 - y0) * (n - x0) / (x1 - x0)


class CompiledCost:
    """Costs of compiled kernels under ``key`` (see the module docstring; a plain ``Target`` is keyed as it
    is).  What is not cached is measured now (``measure_missing``) or priced by ``fallback`` (analytical by
    default) and counted."""

    def __init__(
        self,
        key: CostKey | Target,
        cache: CostCache | str | Path | None = None,
        measure_missing: bool = False,
        fallback: Callable[..., float] | None = None,
        warmup: int = 3,
        repeats: int = 15,
    ) -> None:
        self.cost_key = key if isinstance(key, CostKey) else CostKey(key)
        self.target = self.cost_key.target  # what the kernels are compiled for and run on
        self._fallback = fallback
        self.kernels = MeasuredCost(self.cost_key, cache, self._fall, measure_missing, warmup, repeats)
        self.fused = MeasuredCost(
            self.cost_key.as_fused(), self.kernels.cache, self._fall, measure_missing, warmup, repeats
        )
        self.unmeasurable: dict[str, str] = {}  # config key -> why it could not be measured
        self._unmeasurable_stats = 0
        self._interpolated = 0
        self._derived: set[str] = set()  # fused keys priced by interpolation (never points to interpolate from)

    @property
    def measure_missing(self) -> bool:
        return self.kernels.measure_missing

    @measure_missing.setter
    def measure_missing(self, on: bool) -> None:
        self.kernels.measure_missing = self.fused.measure_missing = on

    @property
    def fallback(self) -> Callable[..., float]:
        if self._fallback is None:  # built lazily: the analytical model measures the machine on first use
            self._fallback = AnalyticalCost()
        return self._fallback

    def _fall(self, op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape], dtype: str = "float32") -> float:
        return float(self.fallback(op, attrs, in_shapes, dtype))

    @property
    def cache(self) -> CostCache:
        return self.kernels.cache

    @property
    def fingerprint(self) -> str:
        return self.cost_key.cache_key

    @property
    def stats(self) -> dict[str, int]:
        a, b = self.kernels.stats, self.fused.stats
        out = {k: a[k] + b[k] for k in a}
        out["unmeasurable"] = self._unmeasurable_stats
        out["interpolated"] = self._interpolated
        return out

    def table(self, op: str) -> MeasuredCost | None:
        """Which measurements price ``op``: the fused increments, the anchors', or none (free)."""
        if is_free(op):
            return None
        return self.fused if is_fusible(op) else self.kernels

    def parts(
        self, op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape], dtype: str = "float32"
    ) -> list[Config]:
        """The configurations that price ``op``.  An op with a bias epilogue (``OpDef.epilogue_of``) is the
        base kernel with the bias and the activation in its epilogue, and ``lower/fusion.py`` builds that
        same kernel from ``relu(conv2d(x, w) + b)``, so one row prices every spelling of it:

        * ``conv2d_bias_act`` with an activation: its ``act "none"`` row plus the activation's fused increment;
        * a convolution without a bias (``conv2d``, ``conv2d_blocked``): the ``act "none"`` row of its biased
          twin, a bias in a contraction's epilogue costing next to nothing (measured apart, the twins differed
          by their noise: 44.6 against 93.7 us for one 1x1 conv in one cold run, and a quarter of MobileNetV2's
          cold compiles were such twins).  Not a matmul's: its right operand is measured as a layer's weight
          only when it is one, and always in ``matmul_bias_act``;
        * anything else: itself."""
        shapes = tuple(tuple(int(d) for d in s) for s in in_shapes)
        me: list[Config] = [(op, dict(attrs), shapes, dtype)]
        d = OPS[op]
        if dtype != "float32":
            return me
        if d.epilogue_of is not None:
            act = str(attrs.get("act", "none"))
            if ACTS[act] == "identity":
                return me
            out = d.infer(shapes, d.normalize_attrs(attrs))[0]
            return [(op, {**attrs, "act": "none"}, shapes, dtype), (ACTS[act], {}, (tuple(out),), dtype)]
        if op not in _biased_twins() or d.cost_class is not CostClass.CONV:
            return me
        biased, axes = _biased_twins()[op]
        out = d.infer(shapes, d.normalize_attrs(attrs))[0]
        n = math.prod(int(out[a % len(out)]) for a in axes)
        twin: Config = (biased, {**attrs, "act": "none"}, (*shapes, (n,)), dtype)
        try:  # a bias over the output's whole channel axes; a depthwise blocked conv's is its groups only
            OPS[biased].infer(twin[2], OPS[biased].normalize_attrs(twin[1]))
        except ShapeError:
            return me
        return [twin]

    def __call__(self, op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape], dtype: str = "float32") -> float:
        return sum(self._priced(*c) for c in self.parts(op, attrs, in_shapes, dtype))

    def _priced(self, op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape], dtype: str = "float32") -> float:
        table = self.table(op)
        if table is None or is_placed(op, attrs, in_shapes):
            return 0.0
        key = table.key(op, attrs, in_shapes, dtype)
        if key in self.unmeasurable:
            self._unmeasurable_stats += 1
            return self._fall(op, attrs, in_shapes, dtype)
        try:
            return table(op, attrs, in_shapes, dtype)
        except EqsatError as e:  # no lowering, an operand the runner cannot feed: estimate, and say so
            self.unmeasurable[key] = str(e).splitlines()[0]
            self._unmeasurable_stats += 1
            return self._fall(op, attrs, in_shapes, dtype)

    def missing(self, configs: Iterable[Config]) -> list[Config]:
        """The configurations (of priced ops) not cached yet, one per row (commuted twins share one); the cache
        file read once for them all."""
        self.kernels.refresh()
        self.fused.refresh()
        out = []
        seen: set[tuple[int, str]] = set()
        for c in (p for whole in configs for p in self.parts(*whole)):
            table = self.table(c[0])
            if table is None or is_placed(*c[:3]):
                continue
            key = table.key(*c)
            if (id(table), key) in seen:
                continue
            seen.add((id(table), key))
            if key not in self.unmeasurable and not table.is_cached(*c):
                out.append(c)
        return out

    def _known_fused(self, configs: Iterable[Config]) -> list[tuple[Config, float]]:
        """The fused increments among ``configs``' parts already measured (not those interpolated before)."""
        out = []
        for c in (p for whole in configs for p in self.parts(*whole)):
            if self.table(c[0]) is self.fused and not is_placed(*c[:3]) and self.fused.key(*c) not in self._derived:
                # missing() read the file; what this process measured since is in memory
                got = self.fused.lookup(*c, ask_file=False)
                if got is not None:
                    out.append((c, got))
        return out

    def plan(self, configs: Iterable[Config]) -> tuple[list[Config], list[Config]]:
        """What ``profile(configs)`` measures, and which fused increments it interpolates instead
        (``sample``; every one is measured under ``EQSAT_MEASURE_ALL``)."""
        configs = list(configs)
        todo = self.missing(configs)
        fused = [c for c in todo if self.table(c[0]) is self.fused]
        if config.MEASURE_ALL.flag() or not fused:
            return todo, []
        measure, derive = sample(fused, [c for c, _ in self._known_fused(configs)])
        keep = {id(c) for c in measure}
        return [c for c in todo if self.table(c[0]) is not self.fused or id(c) in keep], derive

    def profile(
        self,
        configs: Iterable[Config],
        on_progress: Callable[[int, int, str], None] | None = None,
        planned: tuple[list[Config], list[Config]] | None = None,
    ) -> int:
        """Measure what ``plan(configs)`` says (an unmeasurable configuration is noted), then price the fused
        increments it left out by interpolation (``interpolate``, counted in ``stats["interpolated"]``, kept in
        memory only: the cache holds measurements); returns how many were measured.

        Anchors and fused increments are measured in one batch each (the runner compiles a batch's kernels
        together, then times them one by one); ``on_progress(done, total, op)`` after each configuration.
        ``planned``: what ``plan(configs)`` answered just before (each configuration it left out asked the cache
        file once already)."""
        configs = list(configs)
        todo, derive = planned if planned is not None else self.plan(configs)
        done = [0]

        def tick(c: Config) -> None:
            done[0] += 1
            if on_progress is not None:
                on_progress(done[0], len(todo), c[0])

        for table in (self.kernels, self.fused):
            batch = [c for c in todo if self.table(c[0]) is table]
            if batch:
                for key, e in table.measure_many(batch, tick).items():
                    self.unmeasurable[key] = str(e).splitlines()[0]
        points: dict[tuple[Any, ...], list[tuple[int, float]]] = {}
        for c, s in self._known_fused(configs):
            points.setdefault(family(*c), []).append((_size(c), s))
        for c in derive:
            got = points.get(family(*c))
            if got:  # a family whose every measurement failed: its configurations are measured when priced
                self.fused.remember(*c, seconds=interpolate(c, got))
                self._derived.add(self.fused.key(*c))
                self._interpolated += 1
        return len(todo)

    def __repr__(self) -> str:
        return f"CompiledCost({self.fingerprint!r}, cache={self.cache!r}, measure_missing={self.measure_missing})"


__all__ = [
    "FUSIBLE",
    "SAMPLE_SPAN",
    "CompiledCost",
    "family",
    "interpolate",
    "is_free",
    "is_fusible",
    "is_placed",
    "sample",
]
