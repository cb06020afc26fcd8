"""ONNX in and out.

- ``from_onnx(path | ModelProto)`` (:mod:`.importer`): a node the registry spells (``OpDef.onnx``:
  ``Relu``, ``Gelu``, ``Conv``, ``Softmax``...) becomes that op, through the op's importer where it has one
  (``IMPORTERS``, keyed by registry op: attributes, constant folding); any other goes to the handler
  registered for its op type (``HANDLERS``; ``ONNX_OPS`` is both sets): :mod:`.elementwise`,
  :mod:`.nn` (matmul, conv, pooling), :mod:`.norm`, :mod:`.layout`, :mod:`.reduce`,
  :mod:`.indexing`.  Anything eqsat cannot represent exactly (another dtype, a dynamic shape,
  an attribute value outside the op set) is refused with a one-line ``FrontendError`` naming
  the ONNX node, its op type and why.
- ``to_onnx(graph)`` (:mod:`.export`): a standard ONNX model (opset 20) onnxruntime runs.
- ``save``/``load`` (:mod:`.exact`): the graph exactly, in an ONNX container onnxruntime cannot run
  (name it ``.eqsat``: ``save`` refuses a ``.onnx`` path, which ``to_onnx`` writes).

    >>> import onnx.helper as oh
    >>> from onnx import TensorProto
    >>> node = oh.make_node("Relu", ["x"], ["y"])
    >>> vi = lambda n: oh.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3])
    >>> g = from_onnx(oh.make_model(oh.make_graph([node], "g", [vi("x")], [vi("y")])))
    >>> [n.op for n in g]
    ['input', 'relu']
"""

from collections.abc import Mapping, Sequence
from pathlib import Path

from rewrite.frontends.onnx import exact
from rewrite.frontends.onnx.context import HANDLERS
from rewrite.frontends.onnx.exact import FORMAT_DOMAIN
from rewrite.frontends.onnx.export import OPSET, output_path, to_onnx
from rewrite.frontends.onnx.importer import ONNX_OPS, from_onnx, model_file, symbolic_dims
from rewrite.ir.errors import UsageError
from rewrite.ir.graph import Graph, expect_graph


def save(graph: Graph, path: str | Path) -> None:
    """Write ``graph`` exactly, weights included (:func:`.exact.save`), to ``path``, conventionally ``.eqsat``.

    The format is eqsat's own, which onnxruntime cannot run, so a ``.onnx`` path is refused rather than
    given a file named like a model no ONNX runtime loads: ``to_onnx`` writes that (an equivalent graph,
    not the same nodes).  The path's folder is checked before anything is written.
    """
    expect_graph(graph, "save")
    p = output_path(path, "save")
    if p.suffix.lower() == ".onnx":
        raise UsageError(
            f"save: '{p}' names an ONNX file, but save writes eqsat's exact format, which onnxruntime cannot "
            f"load; use rewrite.to_onnx(graph, '{p}') for a standard ONNX model, or save to '{p.with_suffix('.eqsat')}'"
        )
    exact.save(graph, p)


def load(path: str | Path, dims: Mapping[str, int | Sequence[int]] | None = None) -> Graph:
    """A graph written by ``save`` (exactly), or a plain ONNX model imported by ``from_onnx`` (``dims``: sizes of
    the model's symbolic dimensions or inputs' shapes, as ``from_onnx`` takes them)."""
    return exact.load(model_file(path, "load", "path must be a .eqsat or .onnx file path", "graph file"), dims)


__all__ = ["FORMAT_DOMAIN", "HANDLERS", "ONNX_OPS", "OPSET", "from_onnx", "load", "save", "symbolic_dims", "to_onnx"]
