"""``eqsat bench onnx-conformance``: the ONNX package's own node tests, run through eqsat.

Each node test of ``onnx.backend.test`` (a one-node model plus input/expected-output
data sets, generated in memory from the installed onnx package) is classified:

- ``unsupported``: it uses an op type outside eqsat's ONNX op set (``ONNX_OPS``), or a
  dtype other than float32, int64 and bool (eqsat's dtypes; it never casts silently);
- ``failed``: eqsat refused it cleanly — a ``FrontendError`` (or another ``EqsatError``)
  naming the ONNX node, its op and why (an attribute value eqsat cannot represent);
- ``passed``: imported, compiled with ``rewrite.compile`` (LLVM) and every output matches
  the expected one within ``REL_TOL`` (with ``--optimize``, the optimized graph too);
- ``wrong``: it ran and an output differs — must never happen;
- ``crashed``: an exception that is not an ``EqsatError`` — a bug, must never happen.

eqsat's shapes are static, so a graph input the model uses as a shape, axes, pads, sizes or
scales (node tests pass them as inputs; deployed models have them as initializers) is bound
to the test's value before import (``specialised``); a test that needed it lists the bound
inputs, and the summary counts them.

``EqsatBackend`` is the same thing as an ``onnx.backend.base.Backend``, so the standard
unittest runner (``onnx.backend.test.BackendTest``) can drive it too.

    eqsat bench onnx-conformance [--json OUT] [--optimize] [--filter SUBSTRING] [-v]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import onnx
import torch
from onnx.backend.base import Backend, BackendRep

from rewrite.frontends.onnx import ONNX_OPS, from_onnx
from rewrite.frontends.onnx.context import NP_DTYPES, ONNX_DTYPES
from rewrite.frontends.onnx.importer import ConstantNeeded
from rewrite.ir.errors import EqsatError
from rewrite.ir.graph import Graph
from rewrite.pipeline import compile, optimize
from rewrite.verification.numeric import REL_TOL, compare_all

STATUSES = ("passed", "failed", "unsupported", "wrong", "crashed")


class EqsatRep(BackendRep):
    """A prepared model: the imported graph, compiled once for the host CPU."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.run_fn = compile(graph)

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        names = [n.attrs["name"] for n in self.graph.inputs]
        if isinstance(inputs, dict):
            arrays = [inputs[k] for k in names]
        else:
            arrays = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        feed = {}
        for n, k, a in zip(self.graph.inputs, names, arrays):
            a = np.asarray(a)
            if a.dtype != NP_DTYPES[n.dtype]:  # never cast silently
                raise EqsatError(f"input '{k}' has dtype {a.dtype}; the graph takes {n.dtype}")
            feed[k] = torch.from_numpy(np.array(a, copy=True, order="C"))  # ascontiguousarray makes 0-d 1-d
        return tuple(t.numpy() for t in self.run_fn(feed))


class EqsatBackend(Backend):
    """``onnx.backend``-style entry point: ``EqsatBackend.prepare(model).run(inputs)``."""

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> EqsatRep:
        return EqsatRep(from_onnx(model))

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"


@dataclass
class CaseResult:
    name: str
    status: str
    ops: list[str]
    why: str = ""
    max_rel_err: float | None = None
    bound: list[str] = field(default_factory=list)  # graph inputs bound to the test's values (see specialised)


def _dtype_problem(model: onnx.ModelProto, data_sets: Any) -> str:
    og = model.graph
    for vi in list(og.input) + list(og.output):
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is None:
            return f"'{vi.name}' is not a tensor"
        if tt.elem_type not in ONNX_DTYPES:
            return f"'{vi.name}' has dtype {onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)} (float32, int64, bool)"
    return ""


def specialised(model: onnx.ModelProto, feed: dict[str, np.ndarray]) -> tuple[Graph, list[str]]:
    """``from_onnx(model)``, binding to their values in ``feed`` the graph inputs eqsat needs as
    constants (a node test passes shapes, axes, pads, sizes as inputs; eqsat's shapes are
    static, so a deployed model has them as initializers).  Returns the graph and the bound names.
    """
    bound: dict[str, np.ndarray] = {}
    while True:
        try:
            return from_onnx(model, constants=bound), sorted(bound)
        except ConstantNeeded as e:
            if e.input_name in bound or e.input_name not in feed:
                raise
            bound[e.input_name] = feed[e.input_name]


