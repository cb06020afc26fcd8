"""``from_onnx``: read an ONNX model node by node through the handler table.

Graph inputs and initializers may be float32, int64 or bool (eqsat's dtypes) with static
positive shapes; every other dtype is refused, never cast.  Each node goes to the importer of the
registry op its type spells (``OpDef.onnx``; ``IMPORTERS``) or to the handler registered for its op type
(``HANDLERS``); the modules imported below fill both.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import numpy_helper

from rewrite.frontends.compose import round_half, round_result
from rewrite.frontends.onnx import (  # noqa: F401 (handlers)
    attention,
    control,
    einsum,
    elementwise,
    indexing,
    layout,
    loss,
    nn,
    norm,
    qlinear,
    quantize,
    reduce,
    rnn,
    sample,
)
from rewrite.frontends.onnx.context import (
    HALF_ONNX,
    HANDLERS,
    ONNX_DTYPES,
    Ctx,
    Quantized,
    Refuse,
    Tensor,
    attrs_of,
    onnx_dtype_name,
)
from rewrite.frontends.onnx.quantize import QUANTIZED_READERS
from rewrite.ir.dtypes import BFLOAT16, FLOAT16, FLOAT32, HALF, TORCH_DTYPE
from rewrite.ir.errors import EqsatError, FrontendError, UsageError
from rewrite.ir.graph import Graph, Value
from rewrite.progress import bar


class ConstantNeeded(FrontendError):
    """A graph input is used where eqsat needs a constant (a shape, axes, pads, sizes...).

    ``from_onnx(model, constants={input_name: value})`` specialises the model on that input.
    """

    def __init__(self, why: str, input_name: str) -> None:
        super().__init__(why)
        self.input_name = input_name


# the op types the importer understands: "in eqsat's op set" for the conformance bench (the handlers', and
# the registry's spellings, OpDef.onnx)
ONNX_OPS: frozenset[str] = frozenset(HANDLERS) | frozenset(elementwise.spellings())


# random in the reference (Dropout in training mode too): never folded
_RANDOM = (
    "RandomNormal",
    "RandomNormalLike",
    "RandomUniform",
    "RandomUniformLike",
    "Bernoulli",
    "Multinomial",
    "Dropout",
)
# the reference's recurrent layers ignore activations, clip, input_forget and sequence_lens: folding one by
# it could compute another function, so a node of constants only is unrolled (or refused) by its handler
_UNFAITHFUL = ("RNN", "GRU", "LSTM")


def _fold_by_reference(node: onnx.NodeProto, c: Ctx) -> list[np.ndarray] | None:
    """The outputs of a node whose inputs are all constants, computed by onnx's reference evaluator (the
    spec's own definition), or None when it cannot be: a random op, a recurrent layer (``_UNFAITHFUL``), a
    subgraph, an error.  Exporters leave
    such nodes on shapes and parameters (a bicubic resize of DINOv2's position table, an Einsum of
    constants); eqsat's handlers fold the common ones themselves and this covers the rest."""
    if (
        node.op_type in _RANDOM
        or node.op_type in _UNFAITHFUL
        or any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute)
    ):
        return None
    ins = [i for i in node.input if i]
    arrays = [t for t in (c.env.get(i) for i in ins) if isinstance(t, np.ndarray)]
    if len(arrays) != len(ins):
        return None
    from onnx.reference import ReferenceEvaluator  # deferred: only models that need it pay for the import

    try:
        g = onnx.helper.make_graph(
            [node],
            "fold",
            [
                onnx.helper.make_tensor_value_info(i, onnx.helper.np_dtype_to_tensor_dtype(t.dtype), t.shape)
                for i, t in zip(ins, arrays)
            ],
            [onnx.helper.make_empty_tensor_value_info(o) for o in node.output if o],
        )
        model = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", c.opset)])
        outs = ReferenceEvaluator(model).run(None, dict(zip(ins, arrays)))
    except Exception:  # the reference refuses or lacks it: the handler's own refusal stands
        return None
    return [np.asarray(o) for o in outs]


