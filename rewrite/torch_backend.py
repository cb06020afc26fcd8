"""``torch.compile(model, backend="eqsat")``: each captured subgraph optimized and compiled to LLVM.

    fast = torch.compile(model, backend="eqsat")
    fast = torch.compile(model, backend="eqsat", options={"extractor": "greedy"})
    y = fast(x)

The name comes from the ``torch_dynamo_backends`` entry point in ``pyproject.toml`` (an
installed eqsat); :func:`register` registers it by hand in a source checkout.  For each
subgraph dynamo hands over, :func:`eqsat_backend` imports it with
:func:`rewrite.frontends.capture` (the module's parameters and buffers, which dynamo passes as
arguments, as the graph's weights: constants, checked unchanged on each call; a changed one is seen
on the next call, through a second build that takes them as inputs), runs :func:`rewrite.optimize`
(verified against the original) and :func:`rewrite.compile`.  A subgraph eqsat cannot handle (an op with no registry
counterpart, a non-float32 tensor) runs eagerly, with one warning naming the op.

Shapes that change: from a model's second input size on, dynamo hands over subgraphs whose sizes are
symbolic (``SymInt`` inputs).  eqsat compiles such a subgraph for each concrete size it is called with,
on that call, and reuses it for every later call at that size; past ``options={"shapes": N}`` sizes (8,
dynamo's own recompile limit) new sizes run eagerly, with one warning.  Each size is a full static
compile: kernels with run-time bounds (one artefact for a range of sizes) are not built yet.

eqsat compiles inference graphs: its kernels record no autograd.  A subgraph that needs gradients
(grad mode on, or switched on inside the graph, and an input, a parameter included, requiring grad:
training) runs eagerly, with one warning saying so, so ``loss.backward()`` works and gives eager's
gradients.  Under ``torch.no_grad()`` the same module compiles: dynamo guards on grad mode, so each mode
gets its own subgraph, whichever is called first.

This module sits above the pipeline (layer ``bench | rewrite.torch_backend`` in the import
contract): it is a driver of the pipeline, like the CLI.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from rewrite.egraph.limits import Limits
from rewrite.frontends import capture
from rewrite.frontends.torch_export import TorchCapture
from rewrite.ir.errors import EqsatError, UsageError
from rewrite.ir.graph import Graph
from rewrite.pipeline import COSTS, compile, optimize, priced_for

__all__ = ["EqsatFallbackWarning", "eqsat_backend", "register"]

_OPTIONS = ("rules", "limits", "extractor", "check", "ilp_seconds", "target", "cost", "optimize", "shapes")


class EqsatFallbackWarning(UserWarning):
    """A subgraph runs eagerly because eqsat cannot import, optimize or compile it."""


def eqsat_backend(
    gm: torch.fx.GraphModule,
    example_inputs: Sequence[Any],
    options: Mapping[str, Any] | None = None,
    mode: str | None = None,
) -> Callable[..., Any]:
    """A dynamo backend: ``gm`` optimized by eqsat and compiled with LLVM, or ``gm`` itself.

    ``options`` (``torch.compile(..., options={...})``): ``rules``, ``limits`` (a ``Limits``),
    ``extractor`` ("ilp" or "greedy"), ``check``, ``ilp_seconds``, ``target`` ("llvm"), ``cost``
    ("compiled", the default: e-nodes priced by the target's compiled kernels, uncached ones measured
    first; "analytical": priced for eager PyTorch, nothing measured), and ``optimize=False`` to compile
    the imported graph without saturating it, ``shapes`` (8): how many sizes a subgraph with symbolic sizes
    is compiled for (see below).  ``mode`` is
    accepted (torch.compile passes it) and ignored: eqsat has one mode.
    """
    options = dict(options or {})
    unknown = set(options) - set(_OPTIONS)
    if unknown:
        raise UsageError(f"unknown eqsat backend option(s) {sorted(unknown)}; known: {', '.join(_OPTIONS)}")
    cost = options.get("cost", COSTS[0])
    if cost not in COSTS:
        raise UsageError(f"unknown eqsat backend cost {cost!r}; known: {', '.join(COSTS)}")
    target = options.get("target", "llvm")
    shapes = options.get("shapes", MAX_SHAPES)
    if not isinstance(shapes, int) or isinstance(shapes, bool) or shapes < 1:
        raise UsageError(f"eqsat backend option shapes={shapes!r}: a positive number of sizes to compile per subgraph")
    if _needs_grad(gm, example_inputs):
        return _eager(gm, _TRAINING)
    for i, x in enumerate(example_inputs):
        if not isinstance(x, (torch.Tensor, int, torch.SymInt)) or isinstance(x, bool):
            return _eager(gm, f"input {i} is a {type(x).__name__}, not a tensor or a size")
    state = _module_state(gm, example_inputs)  # read now: dynamo drops the placeholders' sources after this call
    if any(_symbolic(x) for x in example_inputs):
        return _PerShape(gm, _Request(options, target, cost), shapes, state)
    run = _compile_for(gm, example_inputs, _Request(options, target, cost), state)
    return _eager(gm, run) if isinstance(run, str) else run


# Sizes one dynamic subgraph is compiled for before new ones run eagerly (dynamo's own recompile limit is 8).
MAX_SHAPES = 8


def _symbolic(x: Any) -> bool:
    """A size dynamo left symbolic: a SymInt input, or a tensor with a symbolic dimension."""
    if isinstance(x, torch.SymInt):
        return True
    return isinstance(x, torch.Tensor) and any(isinstance(d, torch.SymInt) for d in x.shape)


@dataclass(frozen=True)
class _Request:
    """What a subgraph is built with: the backend's options, the target and the cost model's name."""

    options: Mapping[str, Any]
    target: Any
    cost: str


def _compile_for(
    gm: torch.fx.GraphModule, args: Sequence[Any], req: _Request, state: set[int]
) -> Callable[..., Any] | str:
    """``gm`` imported at the concrete ``args`` (sizes given as ints are fixed), optimized and compiled: a
    function of the same arguments, or why it cannot be (the subgraph then runs eagerly).

    The module's parameters and buffers among ``args`` (``state``: ``_module_state``) are imported as the
    graph's weights: constants, as ``from_torch`` imports them, so the e-graph has the same choices (a layout
    that packs a weight once at compile time, a BatchNorm folded into its convolution) and kernels run as their
    costs were measured (weights pre-packed).  Each call checks that they are the tensors imported, unchanged
    (same object, storage and version counter); from the first call where one is not, the subgraph runs a
    second build that takes them as inputs (built then, once), so a changed parameter is seen on that call and
    every later one.  Where the build with weights fails, the one with inputs is tried before giving up."""
    frozen = None
    if state:
        with contextlib.suppress(EqsatError):
            frozen = _build_for(gm, args, req, state)
    if frozen is None:
        try:
            return _build_for(gm, args, req, set())
        except EqsatError as e:
            return str(e)
    seen = [(i, args[i], args[i].data_ptr(), args[i]._version) for i in sorted(state)]
    lock = threading.Lock()
    rebuilt: list[Callable[..., Any]] = []

    def compiled(*call_args: Any) -> Any:
        if all(call_args[i] is t and t.data_ptr() == p and t._version == v for i, t, p, v in seen):
            return frozen(*call_args)
        if not rebuilt:
            with lock:
                if not rebuilt:
                    try:
                        run = _build_for(gm, call_args, req, set())
                    except EqsatError as e:
                        run = _eager(gm, f"a parameter or buffer changed, and with them as inputs: {e}")
                    rebuilt.append(run)
        return rebuilt[0](*call_args)

    return compiled


def _build_for(gm: torch.fx.GraphModule, args: Sequence[Any], req: _Request, state: set[int]) -> Callable[..., Any]:
    """``gm`` captured with the arguments at ``state`` as weights (``_WithState``), the rest as inputs, then
    optimized and compiled (or found built): a function of all of ``gm``'s arguments."""
    live_args = [a for i, a in enumerate(args) if i not in state]
    module = _WithState(gm, args, state) if state else gm
    cap = capture(module, tuple(live_args), name=type(gm).__name__, share_weights=bool(state))
    key = _built_key(cap, req.options, req.target, req.cost)
    built = _BUILT.get(key)
    if built is None:
        built = _BUILT[key] = _build(cap, req.options, req.target, req.cost)
    # a captured graph's inputs are the tensor arguments in order (sizes were fixed at import); the optimized
    # graph keeps the names of the capture it was built from, less any input no output depends on
    tensors = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and i not in state]
    position = {name: tensors[j] for j, name in enumerate(built.input_names)}
    pick = [position[n.attrs["name"]] for n in built.graph.inputs]

    def compiled(*call_args: Any) -> Any:  # holds the build (``_BUILT`` holds it weakly)
        with torch.no_grad():
            outs = built.run([call_args[i].contiguous() for i in pick])
        return cap.unflatten(outs)

    return compiled


