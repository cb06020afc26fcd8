"""The operator registry: the single source of truth for every op eqsat knows.

Each op is defined once, in this package's module for its group (``sources``,
``elementwise``, ``layout``, ``nn``, ``reduce``, ``indexing``, ``winograd``, ``blocked``; the types and ``OPS``
itself are in ``registry``): its typed, named attributes, its input arity,
its group, its shape rule, its reference semantics (torch), its FLOP count, its
cost class, its fusion role and its frontend spellings (torch functions, ATen overloads, ONNX).  Everything else — the
graph IR's checks, the egglog prelude, the rule parser and checker, the cost
models, fusion, the frontends — looks ops up by name in ``OPS``; the lowering
of each op is the one other place an op is written (``lower/ops_to_loops/``,
``@lowering``).

Where shapes come from: ``OpDef.shape_rule`` is one of the declarative kinds
of :mod:`rewrite.ir.shapes` (``Same``, ``Broadcast``, ``MatMul``, ``Conv2d``,
``Pool2d``, ``Permute``, ``Reshape``, ``Concat``, ``Slice``, ``Pad2d``...).
Each kind is read three ways: ``infer`` here (``OpDef.infer``, the graph IR),
``egg_cases`` by :func:`rewrite.egraph.prelude.prelude` (the generated egglog
``shape`` rules) and ``draw_*`` by :mod:`rewrite.verification.rulecheck.draw` (the
rule checker's random shapes).  None of those three matches op names.

An op added at run time (a test's toy op) goes through ``register_op`` and
``unregister_op``; with a lowering registered in ``lower.ops_to_loops.LOWERINGS``
it goes through import (torch.export and ONNX, by its ``aten`` and ``onnx`` spellings),
saturation, extraction, the rule checker, lowering (LLVM and CUDA) and ONNX export
(tests/ir/test_toy_op.py).

    >>> OPS["matmul"].infer([(64, 1024), (1024, 512)], {})
    [(64, 512)]
"""

from __future__ import annotations

from importlib import import_module

from rewrite.ir.errors import ShapeError
from rewrite.ir.ops.registry import (
    _BUILTIN,
    OPS,
    VARIADIC,
    AtenSpelling,
    AttrKind,
    AttrSpec,
    CostClass,
    FusionRole,
    Group,
    OnnxSpelling,
    OpDef,
    f32,
    get_op,
    ops_in,
    register_op,
    registry_version,
    unregister_op,
)
from rewrite.ir.shapes import Shape, broadcast, conv_out, norm_axis, numel

# each module registers its group's ops when imported; this order is the registry's order
for _module in ("sources", "elementwise", "layout", "nn", "reduce", "indexing", "winograd", "blocked"):
    import_module(f"rewrite.ir.ops.{_module}")
_BUILTIN.update(OPS)
from rewrite.ir.ops.elementwise import ACTS, act_flops, apply_act  # noqa: E402  (imported after the loop: it fixes the order)
from rewrite.ir.ops.sources import constant_tensor  # noqa: E402  (likewise)

__all__ = [
    "ACTS",
    "OPS",
    "VARIADIC",
    "AtenSpelling",
    "AttrKind",
    "AttrSpec",
    "CostClass",
    "FusionRole",
    "Group",
    "OnnxSpelling",
    "OpDef",
    "Shape",
    "ShapeError",
    "act_flops",
    "apply_act",
    "broadcast",
    "constant_tensor",
    "conv_out",
    "f32",
    "get_op",
    "norm_axis",
    "numel",
    "ops_in",
    "register_op",
    "registry_version",
    "unregister_op",
]
