"""What every ATen converter shares: the node torch computed (its shape and dtype), the importer's
emitter for ``frontends.compose``, and scalars, constants and axes as the converters read them."""

from __future__ import annotations

from typing import Any

import torch

from rewrite.frontends.aten_state import ImportState, _Unsupported
from rewrite.frontends.compose import Emit
from rewrite.ir.dtypes import TORCH_DTYPE, dtype_name
from rewrite.ir.graph import Value


def computed_as(t: torch.dtype) -> str | None:
    """The eqsat dtype a run-time tensor of torch dtype ``t`` is computed in: its own, or int64 for
    int32 (``dtypes.INT32_NOTE``); None when eqsat has none."""
    return "int64" if t == torch.int32 else dtype_name(t)


class AtenBase(ImportState):
    """The helpers of ``AtenConverters`` (a base of ``torch_export._ExportImporter``, which provides
    ``tensor`` (constants become weights there) and ``current``), over :class:`ImportState`'s values."""

    current: Any  # the ATen overload being converted

    def out_shape(self) -> tuple[int, ...]:
        return self.meta_shape()

    def meta_val(self) -> Any:
        """What torch computed for the current node (its first output when it has several)."""
        assert self.node is not None
        val = self.node.meta.get("val")
        return val[0] if isinstance(val, (tuple, list)) and val else val

    def meta_dtype(self) -> str | None:
        """The eqsat dtype torch computed for the current node's (first) output, or None."""
        val = self.meta_val()
        return computed_as(val.dtype) if isinstance(val, torch.Tensor) else None

    def emit(self) -> Emit:
        """This import as ``frontends.compose`` builds into it: builder ops, constants as named weights."""
        return Emit(
            self.b.graph,
            lambda op, ins, **attrs: self.b.op(op, *ins, **attrs),
            lambda t: self.weight(f"const.{self.node_name()}", t),
        )

    def scalar_of(self, v: Any) -> float | None:
        """A Python number, or a one-element float32 constant tensor, as a float."""
        if isinstance(v, bool) or not isinstance(v, (int, float, torch.Tensor)):
            return None
        if isinstance(v, torch.Tensor):
            if v.dim() != 0 or v.dtype != torch.float32:
                return None
            return float(v.item())
        return float(v)

    def reduce_axes(self, dims: Any, rank: int) -> tuple[int, ...]:
        """A reduction's ``dim`` argument (an int, a list, or None / empty for every axis) as sorted axes."""
        picked = [dims] if isinstance(dims, int) else list(dims or range(rank))
        return tuple(sorted({self.axis(d, rank) for d in picked})) or tuple(range(rank))

    def node_name(self) -> str:
        return "node" if self.node is None else str(self.node.name)

    def scalar_like(self, s: Any, like: Value) -> Value:
        """A Python number as a one-element constant of ``like``'s dtype and rank (exactly, or refused)."""
        dtype = self.b.graph.dtype_of(like)
        t = torch.tensor(s, dtype=TORCH_DTYPE[dtype])
        if float(t.item()) != float(s):
            raise _Unsupported(f"scalar {s!r} is not exactly a {dtype}")
        r = len(self.shape(like))
        return self.const(("scalar", dtype, s, r), f"const.{self.node_name()}", lambda: t.reshape((1,) * r))


__all__ = ["AtenBase", "computed_as"]
