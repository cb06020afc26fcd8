"""The registry's types (``OpDef``, ``AttrSpec``, groups, cost classes, fusion roles) and ``OPS`` itself.

The ops are defined in the sibling modules, by group; :mod:`rewrite.ir.ops` imports them all.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import torch

from rewrite.ir.dtypes import FLOAT, DTypeError, DTypeRule
from rewrite.ir.errors import ShapeError
from rewrite.ir.shapes import (
    Attrs,
    Shape,
    ShapeRule,
    need,
)


class Group(str, Enum):
    SOURCE = "source"  # no tensor inputs: graph inputs and weights (bound by name), constants (built by ref)
    ELEMENTWISE = "elementwise"
    CONTRACTION = "contraction"
    LAYOUT = "layout"
    POOLING = "pooling"
    NORMALIZATION = "normalization"
    INDEXING = "indexing"  # reads one operand at positions given by an int64 operand
    REDUCTION = "reduction"


class CostClass(str, Enum):
    """How the analytical cost model prices an op (``costs/analytical.py``)."""

    FREE = "free"  # graph inputs and weights
    VIEW = "view"  # moves no data: a view's overhead
    MATMUL = "matmul"  # a GEMM-like contraction: matmul launch overhead, matmul peak
    CONV = "conv"  # a convolution: conv launch overhead, conv (or depthwise) peak
    OP = "op"  # anything else: roofline with the per-op overhead


class FusionRole(str, Enum):
    """What fusion (``lower/fusion.py``) may do with an op."""

    ELEMENTWISE = "elementwise"  # injective; fuses as an epilogue of a contraction or into a consumer's loads
    REMAP = "remap"  # injective pure index remap (transpose, slice); may be inlined into any operand
    INJECTIVE = "injective"  # injective but not an epilogue nor a pure remap (pad2d)
    CONTRACTION = "contraction"  # anchors a kernel; epilogues fuse after it
    ALIAS = "alias"  # a view: no kernel, aliases its input's storage (reshape)
    ROW = "row"  # a single fused row kernel by construction (softmax, layernorm)
    POOL = "pool"  # a pooling kernel
    OPAQUE = "layout"  # its own kernel (concat, split), or no kernel (sources)
    # its own kernel, reading its operands where they are stored and writing its result in place (a backend
    # routine's call: matmul_integer's micro-kernel): no producer inlined into it, nothing fused after it
    CALL = "call"
    # as CALL, and the ops of a private elementwise chain after it (any dtypes along it: a quantized model's
    # requantization of conv2d_integer's int32 sums into uint8) are applied by its lowering itself as it stores
    # each block (``lower.ops_to_loops.core.PointwiseEpilogue``): the int32 result is never written whole
    CALL_EPILOGUE = "call+epilogue"


class AttrKind(str, Enum):
    INT = "int"
    INTS = "ints"
    FLOAT = "float"
    STR = "str"


@dataclass(frozen=True)
class AttrSpec:
    name: str
    kind: AttrKind
    default: Any = None  # None: required
    choices: tuple[Any, ...] | None = None  # allowed values, checked by OpDef.infer

    def check(self, op: str, value: Any) -> Any:
        """Return ``value`` normalised to this attribute's type, or raise."""
        k = self.kind
        if k is AttrKind.INT and isinstance(value, (int, bool)) and not isinstance(value, float):
            return int(value)
        if k is AttrKind.FLOAT and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if k is AttrKind.STR and isinstance(value, str):
            return value
        if (
            k is AttrKind.INTS
            and isinstance(value, (tuple, list))
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        ):
            return tuple(int(v) for v in value)
        raise TypeError(f"op '{op}': attribute '{self.name}' must be {k.value}, got {value!r}")


@dataclass(frozen=True)
class OnnxSpelling:
    """How standard ONNX writes an op: one node of ``op_type`` on the same inputs.

    ``attrs``: the ONNX attributes this op implies, as ``(name, value, default)`` (``default``: ONNX's value
    when the node omits it).  The importer reads a node as this op when every attribute it carries is one of
    these and each of them (given, or by default) has the value; the exporter writes them all.  A node of
    the same type with other values goes to the op type's own handler (HardSigmoid's other slopes, Selu's
    other constants), which composes registry ops.

        >>> OnnxSpelling("Gelu", (("approximate", "tanh", "none"),)).matches({"approximate": "tanh"})
        True
    """

    op_type: str
    attrs: tuple[tuple[str, Any, Any], ...] = ()

    def matches(self, given: Attrs) -> bool:
        names = {n for n, _, _ in self.attrs}
        return set(given) <= names and all(given.get(n, default) == v for n, v, default in self.attrs)

    def export_attrs(self) -> dict[str, Any]:
        return {n: v for n, v, _ in self.attrs}


