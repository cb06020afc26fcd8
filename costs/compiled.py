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
  elementwise chain, and (roughly: its extra inputs, its arithmetic) as a contraction's epilogue;
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
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from costs.analytical import AnalyticalCost
from costs.cache import CostCache
from costs.key import CostKey
from costs.measured import Config, MeasuredCost
from rewrite.ir.errors import EqsatError, ShapeError
from rewrite.ir.ops import ACTS, OPS, CostClass, FusionRole, Group, Shape
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
        """The configurations (of priced ops) not cached yet, one per row (commuted twins share one)."""
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
            if key not in self.unmeasurable and table.lookup(*c) is None:
                out.append(c)
        return out

    def profile(self, configs: Iterable[Config], on_progress: Callable[[int, int, str], None] | None = None) -> int:
        """Measure every configuration not cached yet (an unmeasurable one is noted); returns how many.

        Anchors and fused increments are measured in one batch each (the runner compiles a batch's kernels
        together, then times them one by one); ``on_progress(done, total, op)`` after each configuration."""
        todo = self.missing(configs)
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
        return len(todo)

    def __repr__(self) -> str:
        return f"CompiledCost({self.fingerprint!r}, cache={self.cache!r}, measure_missing={self.measure_missing})"


__all__ = ["FUSIBLE", "CompiledCost", "is_free", "is_fusible", "is_placed"]
