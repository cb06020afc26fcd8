"""The operator registry: the single source of truth for every op eqsat knows.

Each op is defined once, here: its typed, named attributes, its input arity,
its group, its shape rule, its reference semantics (torch), its FLOP count, its
cost class, its fusion role and its torch spellings.  Everything else — the
graph IR's checks, the egglog prelude, the rule parser and checker, the cost
models, fusion, the frontends — looks ops up by name in ``OPS``; the lowering
of each op is the one other place an op is written (``lower/ops_to_loops.py``,
``@lowering``).

Where shapes come from: ``OpDef.shape_rule`` is one of the declarative kinds
of :mod:`rewrite.ir.shapes` (``Same``, ``Broadcast``, ``MatMul``, ``Conv2d``,
``Pool2d``, ``Permute``, ``Reshape``, ``Concat``, ``Slice``, ``Pad2d``...).
Each kind is read three ways: ``infer`` here (``OpDef.infer``, the graph IR),
``egg_cases`` by :func:`rewrite.egraph.prelude.prelude` (the generated egglog
``shape`` rules) and ``draw_*`` by :mod:`rewrite.verify.rulecheck.draw` (the
rule checker's random shapes).  None of those three matches op names.

An op added at run time (a test's toy op) goes through ``register_op`` and
``unregister_op``; with a lowering registered in ``lower.ops_to_loops.LOWERINGS``
it goes through import, saturation, extraction, the rule checker and lowering.

    >>> OPS["matmul"].infer([(64, 1024), (1024, 512)], {})
    [(64, 512)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

import torch
import torch.nn.functional as F

from rewrite.ir.dtypes import ANY_SAME, BOOL, COMPARE, DTYPES, FLOAT, FLOAT32, INT64, DTypeError, DTypeRule
from rewrite.ir.errors import ShapeError
from rewrite.ir.shapes import (
    Attrs,
    Broadcast,
    Broadcast3,
    Concat,
    Conv2d,
    Embedding,
    Expand,
    Gather,
    GlobalPool2d,
    GroupedChannels,
    IndexSelect,
    Linear,
    MatMul,
    Pad2d,
    PadN,
    PerChannel,
    Permute,
    Pool2d,
    Reduce,
    Reshape,
    Same,
    Shape,
    ShapeRule,
    Slice,
    Source,
    Spatial2d,
    Split,
    broadcast,
    conv_out,
    need,
    norm_axis,
    numel,
)

__all__ = [
    "ACTS",
    "OPS",
    "VARIADIC",
    "AttrKind",
    "AttrSpec",
    "CostClass",
    "FusionRole",
    "Group",
    "OpDef",
    "Shape",
    "ShapeError",
    "broadcast",
    "conv_out",
    "get_op",
    "norm_axis",
    "numel",
    "ops_in",
    "register_op",
    "unregister_op",
]


class Group(str, Enum):
    SOURCE = "source"  # graph inputs and weights
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


VARIADIC = -1


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
    it).  ``torch_functions`` / ``torch_methods``: the torch callables and
    ``Tensor`` method names the torch frontend maps to this op (unary ops
    without attributes: ``f(x)`` / ``x.f()``).
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
    torch_functions: tuple[Any, ...] = ()
    torch_methods: tuple[str, ...] = ()
    dtype_rule: DTypeRule = FLOAT  # input and output dtypes (rewrite/ir/dtypes.py)

    def __post_init__(self) -> None:
        if self.cost_class is None:
            object.__setattr__(self, "cost_class", _DEFAULT_COST.get(self.group, CostClass.OP))
        if self.fusion is None:
            object.__setattr__(self, "fusion", _DEFAULT_FUSION.get(self.group, FusionRole.OPAQUE))

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

    def infer_dtype(self, in_dtypes: Sequence[str], attrs: Attrs) -> str:
        """The output dtype (every output of a multi-output op has it). Raises DTypeError naming this op."""
        try:
            return self.dtype_rule.infer(in_dtypes, attrs)
        except DTypeError as e:
            raise DTypeError(f"op '{self.name}': {e}") from None


OPS: dict[str, OpDef] = {}
_BUILTIN: set[str] = set()


def register_op(op: OpDef) -> OpDef:
    """Add an op to the registry (a new op's single definition); raises on a name already taken."""
    if op.name in OPS:
        raise ValueError(f"op '{op.name}' is already registered")
    OPS[op.name] = op
    return op


def unregister_op(name: str) -> None:
    """Remove an op added with ``register_op`` (tests clean up their toy ops); built-in ops stay."""
    if name in _BUILTIN:
        raise ValueError(f"op '{name}' is built in and cannot be unregistered")
    OPS.pop(name, None)


_register = register_op


# ---------------------------------------------------------------- sources
def _no_ref(ins: list[torch.Tensor], a: Attrs) -> list[torch.Tensor]:
    raise RuntimeError("source ops are bound by Graph.run, not computed")


for _name in ("input", "weight"):
    _register(
        OpDef(
            _name,
            Group.SOURCE,
            0,
            (
                AttrSpec("name", AttrKind.STR),
                AttrSpec("shape", AttrKind.INTS),
                AttrSpec("dtype", AttrKind.STR, FLOAT32, choices=DTYPES),
            ),
            Source(),
            _no_ref,
            doc=f"a graph {_name}, bound by name",
            dtype_rule=DTypeRule((), "attr"),
        )
    )


# ---------------------------------------------------------------- elementwise
def _ew_flops(per: int) -> Callable[[list[Shape], list[Shape], Attrs], int]:
    return lambda i, o, a: per * numel(o[0])


# name -> (torch function, FLOPs per element, torch spellings: functions, Tensor methods)
_UNARY: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], int, tuple[Any, ...], tuple[str, ...]]] = {
    "relu": (torch.relu, 1, (torch.relu, F.relu), ("relu",)),
    "sigmoid": (torch.sigmoid, 4, (torch.sigmoid, F.sigmoid), ("sigmoid",)),
    "tanh": (torch.tanh, 4, (torch.tanh, F.tanh), ("tanh",)),
    "gelu": (lambda x: F.gelu(x, approximate="tanh"), 8, (), ()),  # F.gelu has its own converter
    "exp": (torch.exp, 4, (torch.exp,), ("exp",)),
    "identity": (lambda x: x, 0, (), ()),
}
for _name, (_fn, _fl, _fns, _methods) in _UNARY.items():
    _register(
        OpDef(
            _name,
            Group.ELEMENTWISE,
            1,
            (),
            Same(),
            (lambda f: lambda xs, a: [f(xs[0])])(_fn),
            _ew_flops(_fl),
            doc=f"elementwise {_name}",
            cost_class=CostClass.VIEW if _name == "identity" else None,
            torch_functions=_fns,
            torch_methods=_methods,
        )
    )

