"""``Target``: what code is generated for, or what measurements were taken on — one typed record;
``TargetKind``: everything about one kind of target, in one record per kind (``KINDS``).

Plain data, shared by the layers that must agree on it without importing each other: ``lower``
compiles kernels for a Target (and caches them under its key), ``costs`` keys measured operator times
by one, the pipeline picks rules, cost model and run check by asking the target's kind.

    >>> t = Target("torch", name="torch-cpu", threads=2, versions=(("torch", "2.13.0"),))
    >>> t.cache_key
    'torch-cpu|threads=2|torch=2.13.0'
    >>> Target("llvm", cpu="rocketlake", features=("+avx512f",), vector_width=16, mr=8, nr=32).code_key
    'llvm|cpu=rocketlake|features=21de4f02f53fc45f|vector=16|tile=8x32'
    >>> Target("cuda", name="cuda-sm_90", arch="sm_90", warp=32, precision="tf32").code_key
    'cuda-sm_90|arch=sm_90|warp=32|precision=tf32'
    >>> sorted(Target("cuda", precision="tf32").kind_info.skips_families)
    ['blocked', 'im2col', 'winograd']

Fields that do not apply to a kind stay empty (``""``, ``()``, ``0``) and are left out of its keys, and
so is the exact precision ``"fp32"``.

A kind (like TVM's ``TARGET_KIND_REGISTER``) says how to detect this host as a target of the kind, which
backend compiles for it, how its costs are measured, its precisions and their tolerances, the rule
families it leaves out, its schedule recipe, and whether it compiles at all.  Passes ask the kind
(``target.kind_info.skips_families``); they do not branch on its name.  What lives in a higher layer
(a backend, a runner, a recipe) is named ``"module:attribute"`` and imported when first asked for, so
the record sits here, at the bottom, and is complete without anyone importing anything first.  A new
kind is one record: ``register_kind(TargetKind("tpu", host=..., backend=..., ...))``.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from rewrite.ir.errors import UsageError

# How contractions do their arithmetic: exact FP32 (every kind), or TF32 tensor cores (10-bit mantissa
# products, FP32 sums; a GPU's default).  The first is left out of keys: "exact" is what a key without
# one always meant.
PRECISIONS = ("fp32", "tf32")
FP32_REL_TOL = 1e-4  # float32 results: max|ours - ref| <= this * max|ref| (verify() and compiled-vs-PyTorch)
TF32_REL_TOL = 5e-3  # TF32 tensor cores' products, FP32 sums: what their results are checked to
# a graph that rounds values to a half type (a half model: every op's result rounded): torch.testing's rtol for that
# dtype.  Summing in another order can move a rounding by one unit of the half type, and the next ops carry it on
HALF_REL_TOL = {"float16": 1e-3, "bfloat16": 1.6e-2}


@dataclass(frozen=True)
class Target:
    """A backend kind on one machine, with the facts schedules, code generation and caches read.

    ``kind`` names its ``TargetKind`` (``"llvm"``, ``"cuda"``, ``"torch"``); ``name`` labels the target in
    keys and messages (default: the kind).  A CPU: ``triple``, ``cpu`` and ``features`` are LLVM's names
    for the machine, ``vector_width`` the f32 lanes of one SIMD register, ``mr`` x ``nr`` the GEMM
    micro-kernel's register tile.  A GPU: ``arch`` its compute capability (``"sm_90"``), ``warp`` the
    threads of a warp.  ``precision`` is how contractions do their arithmetic (one of the kind's
    ``precisions``: ``"fp32"`` exact, ``"tf32"`` tensor cores); ``threads`` how many host threads kernels
    run on; ``versions`` the software whose version results depend on (``("torch", "2.13.0")``).
    """

    kind: str
    name: str = ""
    triple: str = ""
    cpu: str = ""
    features: tuple[str, ...] = field(default=(), repr=False)  # ~100 of them for a host CPU: keys hold a digest
    vector_width: int = 0
    mr: int = 0
    nr: int = 0
    arch: str = ""
    warp: int = 0
    precision: str = "fp32"
    threads: int = 1
    versions: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not self.kind:
            raise UsageError("a target needs a kind (e.g. 'llvm')")
        if not self.name:
            object.__setattr__(self, "name", self.kind)  # frozen: the one default derived from another field
        if not isinstance(self.threads, int) or self.threads < 1:
            raise UsageError(f"target {self.name}: threads must be a positive integer, got {self.threads!r}")
        if self.vector_width < 0 or self.mr < 0 or self.nr < 0 or self.warp < 0:
            raise UsageError(f"target {self.name}: vector width, warp and tile sizes cannot be negative")
        if not isinstance(self.features, tuple):
            raise UsageError(f"target {self.name}: features must be a tuple of strings like '+avx512f'")
        kind = KINDS.get(self.kind)
        offered = kind.precisions if kind is not None else PRECISIONS
        if self.precision not in offered:
            raise UsageError(f"target {self.name}: precision {self.precision!r} is not one of {', '.join(offered)}")

    @property
    def kind_info(self) -> TargetKind:
        """The record of this target's kind (``UsageError`` for a kind nobody declared)."""
        return kind_of(self.kind)

    def with_threads(self, threads: int) -> Target:
        """The same target running on ``threads`` threads."""
        return self if threads == self.threads else replace(self, threads=threads)

    def has_feature(self, feature: str) -> bool:
        """Whether ``+feature`` is among the features (``t.has_feature("avx512f")``)."""
        return f"+{feature}" in self.features

    @cached_property
    def code_key(self) -> str:
        """What generated machine code depends on: the cache key without the thread count.

        Kernels take the range of their parallel loop as arguments, so one object file serves
        every thread count (thread-dependent choices, like block sizes, are in the IR text)."""
        return "|".join(self._parts(threads=False))

    @cached_property
    def cache_key(self) -> str:
        """Everything results on this target depend on, as one string: keys measured costs."""
        return "|".join(self._parts(threads=True))

    def _parts(self, threads: bool) -> list[str]:
        parts = [self.name]
        if threads:
            parts.append(f"threads={self.threads}")
        if self.triple:
            parts.append(self.triple)
        if self.cpu:
            parts.append(f"cpu={self.cpu}")
        if self.arch:
            parts.append(f"arch={self.arch}")
        if self.features:  # LLVM lists ~100 of them: a digest keeps keys short and still exact enough
            digest = hashlib.sha256(",".join(self.features).encode()).hexdigest()[:16]
            parts.append(f"features={digest}")
        if self.vector_width:
            parts.append(f"vector={self.vector_width}")
        if self.warp:
            parts.append(f"warp={self.warp}")
        if self.mr or self.nr:
            parts.append(f"tile={self.mr}x{self.nr}")
        if self.precision != PRECISIONS[0]:
            parts.append(f"precision={self.precision}")
        parts += [f"{k}={v}" for k, v in self.versions]
        return parts