def _module_state(gm: torch.fx.GraphModule, args: Sequence[Any]) -> set[int]:
    """The positions of ``args`` that dynamo fetched from the module (parameters and buffers: its sources say
    so), float32 tensors without symbolic sizes; none when this torch does not say where an argument came from."""
    try:
        from torch._dynamo.source import is_from_unspecialized_param_buffer_source as from_module
    except ImportError:
        return set()
    out = set()
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for i, (node, a) in enumerate(zip(placeholders, args, strict=False)):
        source = getattr(node.meta.get("grapharg"), "source", None)
        if (
            source is not None
            and isinstance(a, torch.Tensor)
            and a.dtype == torch.float32
            and not _symbolic(a)
            and from_module(source)
        ):
            out.add(i)
    return out


class _WithState(torch.nn.Module):
    """``gm`` with the arguments at ``state`` held as buffers (named after ``gm``'s placeholders): its forward
    takes the other arguments, in order."""

    def __init__(self, gm: torch.fx.GraphModule, args: Sequence[Any], state: set[int]) -> None:
        super().__init__()
        self.gm = gm
        names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        self.slots: list[str | None] = []
        for i in range(len(args)):
            if i in state:
                name = re.sub(r"\W", "_", names[i].removeprefix("l_")).strip("_")
                if not name.isidentifier() or hasattr(self, name):
                    name = f"state{i}"
                self.register_buffer(name, args[i].detach())
                self.slots.append(name)
            else:
                self.slots.append(None)

    def forward(self, *live: Any) -> Any:
        it = iter(live)
        return self.gm(*(next(it) if s is None else getattr(self, s) for s in self.slots))