_register(
    OpDef(
        "smul",
        Group.ELEMENTWISE,
        1,
        (AttrSpec("scalar", AttrKind.FLOAT),),
        Same(),
        lambda xs, a: [xs[0] * a["scalar"]],
        _ew_flops(1),
        doc="multiply by a scalar constant",
    )
)

_BINARY: dict[str, tuple[Callable[[torch.Tensor, torch.Tensor], torch.Tensor], bool]] = {
    "add": (torch.add, True),
    "sub": (torch.sub, False),
    "mul": (torch.mul, True),
    "div": (torch.div, False),
}
for _name, (_bfn, _comm) in _BINARY.items():
    _register(
        OpDef(
            _name,
            Group.ELEMENTWISE,
            2,
            (),
            Broadcast(),
            (lambda f: lambda xs, a: [f(xs[0], xs[1])])(_bfn),
            _ew_flops(1),
            commutative=_comm,
            doc=f"elementwise {_name} with broadcasting (equal ranks)",
        )
    )


# ---------------------------------------------------------------- contraction
_register(
    OpDef(
        "matmul",
        Group.CONTRACTION,
        2,
        (),
        MatMul(),
        lambda xs, a: [torch.matmul(xs[0], xs[1])],
        lambda i, o, a: 2 * numel(o[0]) * i[0][-1],
        doc="(batched) matrix product, equal ranks",
        packed_operand=1,
    )
)