def _type_problem(t: onnx.TypeProto) -> str:
    """Why a graph input/output type cannot be used, or '' when it is a tensor of an eqsat dtype."""
    if not t.HasField("tensor_type"):
        return f"is a {t.WhichOneof('value')}, not a tensor"
    elem = t.tensor_type.elem_type
    if elem not in ONNX_DTYPES and elem not in HALF_ONNX:
        return f"has dtype {onnx_dtype_name(elem)}; eqsat has float32, int64, bool, float16 and bfloat16"
    return ""


def _as_float32(arr: np.ndarray) -> np.ndarray:
    """A float16/bfloat16 constant (numpy's float16, ml_dtypes' bfloat16) as the float32 values it holds
    (exact)."""
    return np.asarray(arr, dtype=np.float32)


def _round_array(arr: np.ndarray, half: str) -> np.ndarray:
    """A float32 constant rounded to ``half`` (to nearest even, as ONNX's Cast), kept as float32."""
    return torch.from_numpy(np.ascontiguousarray(arr, np.float32)).to(TORCH_DTYPE[half]).float().numpy()


def _half_of(c: Ctx, node: onnx.NodeProto) -> str | None:
    """The half type (float16 or bfloat16) ONNX gives ``node``'s float outputs, or None: a Cast's or
    CastLike's target, else the type of its first half input (ONNX ops keep their float input's type)."""
    if node.op_type == "Cast":
        return HALF_ONNX.get(int(attrs_of(node).get("to", 0)))
    if node.op_type == "CastLike":
        return c.half.get(node.input[1])
    return next((c.half[i] for i in node.input if i in c.half), None)


# ops whose outputs after the first N are not of their input's float type (ONNX's ``U``: float32 statistics)
_TYPED_OUTPUTS = {"LayerNormalization": 1, "BatchNormalization": 1}


def _rounded(c: Ctx, node: onnx.NodeProto, t: Tensor, half: str) -> Tensor | None:
    """A float32 result ``t`` of ``node`` rounded to ``half``: a run-time value by ``round_result`` (a cast pair
    the kernels fuse; ``round_half`` for a Cast, whose operand may be float32), a constant here; None when ``t``
    is not a float32 tensor."""
    if isinstance(t, Value):
        if c.g.dtype_of(t) != FLOAT32:
            return None
        return (round_half if node.op_type in ("Cast", "CastLike") else round_result)(c.emit(), t, half)
    return _round_array(t, half) if isinstance(t, np.ndarray) and t.dtype.kind == "f" else None


def _array_half(t: np.ndarray) -> str | None:
    """The half type of a float16/bfloat16 constant (a Constant node's value, a fold in that type), else None."""
    return FLOAT16 if t.dtype == np.float16 else BFLOAT16 if str(t.dtype) == "bfloat16" else None


def _round_half_outputs(c: Ctx, node: onnx.NodeProto, outs: Sequence[Tensor]) -> list[Tensor]:
    """``outs`` with each float32 result of a half-typed node (``_half_of``) rounded to its type, and each
    half constant (a Constant node's, a fold's) as the float32 values it holds; the names of both noted in
    ``c.half``."""
    outs = list(outs)
    for k, (oname, t) in enumerate(zip(node.output, outs)):
        if not isinstance(t, np.ndarray) or (held := _array_half(t)) is None:
            continue
        outs[k] = _as_float32(t)
        if oname:
            c.half[oname] = held
    half = _half_of(c, node)
    if half is None:
        return outs
    typed = _TYPED_OUTPUTS.get(node.op_type, len(outs))  # the later ones: float32 statistics, left alone
    rounded: list[Tensor] = []
    for k, (oname, t) in enumerate(zip(node.output, outs)):
        r = _rounded(c, node, t, half) if k < typed else None
        if r is not None and oname:
            c.half[oname] = half
        rounded.append(t if r is None else r)
    return rounded


def _static_shape(vi: onnx.ValueInfoProto, dims: Mapping[str, int] | None = None) -> tuple[int, ...] | None:
    """``vi``'s shape, its symbolic dimensions (``dim_param``) read from ``dims``; None where one is unknown."""
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return None
    out = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            out.append(int(d.dim_value))
        elif d.HasField("dim_param") and dims and d.dim_param in dims:
            out.append(dims[d.dim_param])
        else:
            return None
    return tuple(out)


