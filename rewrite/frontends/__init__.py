"""Frontends: import models from other frameworks into eqsat graphs, and graphs back to torch.

``from_torch`` captures with torch.export and converts core ATen (:mod:`rewrite.frontends.torch_export`,
one row per overload in :data:`rewrite.frontends.aten_training.CONVERTERS`); a module torch.export cannot
capture is refused with export's error.  ``to_torch`` turns a graph into a ``torch.fx.GraphModule``.
"""

from rewrite.frontends.to_torch import to_torch
from rewrite.frontends.torch_export import TorchCapture, capture, from_torch
from rewrite.ir.errors import FrontendError

__all__ = ["FrontendError", "TorchCapture", "capture", "from_torch", "to_torch"]