_register(
    OpDef(
        "linear",
        Group.CONTRACTION,
        3,
        (),
        Linear(),
        lambda xs, a: [F.linear(xs[0], xs[1], xs[2])],
        lambda i, o, a: 2 * numel(o[0]) * i[1][1] + numel(o[0]),
        doc="x @ w.T + b",
        packed_operand=1,
    )
)

_CONV_ATTRS = (
    AttrSpec("stride", AttrKind.INTS, (1, 1)),
    AttrSpec("padding", AttrKind.INTS, (0, 0)),
    AttrSpec("dilation", AttrKind.INTS, (1, 1)),
    AttrSpec("groups", AttrKind.INT, 1),
)
_register(
    OpDef(
        "conv2d",
        Group.CONTRACTION,
        2,
        _CONV_ATTRS,
        Conv2d(),
        lambda xs, a: [F.conv2d(xs[0], xs[1], None, a["stride"], a["padding"], a["dilation"], a["groups"])],
        lambda i, o, a: 2 * numel(o[0]) * i[1][1] * i[1][2] * i[1][3],
        doc="2-d convolution, NCHW x OIHW, no bias (bias is a separate add)",
        cost_class=CostClass.CONV,
        packed_operand=0,
    )
)


# ---------------------------------------------------------------- layout
_register(
    OpDef(
        "transpose",
        Group.LAYOUT,
        1,
        (AttrSpec("perm", AttrKind.INTS),),
        Permute(),
        lambda xs, a: [xs[0].permute(*a["perm"])],
        doc="permute dimensions",
        fusion=FusionRole.REMAP,
    )
)

_register(
    OpDef(
        "reshape",
        Group.LAYOUT,
        1,
        (AttrSpec("shape", AttrKind.INTS),),
        Reshape(),
        lambda xs, a: [xs[0].reshape(a["shape"])],
        doc="reshape (row-major)",
        cost_class=CostClass.VIEW,
        fusion=FusionRole.ALIAS,
    )
)

_register(
    OpDef(
        "concat",
        Group.LAYOUT,
        VARIADIC,
        (AttrSpec("axis", AttrKind.INT),),
        Concat(),
        lambda xs, a: [torch.cat(xs, a["axis"])],
        doc="concatenate along axis",
    )
)

_register(
    OpDef(
        "split",
        Group.LAYOUT,
        1,
        (AttrSpec("axis", AttrKind.INT), AttrSpec("sizes", AttrKind.INTS)),
        Split(),
        lambda xs, a: list(torch.split(xs[0], list(a["sizes"]), a["axis"])),
        doc="split along axis into pieces of the given sizes (one output each)",
    )
)

_register(
    OpDef(
        "slice",
        Group.LAYOUT,
        1,
        (AttrSpec("axis", AttrKind.INT), AttrSpec("start", AttrKind.INT), AttrSpec("end", AttrKind.INT)),
        Slice(),
        lambda xs, a: [xs[0].narrow(a["axis"], a["start"], a["end"] - a["start"])],
        doc="contiguous slice [start, end) along axis",
        cost_class=CostClass.VIEW,
        fusion=FusionRole.REMAP,
    )
)


# ---------------------------------------------------------------- pooling
_POOL_ATTRS = (
    AttrSpec("kernel", AttrKind.INTS),
    AttrSpec("stride", AttrKind.INTS),
    AttrSpec("padding", AttrKind.INTS, (0, 0)),
    AttrSpec("ceil_mode", AttrKind.INT, 0),
)