# ------------------------------------------------------------------ kinds

# A fact that lives in a layer above this one: the object itself, or where to find it, "module:attribute",
# imported on first use (``resolve``).
Lazy = Any


@functools.cache
def _import(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    if not module or not attr:
        raise UsageError(f"a lazy reference is 'module:attribute', not {ref!r}")
    return getattr(importlib.import_module(module), attr)


def resolve(ref: Lazy) -> Any:
    """``ref`` itself, or (a ``"module:attribute"`` string) the attribute of that module, imported now."""
    return _import(ref) if isinstance(ref, str) else ref


@dataclass(frozen=True, kw_only=True)
class TargetKind:
    """Everything about one kind of target (see the module docstring); ``Lazy`` fields are the object or
    ``"module:attribute"``.

    * ``host(threads) -> Target``: this machine as a target of the kind (``LoweringError`` when it has
      none, e.g. no GPU);
    * ``compiled``: graphs are compiled to kernels (``backend``), priced by their measured costs
      (``cost_key``, the runners) and run-checked; else they run eagerly, priced by the analytical model;
    * ``backend``: the ``lower.backend.Backend`` that compiles and launches its kernels;
    * ``cost_key(target, threads) -> costs.key.CostKey``: what its measured rows are keyed by (the target
      on this host, with the versions measurements depend on);
    * ``runner`` / ``fused_runner``: ``run(key, op, attrs, in_shapes, dtype, warmup, repeats) ->
      Measurement``, an op's own time / what it adds fused into a neighbour; ``batch_runner``:
      ``many(key, configs, warmup, repeats, on_done)``, either of them over a batch;
    * ``precisions``: how its contractions may do their arithmetic, the default first;
      ``tolerances``: the relative error each is checked to;
    * ``skips_families``: rule families left out of its default rules;
    * ``recipe(kernel, gemm, const_names, target) -> Schedule``: its default schedule of a kernel;
    * ``threaded``: kernels run on ``threads`` host cores (else on a device: the thread count does not
      apply, and other processes' threads do not compete with them).
    """

    name: str
    host: Lazy
    compiled: bool = True
    backend: Lazy = None
    cost_key: Lazy = None
    runner: Lazy = None
    fused_runner: Lazy = None
    batch_runner: Lazy = None
    precisions: tuple[str, ...] = (PRECISIONS[0],)
    tolerances: tuple[tuple[str, float], ...] = ((PRECISIONS[0], FP32_REL_TOL),)
    skips_families: frozenset[str] = frozenset()
    recipe: Lazy = None
    threaded: bool = True

    def __post_init__(self) -> None:
        bad = [p for p in self.precisions if p not in PRECISIONS]
        if not self.precisions or bad:
            raise UsageError(f"target kind {self.name}: precisions must be among {', '.join(PRECISIONS)}, got {bad}")
        if {p for p, _ in self.tolerances} != set(self.precisions):
            raise UsageError(f"target kind {self.name}: one tolerance per precision ({', '.join(self.precisions)})")
        if self.compiled and (self.backend is None or self.recipe is None):
            raise UsageError(f"target kind {self.name}: a compiled kind needs a backend and a schedule recipe")

    @property
    def default_precision(self) -> str:
        return self.precisions[0]

    def detect(self, threads: int) -> Target:
        """This machine as a target of the kind, running kernels on ``threads`` threads."""
        target = resolve(self.host)(threads)
        assert isinstance(target, Target) and target.kind == self.name, (self.name, target)
        return target

    def load_backend(self) -> Any:
        """The backend compiling for the kind (a ``lower.backend.Backend``), or None for one that compiles none."""
        return resolve(self.backend)

    def load_recipe(self) -> Callable[..., Any]:
        """``recipe(kernel, gemm, const_names, target) -> Schedule``: the kind's default schedule."""
        if self.recipe is None:
            raise UsageError(f"target kind {self.name} schedules no kernels")
        return resolve(self.recipe)

    def measures(self, fused: bool = False) -> bool:
        """Whether the kind has a runner for an op's own time (or, ``fused``, for its fused increment)."""
        return (self.fused_runner if fused else self.runner) is not None

    def load_runner(self, fused: bool = False) -> Callable[..., Any]:
        """The runner measuring one configuration (``fused``: its increment fused into a neighbour)."""
        ref = self.fused_runner if fused else self.runner
        if ref is None:
            raise UsageError(f"cannot measure {'fused increments ' if fused else ''}on target kind '{self.name}'")
        return resolve(ref)

    def load_batch_runner(self) -> Callable[..., Any] | None:
        return resolve(self.batch_runner)

    def make_cost_key(self, target: str | Target, threads: int | None = None) -> Any:
        """The ``costs.key.CostKey`` its compiled costs on ``target`` (a kind name: this host) are keyed by."""
        if self.cost_key is None:
            raise UsageError(f"target kind {self.name} has no compiled costs")
        return resolve(self.cost_key)(target, threads)

    def tolerance(self, precision: str) -> float:
        """The relative error results in ``precision`` are checked to."""
        return dict(self.tolerances)[precision]


KINDS: dict[str, TargetKind] = {}


def register_kind(kind: TargetKind) -> TargetKind:
    """Declare a kind: from now on ``Target(kind.name, ...)`` records and the name ``kind.name`` resolve to it."""
    KINDS[kind.name] = kind
    return kind


def kind_of(target: str | Target) -> TargetKind:
    """The record of ``target``'s kind (a kind name or a Target); ``UsageError`` for an undeclared kind."""
    name = target.kind if isinstance(target, Target) else target
    kind = KINDS.get(name)
    if kind is None:
        raise UsageError(f"unknown target kind {name!r}; declared: {', '.join(repr(k) for k in KINDS)}")
    return kind


def compiled_kinds() -> tuple[str, ...]:
    """The declared kinds that compile graphs to kernels, in declaration order (``("llvm", "cuda")``)."""
    return tuple(k for k, v in KINDS.items() if v.compiled)


# Winograd's transforms and the blocked layout where they do not pay.  Eager PyTorch runs Winograd's transforms
# through their reference einsums: vgg19 with them ran 2.5x slower in eager than without (bench search,
# 2026-11-23), while the analytical model priced them 3x cheaper; the blocked layout's convolutions run as their
# reference's permutes around a conv2d.  On a GPU, Winograd F(4x4, 3x3) through TF32 tensor cores: the transforms
# amplify TF32's rounding (0.16 absolute error on unit-normal inputs in tests/lower/test_cuda_codegen.py), and
# exact FP32 would give up the tensor cores; the blocked layout NCHWc16 is a CPU vector layout (a GPU's threads
# own pixels, not 16-lane vectors).
_NOT_WINOGRAD_OR_BLOCKED = frozenset({"winograd", "blocked"})
# ``conv2d_im2col`` is a CPU lowering of conv2d (lower/ops_to_loops/contraction.py): in eager PyTorch and on a
# GPU it computes exactly as conv2d does, so offering it there only doubles what extraction prices.
_CPU_FAMILIES = _NOT_WINOGRAD_OR_BLOCKED | {"im2col"}

LLVM = register_kind(
    TargetKind(
        name="llvm",  # LLVM code for this CPU, through llvmlite
        host="lower.target:llvm_host",
        backend="lower.llvm:BACKEND",
        cost_key="lower.llvm.measure:cost_key",
        runner="lower.llvm.measure:run_llvm_op",
        fused_runner="lower.llvm.measure:run_llvm_fused",
        batch_runner="lower.llvm.measure:run_llvm_many",
        recipe="lower.schedule.recipes:cpu_recipe",
    )
)
CUDA = register_kind(
    TargetKind(
        name="cuda",  # the first GPU: NVRTC and the driver API (lower/cuda), timed with CUDA events
        host="lower.cuda:cuda_host",
        backend="lower.cuda:BACKEND",
        cost_key="lower.cuda.measure:cost_key",
        runner="lower.cuda.measure:run_cuda_anchor",
        fused_runner="lower.cuda.measure:run_cuda_fused",
        precisions=("tf32", "fp32"),  # TF32 tensor cores unless EQSAT_CUDA_EXACT_FP32 (read by cuda_host)
        tolerances=(("tf32", TF32_REL_TOL), ("fp32", FP32_REL_TOL)),
        skips_families=_CPU_FAMILIES,
        recipe="lower.schedule.gpu_recipes:gpu_schedule",
        threaded=False,
    )
)
TORCH = register_kind(
    TargetKind(
        name="torch",  # PyTorch eager on this CPU: graphs run as they are, priced by the analytical model
        host="costs.measured:torch_target",
        compiled=False,
        runner="costs.measured:run_torch_op",  # the measured model (``--cost measured``)
        skips_families=_CPU_FAMILIES,
    )
)


__all__ = [
    "CUDA",
    "FP32_REL_TOL",
    "HALF_REL_TOL",
    "KINDS",
    "LLVM",
    "PRECISIONS",
    "TF32_REL_TOL",
    "TORCH",
    "Lazy",
    "Target",
    "TargetKind",
    "compiled_kinds",
    "kind_of",
    "register_kind",
    "resolve",
]