def run_case(case: Any, with_optimize: bool = False) -> CaseResult:
    model = case.model
    ops = sorted({n.op_type for n in model.graph.node})
    missing = [o for o in ops if o not in ONNX_OPS]
    if missing:
        return CaseResult(case.name, "unsupported", ops, f"op(s) {missing} not in eqsat's op set")
    why = _dtype_problem(model, case.data_sets)
    if why:
        return CaseResult(case.name, "unsupported", ops, f"dtype: {why}")
    inits = {t.name for t in model.graph.initializer}
    names = [vi.name for vi in model.graph.input if vi.name not in inits]
    bound: list[str] = []
    try:
        worst = 0.0
        for inputs, expected in case.data_sets:
            feed = {k: np.asarray(v) for k, v in zip(names, inputs)}
            graph, bound = specialised(model, feed)
            graphs = [graph]
            if with_optimize:
                graphs.append(optimize(graph, check=True).graph)
            for g in graphs:
                outs = EqsatRep(g).run({k: v for k, v in feed.items() if k not in bound})
                cmp = compare_all(
                    # the expected arrays may be views with negative strides (the reversed slices' data)
                    [torch.from_numpy(np.array(e, copy=True, order="C")) for e in expected],
                    [torch.from_numpy(o) for o in outs],
                    REL_TOL,
                )
                if not cmp.close:
                    return CaseResult(case.name, "wrong", ops, cmp.why, cmp.rel_err, bound)
                worst = max(worst, cmp.rel_err)
        return CaseResult(case.name, "passed", ops, max_rel_err=worst, bound=bound)
    except EqsatError as e:
        return CaseResult(case.name, "failed", ops, f"{type(e).__name__}: {e}", bound=bound)
    except Exception as e:  # a bug: reported, never hidden
        return CaseResult(case.name, "crashed", ops, f"{type(e).__name__}: {e}", bound=bound)


def collect(filter_: str = "") -> list[Any]:
    from onnx.backend.test.case.node import collect_testcases  # deferred: generates ~1,900 cases (seconds)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators divide by zero on purpose (inf/nan cases)
        cases = collect_testcases()
    return [c for c in cases if filter_ in c.name]


def summarize(results: Sequence[CaseResult]) -> dict[str, Any]:
    counts = {s: sum(1 for r in results if r.status == s) for s in STATUSES}
    in_set = [r for r in results if r.status != "unsupported" or r.why.startswith("dtype")]
    op_and_dtype = counts["passed"] + counts["failed"] + counts["wrong"] + counts["crashed"]
    return {
        **counts,
        "total": len(results),
        "pass_rate_supported": counts["passed"] / op_and_dtype if op_and_dtype else None,
        "pass_rate_ops_in_set": counts["passed"] / len(in_set) if in_set else None,
        "unsupported_dtype": sum(1 for r in results if r.status == "unsupported" and r.why.startswith("dtype")),
        "passed_with_bound_inputs": sum(1 for r in results if r.status == "passed" and r.bound),
    }


def main(argv: Sequence[str] = ()) -> int:
    p = argparse.ArgumentParser(prog="eqsat bench onnx-conformance", description=__doc__.split("\n\n")[0])
    p.add_argument("--json", metavar="OUT", help="write counts and the per-test list as JSON")
    p.add_argument("--optimize", action="store_true", help="also optimize each graph and check the optimized one")
    p.add_argument("--filter", default="", help="only tests whose name contains this")
    p.add_argument("-v", "--verbose", action="store_true", help="print every test that is not unsupported")
    args = p.parse_args(list(argv))
    t0 = time.perf_counter()
    results = [run_case(c, args.optimize) for c in collect(args.filter)]
    summary = summarize(results)
    for r in results:
        if r.status in ("wrong", "crashed") or (args.verbose and r.status != "unsupported"):
            print(f"{r.status:8} {r.name}: {r.why}")
    rate = summary["pass_rate_supported"]
    print(
        f"onnx node tests: {summary['passed']} passed, {summary['failed']} failed (clean refusals), "
        f"{summary['unsupported']} unsupported ({summary['unsupported_dtype']} for dtype), "
        f"{summary['wrong']} wrong, {summary['crashed']} crashed, of {summary['total']}; "
        f"pass rate on supported ops and dtype: {rate:.1%}"
        if rate is not None
        else "no supported tests",
        f"({time.perf_counter() - t0:.0f} s)",
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({**summary, "tests": [asdict(r) for r in results]}, f, indent=1)
    return 1 if summary["wrong"] or summary["crashed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