def _pool_flops(i: list[Shape], o: list[Shape], a: Attrs) -> int:
    return numel(o[0]) * a["kernel"][0] * a["kernel"][1]


_register(
    OpDef(
        "maxpool2d",
        Group.POOLING,
        1,
        _POOL_ATTRS,
        Pool2d(),
        lambda xs, a: [F.max_pool2d(xs[0], a["kernel"], a["stride"], a["padding"], ceil_mode=bool(a["ceil_mode"]))],
        _pool_flops,
        doc="2-d max pooling",
    )
)
_register(
    OpDef(
        "avgpool2d",
        Group.POOLING,
        1,
        _POOL_ATTRS + (AttrSpec("count_include_pad", AttrKind.INT, 1),),
        Pool2d(),
        lambda xs, a: [
            F.avg_pool2d(
                xs[0],
                a["kernel"],
                a["stride"],
                a["padding"],
                ceil_mode=bool(a["ceil_mode"]),
                count_include_pad=bool(a["count_include_pad"]),
            )
        ],
        _pool_flops,
        doc="2-d average pooling",
    )
)

_register(
    OpDef(
        "global_avgpool",
        Group.POOLING,
        1,
        (),
        GlobalPool2d(),
        lambda xs, a: [xs[0].mean((2, 3), keepdim=True)],
        lambda i, o, a: numel(i[0]),
        doc="mean over H and W, keeping them as size 1",
    )
)


# ---------------------------------------------------------------- normalization
_register(
    OpDef(
        "batchnorm",
        Group.NORMALIZATION,
        5,
        (AttrSpec("eps", AttrKind.FLOAT, 1e-5),),
        PerChannel(1),
        lambda xs, a: [F.batch_norm(xs[0], xs[3], xs[4], xs[1], xs[2], False, 0.0, a["eps"])],
        lambda i, o, a: 2 * numel(o[0]),
        doc="inference batch norm: inputs x, weight, bias, running_mean, running_var",
        fusion=FusionRole.ELEMENTWISE,  # per-channel affine: fuses like an elementwise op
    )
)

_register(
    OpDef(
        "layernorm",
        Group.NORMALIZATION,
        3,
        (AttrSpec("eps", AttrKind.FLOAT, 1e-5),),
        PerChannel(-1),
        lambda xs, a: [F.layer_norm(xs[0], (xs[0].shape[-1],), xs[1], xs[2], a["eps"])],
        lambda i, o, a: 8 * numel(o[0]),
        doc="layer norm over the last axis: inputs x, weight, bias",
        fusion=FusionRole.ROW,
    )
)

_register(
    OpDef(
        "softmax",
        Group.NORMALIZATION,
        1,
        (AttrSpec("axis", AttrKind.INT),),
        Same(axis="axis"),
        lambda xs, a: [torch.softmax(xs[0], a["axis"])],
        lambda i, o, a: 6 * numel(o[0]),
        doc="softmax along axis",
        fusion=FusionRole.ROW,
    )
)


# ---------------------------------------------------------------- fused and relaxed-substitution ops
# Added for rules/fusion.rules and rules/relaxed.rules: zero padding (to enlarge
# a conv kernel, MetaFlow), a reciprocal square root (to fold batchnorm into a
# conv's weights, precomputed), and contractions fused with a bias and an
# activation (one kernel instead of three).
_register(
    OpDef(
        "pad2d",
        Group.LAYOUT,
        1,
        (AttrSpec("pads", AttrKind.INTS),),
        Pad2d(),
        lambda xs, a: [F.pad(xs[0], (a["pads"][2], a["pads"][3], a["pads"][0], a["pads"][1]))],
        doc="zero-pad the last two dims by pads = (top, bottom, left, right)",
        fusion=FusionRole.INJECTIVE,
    )
)

