"""Write eqsat graphs out: ``to_onnx`` (runnable by onnxruntime) and ``save``/``load`` (exact).

``to_onnx(graph, path)`` spells every registry op with standard ONNX ops (opset 20), so an
optimized graph runs in onnxruntime or any ONNX backend; fused ops become their parts
(``conv2d_bias_act`` → Conv + activation).  Reading it back with ``from_onnx`` gives an
equivalent graph, not necessarily the same nodes.

``save(graph, path)`` / ``load(path)`` round-trip a graph *exactly* — the same ops, attributes,
weights, input order and outputs.  The file is an ONNX ModelProto (so ``onnx.load`` and
viewers such as Netron open it) in which every IR node is one node of the custom domain
``eqsat`` (``FORMAT_DOMAIN``):

- ``op_type`` is the registry op name; ``inputs``/``outputs`` name values ``v<node>.<index>``;
- each attribute is stored with its registry kind: INT, INTS, STR as ONNX INT, INTS, STRING;
  FLOAT as a 0-d float64 tensor (ONNX float attributes are float32, which would round ``eps``);
- graph inputs are ONNX graph inputs (float32, static shape) in the graph's input order, weights
  are initializers named by the weight's name, and ``doc_string`` holds the node's origin;
- the model's ``metadata_props`` carry ``eqsat_format = 1``.

onnxruntime cannot run this domain: use ``to_onnx`` for that.  ``load`` also accepts a plain
ONNX model and imports it with ``from_onnx``.

    >>> from rewrite.ir.builder import GraphBuilder
    >>> b = GraphBuilder()
    >>> g = b.build([b.relu(b.input("x", (2, 3)))])
    >>> [n.op_type for n in to_onnx(g).graph.node]
    ['Relu', 'Identity']
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx  # the optional 'onnx' extra; this module is only imported when ONNX is used
import torch
from onnx import TensorProto, helper, numpy_helper

from rewrite.frontends.onnx_import import from_onnx
from rewrite.ir.errors import FrontendError
from rewrite.ir.graph import Graph, Node, Value
from rewrite.ir.ops import OPS, AttrKind
from rewrite.progress import bar

OPSET = 20  # Gelu(approximate="tanh") needs 20
FORMAT_DOMAIN = "eqsat"
FORMAT_VERSION = "1"


def _name(v: Value) -> str:
    return f"v{v.node}.{v.index}"


def _array(t: torch.Tensor, what: str) -> np.ndarray:
    try:
        return t.detach().cpu().contiguous().numpy()
    except TypeError as e:  # bfloat16 and friends have no numpy dtype
        raise FrontendError(f"{what}: dtype {t.dtype} cannot be written to ONNX ({e})") from None


class _Writer:
    """Accumulates ONNX nodes and constant initializers for one graph."""

    def __init__(self, graph: Graph) -> None:
        self.g = graph
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.names: dict[Value, str] = {}
        self._k = 0

    def fresh(self, hint: str) -> str:
        self._k += 1
        return f"{hint}.{self._k}"

    def const(self, arr: np.ndarray, hint: str) -> str:
        name = self.fresh(hint)
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def ints(self, values: Any, hint: str) -> str:
        return self.const(np.array(list(values), np.int64), hint)

    def emit(self, op_type: str, inputs: list[str], out: str | None = None, **attrs: Any) -> str:
        out = out or self.fresh(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out


_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "identity": "Identity"}
_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div"}
_ACT = {"none": None, "relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh"}


def _act(w: _Writer, act: str, x: str, out: str) -> str:
    op = _ACT.get(act)
    if act not in _ACT:
        raise FrontendError(f"activation '{act}' has no ONNX spelling")
    return w.emit(op or "Identity", [x], out)


def _conv_attrs(a: Any, weight_shape: tuple[int, ...]) -> dict[str, Any]:
    p = a["padding"]
    return {
        "kernel_shape": list(weight_shape[2:]),
        "strides": list(a["stride"]),
        "pads": [p[0], p[1], p[0], p[1]],
        "dilations": list(a["dilation"]),
        "group": a["groups"],
    }


def _emit_node(w: _Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    a, out = n.attrs, outs[0]
    shapes = [w.g.shape_of(v) for v in n.inputs]
    if n.op in _UNARY:
        w.emit(_UNARY[n.op], ins, out)
    elif n.op in _BINARY:
        w.emit(_BINARY[n.op], ins, out)
    elif n.op == "gelu":
        w.emit("Gelu", ins, out, approximate="tanh")
    elif n.op == "smul":
        w.emit("Mul", [ins[0], w.const(np.array(a["scalar"], np.float32), "scalar")], out)
    elif n.op == "matmul":
        w.emit("MatMul", ins, out)
    elif n.op == "linear":
        if len(shapes[0]) == 2:
            w.emit("Gemm", ins, out, transB=1)
        else:
            wt = w.emit("Transpose", [ins[1]], perm=[1, 0])
            w.emit("Add", [w.emit("MatMul", [ins[0], wt]), ins[2]], out)
    elif n.op == "matmul_bias_act":
        _act(w, a["act"], w.emit("Add", [w.emit("MatMul", ins[:2]), ins[2]]), out)
    elif n.op == "conv2d":
        w.emit("Conv", ins, out, **_conv_attrs(a, shapes[1]))
    elif n.op == "conv2d_bias_act":
        _act(w, a["act"], w.emit("Conv", ins, **_conv_attrs(a, shapes[1])), out)
    elif n.op == "transpose":
        w.emit("Transpose", ins, out, perm=list(a["perm"]))
    elif n.op == "reshape":
        w.emit("Reshape", [ins[0], w.ints(a["shape"], "shape")], out)
    elif n.op == "concat":
        w.emit("Concat", ins, out, axis=a["axis"])
    elif n.op == "split":
        w.nodes.append(helper.make_node("Split", [ins[0], w.ints(a["sizes"], "split")], outs, axis=a["axis"]))
    elif n.op == "slice":
        starts, ends, axes = w.ints([a["start"]], "starts"), w.ints([a["end"]], "ends"), w.ints([a["axis"]], "axes")
        w.emit("Slice", [ins[0], starts, ends, axes], out)
    elif n.op in ("maxpool2d", "avgpool2d"):
        p = a["padding"]
        attrs = {
            "kernel_shape": list(a["kernel"]),
            "strides": list(a["stride"]),
            "pads": [p[0], p[1], p[0], p[1]],
            "ceil_mode": a["ceil_mode"],
        }
        if n.op == "avgpool2d":
            attrs["count_include_pad"] = a["count_include_pad"]
        w.emit("MaxPool" if n.op == "maxpool2d" else "AveragePool", ins, out, **attrs)
    elif n.op == "global_avgpool":
        w.emit("GlobalAveragePool", ins, out)
    elif n.op == "batchnorm":
        w.emit("BatchNormalization", ins, out, epsilon=a["eps"])
    elif n.op == "layernorm":
        w.emit("LayerNormalization", ins, out, axis=-1, epsilon=a["eps"])
    elif n.op == "softmax":
        w.emit("Softmax", ins, out, axis=a["axis"])
    elif n.op == "pad2d":
        rank, (t, b, l_, r) = len(shapes[0]), a["pads"]
        pads = [0] * (rank - 2) + [t, l_] + [0] * (rank - 2) + [b, r]
        w.emit("Pad", [ins[0], w.ints(pads, "pads")], out)
    elif n.op == "rsqrt":
        x = w.emit("Add", [ins[0], w.const(np.array(a["eps"], np.float32), "eps")]) if a["eps"] else ins[0]
        w.emit("Reciprocal", [w.emit("Sqrt", [x])], out)
    else:
        raise FrontendError(f"{n.describe()}: op '{n.op}' has no ONNX spelling in to_onnx")


def _value_info(name: str, shape: tuple[int, ...]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def _io(graph: Graph, w: _Writer) -> tuple[list[onnx.ValueInfoProto], list[onnx.TensorProto]]:
    """Graph inputs (in order) and weight initializers; binds their value names."""
    inputs, weights = [], []
    for n in graph:
        if n.op in ("input", "weight"):
            w.names[Value(n.id, 0)] = n.attrs["name"]
            if n.op == "input":
                inputs.append(_value_info(n.attrs["name"], n.shape))
            else:
                arr = _array(graph.weights[n.attrs["name"]], n.describe())
                weights.append(numpy_helper.from_array(arr, n.attrs["name"]))
    return inputs, weights


def to_onnx(graph: Graph, path: str | Path | None = None) -> onnx.ModelProto:
    """The graph as a standard ONNX model (opset 20) that onnxruntime runs; written to ``path`` if given.

    Outputs are named ``output0``, ``output1``...; inputs and weights keep their names.
    Raises ``FrontendError`` for an op with no ONNX spelling.
    """
    graph.validate()
    w = _Writer(graph)
    inputs, weights = _io(graph, w)
    for n in graph:
        if n.op in ("input", "weight"):
            continue
        outs = [_name(Value(n.id, i)) for i in range(len(n.shapes))]
        _emit_node(w, n, [w.names[v] for v in n.inputs], outs)
        for i, o in enumerate(outs):
            w.names[Value(n.id, i)] = o
    outputs = []
    for i, v in enumerate(graph.outputs):
        w.emit("Identity", [w.names[v]], f"output{i}")
        outputs.append(_value_info(f"output{i}", graph.shape_of(v)))
    og = helper.make_graph(w.nodes, graph.name, inputs, outputs, weights + w.inits)
    model = helper.make_model(og, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="eqsat")
    onnx.checker.check_model(model)
    if path is not None:
        onnx.save(model, str(path))
    return model


# ---------------------------------------------------------------- the exact format


def _attr_out(name: str, kind: AttrKind, value: Any) -> onnx.AttributeProto:
    if kind is AttrKind.FLOAT:
        return helper.make_attribute(name, numpy_helper.from_array(np.array(value, np.float64)))
    if kind is AttrKind.INTS:
        return helper.make_attribute(name, list(value), attr_type=onnx.AttributeProto.INTS)
    return helper.make_attribute(name, value)


def _attr_in(kind: AttrKind, attr: onnx.AttributeProto) -> Any:
    value = helper.get_attribute_value(attr)
    if kind is AttrKind.FLOAT:
        return float(numpy_helper.to_array(value))
    if kind is AttrKind.INTS:
        return tuple(int(v) for v in value)
    if kind is AttrKind.STR:
        return value.decode() if isinstance(value, bytes) else str(value)
    return int(value)


def save(graph: Graph, path: str | Path) -> None:
    """Write ``graph`` with its weights to ``path`` in the exact eqsat format (see the module doc)."""
    graph.validate()
    w = _Writer(graph)
    inputs, weights = _io(graph, w)
    for n in graph:  # every node, sources included, so load replays them in the same order
        outs = [_name(Value(n.id, i)) for i in range(len(n.shapes))]
        node = helper.make_node(n.op, [w.names[v] for v in n.inputs], outs, domain=FORMAT_DOMAIN, doc_string=n.origin)
        node.attribute.extend(_attr_out(spec.name, spec.kind, n.attrs[spec.name]) for spec in OPS[n.op].attrs)
        w.nodes.append(node)
        for i, o in enumerate(outs):
            w.names[Value(n.id, i)] = o
    outputs = [_value_info(w.names[v], graph.shape_of(v)) for v in graph.outputs]
    og = helper.make_graph(w.nodes, graph.name, inputs, outputs, weights)
    model = helper.make_model(
        og, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(FORMAT_DOMAIN, 1)], producer_name="eqsat"
    )
    helper.set_model_props(model, {"eqsat_format": FORMAT_VERSION})
    onnx.save(model, str(path))


def _load_exact(model: onnx.ModelProto, where: str) -> Graph:
    og = model.graph
    graph = Graph(name=og.name)
    env: dict[str, Value] = {}
    inits = {t.name: t for t in og.initializer}
    with bar(f"load {og.name}", total=len(og.node), unit="node") as progress:
        for idx, pn in enumerate(og.node):
            progress.update(1)
            label = f"node #{idx} ({pn.op_type})"
            if pn.domain != FORMAT_DOMAIN or pn.op_type not in OPS:
                raise FrontendError(f"{where}{label}: not an eqsat-format node (domain '{pn.domain}')")
            specs = {s.name: s.kind for s in OPS[pn.op_type].attrs}
            try:
                attrs = {a.name: _attr_in(specs[a.name], a) for a in pn.attribute}
                if pn.op_type == "weight":
                    if attrs.get("name") not in inits:
                        raise FrontendError(f"{where}{label}: weight {attrs.get('name')!r} has no initializer")
                    arr = numpy_helper.to_array(inits[attrs["name"]])
                    graph.weights[attrs["name"]] = torch.from_numpy(np.array(arr, copy=True, order="C"))
                missing = [i for i in pn.input if i not in env]
                if missing:
                    raise FrontendError(f"{where}{label}: input(s) {missing} are not defined before it")
                node = graph.add(pn.op_type, [env[i] for i in pn.input], attrs, origin=pn.doc_string)
            except (KeyError, ValueError, TypeError) as e:  # ShapeError and GraphError are ValueErrors
                if isinstance(e, FrontendError):
                    raise
                raise FrontendError(f"{where}{label}: {e}") from None
            for i, o in enumerate(pn.output):
                env[o] = Value(node.id, i)
    missing = [vi.name for vi in og.output if vi.name not in env]
    if missing:
        raise FrontendError(f"{where}output(s) {missing} are not computed by any node")
    graph.outputs = [env[vi.name] for vi in og.output]
    graph.validate()
    return graph


def load(path: str | Path) -> Graph:
    """Read a graph written by ``save`` (exactly), or import a plain ONNX model with ``from_onnx``."""
    if not Path(path).is_file():
        raise FrontendError(f"graph file '{path}' does not exist")
    try:
        model = onnx.load(str(path))
    except Exception as e:  # protobuf parse errors have no common base class
        raise FrontendError(f"{path}: not a readable ONNX/eqsat file ({type(e).__name__}: {e})") from None
    props = {p.key: p.value for p in model.metadata_props}
    if "eqsat_format" not in props:
        return from_onnx(model)
    if props["eqsat_format"] != FORMAT_VERSION:
        raise FrontendError(f"{path}: eqsat format version {props['eqsat_format']}, this eqsat reads {FORMAT_VERSION}")
    return _load_exact(model, f"{path}: ")


__all__ = ["FORMAT_DOMAIN", "OPSET", "load", "save", "to_onnx"]
