"""``torch.compile(model, backend="eqsat")``: each captured subgraph optimized and compiled to LLVM.

    fast = torch.compile(model, backend="eqsat")
    fast = torch.compile(model, backend="eqsat", options={"extractor": "greedy"})
    y = fast(x)

The name comes from the ``torch_dynamo_backends`` entry point in ``pyproject.toml`` (an
installed eqsat); :func:`register` registers it by hand in a source checkout.  For each
subgraph dynamo hands over, :func:`eqsat_backend` imports it with
:func:`rewrite.frontends.capture` (parameters arrive as inputs, so a changed parameter is
seen on the next call), runs :func:`rewrite.optimize` (verified against the original) and
:func:`rewrite.compile`.  A subgraph eqsat cannot handle (an op with no registry
counterpart, a non-float32 tensor) runs eagerly, with one warning naming the op.

eqsat compiles inference graphs: its kernels record no autograd.  A subgraph that needs gradients
(grad mode on, or switched on inside the graph, and an input, a parameter included, requiring grad:
training) runs eagerly, with one warning saying so, so ``loss.backward()`` works and gives eager's
gradients.  Under ``torch.no_grad()`` the same module compiles: dynamo guards on grad mode, so each mode
gets its own subgraph, whichever is called first.

This module sits above the pipeline (layer ``bench | rewrite.torch_backend`` in the import
contract): it is a driver of the pipeline, like the CLI.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from rewrite.egraph.limits import Limits
from rewrite.frontends import capture
from rewrite.ir.errors import EqsatError, UsageError
from rewrite.pipeline import COSTS, compile, optimize, priced_for

__all__ = ["EqsatFallbackWarning", "eqsat_backend", "register"]

_OPTIONS = ("rules", "limits", "extractor", "check", "ilp_seconds", "target", "cost", "optimize")


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
    the imported graph without saturating it.  ``mode`` is
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
    if _needs_grad(gm, example_inputs):
        return _eager(gm, _TRAINING)
    for i, x in enumerate(example_inputs):
        if not isinstance(x, torch.Tensor):
            return _eager(gm, f"input {i} is a {type(x).__name__}, not a tensor (dynamic shapes are not supported)")
    try:
        cap = capture(gm, tuple(example_inputs), name=type(gm).__name__)
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
    except EqsatError as e:
        return _eager(gm, str(e))
    names = [n.attrs["name"] for n in graph.inputs]  # the original input order (decode keeps it)
    position = {name: i for i, name in enumerate(cap.input_names)}
    if len(names) != len(cap.input_names):  # an input no output depends on was pruned: pick by name
        pick = [position[n] for n in names]
    else:
        pick = list(range(len(names)))

    def compiled(*args: Any) -> Any:
        with torch.no_grad():
            outs = run([args[i].contiguous() for i in pick])
        return cap.unflatten(outs)

    return compiled


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