def _shape_text(vi: onnx.ValueInfoProto) -> str:
    """``vi``'s shape as the file declares it: ``[batch, 3, 224, 224]`` (``?``: a dimension with no name)."""
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return "no shape"
    parts = [str(d.dim_value) if d.HasField("dim_value") else d.dim_param or "?" for d in tt.shape.dim]
    return "[" + ", ".join(parts) + "]"


class OpenDimensions(FrontendError, UsageError):
    """A graph input's shape is not all known (symbolic or unnamed dimensions) and ``dims`` did not size it:
    the caller's to give (exit code 2, as a usage error)."""

    exit_code = 2


def _open_dims_problem(vi: onnx.ValueInfoProto, sizes: Mapping[str, int]) -> str:
    """Why an input whose shape is not all known is refused, and how to bind it (``from_onnx``'s ``dims``)."""
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return f"has no declared shape; give it one: dims={{'{vi.name}': (...)}} (CLI: --shape {vi.name}=AxB)"
    unset = [d for d in tt.shape.dim if not d.HasField("dim_value") and d.dim_param not in sizes]
    open_ = [d.dim_param for d in unset if d.dim_param]
    example = ", ".join(f"'{p}': N" for p in dict.fromkeys(open_))
    if open_ and len(open_) == len(unset):
        return (
            f"has shape {_shape_text(vi)}: eqsat compiles static shapes, give the symbolic dimension(s) a size: "
            f"dims={{{example}}} (CLI: " + " ".join(f"--shape {p}=N" for p in dict.fromkeys(open_)) + ")"
        )
    return (
        f"has shape {_shape_text(vi)}: eqsat compiles static shapes, give the input a shape: "
        f"dims={{'{vi.name}': (...)}} (CLI: --shape {vi.name}=AxB)"
    )


def symbolic_dims(model: onnx.ModelProto) -> dict[str, list[str]]:
    """Each symbolic dimension (``dim_param``) of the graph's inputs, with the inputs that use it."""
    out: dict[str, list[str]] = {}
    for vi in model.graph.input:
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        for d in tt.shape.dim if tt is not None and tt.HasField("shape") else ():
            if not d.HasField("dim_value") and d.dim_param and vi.name not in out.get(d.dim_param, []):
                out.setdefault(d.dim_param, []).append(vi.name)
    return out


def _bind_dims(
    og: onnx.GraphProto, free: list[onnx.ValueInfoProto], dims: Mapping[str, int | Sequence[int]], where: str
) -> tuple[dict[str, int], dict[str, tuple[int, ...]]]:
    """``dims`` split into symbolic dimensions (name -> size) and whole input shapes (input -> shape), checked:
    a name that is neither an input of ``free`` nor a symbolic dimension, a size that is not positive, a shape
    of the wrong rank or against a fixed dimension, a dimension given two sizes: one ``UsageError`` line."""
    names = {vi.name: vi for vi in free}
    params = {d.dim_param for vi in free if vi.type.HasField("tensor_type") for d in vi.type.tensor_type.shape.dim}
    params.discard("")
    sizes: dict[str, int] = {}
    shapes: dict[str, tuple[int, ...]] = {}
    for key, val in dims.items():
        seq = tuple(val) if isinstance(val, (tuple, list)) else (val,)
        if not seq or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0 for v in seq):
            raise UsageError(f"{where}dims: '{key}' = {val!r}: sizes are positive integers")
        if key in names:
            shapes[key] = tuple(int(v) for v in seq)
        elif key in params:
            if len(seq) != 1:
                raise UsageError(f"{where}dims: '{key}' is a symbolic dimension: give one size, not {val!r}")
            sizes[key] = int(seq[0])
        else:
            known = sorted(params) + sorted(n for n in names if n not in params)
            raise UsageError(
                f"{where}dims: '{key}' is neither a symbolic dimension nor a graph input of {og.name or 'the model'}"
                f" (known: {', '.join(known) or 'none: every input shape is fixed'})"
            )
    for name, shape in shapes.items():
        vi = names[name]
        tt = vi.type.tensor_type
        declared = list(tt.shape.dim) if tt.HasField("shape") else None
        if declared is None:
            continue
        if len(declared) != len(shape):
            raise UsageError(f"{where}dims: input '{name}' is {_shape_text(vi)}, rank {len(declared)}, not {shape}")
        for d, n in zip(declared, shape, strict=True):
            if d.HasField("dim_value") and d.dim_value != n:
                raise UsageError(f"{where}dims: input '{name}' is {_shape_text(vi)}: a fixed {d.dim_value}, not {n}")
            if d.HasField("dim_param") and d.dim_param:
                if sizes.setdefault(d.dim_param, n) != n:
                    raise UsageError(
                        f"{where}dims: '{d.dim_param}' is {sizes[d.dim_param]}, but input '{name}' gives it {n}"
                    )
    return sizes, shapes