_register(
    OpDef(
        "rsqrt",
        Group.ELEMENTWISE,
        1,
        (AttrSpec("eps", AttrKind.FLOAT, 0.0),),
        Same(),
        lambda xs, a: [torch.rsqrt(xs[0] + a["eps"])],
        _ew_flops(2),
        doc="elementwise 1 / sqrt(x + eps)",
    )
)

# act attribute of the fused contractions: name -> (torch function, FLOPs per element)
ACTS: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], int]] = {
    "none": (lambda x: x, 0),
    **{k: _UNARY[k][:2] for k in ("relu", "sigmoid", "tanh")},
}
_ACT = AttrSpec("act", AttrKind.STR, "none", choices=tuple(ACTS))


def _act_flops(
    conv_like: Callable[[list[Shape], list[Shape], Attrs], int],
) -> Callable[[list[Shape], list[Shape], Attrs], int]:
    return lambda i, o, a: conv_like(i, o, a) + numel(o[0]) * (1 + ACTS[a["act"]][1])


_register(
    OpDef(
        "conv2d_bias_act",
        Group.CONTRACTION,
        3,
        _CONV_ATTRS + (_ACT,),
        Conv2d(bias=True),
        lambda xs, a: [
            ACTS[a["act"]][0](F.conv2d(xs[0], xs[1], xs[2], a["stride"], a["padding"], a["dilation"], a["groups"]))
        ],
        _act_flops(lambda i, o, a: 2 * numel(o[0]) * i[1][1] * i[1][2] * i[1][3]),
        doc="act(conv2d(x, w) + b): NCHW x OIHW, bias [O] along the channel axis",
        cost_class=CostClass.CONV,
        packed_operand=0,
    )
)

_register(
    OpDef(
        "matmul_bias_act",
        Group.CONTRACTION,
        3,
        (_ACT,),
        MatMul(bias=True),
        lambda xs, a: [ACTS[a["act"]][0](torch.matmul(xs[0], xs[1]) + xs[2])],
        _act_flops(lambda i, o, a: 2 * numel(o[0]) * i[0][-1]),
        doc="act(x @ w + b): (batched) matmul, bias [N] along the last axis",
        packed_operand=1,
    )
)

# ---------------------------------------------------------------- activations, reductions, norms, resize
# The float ops real CNNs and transformers need (MobileNet, EfficientNet, GPT-2, BERT, LLaMA, ViT).
# Ops that torch spells several ways map onto one entry here: view / flatten / squeeze / unsqueeze
# are ``reshape``, permute is ``transpose``, chunk is ``split``, hardtanh and relu6 are ``clamp``.

# name -> (torch reference, FLOPs per element, torch functions, Tensor methods)
_UNARY_MORE: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], int, tuple[Any, ...], tuple[str, ...]]] = {
    "hardswish": (F.hardswish, 5, (F.hardswish,), ()),
    "hardsigmoid": (F.hardsigmoid, 4, (F.hardsigmoid,), ()),
    "silu": (F.silu, 5, (), ()),  # F.silu / nn.SiLU have converters (inplace argument)
    "mish": (F.mish, 12, (F.mish,), ()),
    "gelu_erf": (lambda x: F.gelu(x), 16, (), ()),  # F.gelu (approximate="none") has its own converter
    "log": (torch.log, 4, (torch.log,), ("log",)),
    "sqrt": (torch.sqrt, 2, (torch.sqrt,), ("sqrt",)),
    "neg": (torch.neg, 1, (), ()),  # torch.neg imports as smul(-1) (rules/algebra: neg <=> smul -1)
    "abs": (torch.abs, 1, (torch.abs,), ("abs",)),
    "reciprocal": (torch.reciprocal, 1, (torch.reciprocal,), ("reciprocal",)),
    "sin": (torch.sin, 8, (torch.sin,), ("sin",)),  # rotary position embeddings (LLaMA) when not folded
    "cos": (torch.cos, 8, (torch.cos,), ("cos",)),
}
for _name, (_fn, _fl, _fns, _methods) in _UNARY_MORE.items():
    _register(
        OpDef(
            _name,
            Group.ELEMENTWISE,
            1,
            (),
            Same(),
            (lambda f: lambda xs, a: [f(xs[0])])(_fn),
            _ew_flops(_fl),
            doc=f"elementwise {_name} (torch semantics)",
            torch_functions=_fns,
            torch_methods=_methods,
        )
    )

