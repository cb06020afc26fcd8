"""Compositions of registry ops that more than one frontend imports the same way, one module per kind:
:mod:`.conv`, :mod:`.pool`, :mod:`.select`, :mod:`.scatter`, :mod:`.sample`, :mod:`.taps`.

Each takes an ``Emit``: the frontend's way to add a node (its origin, its errors) and a constant.
"""

from rewrite.frontends.compose.conv import conv3d, conv_transpose2d, conv_transpose3d
from rewrite.frontends.compose.emit import Emit, Weight, round_half, round_result
from rewrite.frontends.compose.pool import pool3d, pool_out_size
from rewrite.frontends.compose.sample import GRID_MODES, GRID_PADDINGS, grid_sample, grid_sample_refusal
from rewrite.frontends.compose.scatter import RUNTIME_SCATTER_MAX, scatter, scatter_runtime
from rewrite.frontends.compose.select import TOPK_MAX_K, arg_extreme, cumsum, topk
from rewrite.frontends.compose.taps import resample

__all__ = [
    "GRID_MODES",
    "GRID_PADDINGS",
    "RUNTIME_SCATTER_MAX",
    "TOPK_MAX_K",
    "Emit",
    "Weight",
    "arg_extreme",
    "conv3d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cumsum",
    "grid_sample",
    "grid_sample_refusal",
    "pool3d",
    "pool_out_size",
    "resample",
    "round_half",
    "round_result",
    "scatter",
    "scatter_runtime",
    "topk",
]
