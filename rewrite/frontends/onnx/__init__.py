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
- ``save``/``load`` (:mod:`.exact`): the graph exactly, in an ONNX container.

    >>> import onnx.helper as oh
    >>> from onnx import TensorProto
    >>> node = oh.make_node("Relu", ["x"], ["y"])
    >>> vi = lambda n: oh.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3])
    >>> g = from_onnx(oh.make_model(oh.make_graph([node], "g", [vi("x")], [vi("y")])))
    >>> [n.op for n in g]
    ['input', 'relu']
"""

from rewrite.frontends.onnx.context import HANDLERS
from rewrite.frontends.onnx.exact import FORMAT_DOMAIN, load, save
from rewrite.frontends.onnx.export import OPSET, to_onnx
from rewrite.frontends.onnx.importer import ONNX_OPS, from_onnx

__all__ = ["FORMAT_DOMAIN", "HANDLERS", "ONNX_OPS", "OPSET", "from_onnx", "load", "save", "to_onnx"]
