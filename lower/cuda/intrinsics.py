"""Hand-written CUDA routines for ``Intrinsic`` statements, by name: ``INTRINSICS[name](emitter, stmt)``.

The default GPU schedule does not tensorize (a contraction's ``k`` loop runs in each thread), so the
table is empty; a tiled tensor-core GEMM would register here under the name its ``Tensorize`` step
gives.  The walker raises ``CodegenError`` for a name it does not find.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

INTRINSICS: dict[str, Callable[[Any, Any], None]] = {}

__all__ = ["INTRINSICS"]
