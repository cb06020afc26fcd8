"""The exact eqsat graph format.

``save(graph, path)`` / ``load(path)`` round-trip a graph *exactly* — the same ops, attributes,
weights, input order and outputs.  The file is an ONNX ModelProto (so ``onnx.load`` and
viewers such as Netron open it) in which every IR node is one node of the custom domain
``eqsat`` (``FORMAT_DOMAIN``):

- ``op_type`` is the registry op name; ``inputs``/``outputs`` name values ``v<node>.<index>``;
- each attribute is stored with its registry kind: INT, INTS, STR as ONNX INT, INTS, STRING;
  FLOAT as a 0-d float64 tensor (ONNX float attributes are float32, which would round ``eps``);
- graph inputs are ONNX graph inputs (their dtype, static shape) in the graph's input order, weights
  are initializers named by the weight's name, and ``doc_string`` holds the node's origin;
- the model's ``metadata_props`` carry ``eqsat_format = 1``.

onnxruntime cannot run this domain: use ``to_onnx`` for that.  ``load`` also accepts a plain
ONNX model and imports it with ``from_onnx``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import torch
from onnx import helper, numpy_helper

from rewrite.frontends.onnx.export import OPSET, Writer, io, value_info, value_name
from rewrite.frontends.onnx.importer import import_model
from rewrite.ir.errors import FrontendError, UsageError
from rewrite.ir.graph import Graph, Value
from rewrite.ir.ops import OPS, AttrKind
from rewrite.progress import bar

FORMAT_DOMAIN = "eqsat"
FORMAT_VERSION = "1"


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
    w = Writer(graph)
    inputs, weights = io(graph, w)
    for n in graph:  # every node, sources included, so load replays them in the same order
        outs = [value_name(Value(n.id, i)) for i in range(len(n.shapes))]
        node = helper.make_node(n.op, [w.names[v] for v in n.inputs], outs, domain=FORMAT_DOMAIN, doc_string=n.origin)
        node.attribute.extend(_attr_out(spec.name, spec.kind, n.attrs[spec.name]) for spec in OPS[n.op].attrs)
        w.nodes.append(node)
        for i, o in enumerate(outs):
            w.names[Value(n.id, i)] = o
    outputs = [value_info(w.names[v], graph.shape_of(v), graph.dtype_of(v)) for v in graph.outputs]
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


def load(path: str | Path, dims: Mapping[str, int | Sequence[int]] | None = None) -> Graph:
    """Read a graph written by ``save`` (exactly), or import a plain ONNX model with ``from_onnx`` (``dims``: the
    sizes of its open dimensions; a saved graph has none)."""
    if not Path(path).is_file():
        raise FrontendError(f"graph file '{path}' does not exist")
    try:
        model = onnx.load(str(path))
    except Exception as e:  # protobuf parse errors have no common base class
        raise FrontendError(f"{path}: not a readable ONNX/eqsat file ({type(e).__name__}: {e})") from None
    props = {p.key: p.value for p in model.metadata_props}
    if "eqsat_format" not in props:
        return import_model(model, f"{path}: ", dims=dims)
    if dims:
        raise UsageError(f"{path}: a saved eqsat graph has static shapes; dims {sorted(dims)} do not apply")
    if props["eqsat_format"] != FORMAT_VERSION:
        raise FrontendError(f"{path}: eqsat format version {props['eqsat_format']}, this eqsat reads {FORMAT_VERSION}")
    return _load_exact(model, f"{path}: ")


__all__ = ["FORMAT_DOMAIN", "FORMAT_VERSION", "load", "save"]
