"""Import a PyTorch module through ``torch.export`` (core ATen).

    g = from_torch(model.eval(), (x,))                 # export → core ATen → registry ops
    g = from_torch(model, (ids,), {"mask": m})         # keyword inputs become graph inputs too
    cap = capture(model, (x,))                         # also: input/output names, output structure

Capture is ``torch.export.export(...)``: shapes are static, so shape reads (``B, T = x.shape``) and
Python control flow on them are resolved by tracing.  Its graph (torch's training IR: ``linear``,
``conv2d``, ``batch_norm``...) is converted as it is when :func:`direct_refusal` finds nothing
against it; otherwise ``run_decompositions`` first rewrites it into core ATen and makes it
functional (in-place ops, higher-order ops), which re-traces the program and costs seconds on a
large model.  Each ATen node is then either

* **folded**: every input is a constant (a literal or a folded node), so torch evaluates
  it at import: ``arange`` position ids, ``full``/``triu`` causal masks.  On parameters and
  buffers only layout ops fold (transposed weights); ``mm(param, param)`` stays a
  weight-only node for the optimizer to see.  A folded tensor that a run-time op reads becomes a weight,
  named after the parameter it came from (``fc.weight``, ``fc.weight_t`` for a transpose)
  or ``const.<node>``; or
* **converted** by the row of :data:`rewrite.frontends.aten_training.CONVERTERS` for its overload
  (core ATen's rows in :mod:`~rewrite.frontends.aten`, the training IR's in
  :mod:`~rewrite.frontends.aten_training`).

An overload with no row, or whose arguments the registry cannot express, raises
``FrontendError`` naming the overload, the node, the module path and the user's source line.
If ``torch.export`` itself fails (data-dependent control flow, unsupported Python), so does the
import, with export's first error line: there is no other capture to fall back to.
"""

from __future__ import annotations

import io
import logging
import os
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, redirect_stderr
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx
import torch.utils._pytree as pytree
from torch import nn
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind

from rewrite.frontends.aten import KEEP_WHOLE, NotComputed
from rewrite.frontends.aten_base import CONVERTER_FNS
from rewrite.frontends.aten_state import ImportState, _Unsupported, computed_as
from rewrite.frontends.aten_training import CONVERTERS
from rewrite.frontends.compose import round_result
from rewrite.ir.dtypes import FLOAT32, HALF, TORCH_DTYPE, dtype_name
from rewrite.ir.errors import FrontendError, GraphError
from rewrite.ir.graph import Graph, Value
from rewrite.progress import bar, stage

__all__ = ["TorchCapture", "capture", "direct_refusal", "from_torch"]


@dataclass
class TorchCapture:
    """A captured module: the graph, and how its flat inputs/outputs map to the Python ones."""

    graph: Graph
    input_names: list[str]
    output_names: list[str]  # pytree paths of the outputs: "", "[0]", "['logits']", ".logits"
    out_spec: Any = field(default=None, repr=False)  # pytree TreeSpec to rebuild the structure
    direct: bool = False  # the graph torch.export returned was converted as it is, without run_decompositions
    decomposed_because: str = ""  # not direct: why run_decompositions ran first

    def unflatten(self, outputs: Sequence[torch.Tensor]) -> Any:
        """The outputs in the structure ``forward`` returns (a tensor, tuple, dict, ModelOutput)."""
        if self.out_spec is None:
            return outputs[0] if len(outputs) == 1 else tuple(outputs)
        return pytree.tree_unflatten(list(outputs), self.out_spec)


def from_torch(
    module: nn.Module,
    example_inputs: Sequence[Any] | torch.Tensor,
    kwargs: Mapping[str, Any] | None = None,
    name: str | None = None,
    *,
    decompose: bool = False,
    share_weights: bool = False,
) -> Graph:
    """Capture ``module`` with torch.export as an eqsat graph.

    ``example_inputs`` (positional) and ``kwargs`` fix every input's shape; the graph's inputs
    are named after ``forward``'s arguments, its outputs are the tensors ``forward`` returns,
    flattened (see :func:`capture` for their names).  ``decompose=True`` converts core ATen
    even where the exported graph would convert directly.

    The graph's weights are copies of the module's parameters and buffers, so changing the module later
    does not change the graph.  ``share_weights=True`` keeps the module's own tensors where they are
    contiguous instead: no second copy in memory (VGG-19: 548 MB), but an in-place change to the module
    then changes the graph.  (Nothing in eqsat writes to a graph's weights.)
    """
    return capture(module, example_inputs, kwargs, name, decompose=decompose, share_weights=share_weights).graph


