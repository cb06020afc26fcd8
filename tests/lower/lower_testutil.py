"""Helpers shared by the lowering tests (imported by name: this folder is on sys.path)."""

from __future__ import annotations

import ctypes

import torch

from lower import compile_graph
from lower.ir import IntImm, LoopKind, root_loop
from lower.llvm import compile_kernel
from lower.target import parse_target
from rewrite.config import TEST_TARGET
from rewrite.verification.numeric import normwise_rel_err


def check_graph(graph, inputs=None, tol: float = 1e-4, **kw):
    """Compile ``graph``, run it on ``inputs`` (random by default) and compare with ``graph.run``.

    The target is ``kw``'s, else ``EQSAT_TEST_TARGET``'s (``make gpu-check`` runs the per-op tests with
    ``cuda``), else the host CPU; a device's outputs are brought back to the host to compare."""
    inputs = inputs if inputs is not None else graph.random_inputs(0)
    if "target" not in kw and TEST_TARGET.text():
        kw["target"] = TEST_TARGET.text()
    cg = compile_graph(graph, **kw)
    got = [t.cpu() for t in cg(inputs)]
    ref = graph.run(inputs)
    assert len(got) == len(ref)
    for k, (a, b) in enumerate(zip(got, ref, strict=False)):
        e = normwise_rel_err(a, b)
        assert e <= tol, f"output {k}: relative error {e:.3g} > {tol}\n{cg.plan}"
    return cg


def run_kernel(kernel, inputs: dict, seed: int = 0, target=None) -> dict:
    """Compile one loop-IR kernel for ``target`` (default: this host) and run it; parameters not in
    ``inputs`` start as zeros.

    Returns every parameter's tensor by name (outputs included)."""
    tensors = {}
    for b in kernel.params:
        t = inputs.get(b.name)
        tensors[b.name] = t.clone().contiguous() if t is not None else torch.zeros(b.shape, dtype=torch.float32)
    fn = compile_kernel(kernel, target or parse_target("llvm"), "t")
    args = (ctypes.c_void_p * max(1, len(kernel.params)))(*[tensors[b.name].data_ptr() for b in kernel.params])
    root = root_loop(kernel.body)
    hi = (
        root.extent.value
        if root is not None and root.kind is LoopKind.PARALLEL and isinstance(root.extent, IntImm)
        else 0
    )
    if hi:  # exercise the range interface: two halves
        fn(ctypes.cast(args, ctypes.c_void_p), 0, hi // 2)
        fn(ctypes.cast(args, ctypes.c_void_p), hi // 2, hi)
    else:
        fn(ctypes.cast(args, ctypes.c_void_p), 0, 0)
    return tensors
