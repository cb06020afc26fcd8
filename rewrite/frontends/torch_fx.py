"""Import a PyTorch ``nn.Module`` into an eqsat :class:`~rewrite.graph.Graph`.

    x = torch.randn(1, 3, 224, 224)
    g = from_torch(model.eval(), (x,))
    torch.allclose(g.run([x])[0], model(x), atol=1e-5)  # True

The module is traced with torch.fx symbolic tracing (nothing else is tried: if
tracing fails, :class:`FrontendError` says so), run once on the example inputs
with :class:`~torch.fx.passes.shape_prop.ShapeProp` so every fx node's output
shape is known, and then each fx node is converted to registry ops with a
:class:`~rewrite.builder.GraphBuilder`.  After every node the builder's shapes
are checked against the shapes torch computed.

* Parameters and buffers become weights named by their qualified name
  (``layer1.0.conv1.weight``); a tensor reached through several names or used
  by several layers is one weight node.  ``nn.Linear`` / ``F.linear`` weights
  are transposed at import and stored as ``<name>_t`` (``fc.weight_t``) so that
  the graph holds plain matmuls.  Weights are copies: later changes to the
  module do not change the graph.
* Rank alignment (conv bias to ``[1, C, 1, 1]``, linear weights for 3-D+
  inputs, broadcasting operands) is a ``reshape`` node; reshapes of the same
  value to the same shape are emitted once.
* A Python scalar in ``*`` and ``/`` becomes ``smul``; in ``+`` and ``-`` (and as
  the numerator of ``/``) it becomes a one-element constant weight
  ``const.<fx node>`` of shape ``[1] * rank`` used by ``add``/``sub``/``div``.
* Anything not mapped raises :class:`FrontendError` naming the op, the fx node,
  the module path and, when known, the source line.  Nothing is dropped: only
  values proven equal (identity, eval-mode dropout, ``contiguous``, no-op
  reshapes and permutations) are passed through without a node.
"""

from __future__ import annotations

import operator
import os
from typing import Any, Callable, Iterable, Sequence

import torch
import torch.fx
import torch.nn.functional as F
from torch import nn
from torch.fx.passes.shape_prop import ShapeProp, TensorMetadata

from rewrite.builder import GraphBuilder
from rewrite.graph import Graph, Value
from rewrite.ops import Shape

__all__ = ["FrontendError", "from_torch"]


class FrontendError(ValueError):
    """A module cannot be imported; the message names the op and the fx node."""


def from_torch(module: nn.Module, example_inputs: Sequence[torch.Tensor] | torch.Tensor,
               name: str | None = None) -> Graph:
    """Trace ``module`` with torch.fx and convert it to an eqsat graph.

    ``example_inputs`` fix the shape of every input (one tensor per ``forward``
    argument, float32).  The graph's inputs are named after the ``forward``
    arguments and its outputs are the tensors ``forward`` returns (one tensor or
    a flat tuple/list of tensors).
    """
    if not isinstance(module, nn.Module):
        raise FrontendError(f"from_torch expects an nn.Module, got {type(module).__name__}")
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    gm = _trace(module)
    imp = _Importer(module, gm, example_inputs, name or type(module).__name__)
    imp.precheck()
    imp.propagate_shapes()
    return imp.convert()


# ====================================================================== tracing
def _trace(module: nn.Module) -> torch.fx.GraphModule:
    """What ``torch.fx.symbolic_trace`` does, with source locations recorded for messages."""
    tracer = torch.fx.Tracer()
    tracer.record_stack_traces = True
    try:
        graph = tracer.trace(module)
    except Exception as e:  # noqa: BLE001 - any tracing failure is reported the same way
        raise FrontendError(
            f"torch.fx.symbolic_trace could not trace {type(module).__name__} "
            f"(only symbolic tracing is supported, no other capture is tried): {type(e).__name__}: {e}"
        ) from e
    return torch.fx.GraphModule(tracer.root, graph, type(module).__name__)


# ====================================================================== tables
def _describe_fn(fn: Any) -> str:
    mod = getattr(fn, "__module__", None)
    name = getattr(fn, "__name__", None) or repr(fn)
    if mod in (None, "torch._C._VariableFunctions"):
        mod = "torch"
    elif mod == "_operator":
        mod = "operator"
    elif mod == "torch._C._nn":
        mod = "torch.nn.functional"
    return name if mod == "builtins" else f"{mod}.{name}"


def _describe_type(t: type) -> str:
    return f"{t.__module__}.{t.__qualname__}"


_REQ = object()  # marks a required argument in a spec


def _spec(*required: str, **optional: Any) -> tuple[tuple[str, Any], ...]:
    return tuple((n, _REQ) for n in required) + tuple(optional.items())


# call_module: exact module type -> handler method
_MODULES: dict[type, str] = {
    nn.Linear: "m_linear",
    nn.Conv2d: "m_conv2d",
    nn.BatchNorm1d: "m_batchnorm",
    nn.BatchNorm2d: "m_batchnorm",
    nn.BatchNorm3d: "m_batchnorm",
    nn.LayerNorm: "m_layernorm",
    nn.ReLU: "m_relu",
    nn.Sigmoid: "m_unary",
    nn.Tanh: "m_unary",
    nn.GELU: "m_gelu",
    nn.SiLU: "m_silu",
    nn.Softmax: "m_softmax",
    nn.Identity: "m_passthrough",
    nn.Dropout: "m_dropout",
    nn.Dropout1d: "m_dropout",
    nn.Dropout2d: "m_dropout",
    nn.Dropout3d: "m_dropout",
    nn.AlphaDropout: "m_dropout",
    nn.FeatureAlphaDropout: "m_dropout",
    nn.MaxPool2d: "m_maxpool",
    nn.AvgPool2d: "m_avgpool",
    nn.AdaptiveAvgPool2d: "m_adaptive_avgpool",
    nn.Flatten: "m_reshape",
    nn.Unflatten: "m_reshape",
}
_UNARY_MODULES = {nn.Sigmoid: "sigmoid", nn.Tanh: "tanh"}
_DROPOUT_MODULES = {t for t, h in _MODULES.items() if h == "m_dropout"}

# call_function: target -> (handler method, argument spec or None for raw args, extra)
_FUNCTIONS: dict[Any, tuple[str, Any, Any]] = {}


def _fn(targets: Iterable[Any], handler: str, spec: Any = None, extra: Any = None) -> None:
    for t in targets:
        _FUNCTIONS[t] = (handler, spec, extra)


_fn([torch.relu, F.relu], "f_unary", _spec("input", inplace=False), "relu")
_fn([torch.relu_], "f_unary", _spec("input"), "relu")
_fn([torch.sigmoid, F.sigmoid], "f_unary", _spec("input"), "sigmoid")
_fn([torch.tanh, F.tanh], "f_unary", _spec("input"), "tanh")
_fn([torch.exp], "f_unary", _spec("input"), "exp")
_fn([F.gelu], "f_gelu", _spec("input", approximate="none"))
_fn([F.silu], "f_silu", _spec("input", inplace=False))
_fn([F.dropout], "f_dropout", _spec("input", p=0.5, training=True, inplace=False))
_fn([F.softmax], "f_softmax", _spec("input", dim=None, _stacklevel=3, dtype=None))
_fn([torch.softmax], "f_softmax", _spec("input", dim=None, dtype=None))
_fn([F.linear], "f_linear", _spec("input", "weight", bias=None))
_fn([F.conv2d], "f_conv2d", _spec("input", "weight", bias=None, stride=1, padding=0, dilation=1, groups=1))
_fn([F.max_pool2d], "f_maxpool", _spec("input", "kernel_size", stride=None, padding=0, dilation=1,
                                       ceil_mode=False, return_indices=False))