# what torch says of a failed capture before raising, on stderr: fake_tensor logs the traceback of the meta kernel
# that refused (19 lines for a matmul of mismatched shapes), symbolic_shapes the graph around a data-dependent
# branch, and export prints the partial graph
_TORCH_LOGGERS = (
    "torch._subclasses.fake_tensor",
    "torch.fx.experimental.symbolic_shapes",
    "torch._dynamo",
    "torch._export",
    "torch.export",
)


@contextmanager
def _torch_quiet() -> Iterator[None]:
    """Silence torch's logging while it captures, and hold what it prints on stderr: a failure reaches the user
    once, as the one-line ``FrontendError`` of :func:`capture`; after a success what was printed is passed on.
    ``TORCH_LOGS`` set means the user asked for torch's logs: nothing is silenced then."""
    if os.environ.get("TORCH_LOGS"):
        yield
        return
    loggers = [logging.getLogger(name) for name in _TORCH_LOGGERS]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    held = io.StringIO()
    try:
        with redirect_stderr(held):
            yield
        sys.stderr.write(held.getvalue())
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def capture(
    module: nn.Module,
    example_inputs: Sequence[Any] | torch.Tensor,
    kwargs: Mapping[str, Any] | None = None,
    name: str | None = None,
    *,
    decompose: bool = False,
    share_weights: bool = False,
) -> TorchCapture:
    """``module`` captured by torch.export and converted: directly when :func:`direct_refusal` allows and
    the conversion succeeds, else after ``run_decompositions`` (always with ``decompose=True``).
    ``TorchCapture.direct`` and ``decomposed_because`` say which.  If export fails, ``FrontendError``
    names the module and export's first error line.  ``share_weights``: as in :func:`from_torch`."""
    if not isinstance(module, nn.Module):
        raise FrontendError(f"from_torch expects an nn.Module, got {type(module).__name__}")
    if not isinstance(example_inputs, (torch.Tensor, tuple, list)):
        raise FrontendError(
            f"from_torch: example_inputs must be a tensor or a tuple of forward's positional arguments, got "
            f"{type(example_inputs).__name__}; e.g. from_torch(module, (x,))"
        )
    if kwargs is not None and not isinstance(kwargs, Mapping):
        raise FrontendError(
            f"from_torch: kwargs must be a dict of forward's keyword arguments, got {type(kwargs).__name__}"
        )
    args = (example_inputs,) if isinstance(example_inputs, torch.Tensor) else tuple(example_inputs)
    kw = dict(kwargs or {})
    gname = name or type(module).__name__
    try:
        with warnings.catch_warnings(), stage(f"torch.export {gname}"), _torch_quiet():
            warnings.filterwarnings("ignore", message=r".*isinstance\(treespec, LeafSpec\)", category=FutureWarning)
            ep = torch.export.export(module, args, kw)
    except Exception as e:  # data-dependent control flow, unsupported Python, outputs export cannot flatten
        first = str(e).splitlines()[0] if str(e) else ""
        hint = ""
        if "Cache" in first and "in output" in first:  # a transformers decoder built with use_cache=True
            hint = "the model returns its key/value cache: build it with use_cache=False; "
        raise FrontendError(
            f"torch.export could not capture {type(module).__name__}: {hint}{type(e).__name__}: {first}"
        ) from e
    why = "decompose=True" if decompose else direct_refusal(ep)
    if why is None:
        try:
            cap = _ExportImporter(ep, gname, share_weights).convert()
            cap.direct = True
            return cap
        except Exception as e:  # any refusal or fault here: the decomposed path decides
            # a row that refuses its arguments (batch norm in training mode, reflection padding), or a
            # fault in a training-IR row, must not fail an import the core-ATen path may complete
            why = f"the direct conversion stopped: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    try:
        table = _core_aten_table()
        with (
            warnings.catch_warnings(),
            _torch_quiet(),
            stage("decompose to core ATen"),
        ):  # torch 2.13's pytree trips LeafSpec
            warnings.filterwarnings("ignore", message=r".*isinstance\(treespec, LeafSpec\)", category=FutureWarning)
            ep = ep.run_decompositions(table)
    except Exception as e:
        raise FrontendError(f"decomposing {type(module).__name__} to core ATen failed: {type(e).__name__}: {e}") from e
    cap = _ExportImporter(ep, gname, share_weights).convert()
    cap.decomposed_because = why
    return cap


