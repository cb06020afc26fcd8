"""Import a PyTorch ``nn.Module`` into an eqsat :class:`~rewrite.ir.graph.Graph`.

    x = torch.randn(1, 3, 224, 224)
    g = from_torch(model.eval(), (x,))
    torch.allclose(g.run([x])[0], model(x), atol=1e-5)  # True

The module is traced with torch.fx symbolic tracing (nothing else is tried: if
tracing fails, :class:`FrontendError` says so), run once on the example inputs
with :class:`~torch.fx.passes.shape_prop.ShapeProp` so every fx node's output
shape is known, and then each fx node is converted to registry ops with a
:class:`~rewrite.ir.builder.GraphBuilder`.  After every node the builder's shapes
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

The conversion is split over three files: this one (tracing, the per-node driver,
error messages, :func:`from_torch`), :mod:`rewrite.frontends.torch_modules`
(``nn.Module`` converters, the layer converters the functional forms share, and
the value-building helpers every converter uses) and
:mod:`rewrite.frontends.torch_functions` (function and ``Tensor`` method
converters and the dispatch tables).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import torch
import torch.fx
import torch.nn.functional as F
from torch import nn
from torch.fx.passes.shape_prop import ShapeProp, TensorMetadata

from rewrite.frontends.torch_functions import (
    _INPLACE_METHODS,
    _REQ,
    _VIEW_FUNCTIONS,
    _VIEW_METHODS,
    _VIEW_MODULES,
    _FunctionConverters,
    _spec,
    function_entry,
    method_entry,
)
from rewrite.frontends.torch_modules import _DROPOUT_MODULES, _MODULES, _Unsupported
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.errors import FrontendError
from rewrite.ir.graph import Graph, Value

__all__ = ["FrontendError", "from_torch"]


def from_torch(
    module: nn.Module, example_inputs: Sequence[torch.Tensor] | torch.Tensor, name: str | None = None
) -> Graph:
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
    except Exception as e:
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


# ====================================================================== importer
class _Importer(_FunctionConverters):
    """Converts one traced module: checks (phase 1), ShapeProp (phase 2), then one handler per
    fx node (phase 3).  The handlers (``m_*``, ``f_*``) and the value-building helpers they use
    are inherited from :class:`_FunctionConverters` / :class:`_ModuleConverters`."""

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
        for pname, p in root.named_parameters(remove_duplicate=False):
            self.param_names.setdefault(id(p), pname)
        for bname, t in root.named_buffers(remove_duplicate=False):
            self.param_names.setdefault(id(t), bname)

    # ------------------------------------------------------------ messages
    def target_desc(self, node: torch.fx.Node) -> str:
        if node.op == "call_module":
            return _describe_type(type(self.gm.get_submodule(str(node.target))))
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
        return FrontendError(
            f"unsupported op '{desc}' at fx node '{node.name}'{self.where(node)}" + (f": {why}" if why else "")
        )

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
                f"{[str(n.target) for n in phs]}, got {len(self.inputs)} example input(s)"
            )
        for n, x in zip(phs, self.inputs):
            if not isinstance(x, torch.Tensor):
                raise FrontendError(f"example input '{n.target}' must be a tensor, got {type(x).__name__}")
            if x.dtype != torch.float32:
                raise FrontendError(f"example input '{n.target}' has dtype {x.dtype}; eqsat graphs are float32")
        for n in self.gm.graph.nodes:
            if n.op == "call_module":
                mod = self.gm.get_submodule(str(n.target))
                if type(mod) in (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d) and mod.training:
                    raise self.fail(
                        "BatchNorm in training mode uses (and updates) batch statistics; call module.eval() first", n
                    )
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
            mod = self.gm.get_submodule(str(node.target))
            if getattr(mod, "inplace", False) and type(mod) not in _DROPOUT_MODULES:
                return first
        if node.op == "call_function":
            if node.target is torch.relu_:
                return first
            if node.target in (F.relu, F.silu) and node.kwargs.get(
                "inplace", node.args[1] if len(node.args) > 1 else False
            ):
                return first
        return None

    def is_view(self, node: torch.fx.Node) -> bool:
        if node.op == "call_method":
            return node.target in _VIEW_METHODS
        if node.op == "call_function":
            return node.target in _VIEW_FUNCTIONS or self.inplace_source(node) is not None
        if node.op == "call_module":
            mod = self.gm.get_submodule(str(node.target))
            return type(mod) in _VIEW_MODULES or self.inplace_source(node) is not None
        return False

    @staticmethod
    def is_shape_query(node: torch.fx.Node) -> bool:
        if node.op == "call_method":
            return node.target in ("size", "dim", "ndimension", "numel")
        return (
            node.op == "call_function"
            and node.target is getattr
            and len(node.args) > 1
            and node.args[1] in ("shape", "ndim", "dtype")
        )

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
                    raise self.fail(
                        f"in-place op overwrites '{src.name}', which shares memory with "
                        f"'{m.name}', read again afterwards by fx node '{u.name}'; "
                        "use the out-of-place form",
                        node,
                    )

    # ------------------------------------------------------------ phase 2: shapes
    def propagate_shapes(self) -> None:
        inputs = tuple(t.detach().clone() for t in self.inputs)  # the module may write to its inputs
        try:
            with torch.no_grad():
                ShapeProp(self.gm).propagate(*inputs)
        except Exception as e:
            raise FrontendError(
                f"running the traced {type(self.root).__name__} on the example inputs failed: {type(e).__name__}: {e}"
            ) from e

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
                raise self.fail(
                    "forward must return a tensor or a flat tuple/list of tensors, "
                    f"found {type(it).__name__} in the result"
                )
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

    # ------------------------------------------------------------ node kinds
    def n_placeholder(self, node: torch.fx.Node) -> Value:
        i = self.placeholders().index(node)
        return self.b.input(str(node.target), tuple(self.inputs[i].shape))

    def n_get_attr(self, node: torch.fx.Node) -> Value:
        obj: Any = self.gm
        for part in str(node.target).split("."):
            obj = getattr(obj, part)
        if not isinstance(obj, torch.Tensor):
            raise self.unsupported(
                node, f"get_attr {node.target}", f"attribute is a {type(obj).__name__}, not a tensor"
            )
        return self.param(obj, str(node.target))

    def n_call_module(self, node: torch.fx.Node) -> Any:
        mod = self.gm.get_submodule(str(node.target))
        handler = _MODULES.get(type(mod))
        if handler is None:
            raise self.unsupported(node)
        args, kwargs = self.arg(node.args), self.arg(node.kwargs)
        x = self.tensor(self.bind(_spec("input"), args, kwargs)["input"])
        return getattr(self, handler)(mod, str(node.target), x)

    def n_call_function(self, node: torch.fx.Node) -> Any:
        args, kwargs = self.arg(node.args), self.arg(node.kwargs)
        entry = function_entry(node.target)
        if entry is None:
            if self.foldable(node.target, args, kwargs):
                return node.target(*args, **kwargs)  # type: ignore[operator]
            raise self.unsupported(node)
        handler, spec, extra = entry
        if handler not in ("f_getitem", "f_getattr") and self.foldable(node.target, args, kwargs):
            return node.target(*args, **kwargs)  # type: ignore[operator]
        if spec is None:
            return getattr(self, handler)(args, kwargs, extra)
        return getattr(self, handler)(extra=extra, **self.bind(spec, args, kwargs))

    def n_call_method(self, node: torch.fx.Node) -> Any:
        name = str(node.target)
        args, kwargs = self.arg(node.args), self.arg(node.kwargs)
        if not args or not isinstance(args[0], Value):
            raise self.unsupported(node, why="method called on a non-tensor")
        entry = method_entry(name[:-1] if name in _INPLACE_METHODS else name)
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
