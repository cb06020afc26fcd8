"""Shape rules: a small closed set of declarative kinds, each read three ways.

An op's registry entry (:class:`rewrite.ir.ops.OpDef`) names its output shapes
with one of these kinds instead of a hand-written function.  Each kind has three
interpreters, so shape inference is written once per kind, never once per
consumer:

* ``infer`` — concrete shapes, used by the graph IR (``OpDef.infer``);
* ``egg_cases`` — egglog text, the ``shape`` rules of the generated prelude
  (:func:`rewrite.egraph.prelude.prelude`): ``(condition, result)`` pairs over
  ``s0, s1, ...`` (the input shapes) and ``a_<attr>`` (the attributes);
* ``draw_ranks`` / ``draw_dims`` / ``draw_late`` — symbolic rank and dimension
  constraints for the rule checker (:mod:`rewrite.verification.rulecheck.draw`),
  which draws random concrete shapes satisfying them through a
  :class:`DrawCtx`.

A kind reads its attributes by fixed names (``axis``, ``perm``, ``stride``...),
so an op using a kind takes attributes with those names.

    >>> MatMul().infer([(8, 3, 4), (8, 4, 5)], {})
    [(8, 3, 5)]
    >>> Same().egg_cases()
    [('', 's0')]
"""

from __future__ import annotations

from rewrite.ir.shapes.base import (
    MAX_RANK,
    Attrs,
    DrawCtx,
    EggCase,
    Shape,
    ShapeRule,
    broadcast,
    conv_out,
    need,
    norm_axis,
    numel,
)
from rewrite.ir.shapes.blocked import BlockedWeight, ConvBlocked, FromBlocked, ToBlocked
from rewrite.ir.shapes.constant import ConvKernel, Filled, Square
from rewrite.ir.shapes.contraction import Conv2d, Linear, MatMul
from rewrite.ir.shapes.elementwise import Broadcast, Broadcast3, GroupedChannels, PerChannel, Same, Source
from rewrite.ir.shapes.indexing import Embedding, Gather, IndexSelect
from rewrite.ir.shapes.layout import Concat, Expand, Pad2d, PadN, Permute, Reshape, Slice, Split
from rewrite.ir.shapes.pool import GlobalPool2d, Pool2d, Spatial2d
from rewrite.ir.shapes.reduce import Reduce
from rewrite.ir.shapes.winograd import WinogradInput, WinogradOutput, WinogradWeight

__all__ = [
    "MAX_RANK",
    "Attrs",
    "BlockedWeight",
    "Broadcast",
    "Broadcast3",
    "Concat",
    "Conv2d",
    "ConvBlocked",
    "ConvKernel",
    "DrawCtx",
    "EggCase",
    "Embedding",
    "Expand",
    "Filled",
    "FromBlocked",
    "Gather",
    "GlobalPool2d",
    "GroupedChannels",
    "IndexSelect",
    "Linear",
    "MatMul",
    "Pad2d",
    "PadN",
    "PerChannel",
    "Permute",
    "Pool2d",
    "Reduce",
    "Reshape",
    "Same",
    "Shape",
    "ShapeRule",
    "Slice",
    "Source",
    "Spatial2d",
    "Split",
    "Square",
    "ToBlocked",
    "WinogradInput",
    "WinogradOutput",
    "WinogradWeight",
    "broadcast",
    "conv_out",
    "need",
    "norm_axis",
    "numel",
]