_fn([F.avg_pool2d], "f_avgpool", _spec("input", "kernel_size", stride=None, padding=0, ceil_mode=False,
                                       count_include_pad=True, divisor_override=None))
_fn([F.adaptive_avg_pool2d], "f_adaptive_avgpool", _spec("input", "output_size"))
_fn([F.layer_norm], "f_layernorm", _spec("input", "normalized_shape", weight=None, bias=None, eps=1e-5))
_fn([F.batch_norm], "f_batchnorm", _spec("input", "running_mean", "running_var", weight=None, bias=None,
                                         training=False, momentum=0.1, eps=1e-5))
_fn([torch.mean], "f_mean", _spec("input", dim=None, keepdim=False, dtype=None))
_fn([torch.matmul, operator.matmul], "f_matmul", _spec("input", "other"), "matmul")
_fn([torch.mm], "f_matmul", _spec("input", "mat2"), "mm")
_fn([torch.bmm], "f_matmul", _spec("input", "mat2"), "bmm")
_fn([operator.add], "f_arith", _spec("input", "other"), "add")
_fn([operator.sub], "f_arith", _spec("input", "other"), "sub")
_fn([operator.mul], "f_arith", _spec("input", "other"), "mul")
_fn([operator.truediv], "f_arith", _spec("input", "other"), "div")
_fn([torch.add], "f_arith", _spec("input", "other", alpha=1), "add")
_fn([torch.sub, torch.subtract], "f_arith", _spec("input", "other", alpha=1), "sub")
_fn([torch.mul, torch.multiply], "f_arith", _spec("input", "other"), "mul")
_fn([torch.div, torch.divide], "f_arith", _spec("input", "other", rounding_mode=None), "div")
_fn([torch.true_divide], "f_arith", _spec("input", "other"), "div")
_fn([operator.neg, torch.neg, torch.negative], "f_neg", _spec("input"))
_fn([operator.pos], "f_passthrough", _spec("input"))
_fn([torch.cat, torch.concat], "f_cat", _spec("tensors", dim=0))
_fn([torch.concatenate], "f_cat", _spec("tensors", axis=0))
_fn([torch.split], "f_split", _spec("tensor", "split_size_or_sections", dim=0))
_fn([torch.chunk], "f_split", _spec("input", "chunks", dim=0))
_fn([torch.unbind], "f_unbind", _spec("input", dim=0))
_fn([torch.transpose, torch.swapaxes, torch.swapdims], "f_transpose", _spec("input", "dim0", "dim1"))
_fn([torch.permute], "f_permute", _spec("input", "dims"))
_fn([torch.t], "f_t", _spec("input"))
_fn([torch.reshape, torch.flatten, torch.squeeze, torch.unsqueeze], "f_reshape", None)
_fn([torch.clone], "f_passthrough", _spec("input", memory_format=None))
_fn([operator.getitem], "f_getitem", _spec("obj", "index"))
_fn([getattr], "f_getattr", _spec("obj", "name"))

# call_method: method name -> (handler method, spec, extra); ``self`` is the first argument
_METHODS: dict[str, tuple[str, Any, Any]] = {
    "relu": ("f_unary", _spec("input"), "relu"),
    "sigmoid": ("f_unary", _spec("input"), "sigmoid"),
    "tanh": ("f_unary", _spec("input"), "tanh"),
    "exp": ("f_unary", _spec("input"), "exp"),
    "softmax": ("f_softmax", _spec("input", "dim", dtype=None), None),
    "mean": ("f_mean", _spec("input", dim=None, keepdim=False, dtype=None), None),
    "matmul": ("f_matmul", _spec("input", "other"), "matmul"),
    "mm": ("f_matmul", _spec("input", "mat2"), "mm"),
    "bmm": ("f_matmul", _spec("input", "mat2"), "bmm"),
    "add": ("f_arith", _spec("input", "other", alpha=1), "add"),
    "sub": ("f_arith", _spec("input", "other", alpha=1), "sub"),
    "mul": ("f_arith", _spec("input", "other"), "mul"),
    "div": ("f_arith", _spec("input", "other", rounding_mode=None), "div"),
    "true_divide": ("f_arith", _spec("input", "other"), "div"),
    "neg": ("f_neg", _spec("input"), None),
    "split": ("f_split", _spec("input", "split_size", dim=0), None),
    "chunk": ("f_split", _spec("input", "chunks", dim=0), None),
    "unbind": ("f_unbind", _spec("input", dim=0), None),
    "transpose": ("f_transpose", _spec("input", "dim0", "dim1"), None),
    "swapaxes": ("f_transpose", _spec("input", "axis0", "axis1"), None),
    "swapdims": ("f_transpose", _spec("input", "dim0", "dim1"), None),
    "permute": ("f_permute", None, None),
    "t": ("f_t", _spec("input"), None),
    "reshape": ("f_reshape", None, None),
    "view": ("f_reshape", None, None),
    "flatten": ("f_reshape", None, None),
    "squeeze": ("f_reshape", None, None),
    "unsqueeze": ("f_reshape", None, None),
    "view_as": ("f_reshape", None, None),
    "reshape_as": ("f_reshape", None, None),
    "unflatten": ("f_reshape", None, None),
    # the value is unchanged (dtype and shape are checked against torch's after the node)
    "contiguous": ("f_passthrough", None, None),
    "clone": ("f_passthrough", None, None),
    "detach": ("f_passthrough", None, None),
    "float": ("f_passthrough", None, None),
    "to": ("f_passthrough", None, None),
    "type_as": ("f_passthrough", None, None),
    # shape queries give constants (shapes are static)
    "size": ("f_size", _spec("input", dim=None), None),
    "dim": ("f_ndim", _spec("input"), None),
    "ndimension": ("f_ndim", _spec("input"), None),
    "numel": ("f_numel", _spec("input"), None),
}
# in-place variants of elementwise methods (x.relu_(), x.add_(y), ...): converted like the
# out-of-place method once precheck has shown nobody reads the old value afterwards
_INPLACE_METHODS = {f"{m}_" for m in ("relu", "sigmoid", "tanh", "exp", "add", "sub", "mul", "div")}

# ops whose result may share storage with an input (used to check in-place ops)
_VIEW_METHODS = {"view", "reshape", "flatten", "squeeze", "unsqueeze", "view_as", "reshape_as", "unflatten",
                 "transpose", "swapaxes", "swapdims", "permute", "t", "contiguous", "detach", "float", "to",
                 "type_as", "split", "chunk", "unbind", "expand", "expand_as", "narrow", "select",
                 "as_strided", "diagonal", "unfold", "movedim", "moveaxis", "view_as_real"} | _INPLACE_METHODS
_VIEW_FUNCTIONS = {operator.getitem, getattr, operator.pos, torch.reshape, torch.flatten, torch.squeeze,
                   torch.unsqueeze, torch.transpose, torch.swapaxes, torch.swapdims, torch.permute, torch.t,
                   torch.split, torch.chunk, torch.unbind, torch.narrow, torch.select, torch.movedim,
                   torch.detach, F.dropout, torch.relu_}