_register(
    OpDef(
        "clamp",
        Group.ELEMENTWISE,
        1,
        (AttrSpec("min", AttrKind.FLOAT), AttrSpec("max", AttrKind.FLOAT)),
        Same(),
        lambda xs, a: [torch.clamp(xs[0], a["min"], a["max"])],
        _ew_flops(2),
        doc="min(max(x, min), max): hardtanh, relu6 (min=0, max=6)",
    )
)
_register(
    OpDef(
        "pow",
        Group.ELEMENTWISE,
        1,
        (AttrSpec("exponent", AttrKind.FLOAT),),
        Same(),
        lambda xs, a: [torch.pow(xs[0], a["exponent"])],
        _ew_flops(4),
        doc="x ** exponent for a constant exponent (small integers multiply; others exp(e * log x))",
    )
)


def _reduce_ref(fn: Callable[..., torch.Tensor]) -> Callable[[list[torch.Tensor], Attrs], list[torch.Tensor]]:
    return lambda xs, a: [fn(xs[0], list(a["axes"]), keepdim=bool(a["keepdim"]))]


_REDUCE_ATTRS = (AttrSpec("axes", AttrKind.INTS), AttrSpec("keepdim", AttrKind.INT, 0))
_REDUCTIONS: dict[str, tuple[Callable[..., torch.Tensor], int]] = {
    "reduce_sum": (torch.sum, 1),
    "reduce_mean": (torch.mean, 1),
    "reduce_max": (torch.amax, 1),
    "reduce_min": (torch.amin, 1),
}
for _name, (_rfn, _rfl) in _REDUCTIONS.items():
    _register(
        OpDef(
            _name,
            Group.REDUCTION,
            1,
            _REDUCE_ATTRS,
            Reduce(),
            _reduce_ref(_rfn),
            (lambda k: lambda i, o, a: k * numel(i[0]))(_rfl),
            doc=f"{_name[7:]} over axes (sorted, non-negative), keepdim as in torch",
            fusion=FusionRole.POOL,
        )
    )
_register(
    OpDef(
        "reduce_var",
        Group.REDUCTION,
        1,
        _REDUCE_ATTRS + (AttrSpec("correction", AttrKind.INT, 1),),
        Reduce(),
        lambda xs, a: [torch.var(xs[0], list(a["axes"]), correction=a["correction"], keepdim=bool(a["keepdim"]))],
        lambda i, o, a: 4 * numel(i[0]),
        doc="variance over axes, divided by (count - correction) as torch.var",
        fusion=FusionRole.POOL,
    )
)

_register(
    OpDef(
        "expand",
        Group.LAYOUT,
        1,
        (AttrSpec("shape", AttrKind.INTS),),
        Expand(),
        lambda xs, a: [xs[0].expand(*a["shape"])],
        doc="broadcast size-1 dims to shape (equal rank), materialised",
        fusion=FusionRole.REMAP,
    )
)