@dataclass(eq=False)
class _Built:
    graph: Graph  # the graph compiled (its inputs named as the captured graph's)
    run: Callable[[Sequence[torch.Tensor]], Sequence[torch.Tensor]]
    input_names: list[str]  # the capture's tensor inputs, in argument order


# Captured graphs already optimized and compiled in this process, by their text, constants and the options, while
# a compiled subgraph holds them: dynamo's static subgraph of a model's first size and its symbolic subgraph
# called at that size again capture one graph, compiled once.
_BUILT: weakref.WeakValueDictionary[str, _Built] = weakref.WeakValueDictionary()


def _built_key(cap: TorchCapture, options: Mapping[str, Any], target: Any, cost: str) -> str:
    """The captured graph's text with its inputs named by place (dynamo numbers a subgraph's arguments, sizes
    included), its constants, and the options."""
    place = {name: f"#{j}" for j, name in enumerate(cap.input_names)}
    text = re.sub(
        r"(= input\(\) name=)(\S+)", lambda m: m.group(1) + place.get(m.group(2), m.group(2)), cap.graph.pretty()
    )
    h = hashlib.sha256(text.encode())
    for name in sorted(cap.graph.weights):
        t = cap.graph.weights[name].detach().contiguous().reshape(-1)
        h.update(f"{name} {t.dtype} {tuple(t.shape)}".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    h.update(repr((sorted((k, repr(v)) for k, v in options.items()), str(target), cost)).encode())
    return h.hexdigest()


def _build(cap: TorchCapture, options: Mapping[str, Any], target: Any, cost: str) -> _Built:
    graph, run = cap.graph, None
    if options.get("optimize", True):
        res = optimize(
            graph,
            rules=options.get("rules"),
            limits=options.get("limits", Limits()),
            extractor=options.get("extractor", "ilp"),
            check=options.get("check", True),
            ilp_seconds=options.get("ilp_seconds", 10.0),
            target=priced_for(target, cost),
        )
        graph, run = res.graph, res.compiled  # the run check compiled it for the target, when it ran
    if run is None:
        run = compile(graph, target=target)
    return _Built(graph, run, list(cap.input_names))


class _PerShape:
    """A subgraph dynamo handed over with symbolic sizes, compiled for each concrete size it is called with
    (at most ``limit``; later sizes run eagerly, with one warning).  Each compile is static: eqsat's kernels
    and its cost model take fixed shapes, and the caches make a second size of one model cheaper than the
    first."""

    def __init__(self, gm: torch.fx.GraphModule, req: _Request, limit: int, state: set[int]):
        self.gm, self.req, self.limit = gm, req, limit
        self.state = state  # the arguments that are the module's parameters and buffers (``_module_state``)
        self.compiled: dict[tuple[Any, ...], Callable[..., Any]] = {}  # per size compiled (or eager, if it failed)
        self._lock = threading.Lock()
        self._warned = False

    @staticmethod
    def key(args: Sequence[Any]) -> tuple[Any, ...]:
        return tuple((tuple(a.shape), a.dtype) if isinstance(a, torch.Tensor) else int(a) for a in args)

    def __call__(self, *args: Any) -> Any:
        k = self.key(args)
        fn = self.compiled.get(k)
        if fn is None:
            with self._lock:
                fn = self.compiled.get(k)
                if fn is None:
                    fn = self._new(k, args)
        return fn(*args)

    def _new(self, k: tuple[Any, ...], args: Sequence[Any]) -> Callable[..., Any]:
        sizes = ", ".join(str(list(x[0])) if isinstance(x, tuple) else str(x) for x in k)
        if len(self.compiled) >= self.limit:
            if not self._warned:
                self._warned = True
                _eager(
                    self.gm,
                    f"compiled for {self.limit} sizes already (option shapes={self.limit}); new sizes, from "
                    f"({sizes}) on, run eagerly",
                )
            return self.gm.forward
        run = _compile_for(self.gm, args, self.req, self.state)
        if isinstance(run, str):
            run = _eager(self.gm, f"at sizes ({sizes}): {run}")
        self.compiled[k] = run
        return run


_TRAINING = (
    "training: the subgraph needs gradients (inputs require grad under grad mode); it runs eagerly. "
    "Call model.eval() and torch.no_grad() for eqsat's compiled inference"
)


def _needs_grad(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> bool:
    """Whether a gradient can flow through ``gm``: an input (parameters arrive as inputs) requires grad, and
    grad mode is on when dynamo calls the backend (it guards on grad mode, so this is the mode of the calls the
    result serves) or the graph switches it on (``with torch.enable_grad():`` inside the forward)."""
    if not any(isinstance(x, torch.Tensor) and x.requires_grad for x in example_inputs):
        return False
    if torch.is_grad_enabled():
        return True
    return any(
        n.op == "call_function" and n.target is torch._C._set_grad_enabled and bool(n.args and n.args[0])
        for n in gm.graph.nodes
    )


def _eager(gm: torch.fx.GraphModule, why: str) -> Callable[..., Any]:
    warnings.warn(f"eqsat: running a subgraph eagerly: {why}", EqsatFallbackWarning, stacklevel=2)
    return gm.forward


def register(name: str = "eqsat") -> None:
    """Register the backend under ``name`` unless it is already known (installed entry point)."""
    import torch._dynamo  # deferred: importing dynamo costs seconds

    if name not in torch._dynamo.list_backends(exclude_tags=()):
        torch._dynamo.register_backend(eqsat_backend, name)