_VIEW_MODULES = {nn.Identity, nn.Flatten, nn.Unflatten} | _DROPOUT_MODULES


def _pair(v: Any, what: str) -> tuple[int, int]:
    if isinstance(v, int) and not isinstance(v, bool):
        return (v, v)
    if isinstance(v, (tuple, list)) and all(isinstance(i, int) for i in v):
        if len(v) == 1:
            return (v[0], v[0])
        if len(v) == 2:
            return (v[0], v[1])
    raise _Unsupported(f"{what} must be an int or a pair of ints, got {v!r}")


class _Unsupported(Exception):
    """Raised by handlers; turned into a FrontendError naming the current node."""


# ====================================================================== importer
class _Importer:
    def __init__(self, root: nn.Module, gm: torch.fx.GraphModule, inputs: tuple[Any, ...], name: str) -> None:
        self.root, self.gm, self.inputs = root, gm, inputs
        self.b = GraphBuilder(name)
        self.env: dict[torch.fx.Node, Any] = {}
        self.order = {n: i for i, n in enumerate(gm.graph.nodes)}
        self.node: torch.fx.Node | None = None
        self.cache: dict[tuple, Value] = {}
        self.keep_alive: list[torch.Tensor] = []  # tensors whose id() keys the cache
        self.param_of: dict[Value, torch.Tensor] = {}  # weight node -> the parameter/buffer it holds
        self.param_names: dict[int, str] = {}
        for pname, t in root.named_parameters(remove_duplicate=False):
            self.param_names.setdefault(id(t), pname)
        for bname, t in root.named_buffers(remove_duplicate=False):
            self.param_names.setdefault(id(t), bname)

    # ------------------------------------------------------------ messages
    def target_desc(self, node: torch.fx.Node) -> str:
        if node.op == "call_module":
            return _describe_type(type(self.gm.get_submodule(node.target)))
        if node.op == "call_function":
            if node.target is getattr and len(node.args) > 1 and isinstance(node.args[1], str):
                return f"Tensor.{node.args[1]}"
            return _describe_fn(node.target)
        if node.op == "call_method":
            return f"Tensor.{node.target}"
        if node.op == "get_attr":
            return f"get_attr {node.target}"
        return str(node.op)  # placeholder, output

    @staticmethod
    def module_path(node: torch.fx.Node) -> str | None:
        if node.op == "call_module":
            return str(node.target)
        stack = node.meta.get("nn_module_stack")
        if stack:
            return str(list(stack.values())[-1][0])
        return None

    @staticmethod
    def source_line(node: torch.fx.Node) -> str | None:
        """The innermost frame of ``node.stack_trace`` outside torch, as ``file:line: code``."""
        st = node.stack_trace
        if not st:
            return None
        torch_dir = os.path.dirname(torch.__file__)
        lines = st.splitlines()
        best = None
        for i, line in enumerate(lines):
            s = line.strip()
            if not s.startswith("File "):
                continue
            try:
                fname = s.split('"')[1]
                lineno = s.split(", line ")[1].split(",")[0]
            except IndexError:
                continue
            if fname.startswith(torch_dir):
                continue
            code = lines[i + 1].strip() if i + 1 < len(lines) and not lines[i + 1].strip().startswith("File ") else ""
            try:
                rel = os.path.relpath(fname)
                fname = rel if not rel.startswith("..") else fname
            except ValueError:
                pass
            best = f"{fname}:{lineno}" + (f": {code}" if code else "")
        return best

    def where(self, node: torch.fx.Node) -> str:
        parts = []
        path = self.module_path(node)
        if path:
            parts.append(f"module '{path}'")
        src = self.source_line(node)
        if src:
            parts.append(src)
        return f" ({', '.join(parts)})" if parts else ""

    def fail(self, msg: str, node: torch.fx.Node | None = None) -> FrontendError:
        node = node or self.node
        assert node is not None
        return FrontendError(f"op '{self.target_desc(node)}' at fx node '{node.name}'{self.where(node)}: {msg}")

    def unsupported(self, node: torch.fx.Node, desc: str | None = None, why: str = "") -> FrontendError:
        desc = desc or self.target_desc(node)
        return FrontendError(f"unsupported op '{desc}' at fx node '{node.name}'{self.where(node)}"
                             + (f": {why}" if why else ""))

    def origin(self, node: torch.fx.Node) -> str:
        path = self.module_path(node)
        if node.op == "call_module":
            return f"{node.name} ({path})"
        if node.op in ("call_function", "call_method"):
            return f"{node.name} ({self.target_desc(node)}" + (f" in {path})" if path else ")")
        return f"{node.name} ({node.op})"

    # ------------------------------------------------------------ phase 1: checks before running
    def placeholders(self) -> list[torch.fx.Node]:
        return [n for n in self.gm.graph.nodes if n.op == "placeholder"]

    def precheck(self) -> None:
        """Reject what running the module would get wrong or mutate, before ShapeProp runs it."""
        phs = self.placeholders()
        for n in phs:
            if str(n.target).startswith("*"):
                raise self.unsupported(n, f"variadic forward argument '{n.target}'")
        if len(phs) != len(self.inputs):
            raise FrontendError(
                f"{type(self.root).__name__}.forward takes {len(phs)} input(s) "
                f"{[str(n.target) for n in phs]}, got {len(self.inputs)} example input(s)")
        for n, x in zip(phs, self.inputs):
            if not isinstance(x, torch.Tensor):
                raise FrontendError(f"example input '{n.target}' must be a tensor, got {type(x).__name__}")
            if x.dtype != torch.float32:
                raise FrontendError(f"example input '{n.target}' has dtype {x.dtype}; eqsat graphs are float32")
        for n in self.gm.graph.nodes:
            if n.op == "call_module":
                mod = self.gm.get_submodule(n.target)
                if type(mod) in (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d) and mod.training:
                    raise self.fail("BatchNorm in training mode uses (and updates) batch statistics; "
                                    "call module.eval() first", n)
            elif n.op == "call_function" and n.target is F.batch_norm:
                training = n.kwargs.get("training", n.args[5] if len(n.args) > 5 else False)
                if training is not False:
                    raise self.fail("F.batch_norm with training=True uses batch statistics", n)
            src = self.inplace_source(n)
            if src is not None:
                self.check_inplace(n, src)

    def inplace_source(self, node: torch.fx.Node) -> torch.fx.Node | None:
        """The fx node an in-place op overwrites, or None if ``node`` is not in-place."""
        first = node.args[0] if node.args else node.kwargs.get("input")
        if not isinstance(first, torch.fx.Node):
            return None
        if node.op == "call_method" and str(node.target).endswith("_") and not str(node.target).endswith("__"):
            return first
        if node.op == "call_module":
            mod = self.gm.get_submodule(node.target)
            if getattr(mod, "inplace", False) and type(mod) not in _DROPOUT_MODULES:
                return first
        if node.op == "call_function":
            if node.target is torch.relu_:
                return first
            if node.target in (F.relu, F.silu) and node.kwargs.get("inplace", node.args[1] if len(node.args) > 1
                                                               else False):
                return first
        return None

    def is_view(self, node: torch.fx.Node) -> bool:
        if node.op == "call_method":
            return node.target in _VIEW_METHODS
        if node.op == "call_function":
            return node.target in _VIEW_FUNCTIONS or self.inplace_source(node) is not None
        if node.op == "call_module":
            mod = self.gm.get_submodule(node.target)
            return type(mod) in _VIEW_MODULES or self.inplace_source(node) is not None
        return False

    @staticmethod
    def is_shape_query(node: torch.fx.Node) -> bool:
        if node.op == "call_method":
            return node.target in ("size", "dim", "ndimension", "numel")
        return node.op == "call_function" and node.target is getattr and len(node.args) > 1 and \
            node.args[1] in ("shape", "ndim", "dtype")

    def check_inplace(self, node: torch.fx.Node, src: torch.fx.Node) -> None:
        """An in-place op is converted as a pure one whose result replaces ``src`` for the fx
        nodes after it (see ``convert``).  That is only right if nothing else that may share
        ``src``'s storage (views of it, what it is a view of) is read after ``node``, and if
        ``src`` is not a parameter or buffer (the module's state would change)."""

        def viewed(n: torch.fx.Node) -> torch.fx.Node | None:
            first = n.args[0] if n.args else n.kwargs.get("input")
            return first if isinstance(first, torch.fx.Node) and self.is_view(n) else None

        group = {src}
        todo = [src]
        while todo:  # what shares src's memory when node runs: view-like ops up and down
            n = todo.pop()
            near = [m for m in [viewed(n)] if m is not None]
            near += [u for u in n.users if viewed(u) is n and not self.is_shape_query(u)]
            for m in near:  # views made after node read the new value of src: they are fine
                if m not in group and self.order[m] < self.order[node]:
                    group.add(m)
                    todo.append(m)
        for m in group:
            if m.op == "get_attr":
                raise self.fail(f"in-place op overwrites parameter/buffer '{m.target}'", node)
            if m is src:
                continue
            for u in m.users:
                if u is not node and self.order[u] > self.order[node] and not self.is_shape_query(u):
                    raise self.fail(f"in-place op overwrites '{src.name}', which shares memory with "
                                    f"'{m.name}', read again afterwards by fx node '{u.name}'; "
                                    "use the out-of-place form", node)

    # ------------------------------------------------------------ phase 2: shapes
    def propagate_shapes(self) -> None:
        inputs = tuple(t.detach().clone() for t in self.inputs)  # the module may write to its inputs
        try:
            with torch.no_grad():
                ShapeProp(self.gm).propagate(*inputs)
        except Exception as e:  # noqa: BLE001
            raise FrontendError(f"running the traced {type(self.root).__name__} on the example inputs "
                                f"failed: {type(e).__name__}: {e}") from e

    # ------------------------------------------------------------ phase 3: conversion
    def convert(self) -> Graph:
        outputs: list[Value] | None = None
        for node in self.gm.graph.nodes:
            self.node = node
            self.b.origin = self.origin(node)
            if node.op == "output":
                outputs = self.outputs(node)
                break
            try:
                result = getattr(self, f"n_{node.op}")(node)
            except _Unsupported as e:
                raise self.fail(str(e)) from None
            self.check_result(node, result)
            self.env[node] = result
            src = self.inplace_source(node)
            if src is not None:  # later readers of the overwritten value see the new one
                self.env[src] = result
        if not outputs:
            raise FrontendError(f"{type(self.root).__name__}.forward returns no tensors")
        self.b.origin = ""
        graph = self.b.build(outputs)
        live = graph.pruned()
        if len(live.nodes) != len(graph.nodes):  # drop values nobody uses (e.g. untransposed weights)
            live.validate()
            graph = live
        return graph

    def outputs(self, node: torch.fx.Node) -> list[Value]:
        out = self.arg(node.args[0])
        items = out if isinstance(out, (tuple, list)) else (out,)
        for it in items:
            if not isinstance(it, Value):
                raise self.fail("forward must return a tensor or a flat tuple/list of tensors, "
                                f"found {type(it).__name__} in the result")
        return list(items)

    def check_result(self, node: torch.fx.Node, result: Any) -> None:
        """The builder's shapes must equal torch's; every tensor must be float32."""
        meta = node.meta.get("tensor_meta")
        if isinstance(result, Value):
            metas, vals = [meta], [result]
        elif isinstance(result, (tuple, list)) and any(isinstance(r, Value) for r in result):
            metas, vals = list(meta) if isinstance(meta, (tuple, list)) else [None] * len(result), list(result)
        else:
            if isinstance(meta, TensorMetadata):
                raise self.fail("internal error: torch produced a tensor but the importer a constant")
            return
        if len(metas) != len(vals):
            raise self.fail(f"internal error: torch produced {len(metas)} tensors, the importer {len(vals)}")
        for m, v in zip(metas, vals):
            if not isinstance(m, TensorMetadata) or not isinstance(v, Value):
                raise self.fail("internal error: tensor structure differs from torch's")
            if m.dtype != torch.float32:
                raise self.fail(f"produces a {m.dtype} tensor; eqsat graphs are float32 only")
            if tuple(m.shape) != self.shape(v):
                raise self.fail(f"internal error: imported shape {self.shape(v)} != torch's {tuple(m.shape)}")

    # ------------------------------------------------------------ helpers
    def arg(self, a: Any) -> Any:
        if isinstance(a, torch.fx.Node):
            return self.env[a]
        if isinstance(a, tuple):
            return tuple(self.arg(x) for x in a)
        if isinstance(a, list):
            return [self.arg(x) for x in a]
        if isinstance(a, slice):
            return slice(self.arg(a.start), self.arg(a.stop), self.arg(a.step))
        if isinstance(a, dict):
            return {k: self.arg(v) for k, v in a.items()}
        return a

    def bind(self, spec: Sequence[tuple[str, Any]], args: tuple, kwargs: dict) -> dict[str, Any]:
        names = [n for n, _ in spec]
        if len(args) > len(spec):
            raise _Unsupported(f"takes at most {len(spec)} arguments ({', '.join(names)}), got {len(args)}")
        out = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                raise _Unsupported(f"unsupported argument '{k}' (supported: {', '.join(names)})")
            out[k] = v
        for n, default in spec:
            if n not in out:
                if default is _REQ:
                    raise _Unsupported(f"missing argument '{n}'")
                out[n] = default
        return out

    def tensor(self, v: Any, what: str = "input") -> Value:
        if not isinstance(v, Value):
            raise _Unsupported(f"{what} must be a tensor, got {type(v).__name__} {v!r}")
        return v

    def shape(self, v: Value) -> Shape:
        return self.b.shape(v)

    def meta_shape(self) -> Shape:
        assert self.node is not None
        meta = self.node.meta.get("tensor_meta")
        if not isinstance(meta, TensorMetadata):
            raise _Unsupported("torch did not produce a single tensor here")
        return tuple(meta.shape)

    def axis(self, d: Any, rank: int, what: str = "dim") -> int:
        if not isinstance(d, int) or isinstance(d, bool):
            raise _Unsupported(f"{what} must be an int, got {d!r}")
        if not -rank <= d < max(rank, 1):
            raise _Unsupported(f"{what} {d} is out of range for rank {rank}")
        return d % rank if rank else 0

    def reshape(self, v: Value, shape: Sequence[int]) -> Value:
        """``v`` reshaped (no node if the shape is already right; one node per value and shape)."""
        shape = tuple(int(s) for s in shape)
        if shape == self.shape(v):
            return v
        key = ("reshape", v, shape)
        if key not in self.cache:
            self.cache[key] = self.b.reshape(v, shape=shape)
        return self.cache[key]

    def to_meta_shape(self, v: Value) -> Value:
        return self.reshape(v, self.meta_shape())

    def align(self, a: Value, b: Value) -> tuple[Value, Value]:
        sa, sb = self.shape(a), self.shape(b)
        if len(sa) < len(sb):
            a = self.reshape(a, (1,) * (len(sb) - len(sa)) + sa)
        elif len(sb) < len(sa):
            b = self.reshape(b, (1,) * (len(sa) - len(sb)) + sb)
        return a, b

    def binary(self, op: str, a: Value, b: Value) -> Value:
        return self.b.op(op, *self.align(a, b))

    def weight(self, name: str, tensor: torch.Tensor) -> Value:
        base, k = name, 1
        while name in self.b.graph.weights:
            k += 1
            name = f"{base}.{k}"
        return self.b.weight(name, tensor.detach().clone(memory_format=torch.contiguous_format))

    def param(self, t: torch.Tensor, fallback: str) -> Value:
        """The weight node of a parameter/buffer: one per tensor, named by its qualified name."""
        key = ("param", id(t))
        if key not in self.cache:
            if t.dtype != torch.float32:
                raise _Unsupported(f"tensor '{fallback}' has dtype {t.dtype}; eqsat graphs are float32")
            self.keep_alive.append(t)
            self.cache[key] = self.weight(self.param_names.get(id(t), fallback), t)
            self.param_of[self.cache[key]] = t
        return self.cache[key]

    def param_t(self, t: torch.Tensor, fallback: str) -> Value:
        """A 2-D parameter transposed at import, stored as ``<name>_t``."""
        key = ("param_t", id(t))
        if key not in self.cache:
            if t.dtype != torch.float32:
                raise _Unsupported(f"tensor '{fallback}' has dtype {t.dtype}; eqsat graphs are float32")
            self.keep_alive.append(t)
            self.cache[key] = self.weight(self.param_names.get(id(t), fallback) + "_t", t.detach().t())
        return self.cache[key]

    def transposed(self, w: Value) -> Value:
        """``w.T`` for a 2-D value: a new weight if ``w`` is a weight, else a transpose node."""
        if w in self.param_of:  # same weight node as nn.Linear would make for this parameter
            return self.param_t(self.param_of[w], self.b.graph.nodes[w.node].attrs["name"])
        node = self.b.graph.nodes[w.node]
        if node.op == "weight":
            name = node.attrs["name"]
            key = ("weight_t", name)
            if key not in self.cache:
                self.cache[key] = self.weight(name + "_t", self.b.graph.weights[name].t())
            return self.cache[key]
        return self.b.transpose(w, perm=(1, 0))

    def const(self, key: Any, name: str, make: Callable[[], torch.Tensor]) -> Value:
        key = ("const", key)
        if key not in self.cache:
            self.cache[key] = self.weight(name, make())
        return self.cache[key]

    def batched4(self, x: Value, what: str) -> Value:
        s = self.shape(x)
        if len(s) == 3:
            return self.reshape(x, (1,) + s)
        if len(s) != 4:
            raise _Unsupported(f"{what} needs a 3-D or 4-D (NCHW) input, got shape {s}")
        return x

    # ------------------------------------------------------------ node kinds
    def n_placeholder(self, node: torch.fx.Node) -> Value:
        i = self.placeholders().index(node)
        return self.b.input(str(node.target), tuple(self.inputs[i].shape))

    def n_get_attr(self, node: torch.fx.Node) -> Value:
        obj: Any = self.gm
        for part in str(node.target).split("."):
            obj = getattr(obj, part)
        if not isinstance(obj, torch.Tensor):
            raise self.unsupported(node, f"get_attr {node.target}", f"attribute is a {type(obj).__name__}, "
                                   "not a tensor")
        return self.param(obj, str(node.target))

    def n_call_module(self, node: torch.fx.Node) -> Any:
        mod = self.gm.get_submodule(node.target)
        handler = _MODULES.get(type(mod))
        if handler is None:
            raise self.unsupported(node)
        args, kwargs = self.arg(node.args), self.arg(node.kwargs)
        x = self.tensor(self.bind(_spec("input"), args, kwargs)["input"])
        return getattr(self, handler)(mod, str(node.target), x)

    def n_call_function(self, node: torch.fx.Node) -> Any:
        args, kwargs = self.arg(node.args), self.arg(node.kwargs)
        entry = _FUNCTIONS.get(node.target)
        if entry is None:
            if self.foldable(node.target, args, kwargs):
                return node.target(*args, **kwargs)
            raise self.unsupported(node)
        handler, spec, extra = entry
        if handler not in ("f_getitem", "f_getattr") and self.foldable(node.target, args, kwargs):
            return node.target(*args, **kwargs)
        if spec is None:
            return getattr(self, handler)(args, kwargs, extra)
        return getattr(self, handler)(extra=extra, **self.bind(spec, args, kwargs))

    def n_call_method(self, node: torch.fx.Node) -> Any:
        name = str(node.target)
        args, kwargs = self.arg(node.args), self.arg(node.kwargs)
        if not args or not isinstance(args[0], Value):
            raise self.unsupported(node, why="method called on a non-tensor")
        entry = _METHODS.get(name[:-1] if name in _INPLACE_METHODS else name)
        if entry is None:
            raise self.unsupported(node)
        handler, spec, extra = entry
        if spec is None:
            return getattr(self, handler)(args, kwargs, extra)
        return getattr(self, handler)(extra=extra, **self.bind(spec, args, kwargs))

    @staticmethod
    def foldable(target: Any, args: Any, kwargs: Any) -> bool:
        """Python arithmetic on constants (shape computations) is evaluated at import."""
        if getattr(target, "__module__", None) != "_operator" and target is not getattr:
            return False

        def has_value(a: Any) -> bool:
            if isinstance(a, Value):
                return True
            if isinstance(a, (tuple, list)):
                return any(has_value(x) for x in a)
            if isinstance(a, dict):
                return any(has_value(x) for x in a.values())
            if isinstance(a, slice):
                return any(has_value(x) for x in (a.start, a.stop, a.step))
            return False

        return not has_value(args) and not has_value(kwargs)

    # ------------------------------------------------------------ modules
    def m_linear(self, m: nn.Linear, path: str, x: Value) -> Value:
        wt = self.param_t(m.weight, f"{path}.weight")
        b = self.param(m.bias, f"{path}.bias") if m.bias is not None else None
        return self.linear_t(x, wt, b)

    def linear_t(self, x: Value, wt: Value, b: Value | None) -> Value:
        """``x @ wt (+ b)`` for a pre-transposed 2-D weight ``wt`` [in, out]."""
        sx, sw = self.shape(x), self.shape(wt)
        if len(sw) != 2:
            raise _Unsupported(f"weight must be 2-D, got shape {sw}")
        if len(sx) == 0:
            raise _Unsupported("input must have at least one dimension")
        if len(sx) == 1:
            y = self.reshape(self.b.matmul(self.reshape(x, (1,) + sx), wt), (sw[1],))
        else:
            y = self.b.matmul(x, self.reshape(wt, (1,) * (len(sx) - 2) + sw))
        if b is not None:
            y = self.binary("add", y, b)
        return y

    def m_conv2d(self, m: nn.Conv2d, path: str, x: Value) -> Value:
        if isinstance(m.padding, str):
            raise _Unsupported(f"string padding {m.padding!r} is not supported; give explicit int/tuple padding")
        if m.padding_mode != "zeros":
            raise _Unsupported(f"padding_mode={m.padding_mode!r} is not supported (only 'zeros')")
        w = self.param(m.weight, f"{path}.weight")
        b = self.param(m.bias, f"{path}.bias") if m.bias is not None else None
        return self.conv2d(x, w, b, m.stride, m.padding, m.dilation, m.groups)

    def conv2d(self, x: Value, w: Value, b: Value | None, stride: Any, padding: Any, dilation: Any,
               groups: Any) -> Value:
        if isinstance(padding, str):
            raise _Unsupported(f"string padding {padding!r} is not supported; give explicit int/tuple padding")
        xb = self.batched4(x, "conv2d")
        y = self.b.conv2d(xb, w, stride=_pair(stride, "stride"), padding=_pair(padding, "padding"),
                          dilation=_pair(dilation, "dilation"), groups=int(groups))
        if b is not None:
            sb = self.shape(b)
            if len(sb) != 1:
                raise _Unsupported(f"conv bias must be 1-D, got shape {sb}")
            y = self.b.add(y, self.reshape(b, (1, sb[0], 1, 1)))
        return self.to_meta_shape(y)

    def m_batchnorm(self, m: nn.modules.batchnorm._BatchNorm, path: str, x: Value) -> Value:
        if m.training or m.running_mean is None or m.running_var is None:
            raise _Unsupported("BatchNorm without running statistics (training mode or "
                               "track_running_stats=False) uses batch statistics; call module.eval()")
        mean = self.param(m.running_mean, f"{path}.running_mean")
        var = self.param(m.running_var, f"{path}.running_var")
        c = m.num_features
        w = self.param(m.weight, f"{path}.weight") if m.weight is not None else \
            self.const((path, "ones"), f"{path}.weight", lambda: torch.ones(c))
        b = self.param(m.bias, f"{path}.bias") if m.bias is not None else \
            self.const((path, "zeros"), f"{path}.bias", lambda: torch.zeros(c))
        return self.b.batchnorm(x, w, b, mean, var, eps=float(m.eps))

    def m_layernorm(self, m: nn.LayerNorm, path: str, x: Value) -> Value:
        w = self.param(m.weight, f"{path}.weight") if m.weight is not None else None
        b = self.param(m.bias, f"{path}.bias") if getattr(m, "bias", None) is not None else None
        return self.layernorm(x, tuple(m.normalized_shape), w, b, m.eps, path)

    def layernorm(self, x: Value, normalized_shape: Any, w: Value | None, b: Value | None, eps: float,
                  prefix: str) -> Value:
        ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        sx = self.shape(x)
        if len(ns) != 1:
            raise _Unsupported(f"normalized_shape {list(ns)} covers {len(ns)} dimensions; only normalization "
                               "over the last dimension is supported")
        if not sx or ns[0] != sx[-1]:
            raise _Unsupported(f"normalized_shape {list(ns)} does not match the last dimension of {sx}")
        n = ns[0]
        if w is None:
            w = self.const((prefix, "ones", n), f"{prefix}.weight", lambda: torch.ones(n))
        if b is None:
            b = self.const((prefix, "zeros", n), f"{prefix}.bias", lambda: torch.zeros(n))
        return self.b.layernorm(x, w, b, eps=float(eps))

    def m_relu(self, m: nn.ReLU, path: str, x: Value) -> Value:
        return self.b.relu(x)

    def m_unary(self, m: nn.Module, path: str, x: Value) -> Value:
        return self.b.op(_UNARY_MODULES[type(m)], x)

    def m_gelu(self, m: nn.GELU, path: str, x: Value) -> Value:
        return self.gelu(x, m.approximate)

    def gelu(self, x: Value, approximate: str) -> Value:
        if approximate == "tanh":
            return self.b.gelu(x)
        raise _Unsupported(f"GELU with approximate={approximate!r} (exact erf form) cannot be expressed: the "
                           "registry's 'gelu' op is the tanh approximation and there is no erf op; use "
                           "approximate='tanh' if that is acceptable")

    def m_silu(self, m: nn.SiLU, path: str, x: Value) -> Value:
        return self.b.mul(x, self.b.sigmoid(x))

    def m_softmax(self, m: nn.Softmax, path: str, x: Value) -> Value:
        return self.softmax(x, m.dim)

    def softmax(self, x: Value, dim: Any) -> Value:
        if dim is None:
            raise _Unsupported("softmax without an explicit dim is not supported")
        return self.b.softmax(x, axis=self.axis(dim, len(self.shape(x))))

    def m_passthrough(self, m: nn.Module, path: str, x: Value) -> Value:
        return x

    def m_dropout(self, m: nn.Module, path: str, x: Value) -> Value:
        if m.training and m.p > 0:
            raise _Unsupported(f"dropout in training mode (p={m.p}) is random; call module.eval()")
        return x

    def m_maxpool(self, m: nn.MaxPool2d, path: str, x: Value) -> Value:
        return self.maxpool(x, m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode, m.return_indices)

    def maxpool(self, x: Value, kernel: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: Any,
                return_indices: Any) -> Value:
        if return_indices:
            raise _Unsupported("return_indices=True is not supported")
        if _pair(dilation, "dilation") != (1, 1):
            raise _Unsupported(f"dilation {dilation!r} is not supported (only 1)")
        k = _pair(kernel, "kernel_size")
        s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else _pair(stride, "stride")
        y = self.b.maxpool2d(self.batched4(x, "max pooling"), kernel=k, stride=s,
                             padding=_pair(padding, "padding"), ceil_mode=int(bool(ceil_mode)))
        return self.to_meta_shape(y)

    def m_avgpool(self, m: nn.AvgPool2d, path: str, x: Value) -> Value:
        return self.avgpool(x, m.kernel_size, m.stride, m.padding, m.ceil_mode, m.count_include_pad,
                            m.divisor_override)

    def avgpool(self, x: Value, kernel: Any, stride: Any, padding: Any, ceil_mode: Any, count_include_pad: Any,
                divisor_override: Any) -> Value:
        if divisor_override is not None:
            raise _Unsupported(f"divisor_override={divisor_override!r} is not supported")
        k = _pair(kernel, "kernel_size")
        s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else _pair(stride, "stride")
        y = self.b.avgpool2d(self.batched4(x, "average pooling"), kernel=k, stride=s,
                             padding=_pair(padding, "padding"), ceil_mode=int(bool(ceil_mode)),
                             count_include_pad=int(bool(count_include_pad)))
        return self.to_meta_shape(y)

    def m_adaptive_avgpool(self, m: nn.AdaptiveAvgPool2d, path: str, x: Value) -> Value:
        return self.adaptive_avgpool(x, m.output_size)

    def adaptive_avgpool(self, x: Value, output_size: Any) -> Value:
        """Output 1x1 is global_avgpool; an output that divides the input evenly is exactly an
        avgpool2d with kernel = stride = input / output (the identity if they are equal)."""
        xb = self.batched4(x, "adaptive average pooling")
        h, w = self.shape(xb)[2:]
        osz = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size, output_size]
        if len(osz) == 1:
            osz = osz * 2
        oh, ow = (h if osz[0] is None else osz[0]), (w if osz[1] is None else osz[1])
        if (oh, ow) == (1, 1):
            y = self.b.global_avgpool(xb)
        elif (oh, ow) == (h, w):
            y = xb
        elif h % oh == 0 and w % ow == 0:
            k = (h // oh, w // ow)
            y = self.b.avgpool2d(xb, kernel=k, stride=k)
        else:
            raise _Unsupported(f"adaptive average pooling from {h}x{w} to {oh}x{ow} is not expressible "
                               "(only output 1x1 or an output size that divides the input size)")
        return self.to_meta_shape(y)

    def m_reshape(self, m: nn.Module, path: str, x: Value) -> Value:
        return self.to_meta_shape(x)

    # ------------------------------------------------------------ functions and methods
    def f_unary(self, input: Any, extra: str, inplace: bool = False) -> Value:
        return self.b.op(extra, self.tensor(input))

    def f_gelu(self, input: Any, approximate: str, extra: Any) -> Value:
        return self.gelu(self.tensor(input), approximate)

    def f_silu(self, input: Any, inplace: bool, extra: Any) -> Value:
        x = self.tensor(input)
        return self.b.mul(x, self.b.sigmoid(x))

    def f_dropout(self, input: Any, p: Any, training: Any, inplace: Any, extra: Any) -> Value:
        if training and p > 0:
            raise _Unsupported(f"dropout with training=True (p={p}) is random; pass training=self.training "
                               "and call module.eval()")
        return self.tensor(input)

    def f_softmax(self, input: Any, dim: Any, dtype: Any, extra: Any, _stacklevel: Any = 3) -> Value:
        if dtype is not None:
            raise _Unsupported(f"softmax with dtype={dtype} is not supported")
        return self.softmax(self.tensor(input), dim)

    def f_linear(self, input: Any, weight: Any, bias: Any, extra: Any) -> Value:
        w = self.tensor(weight, "weight")
        if len(self.shape(w)) != 2:
            raise _Unsupported(f"weight must be 2-D, got shape {self.shape(w)}")
        b = self.tensor(bias, "bias") if bias is not None else None
        return self.linear_t(self.tensor(input), self.transposed(w), b)

    def f_conv2d(self, input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
                 groups: Any, extra: Any) -> Value:
        b = self.tensor(bias, "bias") if bias is not None else None
        return self.conv2d(self.tensor(input), self.tensor(weight, "weight"), b, stride, padding, dilation, groups)

    def f_maxpool(self, input: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: Any,
                  return_indices: Any, extra: Any) -> Value:
        return self.maxpool(self.tensor(input), kernel_size, stride, padding, dilation, ceil_mode, return_indices)

    def f_avgpool(self, input: Any, kernel_size: Any, stride: Any, padding: Any, ceil_mode: Any,
                  count_include_pad: Any, divisor_override: Any, extra: Any) -> Value:
        return self.avgpool(self.tensor(input), kernel_size, stride, padding, ceil_mode, count_include_pad,
                            divisor_override)

    def f_adaptive_avgpool(self, input: Any, output_size: Any, extra: Any) -> Value:
        return self.adaptive_avgpool(self.tensor(input), output_size)

    def f_layernorm(self, input: Any, normalized_shape: Any, weight: Any, bias: Any, eps: Any,
                    extra: Any) -> Value:
        w = self.tensor(weight, "weight") if weight is not None else None
        b = self.tensor(bias, "bias") if bias is not None else None
        assert self.node is not None
        return self.layernorm(self.tensor(input), normalized_shape, w, b, eps, self.node.name)

    def f_batchnorm(self, input: Any, running_mean: Any, running_var: Any, weight: Any, bias: Any,
                    training: Any, momentum: Any, eps: Any, extra: Any) -> Value:
        if training or running_mean is None or running_var is None:
            raise _Unsupported("batch norm with batch statistics (training=True or no running stats)")
        x = self.tensor(input)
        c = self.shape(x)[1]
        assert self.node is not None
        name = self.node.name
        w = self.tensor(weight, "weight") if weight is not None else \
            self.const((name, "ones"), f"{name}.weight", lambda: torch.ones(c))
        b = self.tensor(bias, "bias") if bias is not None else \
            self.const((name, "zeros"), f"{name}.bias", lambda: torch.zeros(c))
        return self.b.batchnorm(x, w, b, self.tensor(running_mean, "running_mean"),
                                self.tensor(running_var, "running_var"), eps=float(eps))

    def f_mean(self, input: Any, dim: Any, keepdim: Any, dtype: Any, extra: Any) -> Value:
        x = self.tensor(input)
        r = len(self.shape(x))
        dims = None if dim is None else ({dim} if isinstance(dim, int) else set(dim))
        if dtype is None and r == 4 and dims is not None and {self.axis(d, r) for d in dims} == {2, 3}:
            return self.to_meta_shape(self.b.global_avgpool(x))
        raise _Unsupported(f"mean over dim={dim} of a rank-{r} tensor is not expressible (only the spatial "
                           "mean over dims (2, 3) of an NCHW tensor, as global_avgpool)")

    def f_matmul(self, extra: str, **kw: Any) -> Value:
        a = self.tensor(kw["input"], "input")
        b = self.tensor(kw["other"] if "other" in kw else kw["mat2"], "other")
        sa, sb = self.shape(a), self.shape(b)
        if extra == "mm" and (len(sa) != 2 or len(sb) != 2):
            raise _Unsupported(f"mm needs 2-D operands, got {sa} and {sb}")
        if extra == "bmm" and (len(sa) != 3 or len(sb) != 3):
            raise _Unsupported(f"bmm needs 3-D operands, got {sa} and {sb}")
        if not sa or not sb:
            raise _Unsupported("matmul of a 0-d tensor")
        if len(sa) == 1:
            a = self.reshape(a, (1,) + sa)
        if len(sb) == 1:
            b = self.reshape(b, sb + (1,))
        return self.to_meta_shape(self.b.matmul(*self.align(a, b)))

    def f_arith(self, input: Any, other: Any, extra: str, alpha: Any = 1, rounding_mode: Any = None) -> Value:
        op = extra
        if rounding_mode is not None:
            raise _Unsupported(f"division with rounding_mode={rounding_mode!r} is not supported")
        for v in (input, other):
            if not isinstance(v, (Value, int, float)):
                raise _Unsupported(f"operand of type {type(v).__name__} is not supported")
        if not isinstance(input, Value) and not isinstance(other, Value):
            raise _Unsupported("neither operand is a tensor")
        if alpha != 1:  # torch.add(x, y, alpha=a) = x + a * y
            if not isinstance(alpha, (int, float)):
                raise _Unsupported(f"alpha must be a number, got {alpha!r}")
            other = self.b.smul(other, scalar=float(alpha)) if isinstance(other, Value) else other * alpha
        if isinstance(input, Value) and isinstance(other, Value):
            return self.to_meta_shape(self.binary(op, input, other))
        x, s = (input, other) if isinstance(input, Value) else (other, input)
        s = float(s)
        if op == "mul":
            return self.b.smul(x, scalar=s)
        if op == "div" and x is input:
            if s == 0.0:
                raise _Unsupported("division by the constant 0")
            return self.b.smul(x, scalar=1.0 / s)
        # x + s, x - s, s - x, s / x: the scalar becomes a one-element constant weight
        r = len(self.shape(x))
        assert self.node is not None
        c = self.const(("scalar", s, r), f"const.{self.node.name}",
                       lambda: torch.full((1,) * r, s, dtype=torch.float32))
        a, b = (x, c) if x is input else (c, x)
        return self.to_meta_shape(self.binary(op, a, b))

    def f_neg(self, input: Any, extra: Any) -> Value:
        return self.b.smul(self.tensor(input), scalar=-1.0)

    def f_passthrough(self, *args: Any, **kwargs: Any) -> Value:
        x = args[0][0] if args and isinstance(args[0], tuple) else kwargs.get("input")
        return self.tensor(x)

    def f_cat(self, extra: Any, dim: Any = 0, axis: Any = None, **kw: Any) -> Value:
        tensors = kw["tensors"]
        if axis is not None:
            dim = axis
        if not isinstance(tensors, (tuple, list)) or not tensors:
            raise _Unsupported("cat needs a non-empty list of tensors")
        xs = [self.tensor(t, "cat operand") for t in tensors]
        if len(xs) == 1:
            return xs[0]
        return self.b.concat(*xs, axis=self.axis(dim, len(self.shape(xs[0]))))

    def split_metas(self) -> list[Shape]:
        assert self.node is not None
        meta = self.node.meta.get("tensor_meta")
        if not isinstance(meta, (tuple, list)) or not all(isinstance(m, TensorMetadata) for m in meta):
            raise _Unsupported("torch did not produce a list of tensors here")
        return [tuple(m.shape) for m in meta]

    def f_split(self, dim: Any, extra: Any, **kw: Any) -> tuple[Value, ...]:
        x = self.tensor(kw["tensor"] if "tensor" in kw else kw["input"])
        ax = self.axis(dim, len(self.shape(x)))
        sizes = [s[ax] for s in self.split_metas()]
        if any(s == 0 for s in sizes):
            raise _Unsupported(f"split into pieces of sizes {sizes}: empty pieces are not supported")
        if len(sizes) == 1:
            return (x,)
        return tuple(self.b.split(x, ax, sizes))

    def f_unbind(self, input: Any, dim: Any, extra: Any) -> tuple[Value, ...]:
        x = self.tensor(input)
        sx = self.shape(x)
        ax = self.axis(dim, len(sx))
        parts = self.b.split(x, ax, [1] * sx[ax]) if sx[ax] > 1 else [x]
        return tuple(self.reshape(p, sx[:ax] + sx[ax + 1:]) for p in parts)

    def permute(self, x: Value, perm: Sequence[int]) -> Value:
        r = len(self.shape(x))
        perm = tuple(self.axis(p, r) for p in perm)
        if sorted(perm) != list(range(r)):
            raise _Unsupported(f"{list(perm)} is not a permutation of {r} dimensions")
        if perm == tuple(range(r)):
            return x
        return self.b.transpose(x, perm=perm)

    def f_transpose(self, input: Any, extra: Any, **kw: Any) -> Value:
        x = self.tensor(input)
        r = len(self.shape(x))
        pair = (kw["dim0"], kw["dim1"]) if "dim0" in kw else (kw["axis0"], kw["axis1"])
        d0, d1 = (self.axis(d, r) for d in pair)
        perm = list(range(r))
        perm[d0], perm[d1] = perm[d1], perm[d0]
        return self.permute(x, perm)

    def f_permute(self, *args: Any, **kwargs: Any) -> Value:
        if len(args) == 3 and isinstance(args[0], tuple):  # raw (args, kwargs, extra) from a method call
            margs, mkw, _ = args
            x = self.tensor(margs[0])
            dims = mkw.get("dims", margs[1] if len(margs) == 2 and isinstance(margs[1], (tuple, list))
                           else margs[1:])
            return self.permute(x, dims)
        return self.permute(self.tensor(kwargs["input"]), kwargs["dims"])

    def f_t(self, input: Any, extra: Any) -> Value:
        x = self.tensor(input)
        r = len(self.shape(x))
        if r > 2:
            raise _Unsupported(f"t() needs at most 2 dimensions, got {r}")
        return self.permute(x, tuple(reversed(range(r))))

    def f_reshape(self, args: tuple, kwargs: dict, extra: Any) -> Value:
        """reshape/view/flatten/squeeze/unsqueeze/...: the result shape is torch's (resolves -1)."""
        x = args[0] if args else kwargs.get("input")
        return self.to_meta_shape(self.tensor(x))

    def f_size(self, input: Any, dim: Any, extra: Any) -> Any:
        s = self.shape(self.tensor(input))
        return torch.Size(s) if dim is None else s[self.axis(dim, len(s))]

    def f_ndim(self, input: Any, extra: Any) -> int:
        return len(self.shape(self.tensor(input)))

    def f_numel(self, input: Any, extra: Any) -> int:
        n = 1
        for d in self.shape(self.tensor(input)):
            n *= d
        return n

    def f_getattr(self, obj: Any, name: Any, extra: Any) -> Any:
        if not isinstance(obj, Value):
            return getattr(obj, name)
        s = self.shape(obj)
        if name == "shape":
            return torch.Size(s)
        if name == "ndim":
            return len(s)
        if name == "dtype":
            return torch.float32
        if name == "T":
            return self.permute(obj, tuple(reversed(range(len(s)))))
        if name == "mT":
            if len(s) < 2:
                raise _Unsupported("mT needs at least 2 dimensions")
            return self.permute(obj, tuple(range(len(s) - 2)) + (len(s) - 1, len(s) - 2))
        assert self.node is not None
        raise self.unsupported(self.node, f"Tensor.{name}")

    def f_getitem(self, obj: Any, index: Any, extra: Any) -> Any:
        if not isinstance(obj, Value):
            if isinstance(obj, (tuple, list, torch.Size)):
                return obj[index]
            raise _Unsupported(f"indexing a {type(obj).__name__}")
        return self.index(obj, index)

    def index(self, x: Value, index: Any) -> Value:
        """Basic indexing with ints, unit-step slices, None and Ellipsis: one slice op per
        narrowed axis, then a reshape that drops integer-indexed axes and adds None axes."""
        items = list(index) if isinstance(index, tuple) else [index]
        for it in items:
            if isinstance(it, bool) or not (it is None or it is Ellipsis or isinstance(it, (int, slice))):
                raise _Unsupported(f"index {it!r} is not supported (only ints, slices with step 1, None and ...; "
                                   "no tensor/list/bool indexing)")
        s = self.shape(x)
        used = sum(1 for it in items if it is not None and it is not Ellipsis)
        if sum(1 for it in items if it is Ellipsis) > 1:
            raise _Unsupported("more than one Ellipsis in an index")
        if used > len(s):
            raise _Unsupported(f"too many indices ({used}) for a rank-{len(s)} tensor")
        if Ellipsis in items:
            i = items.index(Ellipsis)
            items[i:i + 1] = [slice(None)] * (len(s) - used)
        else:
            items += [slice(None)] * (len(s) - used)
        y, dim = x, 0
        for it in items:
            if it is None:
                continue
            n = s[dim]
            if isinstance(it, int):
                if not -n <= it < n:
                    raise _Unsupported(f"index {it} is out of range for dimension {dim} of size {n}")
                start, stop = it % n, it % n + 1
            else:
                for part in (it.start, it.stop, it.step):
                    if part is not None and (not isinstance(part, int) or isinstance(part, bool)):
                        raise _Unsupported(f"slice {it} has a non-constant or non-int bound")
                if it.step not in (None, 1):
                    raise _Unsupported(f"slice with step {it.step} is not supported (only step 1)")
                start, stop, _ = it.indices(n)
                if stop <= start:
                    raise _Unsupported(f"slice {it} of a dimension of size {n} is empty")
            if (start, stop) != (0, n):
                y = self.b.slice(y, axis=dim, start=start, end=stop)
            dim += 1
        return self.to_meta_shape(y)