_TABLES: dict[tuple[str, ...], dict[Any, Any]] = {}


def _core_aten_table() -> dict[Any, Any]:
    """torch.export's core-ATen decompositions less ``KEEP_WHOLE``, materialized once per set of op namespaces
    (materializing walks every namespace's operators: 0.1 s of each decomposed import); a copy, which
    ``run_decompositions`` may change."""
    key = tuple(sorted(getattr(torch.ops, "_dir", ())))
    table = _TABLES.get(key)
    if table is None:
        lazy = torch.export.default_decompositions()
        for op in KEEP_WHOLE:
            lazy.pop(op, None)
        table = _TABLES[key] = dict(lazy.materialize())
    return dict(table)


# in-place overloads that change only autograd's record of a tensor, never its values
_VALUE_PRESERVING_INPLACE = frozenset({torch.ops.aten.detach_.default})
# higher-order ops that compute what their subgraph computes (grad mode changes what autograd records):
# on constants only (LLaMA's rotary cos/sin tables under no_grad), the importer evaluates one with torch
_FOLDABLE_HOPS = frozenset({torch.ops.higher_order.wrap_with_set_grad_enabled})
_STATE = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)


def direct_refusal(ep: ExportedProgram) -> str | None:
    """Why ``ep``'s graph, torch.export's training IR, must be decomposed to core ATen before it is
    converted; None when it converts as it is.

    The importer reads each node as the pure function its row in ``CONVERTERS`` builds, so the graph
    must not depend on what ``run_decompositions`` adds beyond splitting ops: functionalization.
    Refused, with the first reason found:

    * a signature that mutates a buffer or an input, or an input that is not a tensor or state;
    * an in-place op (``relu_``, ``add_``: the training IR is not functional; ``detach_`` only
      changes autograd's bookkeeping and is read as its input), or a node of another fx kind;
    * a higher-order op, except one of ``_FOLDABLE_HOPS`` that reads no run-time input and whose
      subgraph passes these checks (its get_attr node is checked with it);
    * a node that reads a run-time input (transitively) with no row in ``CONVERTERS``.  A node
      that reads only parameters, buffers and literals needs no row: the importer evaluates it
      with torch (``arange``, ``zeros``, causal masks), unless it is random.

    A row may still refuse a call's arguments (``batch_norm`` in training mode); ``capture`` then
    decomposes after all.
    """
    sig = ep.graph_signature
    for out in sig.output_specs:
        if out.kind is not OutputKind.USER_OUTPUT:
            return f"it mutates '{out.target}' ({out.kind.name})"
    kinds = {s.arg.name: s.kind for s in sig.input_specs if hasattr(s.arg, "name")}
    run_time: set[torch.fx.Node] = set()
    for node in ep.graph.nodes:
        if node.op == "placeholder":
            kind = kinds.get(node.name)
            if kind is InputKind.USER_INPUT:
                run_time.add(node)
            elif kind not in _STATE:
                return f"input '{node.name}' of kind {getattr(kind, 'name', kind)}"
            continue
        if node.op == "output" or (node.op == "get_attr" and all(u.target in _FOLDABLE_HOPS for u in node.users)):
            continue
        reads_run_time = any(a in run_time for a in node.all_input_nodes)
        if reads_run_time:
            run_time.add(node)
        why = _node_refusal(node, ep.graph_module, reads_run_time)
        if why:
            return why
    return None