def _opset(model: onnx.ModelProto) -> int:
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return int(o.version)
    return 1


def _import_node(c: Ctx, node: onnx.NodeProto, where: str, idx: int, inputs: set[str], bound: set[str]) -> None:
    """Bind ``node``'s outputs in ``c.env`` through its handler (or onnx's reference, on constants only).

    ``where``: the prefix of an error (the file, and for a node in a body the enclosing node and branch or
    iteration); ``inputs``: the graph's input names and ``bound`` those given as constants, so a refusal
    that needs an input as a constant raises ``ConstantNeeded`` naming it."""
    label = f"ONNX node '{node.name or f'#{idx}'}' ({node.op_type})"
    c.origin = label
    if node.domain not in ("", "ai.onnx"):
        raise FrontendError(f"{where}{label}: domain '{node.domain}' is not supported")
    handler = elementwise.handler_for(node.op_type)
    missing = [i for i in node.input if i and i not in c.env]
    if missing:
        raise FrontendError(f"{where}{label}: input(s) {missing} are not defined before it")
    outs: Sequence[Tensor]
    for i in node.input:
        q = c.env.get(i) if i else None
        if isinstance(q, Quantized) and node.op_type not in QUANTIZED_READERS:
            raise FrontendError(
                f"{where}{label}: reads '{i}', the {q.dtype} output of {q.producer}; eqsat reads a quantized "
                f"tensor only by {', '.join(QUANTIZED_READERS)}"
            )
    if handler is None:  # an op eqsat has no handler for: only on constants, which fold
        folded = _fold_by_reference(node, c)
        if folded is None:
            raise FrontendError(f"{where}{label}: op type '{node.op_type}' is not in eqsat's op set")
        outs = folded
    else:
        try:
            outs = handler(c, node, attrs_of(node))
            if any(isinstance(t, Value) for t in outs):
                # a handler that builds graph ops even from constants (OneHot, ReduceProd of a shape):
                # the reference folds it, so what follows (a Reshape, a Tile) still sees a constant
                outs = _fold_by_reference(node, c) or outs
        except Refuse as e:  # what the handler refuses may still fold when every input is constant
            folded = _fold_by_reference(node, c)
            if folded is not None:
                outs = folded
            elif e.needs in inputs and e.needs not in bound:
                raise ConstantNeeded(f"{where}{label}: {e}", e.needs) from None
            else:
                raise FrontendError(f"{where}{label}: {e}") from None
        except FrontendError:  # from a node inside this one's body: it names that node already
            raise
        except EqsatError as e:  # a shape or attribute the registry rejects
            raise FrontendError(f"{where}{label}: {e}") from None
    outs = [np.asarray(t) if isinstance(t, np.generic) else t for t in outs]  # numpy scalars are 0-d arrays
    for oname, t in zip(node.output, _round_half_outputs(c, node, outs)):
        if oname:
            c.env[oname] = t


def model_file(path: object, call: str, want: str, missing: str) -> Path:
    """``path`` checked as a model file to read, before protobuf sees it: something that is no path is a
    ``UsageError`` (``want``: what ``call``'s argument must be); a missing file (``missing``: how the message
    names it), a folder or an empty file is a ``FrontendError`` saying which (protobuf reads 0 bytes as an
    empty model, which then fails far from the cause)."""
    if not isinstance(path, (str, os.PathLike)):
        given = repr(path) if path is None or isinstance(path, (int, float)) else f"a {type(path).__name__}"
        raise UsageError(f"{call}: {want}, got {given}")
    p = Path(path)
    if p.is_dir():
        raise FrontendError(f"{call}: '{p}' is a folder, not a model file; give the path of the file in it")
    if not p.is_file():
        raise FrontendError(f"{missing} '{p}' does not exist")
    if p.stat().st_size == 0:
        raise FrontendError(f"{call}: '{p}' is empty (0 bytes), not an ONNX model")
    return p