@dataclass(frozen=True)
class AtenSpelling:
    """A torch operator overload that computes an op, and the ATen converter that builds it from the call.

    ``overload``: ``namespace.name.overload`` (``"aten.add.Tensor"``; a ``torch.library`` op's namespace
    works as well).  ``converter``: the ATen converter (``aten_base.CONVERTER_FNS``) that reads the call
    (broadcasting, dtype promotion, a number for an operand, ``alpha``): ``a_unary`` (the default) for an
    overload that is the op of its one tensor, with no other argument.  ``attrs``: the op's attributes the
    overload implies (``aten.fmod.Tensor`` is ``mod`` with ``mode="trunc"``); the converter reads the others
    from the call.
    ``training_only``: an overload of torch.export's training IR, which core ATen decomposes (``softmax.int``,
    ``view_as``); it is a row of the export importer's ``CONVERTERS``, not of core ATen's ``ATEN``, and its
    converter may be a training-IR one alone (``a_softmax_int``, a ``training_converter``).

        >>> AtenSpelling("aten.fmod.Tensor", "a_arith", (("mode", "trunc"),)).converter
        'a_arith'
    """

    overload: str
    converter: str = "a_unary"
    attrs: tuple[tuple[str, Any], ...] = ()
    training_only: bool = False


def f32(x: float) -> float:
    """``x`` rounded to float32, as ONNX stores a float attribute."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


VARIADIC = -1
BOUND_SOURCES = ("input", "weight")  # the sources bound by name when a graph runs; the other sources are constants


def _no_flops(i: list[Shape], o: list[Shape], a: Attrs) -> int:
    return 0


_DEFAULT_COST = {Group.SOURCE: CostClass.FREE, Group.CONTRACTION: CostClass.MATMUL}
_DEFAULT_FUSION = {
    Group.ELEMENTWISE: FusionRole.ELEMENTWISE,
    Group.CONTRACTION: FusionRole.CONTRACTION,
    Group.POOLING: FusionRole.POOL,
}


@dataclass(frozen=True)
class OpDef:
    """One operator. ``shape_rule`` gives the output shapes, ``ref`` computes them.

    ``cost_class`` and ``fusion`` default from the group (elementwise ops fuse
    as elementwise, contractions price as matmuls, ...).  ``packed_operand``: a
    contraction's input that the kernel packs (any producer may be inlined into
    it).

    Frontend spellings (the frontends' and the exporter's tables are derived from them):
    ``aten``: the torch operator overloads that compute this op, each an :class:`AtenSpelling` (its
    converter and the attributes it implies), or a plain ``namespace.name.overload`` string for an overload
    that is exactly this op of the same tensors, with no other argument (``"aten.hardswish.default"``: an
    ``a_unary`` row; ``torch.export`` keeps those whole: its default decompositions would split
    ``hardswish`` into clamps).  ``onnx``: its ONNX spelling (:class:`OnnxSpelling`).
    """

    name: str
    group: Group
    arity: int  # number of tensor inputs, or VARIADIC (>= 1)
    attrs: tuple[AttrSpec, ...]
    shape_rule: ShapeRule
    ref: Callable[[list[torch.Tensor], Attrs], list[torch.Tensor]]
    flops: Callable[[list[Shape], list[Shape], Attrs], int] = field(default=_no_flops)
    commutative: bool = False
    doc: str = ""
    cost_class: CostClass | None = None  # None: from the group
    fusion: FusionRole | None = None  # None: from the group
    packed_operand: int | None = None
    dtype_rule: DTypeRule = FLOAT  # input and output dtypes (rewrite/ir/dtypes.py)
    aten: tuple[str | AtenSpelling, ...] = ()
    onnx: OnnxSpelling | None = None
    # (base op, output axes of the bias): this op is act(base(inputs but the last) + bias), its last input a
    # bias along those output axes, its attributes base's and "act" (conv2d_bias_act: ("conv2d", (1,)))
    epilogue_of: tuple[str, tuple[int, ...]] | None = None

    def __post_init__(self) -> None:
        if self.cost_class is None:
            object.__setattr__(self, "cost_class", _DEFAULT_COST.get(self.group, CostClass.OP))
        if self.fusion is None:
            object.__setattr__(self, "fusion", _DEFAULT_FUSION.get(self.group, FusionRole.OPAQUE))

    @property
    def constant(self) -> bool:
        """A source built from its attributes alone (``ref([], attrs)``: an all-ones tensor, an identity matrix).

        Constants are weight-only everywhere (``Graph.weight_only``, the e-graph's ``WeightOnly``): folded
        at compile time, free in extraction, computed once with torch by the lowering.
        """
        return self.group is Group.SOURCE and self.name not in BOUND_SOURCES

    @property
    def aten_spellings(self) -> tuple[AtenSpelling, ...]:
        """``aten`` with each plain overload string as its ``a_unary`` :class:`AtenSpelling`."""
        return tuple(s if isinstance(s, AtenSpelling) else AtenSpelling(s) for s in self.aten)

    @property
    def attr_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.attrs)

    def normalize_attrs(self, attrs: Attrs) -> dict[str, Any]:
        """Check names and types, fill defaults; raises naming the op and attribute."""
        unknown = set(attrs) - set(self.attr_names)
        if unknown:
            raise TypeError(
                f"op '{self.name}': unknown attribute(s) {sorted(unknown)}; it takes {list(self.attr_names) or 'none'}"
            )
        out: dict[str, Any] = {}
        for spec in self.attrs:
            if spec.name in attrs:
                out[spec.name] = spec.check(self.name, attrs[spec.name])
            elif spec.default is not None:
                out[spec.name] = spec.default
            else:
                raise TypeError(f"op '{self.name}': missing required attribute '{spec.name}'")
        return out

    def infer(self, in_shapes: Sequence[Shape], attrs: Attrs) -> list[Shape]:
        """Output shapes; checks arity. Raises ShapeError naming this op."""
        n = len(in_shapes)
        if self.arity == VARIADIC and n < 1:
            raise ShapeError(f"op '{self.name}' needs at least one input")
        if self.arity != VARIADIC and n != self.arity:
            raise ShapeError(f"op '{self.name}' takes {self.arity} input(s), got {n}")
        try:
            for spec in self.attrs:
                if spec.choices is not None:
                    v = attrs[spec.name]
                    need(v in spec.choices, f"{spec.name} must be one of {list(spec.choices)}, got {v!r}")
            return [tuple(int(d) for d in s) for s in self.shape_rule.infer([tuple(s) for s in in_shapes], attrs)]
        except ShapeError as e:
            raise ShapeError(f"op '{self.name}': {e} (inputs {list(in_shapes)}, attrs {dict(attrs)})") from None

    def pieces(self, in_shapes: Sequence[Shape], attrs: Attrs) -> list[int] | None:
        """Element offsets of the pieces in the whole when this op only joins or cuts contiguous stretches
        (``ShapeRule.pieces``: a channel concat or split of one image); the runtime runs no kernel for it and
        the compiled cost model prices it as free.  None for everything else."""
        return self.shape_rule.pieces([tuple(s) for s in in_shapes], attrs)

    def infer_dtype(self, in_dtypes: Sequence[str], attrs: Attrs) -> str:
        """The output dtype (every output of a multi-output op has it). Raises DTypeError naming this op."""
        try:
            return self.dtype_rule.infer(in_dtypes, attrs)
        except DTypeError as e:
            raise DTypeError(f"op '{self.name}': {e}") from None


OPS: dict[str, OpDef] = {}
_BUILTIN: set[str] = set()  # filled by rewrite.ir.ops once every module has registered
_VERSION = [0]  # bumped by every register_op / unregister_op: tables derived from OPS cache on it


def registry_version() -> int:
    """A number that changes whenever an op is registered or removed (derived tables are cached on it)."""
    return _VERSION[0]


def register_op(op: OpDef) -> OpDef:
    """Add an op to the registry (a new op's single definition); raises on a name already taken."""
    if op.name in OPS:
        raise ValueError(f"op '{op.name}' is already registered")
    OPS[op.name] = op
    _VERSION[0] += 1
    return op


def unregister_op(name: str) -> None:
    """Remove an op added with ``register_op`` (tests clean up their toy ops); built-in ops stay."""
    if name in _BUILTIN:
        raise ValueError(f"op '{name}' is built in and cannot be unregistered")
    if OPS.pop(name, None) is not None:
        _VERSION[0] += 1


def ops_in(group: Group) -> frozenset[str]:
    """Names of the ops in one group: rules and passes match sets, not lists."""
    return frozenset(n for n, o in OPS.items() if o.group is group)


def get_op(name: str) -> OpDef:
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"unknown op '{name}'; known ops: {', '.join(sorted(OPS))}") from None