def _pad_ref(xs: list[torch.Tensor], a: Attrs) -> list[torch.Tensor]:
    p = a["pads"]
    torch_order = [v for d in reversed(range(len(p) // 2)) for v in (p[2 * d], p[2 * d + 1])]
    return [F.pad(xs[0], torch_order, value=a["value"])]


_register(
    OpDef(
        "pad",
        Group.LAYOUT,
        1,
        (AttrSpec("pads", AttrKind.INTS), AttrSpec("value", AttrKind.FLOAT, 0.0)),
        PadN(),
        _pad_ref,
        doc="constant padding, pads = (before_0, after_0, before_1, after_1, ...) in dim order",
        fusion=FusionRole.INJECTIVE,
    )
)

_register(
    OpDef(
        "resize",
        Group.LAYOUT,
        1,
        (
            AttrSpec("size", AttrKind.INTS),
            AttrSpec("mode", AttrKind.STR, "nearest", choices=("nearest", "bilinear")),
            AttrSpec("align_corners", AttrKind.INT, 0),
        ),
        Spatial2d("size"),
        lambda xs, a: [
            F.interpolate(
                xs[0],
                size=tuple(a["size"]),
                mode=a["mode"],
                align_corners=bool(a["align_corners"]) if a["mode"] == "bilinear" else None,
            )
        ],
        lambda i, o, a: (8 if a["mode"] == "bilinear" else 0) * numel(o[0]),
        doc="F.interpolate of NCHW to size (nearest or bilinear; scales from the sizes)",
        fusion=FusionRole.INJECTIVE,
    )
)

_register(
    OpDef(
        "adaptive_avgpool",
        Group.POOLING,
        1,
        (AttrSpec("output_size", AttrKind.INTS),),
        Spatial2d("output_size"),
        lambda xs, a: [F.adaptive_avg_pool2d(xs[0], tuple(a["output_size"]))],
        lambda i, o, a: numel(i[0]),
        doc="adaptive average pooling of NCHW: window [floor(o*H/OH), ceil((o+1)*H/OH))",
    )
)

_register(
    OpDef(
        "groupnorm",
        Group.NORMALIZATION,
        3,
        (AttrSpec("num_groups", AttrKind.INT), AttrSpec("eps", AttrKind.FLOAT, 1e-5)),
        GroupedChannels(),
        lambda xs, a: [F.group_norm(xs[0], a["num_groups"], xs[1], xs[2], a["eps"])],
        lambda i, o, a: 8 * numel(o[0]),
        doc="group norm of N C ...: inputs x, weight [C], bias [C]",
        fusion=FusionRole.ROW,
    )
)
_register(
    OpDef(
        "rmsnorm",
        Group.NORMALIZATION,
        2,
        (AttrSpec("eps", AttrKind.FLOAT, 1e-6),),
        PerChannel(-1),
        lambda xs, a: [F.rms_norm(xs[0], (xs[0].shape[-1],), xs[1], a["eps"])],
        lambda i, o, a: 4 * numel(o[0]),
        doc="RMS norm over the last axis: x * rsqrt(mean(x^2) + eps) * weight",
        fusion=FusionRole.ROW,
    )
)
_BUILTIN.update(OPS)


def ops_in(group: Group) -> frozenset[str]:
    """Names of the ops in one group: rules and passes match sets, not lists."""
    return frozenset(n for n, o in OPS.items() if o.group is group)


def get_op(name: str) -> OpDef:
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"unknown op '{name}'; known ops: {', '.join(sorted(OPS))}") from None


# ---------------------------------------------------------------- indexing, comparison, selection
# Integer and boolean values (token ids, masks) flow only through these ops and the layout
# ops (dtype ANY_SAME below); every other op takes and gives float32 (rewrite/ir/dtypes.py).
# An index out of range is an error in torch; the compiled kernels clamp it into range
# (never read outside a buffer), so only valid indices are compared.
_TORCH_DT = {"float32": torch.float32, "int64": torch.int64, "bool": torch.bool}
for _name in ("transpose", "reshape", "concat", "split", "slice", "identity"):
    OPS[_name] = replace(OPS[_name], dtype_rule=ANY_SAME)

_register(
    OpDef(
        "embedding",
        Group.INDEXING,
        2,
        (),
        Embedding(),
        lambda xs, a: [F.embedding(xs[1], xs[0])],
        doc="rows of a table [V, D] picked by int64 ids: inputs table, ids; output ids.shape + [D]",
        dtype_rule=DTypeRule((FLOAT32, INT64), FLOAT32),
    )
)
_register(
    OpDef(
        "index_select",
        Group.INDEXING,
        2,
        (AttrSpec("axis", AttrKind.INT),),
        IndexSelect(),
        lambda xs, a: [torch.index_select(xs[0], a["axis"], xs[1])],
        doc="entries along axis picked by a rank-1 int64 index",
        dtype_rule=DTypeRule(("T", INT64), "T"),
    )
)
_register(
    OpDef(
        "gather",
        Group.INDEXING,
        2,
        (AttrSpec("axis", AttrKind.INT),),
        Gather(),
        lambda xs, a: [torch.gather(xs[0], a["axis"], xs[1])],
        doc="torch.gather: out[i..] = x[i.. with index[i..] along axis]",
        dtype_rule=DTypeRule(("T", INT64), "T"),
    )
)

_COMPARE: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "eq": torch.eq,
    "ne": torch.ne,
    "lt": torch.lt,
    "le": torch.le,
    "gt": torch.gt,
    "ge": torch.ge,
}
for _name, _cfn in _COMPARE.items():
    _register(
        OpDef(
            _name,
            Group.ELEMENTWISE,
            2,
            (),
            Broadcast(),
            (lambda f: lambda xs, a: [f(xs[0], xs[1])])(_cfn),
            _ew_flops(1),
            commutative=_name in ("eq", "ne"),
            doc=f"elementwise comparison {_name} (float32 or int64 operands) giving bool",
            dtype_rule=COMPARE,
        )
    )

_register(
    OpDef(
        "where",
        Group.ELEMENTWISE,
        3,
        (),
        Broadcast3(),
        lambda xs, a: [torch.where(xs[0], xs[1], xs[2])],
        _ew_flops(1),
        doc="cond ? x : y elementwise, with broadcasting (equal ranks)",
        dtype_rule=DTypeRule((BOOL, "T", "T"), "T"),
    )
)
_register(
    OpDef(
        "masked_fill",
        Group.ELEMENTWISE,
        2,
        (AttrSpec("value", AttrKind.FLOAT),),
        Broadcast(),
        lambda xs, a: [torch.masked_fill(xs[0], xs[1], a["value"])],
        _ew_flops(1),
        doc="x where mask is false, value where it is true (value may be -inf)",
        dtype_rule=DTypeRule((FLOAT32, BOOL), FLOAT32),
    )
)
_register(
    OpDef(
        "logical_not",
        Group.ELEMENTWISE,
        1,
        (),
        Same(),
        lambda xs, a: [torch.logical_not(xs[0])],
        _ew_flops(1),
        doc="elementwise not of a bool tensor",
        dtype_rule=DTypeRule((BOOL,), BOOL),
    )
)
for _name, _lfn in (("logical_and", torch.logical_and), ("logical_or", torch.logical_or)):
    _register(
        OpDef(
            _name,
            Group.ELEMENTWISE,
            2,
            (),
            Broadcast(),
            (lambda f: lambda xs, a: [f(xs[0], xs[1])])(_lfn),
            _ew_flops(1),
            commutative=True,
            doc=f"elementwise {_name[8:]} of bool tensors",
            dtype_rule=DTypeRule((BOOL, BOOL), BOOL),
        )
    )
_register(
    OpDef(
        "cast",
        Group.ELEMENTWISE,
        1,
        (AttrSpec("dtype", AttrKind.STR, choices=DTYPES),),
        Same(),
        lambda xs, a: [xs[0].to(_TORCH_DT[a["dtype"]])],
        _ew_flops(1),
        doc="explicit dtype conversion (torch .to semantics: float to int truncates, nonzero is true)",
        dtype_rule=DTypeRule(("T",), "attr"),
    )
)
_BUILTIN.update(OPS)