def _node_refusal(node: torch.fx.Node, owner: torch.nn.Module, reads_run_time: bool) -> str | None:
    """Why ``direct_refusal`` refuses ``node`` of a graph of ``owner``, or None."""
    target, at = node.target, f"at node '{node.name}'"
    if node.op != "call_function":
        return f"fx node '{node.name}' of kind '{node.op}'"
    if isinstance(target, torch._ops.HigherOrderOperator):
        if target not in _FOLDABLE_HOPS or reads_run_time:
            return f"higher-order op '{target.name()}' {at}"
        for sub in (getattr(owner, str(a.target)) for a in node.all_input_nodes if a.op == "get_attr"):
            for inner in sub.graph.nodes:
                why = None if inner.op in ("placeholder", "output") else _node_refusal(inner, sub, False)
                if why:
                    return f"{why}, in the subgraph of '{target.name()}' {at}"
        return None
    if isinstance(target, torch._ops.OpOverload) and target._schema.is_mutable:
        if target not in _VALUE_PRESERVING_INPLACE:
            return f"in-place op '{_describe(target)}' {at}"
    if target in CONVERTERS:
        return None
    if reads_run_time:
        return f"no direct converter for '{_describe(target)}' {at}"
    if not isinstance(target, torch._ops.OpOverload) or torch.Tag.nondeterministic_seeded in target.tags:
        return f"'{_describe(target)}' {at} cannot be evaluated at import"
    return None


# Ops on parameters and buffers that are folded at import (a transposed weight is stored
# transposed); any other op on them stays a weight-only node, which the optimizer sees and
# the compiled graph precomputes once.  Ops on other constants (shapes, literals) always fold.
_LAYOUT = {
    torch.ops.aten.permute.default,
    torch.ops.aten.t.default,
    torch.ops.aten.transpose.int,
    torch.ops.aten.view.default,
    torch.ops.aten._unsafe_view.default,
    torch.ops.aten.reshape.default,
    torch.ops.aten.unsqueeze.default,
    torch.ops.aten.squeeze.dim,
    torch.ops.aten.clone.default,
    torch.ops.aten.alias.default,
    torch.ops.aten.detach.default,
    torch.ops.aten.lift_fresh_copy.default,  # a lifted constant's copy; decomposed, it is a clone
}

# Ops torch runs only on operands of one float dtype ("mat1 and mat2 must have the same dtype"), which
# torch.export's fake tensors still trace: a float16 input fed to a float32 layer is refused here as eager
# refuses it, not computed in float32 (eqsat computes both dtypes as float32 and would not notice).
_SAME_FLOAT_DTYPE = frozenset(
    getattr(torch.ops.aten, name).default
    for name in ("mm", "addmm", "bmm", "baddbmm", "linear", "convolution", "conv1d", "conv2d", "conv3d")
    if hasattr(getattr(torch.ops.aten, name, None), "default")
)


def _mixed_floats(node: torch.fx.Node) -> tuple[torch.dtype, ...]:
    """The distinct float dtypes of ``node``'s tensor operands when it is an op that takes one (else ())."""
    if node.target not in _SAME_FLOAT_DTYPE:
        return ()
    seen: list[torch.dtype] = []
    for a in pytree.tree_leaves((node.args, node.kwargs)):
        val = a.meta.get("val") if isinstance(a, torch.fx.Node) else None
        if isinstance(val, torch.Tensor) and val.is_floating_point() and val.dtype not in seen:
            seen.append(val.dtype)
    return tuple(seen) if len(seen) > 1 else ()


# What a model in training mode exports that no row converts: the reason, for the one line the user sees.
_TRAINING_ONLY: dict[Any, str] = {
    torch.ops.aten._native_batch_norm_legit_functional.default: "batch norm in training mode",
    torch.ops.aten.native_batch_norm.default: "batch norm in training mode",
    torch.ops.aten.native_dropout.default: "dropout in training mode",
    torch.ops.aten.bernoulli.p: "dropout in training mode",
}


class _IntInput:
    """A graph input eqsat cannot hold (float64, int32, ...): any op that reads it is unsupported."""

    def __init__(self, name: str, dtype: torch.dtype) -> None:
        self.name, self.dtype = name, dtype


