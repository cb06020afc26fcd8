"""Frontends: import models from other frameworks into eqsat graphs, and graphs back to torch.

``from_torch`` captures with torch.export (core ATen, :mod:`rewrite.frontends.torch_export`)
and falls back to torch.fx symbolic tracing (:mod:`rewrite.frontends.torch_fx`) only where
export fails; ``to_torch`` turns a graph into a ``torch.fx.GraphModule``.
"""

from rewrite.frontends.to_torch import to_torch
from rewrite.frontends.torch_export import TorchCapture, capture, from_torch
from rewrite.ir.errors import FrontendError

__all__ = ["FrontendError", "TorchCapture", "capture", "from_torch", "to_torch"]