def from_onnx(
    model: str | Path | onnx.ModelProto,
    name: str | None = None,
    constants: Mapping[str, np.ndarray] | None = None,
    dims: Mapping[str, int | Sequence[int]] | None = None,
) -> Graph:
    """Import an ONNX model (a file path or a ``ModelProto``) into an eqsat graph.

    ``constants`` binds graph inputs to fixed values (the model specialised on them), for
    inputs eqsat needs as constants: shapes, axes, pads, sizes.  Without it such an input
    raises ``ConstantNeeded`` (a ``FrontendError``) naming it.

    ``dims`` gives sizes to what the file leaves open: a symbolic dimension (``dim_param``, e.g.
    ``{"batch": 8, "sequence": 128}``) or a graph input's whole shape (``{"input_ids": (1, 128)}``, also
    for dimensions with no name).  The graph is specialised to them: eqsat compiles static shapes, so an
    input with a dimension left open is refused with one line naming it and how to bind it
    (``symbolic_dims`` lists them).

    Raises ``FrontendError`` (one line: the ONNX node, its op type and why) for anything
    outside eqsat's op set, dtypes (float32, int64, bool) or static shapes.
    """
    where = ""
    if not isinstance(model, onnx.ModelProto):
        path = model_file(model, "from_onnx", "model must be an .onnx file path or an onnx.ModelProto", "ONNX file")
        where = f"{path}: "
        try:
            model = onnx.load(str(path))
        except Exception as e:  # protobuf parse errors have no common base class
            raise FrontendError(f"{where}not a readable ONNX model ({type(e).__name__}: {e})") from None
    return import_model(model, where, name, constants, dims)


