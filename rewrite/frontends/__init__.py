"""Frontends: import models from other frameworks into eqsat graphs."""

from rewrite.frontends.torch_fx import FrontendError, from_torch

__all__ = ["FrontendError", "from_torch"]
