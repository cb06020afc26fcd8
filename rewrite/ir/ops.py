"""The operator registry: the single source of truth for every op eqsat knows.

Each op is defined once, here: its typed, named attributes, its input arity,
its group, its shape function, its reference semantics (torch) and its FLOP
count.  Everything else — the graph IR's checks, the egglog prelude, the rule
parser, the cost models and the lowering — looks ops up by name in ``OPS``.

    >>> OPS["matmul"].infer([(64, 1024), (1024, 512)], {})
    [(64, 512)]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import torch
import torch.nn.functional as F

from rewrite.ir.errors import ShapeError

Shape = tuple[int, ...]
Attrs = Mapping[str, Any]


class Group(str, Enum):
    SOURCE = "source"  # graph inputs and weights
    ELEMENTWISE = "elementwise"
    CONTRACTION = "contraction"
    LAYOUT = "layout"
    POOLING = "pooling"
    NORMALIZATION = "normalization"


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


@dataclass(frozen=True)
class OpDef:
    """One operator. ``shape`` returns the output shapes, ``ref`` computes them."""

    name: str
    group: Group
    arity: int  # number of tensor inputs, or VARIADIC (>= 1)
    attrs: tuple[AttrSpec, ...]
    shape: Callable[[list[Shape], Attrs], list[Shape]]
    ref: Callable[[list[torch.Tensor], Attrs], list[torch.Tensor]]
    flops: Callable[[list[Shape], list[Shape], Attrs], int] = field(default=lambda i, o, a: 0)
    commutative: bool = False
    doc: str = ""

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
            return [tuple(int(d) for d in s) for s in self.shape([tuple(s) for s in in_shapes], attrs)]
        except ShapeError as e:
            raise ShapeError(f"op '{self.name}': {e} (inputs {list(in_shapes)}, attrs {dict(attrs)})") from None


OPS: dict[str, OpDef] = {}


def _register(op: OpDef) -> OpDef:
    assert op.name not in OPS, op.name
    OPS[op.name] = op
    return op


def numel(shape: Shape) -> int:
    return math.prod(shape)


def _need(cond: bool, msg: str) -> None:
    if not cond:
        raise ShapeError(msg)


def norm_axis(axis: int, rank: int) -> int:
    _need(-rank <= axis < rank, f"axis {axis} out of range for rank {rank}")
    return axis % rank


# ---------------------------------------------------------------- sources
def _source_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    _need(all(d > 0 for d in a["shape"]), f"dimensions must be positive, got {a['shape']}")
    return [a["shape"]]


def _no_ref(ins: list[torch.Tensor], a: Attrs) -> list[torch.Tensor]:
    raise RuntimeError("source ops are bound by Graph.run, not computed")


for _name in ("input", "weight"):
    _register(
        OpDef(
            _name,
            Group.SOURCE,
            0,
            (AttrSpec("name", AttrKind.STR), AttrSpec("shape", AttrKind.INTS)),
            _source_shape,
            _no_ref,
            doc=f"a graph {_name}, bound by name",
        )
    )


# ---------------------------------------------------------------- elementwise
def _same(ins: list[Shape], a: Attrs) -> list[Shape]:
    return [ins[0]]


def broadcast(x: Shape, y: Shape) -> Shape:
    """Broadcast two shapes of equal rank (the IR keeps ranks explicit)."""
    _need(len(x) == len(y), f"elementwise inputs must have equal rank, got {x} and {y}")
    out = []
    for i, (p, q) in enumerate(zip(x, y)):
        _need(p == q or p == 1 or q == 1, f"dimension {i} does not broadcast: {p} vs {q}")
        out.append(max(p, q))
    return tuple(out)


def _bcast(ins: list[Shape], a: Attrs) -> list[Shape]:
    return [broadcast(ins[0], ins[1])]


def _ew_flops(per: int) -> Callable[[list[Shape], list[Shape], Attrs], int]:
    return lambda i, o, a: per * numel(o[0])


_UNARY: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], int]] = {
    "relu": (torch.relu, 1),
    "sigmoid": (torch.sigmoid, 4),
    "tanh": (torch.tanh, 4),
    "gelu": (lambda x: F.gelu(x, approximate="tanh"), 8),
    "exp": (torch.exp, 4),
    "identity": (lambda x: x, 0),
}
for _name, (_fn, _fl) in _UNARY.items():
    _register(
        OpDef(
            _name,
            Group.ELEMENTWISE,
            1,
            (),
            _same,
            (lambda f: lambda xs, a: [f(xs[0])])(_fn),
            _ew_flops(_fl),
            doc=f"elementwise {_name}",
        )
    )

_register(
    OpDef(
        "smul",
        Group.ELEMENTWISE,
        1,
        (AttrSpec("scalar", AttrKind.FLOAT),),
        _same,
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
for _name, (_fn, _comm) in _BINARY.items():
    _register(
        OpDef(
            _name,
            Group.ELEMENTWISE,
            2,
            (),
            _bcast,
            (lambda f: lambda xs, a: [f(xs[0], xs[1])])(_fn),
            _ew_flops(1),
            commutative=_comm,
            doc=f"elementwise {_name} with broadcasting (equal ranks)",
        )
    )


# ---------------------------------------------------------------- contraction
def _matmul_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    x, y = ins
    _need(len(x) >= 2 and len(x) == len(y), f"matmul needs equal ranks >= 2, got {x} and {y}")
    _need(x[-1] == y[-2], f"inner dimensions differ: {x[-1]} vs {y[-2]}")
    batch = broadcast(x[:-2], y[:-2])
    return [batch + (x[-2], y[-1])]


_register(
    OpDef(
        "matmul",
        Group.CONTRACTION,
        2,
        (),
        _matmul_shape,
        lambda xs, a: [torch.matmul(xs[0], xs[1])],
        lambda i, o, a: 2 * numel(o[0]) * i[0][-1],
        doc="(batched) matrix product, equal ranks",
    )
)


def _linear_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    x, w, b = ins
    _need(len(w) == 2 and len(b) == 1, f"linear needs weight [out, in] and bias [out], got {w} and {b}")
    _need(len(x) >= 1 and x[-1] == w[1], f"input features {x[-1] if x else None} != weight in-features {w[1]}")
    _need(b[0] == w[0], f"bias size {b[0]} != out-features {w[0]}")
    return [x[:-1] + (w[0],)]


_register(
    OpDef(
        "linear",
        Group.CONTRACTION,
        3,
        (),
        _linear_shape,
        lambda xs, a: [F.linear(xs[0], xs[1], xs[2])],
        lambda i, o, a: 2 * numel(o[0]) * i[1][1] + numel(o[0]),
        doc="x @ w.T + b",
    )
)


def conv_out(size: int, k: int, s: int, p: int, d: int, ceil: bool = False) -> int:
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + p:  # PyTorch: last window must start inside the input
        out -= 1
    return out


_PAIR = (AttrKind.INTS,)


def _conv_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    x, w = ins
    _need(len(x) == 4 and len(w) == 4, f"conv2d needs NCHW input and OIHW weight, got {x} and {w}")
    for k in ("stride", "padding", "dilation"):
        _need(len(a[k]) == 2, f"{k} must have 2 entries, got {a[k]}")
    g = a["groups"]
    _need(g >= 1 and x[1] % g == 0 and w[0] % g == 0, f"groups={g} must divide in {x[1]} and out {w[0]} channels")
    _need(w[1] * g == x[1], f"weight expects {w[1] * g} input channels, input has {x[1]}")
    hw = [conv_out(x[2 + i], w[2 + i], a["stride"][i], a["padding"][i], a["dilation"][i]) for i in range(2)]
    _need(all(d > 0 for d in hw), f"output spatial size {hw} is empty")
    return [(x[0], w[0], hw[0], hw[1])]


_register(
    OpDef(
        "conv2d",
        Group.CONTRACTION,
        2,
        (
            AttrSpec("stride", AttrKind.INTS, (1, 1)),
            AttrSpec("padding", AttrKind.INTS, (0, 0)),
            AttrSpec("dilation", AttrKind.INTS, (1, 1)),
            AttrSpec("groups", AttrKind.INT, 1),
        ),
        _conv_shape,
        lambda xs, a: [F.conv2d(xs[0], xs[1], None, a["stride"], a["padding"], a["dilation"], a["groups"])],
        lambda i, o, a: 2 * numel(o[0]) * i[1][1] * i[1][2] * i[1][3],
        doc="2-d convolution, NCHW x OIHW, no bias (bias is a separate add)",
    )
)


# ---------------------------------------------------------------- layout
def _transpose_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    x, p = ins[0], a["perm"]
    _need(sorted(p) == list(range(len(x))), f"perm {p} is not a permutation of rank {len(x)}")
    return [tuple(x[i] for i in p)]


_register(
    OpDef(
        "transpose",
        Group.LAYOUT,
        1,
        (AttrSpec("perm", AttrKind.INTS),),
        _transpose_shape,
        lambda xs, a: [xs[0].permute(*a["perm"])],
        doc="permute dimensions",
    )
)


def _reshape_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    s = a["shape"]
    _need(all(d > 0 for d in s), f"target shape {s} must be fully specified and positive")
    _need(numel(s) == numel(ins[0]), f"cannot reshape {ins[0]} ({numel(ins[0])} elements) to {s}")
    return [s]


_register(
    OpDef(
        "reshape",
        Group.LAYOUT,
        1,
        (AttrSpec("shape", AttrKind.INTS),),
        _reshape_shape,
        lambda xs, a: [xs[0].reshape(a["shape"])],
        doc="reshape (row-major)",
    )
)


def _concat_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    r = len(ins[0])
    ax = norm_axis(a["axis"], r)
    for s in ins[1:]:
        _need(
            len(s) == r and all(s[i] == ins[0][i] for i in range(r) if i != ax), f"inputs disagree off axis {ax}: {ins}"
        )
    out = list(ins[0])
    out[ax] = sum(s[ax] for s in ins)
    return [tuple(out)]


_register(
    OpDef(
        "concat",
        Group.LAYOUT,
        VARIADIC,
        (AttrSpec("axis", AttrKind.INT),),
        _concat_shape,
        lambda xs, a: [torch.cat(xs, a["axis"])],
        doc="concatenate along axis",
    )
)


def _split_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    x = ins[0]
    ax = norm_axis(a["axis"], len(x))
    _need(len(a["sizes"]) >= 1 and all(s > 0 for s in a["sizes"]), f"sizes {a['sizes']} must be positive")
    _need(sum(a["sizes"]) == x[ax], f"sizes {a['sizes']} do not sum to dimension {x[ax]}")
    return [x[:ax] + (s,) + x[ax + 1 :] for s in a["sizes"]]


_register(
    OpDef(
        "split",
        Group.LAYOUT,
        1,
        (AttrSpec("axis", AttrKind.INT), AttrSpec("sizes", AttrKind.INTS)),
        _split_shape,
        lambda xs, a: list(torch.split(xs[0], list(a["sizes"]), a["axis"])),
        doc="split along axis into pieces of the given sizes (one output each)",
    )
)


def _slice_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    x = ins[0]
    ax = norm_axis(a["axis"], len(x))
    _need(0 <= a["start"] < a["end"] <= x[ax], f"slice [{a['start']}:{a['end']}] out of range for {x[ax]}")
    return [x[:ax] + (a["end"] - a["start"],) + x[ax + 1 :]]


_register(
    OpDef(
        "slice",
        Group.LAYOUT,
        1,
        (AttrSpec("axis", AttrKind.INT), AttrSpec("start", AttrKind.INT), AttrSpec("end", AttrKind.INT)),
        _slice_shape,
        lambda xs, a: [xs[0].narrow(a["axis"], a["start"], a["end"] - a["start"])],
        doc="contiguous slice [start, end) along axis",
    )
)


# ---------------------------------------------------------------- pooling
_POOL_ATTRS = (
    AttrSpec("kernel", AttrKind.INTS),
    AttrSpec("stride", AttrKind.INTS),
    AttrSpec("padding", AttrKind.INTS, (0, 0)),
    AttrSpec("ceil_mode", AttrKind.INT, 0),
)


def _pool_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    x = ins[0]
    _need(len(x) == 4, f"pooling needs NCHW input, got {x}")
    for k in ("kernel", "stride", "padding"):
        _need(len(a[k]) == 2, f"{k} must have 2 entries, got {a[k]}")
    _need(all(2 * p <= k for p, k in zip(a["padding"], a["kernel"])), "padding must be at most half the kernel")
    hw = [
        conv_out(x[2 + i], a["kernel"][i], a["stride"][i], a["padding"][i], 1, bool(a["ceil_mode"])) for i in range(2)
    ]
    _need(all(d > 0 for d in hw), f"output spatial size {hw} is empty")
    return [(x[0], x[1], hw[0], hw[1])]


def _pool_flops(i: list[Shape], o: list[Shape], a: Attrs) -> int:
    return numel(o[0]) * a["kernel"][0] * a["kernel"][1]


_register(
    OpDef(
        "maxpool2d",
        Group.POOLING,
        1,
        _POOL_ATTRS,
        _pool_shape,
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
        _pool_shape,
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


def _gap_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    _need(len(ins[0]) == 4, f"global pooling needs NCHW input, got {ins[0]}")
    return [ins[0][:2] + (1, 1)]


_register(
    OpDef(
        "global_avgpool",
        Group.POOLING,
        1,
        (),
        _gap_shape,
        lambda xs, a: [xs[0].mean((2, 3), keepdim=True)],
        lambda i, o, a: numel(i[0]),
        doc="mean over H and W, keeping them as size 1",
    )
)


# ---------------------------------------------------------------- normalization
def _bn_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    x = ins[0]
    _need(len(x) >= 2, f"batchnorm needs a channel axis, got {x}")
    for s in ins[1:]:
        _need(s == (x[1],), f"batchnorm parameters must be [{x[1]}], got {s}")
    return [x]


_register(
    OpDef(
        "batchnorm",
        Group.NORMALIZATION,
        5,
        (AttrSpec("eps", AttrKind.FLOAT, 1e-5),),
        _bn_shape,
        lambda xs, a: [F.batch_norm(xs[0], xs[3], xs[4], xs[1], xs[2], False, 0.0, a["eps"])],
        lambda i, o, a: 2 * numel(o[0]),
        doc="inference batch norm: inputs x, weight, bias, running_mean, running_var",
    )
)


def _ln_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    x = ins[0]
    _need(
        len(x) >= 1 and ins[1] == (x[-1],) and ins[2] == (x[-1],),
        f"layernorm weight and bias must be [{x[-1] if x else '?'}], got {ins[1]} and {ins[2]}",
    )
    return [x]


_register(
    OpDef(
        "layernorm",
        Group.NORMALIZATION,
        3,
        (AttrSpec("eps", AttrKind.FLOAT, 1e-5),),
        _ln_shape,
        lambda xs, a: [F.layer_norm(xs[0], (xs[0].shape[-1],), xs[1], xs[2], a["eps"])],
        lambda i, o, a: 8 * numel(o[0]),
        doc="layer norm over the last axis: inputs x, weight, bias",
    )
)


def _softmax_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    norm_axis(a["axis"], len(ins[0]))
    return [ins[0]]


_register(
    OpDef(
        "softmax",
        Group.NORMALIZATION,
        1,
        (AttrSpec("axis", AttrKind.INT),),
        _softmax_shape,
        lambda xs, a: [torch.softmax(xs[0], a["axis"])],
        lambda i, o, a: 6 * numel(o[0]),
        doc="softmax along axis",
    )
)


# ---------------------------------------------------------------- fused and relaxed-substitution ops
# Added for rules/fusion.rules and rules/relaxed.rules: zero padding (to enlarge
# a conv kernel, MetaFlow), a reciprocal square root (to fold batchnorm into a
# conv's weights, precomputed), and contractions fused with a bias and an
# activation (one kernel instead of three).
def _pad2d_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    x, p = ins[0], a["pads"]
    _need(len(x) >= 2, f"pad2d needs rank >= 2, got {x}")
    _need(len(p) == 4 and all(v >= 0 for v in p), f"pads must be 4 non-negative (top, bottom, left, right), got {p}")
    return [x[:-2] + (x[-2] + p[0] + p[1], x[-1] + p[2] + p[3])]


_register(
    OpDef(
        "pad2d",
        Group.LAYOUT,
        1,
        (AttrSpec("pads", AttrKind.INTS),),
        _pad2d_shape,
        lambda xs, a: [F.pad(xs[0], (a["pads"][2], a["pads"][3], a["pads"][0], a["pads"][1]))],
        doc="zero-pad the last two dims by pads = (top, bottom, left, right)",
    )
)

_register(
    OpDef(
        "rsqrt",
        Group.ELEMENTWISE,
        1,
        (AttrSpec("eps", AttrKind.FLOAT, 0.0),),
        _same,
        lambda xs, a: [torch.rsqrt(xs[0] + a["eps"])],
        _ew_flops(2),
        doc="elementwise 1 / sqrt(x + eps)",
    )
)

# act attribute of the fused contractions: name -> (torch function, FLOPs per element)
ACTS: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], int]] = {
    "none": (lambda x: x, 0),
    **{k: _UNARY[k] for k in ("relu", "sigmoid", "tanh")},
}


def _act_ok(a: Attrs) -> None:
    _need(a["act"] in ACTS, f"act must be one of {list(ACTS)}, got {a['act']!r}")


def _conv_bias_act_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    x, w, b = ins
    _act_ok(a)
    out = _conv_shape([x, w], a)
    _need(b == (w[0],), f"bias must be [{w[0]}] (one per output channel), got {b}")
    return out


def _act_flops(
    conv_like: Callable[[list[Shape], list[Shape], Attrs], int],
) -> Callable[[list[Shape], list[Shape], Attrs], int]:
    return lambda i, o, a: conv_like(i, o, a) + numel(o[0]) * (1 + ACTS[a["act"]][1])


_register(
    OpDef(
        "conv2d_bias_act",
        Group.CONTRACTION,
        3,
        (
            AttrSpec("stride", AttrKind.INTS, (1, 1)),
            AttrSpec("padding", AttrKind.INTS, (0, 0)),
            AttrSpec("dilation", AttrKind.INTS, (1, 1)),
            AttrSpec("groups", AttrKind.INT, 1),
            AttrSpec("act", AttrKind.STR, "none"),
        ),
        _conv_bias_act_shape,
        lambda xs, a: [
            ACTS[a["act"]][0](F.conv2d(xs[0], xs[1], xs[2], a["stride"], a["padding"], a["dilation"], a["groups"]))
        ],
        _act_flops(lambda i, o, a: 2 * numel(o[0]) * i[1][1] * i[1][2] * i[1][3]),
        doc="act(conv2d(x, w) + b): NCHW x OIHW, bias [O] along the channel axis",
    )
)


def _matmul_bias_act_shape(ins: list[Shape], a: Attrs) -> list[Shape]:
    x, w, b = ins
    _act_ok(a)
    out = _matmul_shape([x, w], a)
    _need(b == (w[-1],), f"bias must be [{w[-1]}] (one per output column), got {b}")
    return out


_register(
    OpDef(
        "matmul_bias_act",
        Group.CONTRACTION,
        3,
        (AttrSpec("act", AttrKind.STR, "none"),),
        _matmul_bias_act_shape,
        lambda xs, a: [ACTS[a["act"]][0](torch.matmul(xs[0], xs[1]) + xs[2])],
        _act_flops(lambda i, o, a: 2 * numel(o[0]) * i[0][-1]),
        doc="act(x @ w + b): (batched) matmul, bias [N] along the last axis",
    )
)


def ops_in(group: Group) -> frozenset[str]:
    """Names of the ops in one group: rules and passes match sets, not lists."""
    return frozenset(n for n, o in OPS.items() if o.group is group)


def get_op(name: str) -> OpDef:
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"unknown op '{name}'; known ops: {', '.join(sorted(OPS))}") from None