def import_model(
    model: onnx.ModelProto,
    where: str = "",
    name: str | None = None,
    constants: Mapping[str, np.ndarray] | None = None,
    dims: Mapping[str, int | Sequence[int]] | None = None,
) -> Graph:
    """``from_onnx`` of a parsed model; ``where`` prefixes each error (``"FILE: "``)."""
    og = model.graph
    if not og.output:  # what protobuf makes of bytes that happen to parse
        raise FrontendError(f"{where or 'from_onnx: '}the model has no graph outputs: not an ONNX model to import")
    graph = Graph(name=name or og.name or "onnx")
    c = Ctx(graph, _opset(model))
    for init in og.initializer:
        arr = numpy_helper.to_array(init)
        if init.data_type in HALF_ONNX:
            c.half[init.name] = HALF_ONNX[init.data_type]
            arr = _as_float32(arr)
        c.env[init.name] = arr
        c.names[id(arr)] = (arr, init.name)
    inputs = {vi.name for vi in og.input}
    for k, arr in (constants or {}).items():
        if k not in inputs:
            raise FrontendError(f"{where}constants: '{k}' is not a graph input")
        c.env[k] = np.asarray(arr)
    free = [vi for vi in og.input if vi.name not in c.env]
    sizes, shapes = _bind_dims(og, free, dims or {}, where)
    for vi in free:
        why = _type_problem(vi.type)
        shape = shapes.get(vi.name) or _static_shape(vi, sizes)
        if not why and shape is not None and 0 in shape:  # only a parameter (empty axes...) can be empty
            raise ConstantNeeded(f"{where}ONNX graph input '{vi.name}' is empty (shape {shape})", vi.name)
        if not why and shape is None:
            why = _open_dims_problem(vi, sizes)
        elif not why and shape is not None and any(d <= 0 for d in shape):
            why = f"has shape {shape}; eqsat needs positive dimensions"
        if why:
            raise (OpenDimensions if shape is None else FrontendError)(f"{where}ONNX graph input '{vi.name}' {why}")
        assert shape is not None
        elem = vi.type.tensor_type.elem_type
        dtype = HALF_ONNX.get(elem) or ONNX_DTYPES[elem]
        graph.add("input", [], {"name": vi.name, "shape": shape, "dtype": dtype}, origin=f"ONNX input '{vi.name}'")
        held = Value(max(graph.nodes), 0)
        if dtype in HALF:  # computed on as the float32 values it holds
            c.half[vi.name] = dtype
            held = c.add("cast", [held], dtype=FLOAT32)
        c.env[vi.name] = held
    bound = set(constants or {})

    def subgraph(body: onnx.GraphProto, args: Sequence[Tensor], scope: str) -> list[Tensor]:
        """``body``'s nodes imported with its inputs bound to ``args``; the enclosing names stay readable,
        the body's own do not leak out."""
        saved, origin = c.env, c.origin
        part = scope.removeprefix(f"{origin}, ")  # "iteration 3: " (the enclosing node's refusal names it)
        if len(args) != len(body.input):
            raise Refuse(f"{part}the body takes {len(body.input)} inputs, given {len(args)}")
        c.env = dict(saved)
        try:
            for init in body.initializer:
                arr = numpy_helper.to_array(init)
                if init.data_type in HALF_ONNX:
                    c.half[init.name] = HALF_ONNX[init.data_type]
                    arr = _as_float32(arr)
                c.env[init.name] = arr
                c.names[id(arr)] = (arr, init.name)
            for vi, t in zip(body.input, args):
                c.env[vi.name] = t
            for idx, node in enumerate(body.node):
                _import_node(c, node, f"{where}{scope}", idx, inputs, bound)
            missing = [o.name for o in body.output if o.name not in c.env]
            if missing:
                raise Refuse(f"{part}the body's output(s) {missing} are computed by no node")
            return [c.env[o.name] for o in body.output]
        finally:
            c.env, c.origin = saved, origin

    c.subgraph = subgraph
    with bar(f"import {graph.name}", total=len(og.node), unit="node") as progress:
        for idx, node in enumerate(og.node):
            progress.update(1)
            _import_node(c, node, where, idx, inputs, bound)
    c.origin = "ONNX graph output"
    for vi in og.output:
        if vi.name not in c.env:
            raise FrontendError(f"{where}ONNX graph output '{vi.name}' is not computed by any node")
        t = c.env[vi.name]
        if isinstance(t, Quantized):
            raise FrontendError(f"{where}ONNX graph output '{vi.name}' is the {t.dtype} output of {t.producer}")
        why = _type_problem(vi.type) if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type else ""
        if why:
            raise FrontendError(f"{where}ONNX graph output '{vi.name}' {why}")
        try:
            v = c.value(t, f" '{vi.name}'")
        except Refuse as e:
            raise FrontendError(f"{where}ONNX graph output '{vi.name}': {e}") from None
        elem = vi.type.tensor_type.elem_type if vi.type.HasField("tensor_type") else 0
        if elem in HALF_ONNX and graph.dtype_of(v) == FLOAT32:  # handed back in its type (exact: rounded to it)
            v = c.add("cast", [round_half(c.emit(), v, HALF_ONNX[elem])], dtype=HALF_ONNX[elem])
        elif elem and (declared_dtype := HALF_ONNX.get(elem) or ONNX_DTYPES[elem]) != graph.dtype_of(v):
            raise FrontendError(
                f"{where}ONNX graph output '{vi.name}' is declared {declared_dtype} but eqsat computes "
                f"{graph.dtype_of(v)}"
            )
        declared = _static_shape(vi, sizes)
        if declared is not None and declared != graph.shape_of(v):
            raise FrontendError(
                f"{where}ONNX graph output '{vi.name}' is declared {declared} but eqsat computes {graph.shape_of(v)}"
            )
        graph.outputs.append(v)
    if len(graph.live() | {n.id for n in graph.inputs}) < len(graph.nodes):  # a node folded after all left ops
        graph = graph.pruned()
    graph.validate()
    return graph


__all__ = ["ONNX_OPS", "ConstantNeeded", "OpenDimensions", "from_onnx", "import_model", "model_file", "symbolic_dims"]