class _ExportImporter:
    def __init__(self, ep: ExportedProgram, name: str, share_weights: bool = False) -> None:
        self.st = ImportState(name, share_weights)  # the builder and caches the converters build with
        self.st.read = self.read  # constant tensors become weights; other non-values are refused
        self.ep = ep
        self.env: dict[torch.fx.Node, Any] = {}
        self.derived: set[int] = set()  # ids of parameters/buffers and their folded layout copies
        self.named: dict[str, Value] = {}  # the weight each constant() name was first given to

    # ------------------------------------------------------------ messages
    def where(self, node: torch.fx.Node) -> str:
        parts = []
        path = _module_path(node)
        if path:
            parts.append(f"module '{path}'")
        src = _source_line(node)
        if src:
            parts.append(src)
        return f" ({', '.join(parts)})" if parts else ""

    def fail(self, node: torch.fx.Node, msg: str, unsupported: bool = False) -> FrontendError:
        what = "unsupported op" if unsupported else "op"
        return FrontendError(f"{what} '{_describe(node.target)}' at node '{node.name}'{self.where(node)}: {msg}")

    # ------------------------------------------------------------ values
    def read(self, v: Any, what: str = "input") -> Value:
        """An argument that is not a graph value, as ``ImportState.tensor`` reads it here."""
        if isinstance(v, torch.Tensor):
            return self.constant(v)
        if isinstance(v, _IntInput):
            raise _Unsupported(
                f"reads input '{v.name}' of dtype {v.dtype}; eqsat takes float32, int64, bool, float16 and "
                "bfloat16 inputs (convert it before export)"
            )
        if isinstance(v, NotComputed):
            raise _Unsupported(f"reads {v.what}, which eqsat does not compute")
        raise _Unsupported(f"{what} must be a tensor, got {type(v).__name__} {v!r}")

    def constant(self, t: torch.Tensor) -> Value:
        """A constant tensor read by a run-time op: one weight per tensor, and one per name and value (a
        parameter transposed by two rows, as tied weights or ``F.linear`` on a module's weight are, is one
        ``<name>_t`` weight)."""
        key = ("param", id(t))
        if t.numel() == 0:
            raise _Unsupported(f"computes with an empty tensor of shape {tuple(t.shape)}; eqsat has no empty tensors")
        if key not in self.st.cache:
            name = self.st.param_names.get(id(t), f"const.{self.st.node_name()}")
            if t.dtype not in (torch.float32, torch.int64, torch.bool):  # promoted to float32: only if exact
                f = t.to(torch.float32)
                if not torch.equal(f.to(t.dtype), t):
                    raise _Unsupported(f"constant of dtype {t.dtype} is not exactly representable in float32")
                self.st.keep_alive.append(t)
                t = f
            self.st.keep_alive.append(t)
            same = self.named.get(name)
            held = None if same is None else self.st.b.graph.weights[name]
            if same is not None and held is not None and held.dtype == t.dtype and torch.equal(held, t):
                self.st.cache[key] = same
            else:
                self.st.cache[key] = self.named[name] = self.st.weight(name, t)
        return self.st.cache[key]

    # ------------------------------------------------------------ conversion
    def convert(self) -> TorchCapture:
        sig = self.ep.graph_signature
        specs = {s.arg.name: s for s in sig.input_specs if hasattr(s.arg, "name")}
        state = {**self.ep.state_dict, **self.ep.constants}
        input_names: list[str] = []
        nodes = list(self.ep.graph.nodes)
        with bar(f"import {self.st.b.graph.name}", total=len(nodes), unit="node") as b:
            for node in nodes:
                b.update(1)
                if node.op == "output":
                    return self.finish(node, input_names)
                self.convert_node(node, specs, state, input_names)
        raise FrontendError("exported graph has no output node")

    def convert_node(
        self, node: torch.fx.Node, specs: dict[str, Any], state: dict[str, Any], input_names: list[str]
    ) -> None:
        self.st.node, self.st.current = node, node.target
        self.st.b.origin = f"{node.name} ({_describe(node.target)})"
        if node.op == "placeholder":
            self.env[node] = self.placeholder(node, specs.get(node.name), state, input_names)
        elif node.op == "call_function":
            self.env[node] = self.call(node)
        elif node.op == "get_attr":  # a higher-order op's subgraph: the op's node decides what to do with it
            self.env[node] = getattr(self.ep.graph_module, str(node.target))
        else:
            raise self.fail(node, f"fx node kind '{node.op}'", unsupported=True)

    def placeholder(self, node: torch.fx.Node, spec: Any, state: dict[str, Any], names: list[str]) -> Any:
        if spec is not None and spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            t = state[spec.target]
            self.st.param_names.setdefault(id(t), str(spec.target))
            self.derived.add(id(t))
            return t
        if spec is None or spec.kind is not InputKind.USER_INPUT:
            raise self.fail(node, f"input kind {getattr(spec, 'kind', None)}", unsupported=True)
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):  # a Python number: export specialised it
            return val
        names.append(node.name)
        dtype = dtype_name(val.dtype)
        if dtype is None:  # float64, int32...: refused, never cast
            return _IntInput(node.name, val.dtype)
        v = self.st.b.input(node.name, tuple(int(d) for d in val.shape), dtype)
        return self.st.b.cast(v, dtype=FLOAT32) if dtype in HALF else v  # exact: half values compute as float32

    def call(self, node: torch.fx.Node) -> Any:
        mixed = _mixed_floats(node)
        if mixed:
            raise self.fail(
                node,
                f"its operands are {' and '.join(map(str, mixed))}; torch runs it only on one float dtype "
                "(cast the input or the layer, e.g. model.half() with a float16 input)",
            )
        args, kwargs = self.arg(node.args), self.arg(node.kwargs)
        leaves = pytree.tree_leaves((args, kwargs))
        if not any(isinstance(a, (Value, _IntInput, NotComputed)) for a in leaves) and (
            node.target in _LAYOUT or not any(isinstance(a, torch.Tensor) and id(a) in self.derived for a in leaves)
        ):
            return self.fold(node, args, kwargs)
        row = CONVERTERS.get(node.target)
        if row is None and not any(isinstance(a, (_IntInput, NotComputed)) for a in leaves):
            # an op eqsat has no entry for, on parameters and buffers only (LLaMA's rotary cos/sin
            # tables): nothing a run could change, so torch evaluates it at import
            const = self.st.b.graph.weight_only()
            if all(a.node in const for a in leaves if isinstance(a, Value)):
                args, kwargs = pytree.tree_map(self.evaluate, (args, kwargs))
                return self.fold(node, args, kwargs)
        if row is None:
            training = _TRAINING_ONLY.get(node.target)
            why = f"{training}: call module.eval() before importing" if training else "no registry op computes it"
            raise self.fail(node, why, unsupported=True)
        try:
            result = CONVERTER_FNS[row[0]](self.st, *args, **kwargs)
        except (_Unsupported, GraphError) as e:  # GraphError: a dtype or shape the registry refuses
            raise self.fail(node, str(e)) from None
        self.check(node, result)
        return self.rounded(node, result)

    def rounded(self, node: torch.fx.Node, result: Any) -> Any:
        """``result`` with each tensor torch made in float16 or bfloat16 rounded to it (``round_result``), as
        torch rounds every op's result (a conversion to it rounds in its converter: ``aten.cast_to``)."""
        val = node.meta.get("val")
        many = isinstance(result, (tuple, list))
        results, vals = (list(result), list(val or ())) if many else ([result], [val])
        out = []
        for r, v in zip(results, vals, strict=True):
            half = dtype_name(v.dtype) if isinstance(r, Value) and isinstance(v, torch.Tensor) else None
            out.append(round_result(self.st.emit(), r, half) if half in HALF else r)
        return type(result)(out) if many else out[0]

    def evaluate(self, a: Any) -> Any:
        """A weight-only graph value as the tensor it always equals (other leaves unchanged)."""
        if not isinstance(a, Value):
            return a
        g = self.st.b.graph
        sub = Graph(dict(g.nodes), g.weights, [a], g.name).pruned()
        t = sub.run({n.attrs["name"]: torch.zeros(n.shape, dtype=TORCH_DTYPE[n.dtype]) for n in sub.inputs})[0]
        self.st.keep_alive.append(t)
        self.derived.add(id(t))
        self.st.param_names[id(t)] = f"const.{self.st.node_name()}"
        return t

    def fold(self, node: torch.fx.Node, args: Any, kwargs: Any) -> Any:
        """Evaluate a node whose inputs are all constants with torch itself."""
        tags = getattr(node.target, "tags", ())
        if torch.Tag.nondeterministic_seeded in tags:
            raise self.fail(node, "random op: its value would be fixed at import", unsupported=True)
        if isinstance(node.target, torch._ops.HigherOrderOperator) and node.target not in _FOLDABLE_HOPS:
            raise self.fail(node, "a higher-order op other than wrap_with_set_grad_enabled", unsupported=True)
        try:
            with torch.no_grad():
                out = node.target(*args, **kwargs)  # type: ignore[operator]
        except Exception as e:
            raise self.fail(node, f"evaluating it on constants failed: {type(e).__name__}: {e}") from e
        if isinstance(out, torch.Tensor):
            self.st.keep_alive.append(out)
            src = args[0] if args else None
            if isinstance(src, torch.Tensor) and id(src) in self.derived:
                self.derived.add(id(out))
            if (
                node.target in (torch.ops.aten.permute.default, torch.ops.aten.t.default, torch.ops.aten.transpose.int)
                and isinstance(src, torch.Tensor)
                and id(src) in self.st.param_names
                and src.dim() == 2
            ):
                self.st.param_names[id(out)] = self.st.param_names[id(src)] + "_t"
            else:
                self.st.param_names[id(out)] = f"const.{node.name}"
        return out

    def check(self, node: torch.fx.Node, result: Any) -> None:
        """The builder's shapes must equal torch's; every tensor must be float32."""
        val = node.meta.get("val")
        results = list(result) if isinstance(result, (tuple, list)) else [result]
        vals = list(val) if isinstance(val, (tuple, list)) else [val]
        if len(results) != len(vals):
            raise self.fail(node, f"internal error: torch produced {len(vals)} values, the importer {len(results)}")
        for r, v in zip(results, vals):
            if not isinstance(r, Value):
                continue
            if not isinstance(v, torch.Tensor):
                raise self.fail(node, "internal error: the importer made a tensor where torch did not")
            if computed_as(v.dtype) != self.st.b.graph.dtype_of(r):
                raise self.fail(node, f"produces a {v.dtype} tensor; the importer made {self.st.b.graph.dtype_of(r)}")
            if tuple(v.shape) != self.st.shape(r):
                raise self.fail(node, f"internal error: imported shape {self.st.shape(r)} != torch's {tuple(v.shape)}")

    def finish(self, node: torch.fx.Node, input_names: list[str]) -> TorchCapture:
        sig = self.ep.graph_signature
        outs: list[Value] = []
        for spec, item in zip(sig.output_specs, node.args[0]):  # type: ignore[arg-type]
            if spec.kind is not OutputKind.USER_OUTPUT:
                raise FrontendError(f"forward mutates '{spec.target}' ({spec.kind.name}); eqsat graphs are pure")
            self.st.node = item if isinstance(item, torch.fx.Node) else node
            try:
                out = self.st.tensor(self.arg(item), "output")
            except _Unsupported as e:
                raise FrontendError(f"output '{getattr(item, 'name', item)}': {e}") from None
            val = item.meta.get("val") if isinstance(item, torch.fx.Node) else None
            half = dtype_name(val.dtype) if isinstance(val, torch.Tensor) else None
            if half in HALF:  # handed back in the model's dtype (exact: the value was rounded to it)
                out = self.st.b.cast(round_result(self.st.emit(), out, half), dtype=half)
            outs.append(out)
        if not outs:
            raise FrontendError(f"{self.st.b.graph.name}.forward returns no tensors")
        self.st.b.origin = ""
        graph = self.st.b.build(outs)
        live = graph.pruned()
        if len(live.nodes) != len(graph.nodes):
            live.validate()
            graph = live
        spec = self.ep.call_spec.out_spec
        names = [str(i) for i in range(len(outs))]
        if spec is not None:
            paths, _ = pytree.tree_flatten_with_path(pytree.tree_unflatten(list(range(len(outs))), spec))
            names = [pytree.keystr(p) for p, _ in paths]
        return TorchCapture(graph, input_names, names, spec)

    def arg(self, a: Any) -> Any:
        if isinstance(a, torch.fx.Node):
            return self.env[a]
        if isinstance(a, (tuple, list)):
            return type(a)(self.arg(x) for x in a)
        if isinstance(a, dict):
            return {k: self.arg(v) for k, v in a.items()}
        return a


def _describe(target: Any) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return f"aten.{target.__name__}" if target.namespace == "aten" else str(target)
    return getattr(target, "__name__", str(target))


def _module_path(node: torch.fx.Node) -> str | None:
    """The qualified name of the innermost module whose ``forward`` made ``node``."""
    stack = node.meta.get("nn_module_stack")
    return str(list(stack.values())[-1][0]) if stack else None


def _source_line(node: torch.fx.Node) -> str | None:
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
